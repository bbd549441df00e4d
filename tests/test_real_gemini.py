"""Gemini CLI 0.61.0 for real: the npm program, driven as a user drives it (issue 20).

One world for the module (``tests/real_world.py``): an empty HOME whose ``~/.gemini`` holds
what a user's does after a first run (an API key chosen, usage statistics, telemetry and
auto-update off: nothing here may reach the network), ``workbench install --agent gemini``,
the service started, and a fake Gemini API on 127.0.0.1 (``tests/fake_gemini.py``) that
``GOOGLE_GEMINI_BASE_URL`` points the CLI at. Then the sessions a user has, each its own
``gemini -p PROMPT --yolo --skip-trust`` (``--yolo`` approves the tool calls,
``--skip-trust`` trusts the project folder, as a headless run must):

1. "read the notes please": the model calls ``read_file`` on notes.md, then answers;
2. "show the listing": ``list_directory`` (its response is ``{"llmContent", "returnDisplay"}``);
3. "recall what we know": workbench's own MCP tool ``mcp_workbench_search``;
4. interactively, in a pseudo-terminal: a prompt, then ``/quit`` (which fires SessionEnd
   three times);
5. a cold start: the service stopped, ``gemini -p`` again (the hook must start it).

The asserts read the store (read-only) and the request bodies the fake server received.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import signal
import struct
import subprocess
import termios
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests import real_agents
from tests.conftest import ROOT
from tests.fake_gemini import FakeGemini, RecordedRequest, parts
from tests.real_world import World, open_world
from workbench.own_tools import OWN_TOOLS

pytestmark = pytest.mark.slow

NOTES = "The deploy key rotates every Tuesday.\n"
PROMPTS = ["read the notes please", "show the listing", "recall what we know"]
QUIT_PROMPT = "read the notes again"
# What a user's ~/.gemini/settings.json says after choosing an API key and switching off
# everything that phones home (docs: settings "privacy", "telemetry", "general").
USER_SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
}
ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b.")
OURS = ("workbench-context", "workbench memory", "hook_context")


@dataclass
class Run:
    """The module's world after the sessions, and what the fake server heard in each."""

    world: World
    fake: FakeGemini
    program: str
    requests: list[list[RecordedRequest]] = field(default_factory=list)
    quit_screen: str = ""
    doctor: dict[str, Any] = field(default_factory=dict)  # its "agent gemini" row after install

    def env(self) -> dict[str, str]:
        return {"GEMINI_API_KEY": "test-key", "GOOGLE_GEMINI_BASE_URL": self.fake.base_url}

    def gemini(self, prompt: str) -> list[RecordedRequest]:
        """``gemini -p PROMPT``; returns the requests the model API got during it."""
        before = len(self.fake.requests)
        proc = self.world.run(
            [self.program, "-p", prompt, "--yolo", "--skip-trust"], timeout=90, **self.env()
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
        return self.fake.requests[before:]

    def sessions(self) -> list[dict[str, Any]]:
        return self.world.rows("SELECT * FROM sessions ORDER BY id")

    def events_of(self, session: str) -> list[dict[str, Any]]:
        return [e for e in self.world.events() if e["content_session_id"] == session]


def first_turn(requests: list[RecordedRequest]) -> RecordedRequest:
    return next(r for r in requests if r.is_turn)


def quit_interactively(run: Run, prompt: str, timeout: float = 120) -> str:
    """Gemini's interactive UI in a pseudo-terminal: type ``prompt``, wait for the answer,
    then ``/quit``. Returns the screen's text (escape codes removed).

    Each line is typed, then Enter pressed once the line shows in the input box (keys sent
    together with the Enter read as a paste, whose newline does not submit; on a loaded
    machine the box may echo late). Every step waits on the screen, never a fixed time."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**run.world.env, **run.env(), "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    proc = subprocess.Popen(
        [run.program, "--yolo"],
        cwd=run.world.project,
        env={**env, "TERM": "xterm-256color"},
        stdin=slave,
        stdout=slave,
        stderr=slave,
        close_fds=True,
        start_new_session=True,  # its own group: Gemini relaunches itself as a child process
    )
    os.close(slave)
    # (what the screen must show since the last step, what to type then, the next step)
    steps = {
        "ready": (b"your message", prompt, "typed"),
        "typed": (prompt.encode(), "\r", "answer"),
        "answer": (run.fake.reply_after_tool.encode(), "/quit", "quit typed"),
        "quit typed": (b"/quit", "\r", "quit"),
    }
    screen, step, mark = b"", "ready", 0
    deadline = time.monotonic() + timeout
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                try:
                    screen += os.read(master, 65536)
                except OSError:  # the program closed the terminal
                    break
            if step in steps:
                wanted, keys, following = steps[step]
                if wanted.lower() in ANSI.sub(b"", screen[mark:]).lower():
                    time.sleep(0.5)  # let the UI settle (the slash-command menu, the box)
                    os.write(master, keys.encode())
                    step, mark = following, len(screen)
        if proc.poll() is None:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        pass
    finally:
        if proc.poll() is None:  # stuck: end the relaunched child and its MCP server too
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        os.close(master)
    text = ANSI.sub(b"", screen).decode(errors="replace")
    assert step == "quit", (step, text[-3000:])
    assert proc.returncode == 0, (proc.returncode, text[-3000:])
    return text


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    program = str(real_agents.program("gemini"))
    with open_world(tmp_path_factory.mktemp("gemini")) as world, FakeGemini() as fake:
        (world.project / "notes.md").write_text(NOTES, "utf-8")
        (world.home / ".gemini").mkdir()
        (world.home / ".gemini" / "settings.json").write_text(json.dumps(USER_SETTINGS), "utf-8")
        world.install("gemini")
        doctor = json.loads(world.workbench("doctor", "--json").stdout)
        found_doctor = {row["check"]: row for row in doctor}["agent gemini"]
        world.service.start()
        fake.on_prompt("notes", "read_file", {"file_path": "notes.md"})
        fake.on_prompt("listing", "list_directory", {"dir_path": "."})
        fake.on_prompt("recall", "mcp_workbench_search", {"query": "deploy key"})
        found = Run(world=world, fake=fake, program=program, doctor=found_doctor)
        for prompt in PROMPTS:
            found.requests.append(found.gemini(prompt))
            world.service.wait_idle()  # the next session's memory includes this one
        found.quit_screen = quit_interactively(found, QUIT_PROMPT)
        world.service.wait_idle()
        yield found


# ----- the user's steps ------------------------------------------------------------------------


def test_doctor_says_gemini_is_set_up_after_install(run: Run) -> None:
    assert run.doctor["status"] == "ok", run.doctor


def test_the_readme_gives_the_steps_this_suite_takes() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme[readme.index("### Gemini CLI") : readme.index("### Cursor")]
    for step in (
        "workbench install --agent gemini",
        "workbench doctor",
        "--yolo",
        "--skip-trust",
        "GEMINI_CLI_TRUST_WORKSPACE=true",
        "<hook_context>",
        "mcp_workbench_search",
        "/quit",
        "gemini-cli",
        "privacy.usageStatisticsEnabled",
        "telemetry.enabled",
        "general.enableAutoUpdate",
    ):
        assert step in section, step


# ----- what is stored ---------------------------------------------------------------------------


def test_every_event_is_stored_once_as_gemini_cli(run: Run) -> None:
    sessions = run.sessions()
    assert len(sessions) == 4  # three `-p` runs and the interactive one
    assert {s["platform_source"] for s in sessions} == {"gemini-cli"}
    assert {s["status"] for s in sessions} == {"completed"}
    expected_observations = [1, 1, 0, 1]  # the third called our own tool: not a memory
    for session, observations in zip(sessions, expected_observations, strict=True):
        kinds = [e["kind"] for e in run.events_of(session["content_session_id"])]
        assert kinds == ["session_init"] + ["observation"] * observations + [
            "summarize",
            "session_end",
        ], kinds
    platforms = run.world.rows("SELECT DISTINCT platform_source FROM observations")
    assert platforms == [{"platform_source": "gemini-cli"}]


def test_quit_fires_session_end_three_times_and_one_is_stored(run: Run) -> None:
    """Issue 20, item 12: /quit runs the SessionEnd hook three times; one end is one event."""
    last = run.sessions()[-1]["content_session_id"]
    ends = [e for e in run.events_of(last) if e["kind"] == "session_end"]
    assert len(ends) == 1
    assert ends[0]["payload"]["reason"]


def test_list_directory_makes_an_observation(run: Run) -> None:
    """Issue 20, item 11: a ``{"llmContent", "returnDisplay"}`` response is read."""
    second = run.sessions()[1]["content_session_id"]
    rows = run.world.rows("SELECT title FROM observations WHERE content_session_id = ?", second)
    assert [r["title"] for r in rows] == ["Listed ."]


def test_nothing_of_ours_is_stored_back(run: Run) -> None:
    """Issue 20, item 10: the context Gemini hands back inside the prompt (escaped) is never
    stored; stored prompts are what the user typed, so they cannot grow session by session."""
    prompts = run.world.rows("SELECT prompt_text FROM user_prompts ORDER BY id")
    assert [p["prompt_text"] for p in prompts] == [*PROMPTS, QUIT_PROMPT]
    stored = json.dumps([e["payload"] for e in run.world.events()], ensure_ascii=False)
    stored += json.dumps(run.world.rows("SELECT * FROM session_summaries"), ensure_ascii=False)
    stored += json.dumps(run.world.rows("SELECT * FROM observations"), ensure_ascii=False)
    for mark in OURS:
        assert mark not in stored
    tools = run.world.rows("SELECT payload FROM events WHERE kind = 'observation'")
    assert not any("mcp_workbench" in t["payload"] for t in tools)


# ----- what the model got -----------------------------------------------------------------------


def test_the_memory_reaches_the_model_and_the_next_session_sees_the_first(run: Run) -> None:
    first, second, third = (first_turn(r).text for r in run.requests)
    assert "&lt;workbench-context&gt;" in first  # how Gemini hands hook context to the model
    assert "Read notes.md" not in first
    assert "Read notes.md" in second  # the first session's observation
    assert "Listed ." in third  # the second one's
    # The memory carries what was typed, never the memory of the session before (item 10).
    assert third.count("&lt;workbench-context&gt;") == 1


def test_gemini_asked_the_fake_api_only_what_it_speaks(run: Run) -> None:
    """Every request was a model call the fake answers (no route it 404s): the CLI talked to
    nothing else there, and the figures above come from real answers."""
    methods = {r.method for r in run.fake.requests}
    assert methods <= {"streamGenerateContent", "generateContent", "countTokens"}, methods


def test_the_mcp_tools_are_listed_and_a_call_returns_results(run: Run) -> None:
    for requests in run.requests:
        offered = set(first_turn(requests).tool_names)
        assert {f"mcp_workbench_{tool}" for tool in OWN_TOOLS} <= offered
    answers = [
        part["functionResponse"]
        for request in run.requests[2]
        if request.is_turn
        for content in request.contents
        for part in parts(content)
        if "functionResponse" in part
    ]
    assert answers, "the model's search call got no answer"
    response = answers[0]
    assert response["name"] == "mcp_workbench_search"
    assert "Read notes.md" in json.dumps(response["response"])


# ----- a cold start (last: it stops the service) ------------------------------------------------


def test_a_cold_start_still_injects_memory(run: Run) -> None:
    """The service is stopped and starting it takes longer than the hook's budget (issue 20,
    item 1 measured 6.1-6.6 s on a loaded machine; the hook gives up at 5 s). Made
    deterministic: another session holds the spawn lock, as while it spawns the service,
    so this session's hook only waits. The memory is on disk all along: it must still come."""
    run.world.service.stop()
    with open(run.world.data_dir / "spawn.lock", "a+", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        requests = run.gemini("a cold start")
    assert "Read notes.md" in first_turn(requests).text
