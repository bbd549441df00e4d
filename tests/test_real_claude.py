"""The real Claude Code (npm, pinned) after ``workbench install``, against a fake model API.

One user's machine for the whole module (``tests/real_world.py``): ``workbench install
--agent claude`` into an empty HOME, the service started, then ``claude -p`` sessions in a
git project, each answered by rule (``tests/claude_script.py``) by the fake Anthropic server:

1. ``read``: the model reads ``notes.md`` (a ``Read`` tool call), then replies;
2. ``save``: it loads ``save_memory`` through ``ToolSearch`` and saves a fact;
3. ``search``: it searches the memory through ``mcp__workbench__search``;
4. ``resume``: ``claude -p --continue`` (SessionStart ``source=resume``) of session 3;
5. ``cold``: the service stopped and another session holding the spawn lock (as while it
   starts the service): the SessionStart hook may only wait;
6. ``spawned``: the SessionStart hook spawns the service from Claude Code's environment
   (which has ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``).

What Claude Code 2.1.332 needs to run this way: nothing beyond ``workbench install``: ``-p``
runs the hooks of ``~/.claude/settings.json`` and the MCP server of ``~/.claude.json``; a
``Read`` needs no permission, our MCP tools need ``--allowedTools mcp__workbench`` (``-p``
cannot ask). It lists MCP tools to the model by name only (deferred tools, loaded by
``ToolSearch``). Each test asserts on what the fake received (request bodies), what the store
holds (read-only), and Claude Code's own debug log (``--debug-file``).
"""

from __future__ import annotations

import fcntl
import json
import re
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.claude_script import REPLY_HEAD, claude_rule
from tests.conftest import http_json
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, tool_names, tool_results
from tests.real_agents import program
from tests.real_world import World, open_world

pytestmark = pytest.mark.slow

CONTEXT_OPEN = "<workbench-context>"
FACT = "The frobnicator in notes.md is sized 42 millimetres"
NOTES = "The widget uses a frobnicator of size 42.\n"
ALLOW_OURS = ["--allowedTools", "mcp__workbench"]
# Claude Code's debug log: one line per hook run, e.g. "Hooks: PostToolUse:Read [<command>]
# finished with status 0" ("SessionEnd:other [...] completed with status 0" for SessionEnd).
HOOK_LINE = re.compile(
    r"(?:Hooks: )?(?P<event>[A-Za-z]+)(?::(?P<what>\S+))? \[[^\]]*hooks/(?P<script>\w+)\.py\]"
    r" (?:finished|completed) with status (?P<status>\d+)"
)
OUR_TOOLS_OR_DISCOVERY = ("mcp__workbench__", "ToolSearch")


@dataclass
class Session:
    """One ``claude`` run: its output, the model requests it made, its debug log."""

    name: str
    proc: subprocess.CompletedProcess[str]
    requests: list[RecordedRequest]
    debug: str
    events: list[dict[str, Any]]  # what the store logged while it ran

    @property
    def main_requests(self) -> list[RecordedRequest]:
        """The conversation's requests (those offering ``Read``), not side requests."""
        return [r for r in self.requests if "Read" in tool_names(r)]

    @property
    def session_id(self) -> str:
        metadata = self.main_requests[0].body["metadata"]["user_id"]
        return str(json.loads(metadata)["session_id"])

    def hooks(self) -> list[dict[str, str]]:
        """Every workbench hook Claude Code ran, in order (event, what, script, status)."""
        return [m.groupdict() for m in HOOK_LINE.finditer(self.debug)]


@dataclass
class ClaudeRuns:
    """The module's world, the fake model server and the sessions run so far."""

    world: World
    fake: FakeAnthropic
    claude: Path
    sessions: dict[str, Session] = field(default_factory=dict)

    def session(self, name: str, *argv: str) -> Session:
        first = len(self.fake.requests)
        logged = self.last_event_id()
        log = self.world.project.parent / f"claude-{name}.log"
        proc = self.world.run(
            [str(self.claude), *argv, "--debug-file", str(log)],
            timeout=180,
            ANTHROPIC_BASE_URL=self.fake.base_url,
            ANTHROPIC_API_KEY="sk-test",
        )
        assert proc.returncode == 0, f"claude {name}: {proc.stdout}\n{proc.stderr}"
        debug = log.read_text("utf-8") if log.exists() else ""
        events = self.world.rows("SELECT * FROM events WHERE id > ? ORDER BY id", logged)
        found = Session(name, proc, self.fake.requests[first:], debug, events)
        self.sessions[name] = found
        return found

    def last_event_id(self) -> int:
        return max(
            [
                int(r["id"])
                for r in self.world.rows("SELECT max(id) AS id FROM events")
                if r["id"] is not None
            ]
            or [0]
        )


def body_text(request: RecordedRequest) -> str:
    """The whole request body as JSON text, non-ASCII kept (what the model is sent)."""
    return json.dumps(request.body, ensure_ascii=False)


def tool_uses(request: RecordedRequest) -> dict[str, str]:
    """tool_use id -> tool name, over every assistant message of the request."""
    found: dict[str, str] = {}
    for message in request.body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                found[str(block.get("id"))] = str(block.get("name"))
    return found


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClaudeRuns]:
    claude = program("claude")
    with open_world(tmp_path_factory.mktemp("real-claude")) as world, FakeAnthropic() as fake:
        (world.project / "notes.md").write_text(NOTES, "utf-8")
        world.install("claude")
        world.service.start(timeout=60)
        fake.answer_by(claude_rule)
        found = ClaudeRuns(world, fake, claude)
        notes = world.project / "notes.md"
        for name, argv in [
            ("read", ["-p", f"READ {notes}"]),
            ("save", ["-p", f"SAVE {FACT}", *ALLOW_OURS]),
            ("search", ["-p", "SEARCH frobnicator millimetres", *ALLOW_OURS]),
            ("resume", ["-p", "--continue", "Thanks, that is all."]),
        ]:
            found.session(name, *argv)
            world.service.wait_idle(timeout=60)
        world.service.stop()
        # Another session holds the spawn lock (as while it spawns the service): this
        # session's hook may only wait, as when the service needs longer than the hook's 5 s.
        with open(world.data_dir / "spawn.lock", "a+", encoding="utf-8") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            found.session("cold", "-p", f"READ {notes}")
        found.session("spawned", "-p", "Hello again.")  # this hook spawns the service
        world.service.wait_idle(timeout=90)
        yield found


def test_every_hook_claude_code_runs_succeeds_and_is_stored_once(runs: ClaudeRuns) -> None:
    warm = [runs.sessions[n] for n in ("read", "save", "search", "resume")]
    for session in warm:
        hooks = session.hooks()
        assert hooks, f"no workbench hook in {session.name}'s debug log"
        assert {h["status"] for h in hooks} == {"0"}, hooks
        events = [e for e in session.events if e["content_session_id"] == session.session_id]
        ran = Counter(h["event"] for h in hooks)
        kinds = Counter(e["kind"] for e in events)
        ours = [
            h for h in hooks if h["event"] == "PostToolUse" and h["what"].startswith(("mcp__",))
        ]
        discovery = [h for h in hooks if h["event"] == "PostToolUse" and h["what"] == "ToolSearch"]
        assert ran["SessionStart"] == 1, hooks
        assert kinds["session_init"] == ran["UserPromptSubmit"] == 1, (session.name, events)
        assert kinds["observation"] == ran["PostToolUse"] - len(ours) - len(discovery)
        assert kinds["summarize"] == ran["Stop"] == 1, (session.name, events)
        assert kinds["session_end"] == ran["SessionEnd"] == 1, (session.name, events)
        assert len({(e["kind"], e["payload"]) for e in events}) == len(events), events
        for event in events:
            payload = json.loads(event["payload"])
            if event["kind"] == "session_init":
                assert payload["platformSource"] == "claude-code"
    sessions = runs.world.rows("SELECT content_session_id, platform_source FROM sessions")
    assert {s["content_session_id"] for s in sessions} >= {s.session_id for s in warm}
    assert {s["platform_source"] for s in sessions} == {"claude-code"}
    observed = runs.world.rows("SELECT platform_source FROM observations")
    assert observed
    assert {o["platform_source"] for o in observed} == {"claude-code"}
    read = runs.sessions["read"].hooks()
    assert [h["what"] for h in read if h["event"] == "PostToolUse"] == ["Read"]
    assert [h["what"] for h in read if h["event"] == "PreToolUse"] == ["Read"]


def test_the_memory_reaches_the_model_and_the_next_session_sees_it(runs: ClaudeRuns) -> None:
    first = runs.sessions["read"].main_requests[0]
    assert body_text(first).count(CONTEXT_OPEN) == 1
    assert "No memories of this project yet" in body_text(first)
    # session 2 starts with what session 1 read; session 3 with what session 2 saved too
    second = body_text(runs.sessions["save"].main_requests[0])
    assert second.count(CONTEXT_OPEN) == 1
    assert "notes.md" in second.split(CONTEXT_OPEN, 1)[1].split("</workbench-context>", 1)[0]
    third = body_text(runs.sessions["search"].main_requests[0])
    block = third.split(CONTEXT_OPEN, 1)[1].split("</workbench-context>", 1)[0]
    assert FACT in block


def test_the_mcp_tools_are_listed_and_a_search_returns_results(runs: ClaudeRuns) -> None:
    for session in runs.sessions.values():  # the tools exist before the first request
        first = body_text(session.main_requests[0])
        for tool in ("search", "timeline", "get_observations", "save_memory"):
            assert f"mcp__workbench__{tool}" in first, session.name  # listed by name
    search = runs.sessions["search"]
    last = search.main_requests[-1]
    assert "mcp__workbench__search" in tool_names(last)  # loaded by ToolSearch
    uses = tool_uses(last)
    results = tool_results(last)
    (call,) = [i for i, name in uses.items() if name == "mcp__workbench__search"]
    assert FACT in results[call]
    assert search.proc.stdout.startswith(REPLY_HEAD)


def test_save_memory_is_stored_once_and_nothing_of_ours_comes_back(runs: ClaudeRuns) -> None:
    saves = runs.world.rows("SELECT payload FROM events WHERE kind = 'memory_save'")
    assert [json.loads(s["payload"])["text"] for s in saves] == [FACT]
    saved = runs.world.rows(
        "SELECT id FROM observations WHERE title || narrative || facts LIKE ?", f"%{FACT}%"
    )
    assert len(saved) == 1, saved
    observed = runs.world.rows(
        "SELECT json_extract(payload, '$.tool_name') AS tool FROM events WHERE kind = 'observation'"
    )
    assert observed, "the Read made no observation"
    assert not [o for o in observed if str(o["tool"]).startswith(OUR_TOOLS_OR_DISCOVERY)]
    for table, columns in [
        ("user_prompts", "prompt_text"),
        ("observations", "title || ' ' || coalesce(narrative, '') || ' ' || facts"),
        ("session_summaries", "coalesce(request, '') || ' ' || coalesce(learned, '')"),
    ]:
        rows = runs.world.rows(f"SELECT {columns} AS text FROM {table}")
        assert rows, table
        assert not [r for r in rows if "workbench-context" in str(r["text"])], table
        assert not [r for r in rows if "workbench memory ·" in str(r["text"])], table


def test_resume_does_not_send_the_memory_twice(runs: ClaudeRuns) -> None:
    resume = runs.sessions["resume"]
    starts = [h for h in resume.hooks() if h["event"] == "SessionStart"]
    assert [h["what"] for h in starts] == ["resume"]
    request = resume.main_requests[0]
    assert "SEARCH frobnicator" in body_text(request)  # the conversation was continued
    assert body_text(request).count(CONTEXT_OPEN) == 1
    assert resume.session_id == runs.sessions["search"].session_id


def test_the_mcp_server_answers_claude_codes_handshake_fast(runs: ClaudeRuns) -> None:
    for session in runs.sessions.values():
        log = session.debug
        assert 'MCP server "workbench": Successfully connected' in log, session.name
        assert "probe timed out" not in log, session.name
        assert "SIGINT failed" not in log, session.name


def test_the_service_the_hook_spawned_states_one_compressor(runs: ClaudeRuns) -> None:
    status, health = http_json("GET", f"{runs.world.service.url}/api/health")
    assert status == 200
    assert runs.world.service.proc is not None
    assert health["pid"] != runs.world.service.proc.pid  # the hook's service, not the test's
    assert health["compressor"] == "offline", health
    # status and doctor run from the user's shell (no ANTHROPIC_* variables)
    shown = " ".join(runs.world.workbench("status").stdout.split())
    assert f"compressor {health['compressor']}" in shown
    assert health["compressorReason"] in shown
    doctor = json.loads(runs.world.workbench("doctor", "--json").stdout)
    (row,) = [r for r in doctor if r["check"] == "compressor"]
    assert row["detail"].startswith(health["compressor"]), row
    # nothing but Claude Code itself asked the model anything (its billing header)
    assert all("cc_version=" in body_text(r) for r in runs.fake.requests)


def test_a_cold_start_still_injects_the_memory(runs: ClaudeRuns) -> None:
    first = body_text(runs.sessions["cold"].main_requests[0])
    assert first.count(CONTEXT_OPEN) == 1
    assert FACT in first.split(CONTEXT_OPEN, 1)[1]


def test_what_a_session_did_while_the_service_was_down_is_stored_later(
    runs: ClaudeRuns,
) -> None:
    cold = runs.sessions["cold"]
    assert not [e for e in cold.events if e["content_session_id"] == cold.session_id]
    # spooled by its hooks, replayed when the next session's hook started the service
    deadline = time.monotonic() + 60
    while True:
        stored = runs.world.rows(
            "SELECT kind FROM events WHERE content_session_id = ? ORDER BY id", cold.session_id
        )
        if len(stored) >= 4 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert Counter(e["kind"] for e in stored) == Counter(
        {"session_init": 1, "observation": 1, "summarize": 1, "session_end": 1}
    )


def test_the_readme_gives_the_steps_this_suite_takes() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text("utf-8")
    section = readme.split("## Use it with Claude Code", 1)[1].split("\n## ", 1)[0]
    assert "workbench install" in section
    assert " ".join(ALLOW_OURS) in section
    assert "--continue" in section
