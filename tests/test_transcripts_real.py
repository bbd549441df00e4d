"""Issue 22 item 2: the transcripts the real Claude Code and Codex CLIs write, imported.

One user's machine for the module (``tests/real_world.py``): the real ``claude`` and
``codex`` (npm, pinned; ``tests/real_transcripts.py``) run in a git project with no workbench
hook installed, as before a user installs workbench: a ``Read`` of ``notes.md`` in Claude
Code, a prompt with a ``<private>`` block, and ``cat notes.md`` in Codex. Then
``workbench import-transcripts`` (defaults: ``~/.claude/projects``, ``~/.codex/sessions``),
twice; then the Claude Code hooks are installed and one more session runs with them, and the
import runs again. Each test reads back what the store holds (read-only).
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.agent_home import trust_codex_hooks
from tests.claude_script import REPLY_HEAD
from tests.conftest import run_workbench
from tests.fake_openai_responses import FakeResponses
from tests.real_transcripts import claude_session, codex_config, codex_session
from tests.real_world import World, open_world
from tests.test_real_codex import READ_PROMPT, SECRET

pytestmark = pytest.mark.slow

PRIVATE = "hunter2-never-stored"
PRIVATE_PROMPT = f"Hello there <private>the password is {PRIVATE}</private>"


@dataclass
class Imported:
    world: World
    claude_read: Path
    claude_private: Path
    codex_read: Path
    first: subprocess.CompletedProcess[str]
    second: dict[str, Any]
    hooked: Path | None = None
    codex_hooked: Path | None = None
    after_hooks: dict[str, Any] = field(default_factory=dict)

    def events(self, session: str) -> list[dict[str, Any]]:
        return [e for e in self.world.events() if e["content_session_id"] == session]


def transcript_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def codex_session_id(path: Path) -> str:
    (meta,) = [r for r in transcript_lines(path) if r["type"] == "session_meta"]
    return str(meta["payload"]["id"])


def import_json(world: World, *args: str) -> dict[str, Any]:
    proc = world.workbench("import-transcripts", "--json", *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    found: dict[str, Any] = json.loads(proc.stdout)
    return found


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Imported]:
    with open_world(tmp_path_factory.mktemp("transcripts")) as world:
        (world.project / "notes.md").write_text(f"The secret word is {SECRET}.\n", "utf-8")
        claude_read = claude_session(world, f"READ {world.project / 'notes.md'}")
        claude_private = claude_session(world, PRIVATE_PROMPT)
        codex_read = codex_session(world, READ_PROMPT)
        world.service.start(timeout=60)
        first = run_workbench({**world.env, "COLUMNS": "200"}, "import-transcripts")
        assert first.returncode == 0, first.stdout + first.stderr
        world.service.wait_idle(timeout=60)
        second = import_json(world)
        found = Imported(world, claude_read, claude_private, codex_read, first, second)
        world.install("claude")
        found.hooked = claude_session(world, f"READ {world.project / 'notes.md'}")
        fake = FakeResponses().start()
        try:  # Codex with its hooks installed and trusted, the same session again
            codex_home = codex_config(world, fake)
            world.env.update(CODEX_HOME=str(codex_home))
            port = int(world.env["WORKBENCH_PORT"])  # Codex filters the hooks' environment
            (world.data_dir / "settings.json").write_text(json.dumps({"port": port}), "utf-8")
            world.install("codex")
            trust_codex_hooks(codex_home)
            found.codex_hooked = codex_session(world, READ_PROMPT, fake)
        finally:
            fake.stop()
        world.service.wait_idle(timeout=60)
        found.after_hooks = import_json(world)
        world.service.wait_idle(timeout=60)
        yield found


def test_a_claude_code_transcript_becomes_the_events_its_hooks_would_send(
    imported: Imported,
) -> None:
    session = imported.claude_read.stem
    events = imported.events(session)
    assert Counter(e["kind"] for e in events) == Counter(
        {"session_init": 1, "observation": 1, "summarize": 1}
    ), events
    lines = transcript_lines(imported.claude_read)
    (prompt_line,) = [r for r in lines if r["type"] == "user" and isinstance(
        r["message"]["content"], str)]  # fmt: skip
    (init,) = [e for e in events if e["kind"] == "session_init"]
    assert init["payload"]["prompt"] == f"READ {imported.world.project / 'notes.md'}"
    assert init["payload"]["platformSource"] == "claude-code"
    stamp = prompt_line["timestamp"].replace("Z", "+00:00")
    assert init["received_at"].startswith(stamp[:19]), (init["received_at"], stamp)
    (call,) = [e["payload"] for e in events if e["kind"] == "observation"]
    assert call["tool_name"] == "Read"
    assert call["tool_input"] == {"file_path": str(imported.world.project / "notes.md")}
    assert call["tool_response"]["file"]["content"] == f"The secret word is {SECRET}.\n"
    uses = [b for r in lines if r["type"] == "assistant" for b in r["message"]["content"]
            if b["type"] == "tool_use"]  # fmt: skip
    assert call["tool_use_id"] == uses[0]["id"]
    (stop,) = [e["payload"] for e in events if e["kind"] == "summarize"]
    assert stop["last_assistant_message"].startswith(REPLY_HEAD)
    (row,) = imported.world.rows(
        "SELECT project, platform_source FROM sessions WHERE content_session_id = ?", session
    )
    assert row == {"project": "project", "platform_source": "claude-code"}
    observed = imported.world.rows(
        "SELECT platform_source, files_read FROM observations WHERE content_session_id = ?",
        session,
    )
    assert observed
    assert {o["platform_source"] for o in observed} == {"claude-code"}
    assert "notes.md" in observed[0]["files_read"]


def test_a_codex_rollout_becomes_the_events_its_hooks_would_send(imported: Imported) -> None:
    session = codex_session_id(imported.codex_read)
    events = imported.events(session)
    assert Counter(e["kind"] for e in events) == Counter(
        {"session_init": 1, "observation": 1, "summarize": 1}
    ), events
    (init,) = [e["payload"] for e in events if e["kind"] == "session_init"]
    assert init["prompt"] == READ_PROMPT
    assert init["platformSource"] == "codex-cli"
    (call,) = [e["payload"] for e in events if e["kind"] == "observation"]
    assert call["tool_name"] == "Bash"
    assert call["tool_input"] == {"command": "cat notes.md"}
    assert SECRET in json.dumps(call["tool_response"])
    (stop,) = [e["payload"] for e in events if e["kind"] == "summarize"]
    assert stop["last_assistant_message"].startswith("Done (")
    (row,) = imported.world.rows(
        "SELECT project, platform_source FROM sessions WHERE content_session_id = ?", session
    )
    assert row == {"project": "project", "platform_source": "codex-cli"}
    observed = imported.world.rows(
        "SELECT platform_source FROM observations WHERE content_session_id = ?", session
    )
    assert observed
    assert {o["platform_source"] for o in observed} == {"codex-cli"}


def test_a_private_block_is_redacted_as_the_hooks_redact_it(imported: Imported) -> None:
    assert PRIVATE in imported.claude_private.read_text("utf-8")  # the agent kept it
    events = imported.events(imported.claude_private.stem)
    assert [e["kind"] for e in events if e["kind"] == "session_init"] == ["session_init"]
    (prompt,) = imported.world.rows(
        "SELECT prompt_text FROM user_prompts WHERE content_session_id = ?",
        imported.claude_private.stem,
    )
    assert prompt["prompt_text"] == "Hello there"
    for table in ("events", "user_prompts", "observations", "session_summaries"):
        dump = json.dumps(imported.world.rows(f"SELECT * FROM {table}"), ensure_ascii=False)
        assert PRIVATE not in dump, table


def test_the_summary_table_counts_files_sessions_and_events(imported: Imported) -> None:
    assert imported.hooked is not None
    shown = " ".join(imported.first.stdout.split())
    for column in ("files", "sessions", "imported", "already present", "errors"):
        assert column in shown, shown
    # files, sessions, events imported (every event of the log then), already present
    assert imported.codex_hooked is not None
    hooked = {imported.hooked.stem, codex_session_id(imported.codex_hooked)}
    stored = [e for e in imported.world.events() if str(e["event_key"]).startswith(
        ("transcript:", "tool:")) and e["content_session_id"] not in hooked]  # fmt: skip
    assert f"│ 3 │ 3 │ {len(stored)} │ 0 │" in shown, shown


def test_a_second_run_reads_nothing_again(imported: Imported) -> None:
    second = imported.second
    assert second["files"] == 3
    assert [r["lines"] for r in second["reports"]] == [0, 0, 0]
    assert second["imported"] == second["present"] == 0


def test_a_session_the_hooks_delivered_is_not_stored_twice(imported: Imported) -> None:
    assert imported.hooked is not None
    events = imported.events(imported.hooked.stem)
    assert Counter(e["kind"] for e in events) == Counter(
        {"session_init": 1, "observation": 1, "summarize": 1, "session_end": 1}
    ), events
    assert not [e for e in events if str(e["event_key"]).startswith("transcript:")]
    (report,) = [r for r in imported.after_hooks["reports"] if r["path"] == str(imported.hooked)]
    assert report["imported"] == 0
    assert report["present"] == 3  # its prompt, tool call and turn end, left to the hooks
    assert imported.after_hooks["imported"] == 0


def payloads_by_kind(imported: Imported, session: str) -> dict[str, Any]:
    events = imported.events(session)
    return {e["kind"]: e["payload"] for e in events if e["kind"] in (
        "session_init", "observation", "summarize")}  # fmt: skip


def test_an_imported_codex_session_holds_what_codex_hooks_sent_for_the_same_session(
    imported: Imported,
) -> None:
    """Codex 0.171's hooks (installed, trusted) against its rollout of the same session: the
    shell call is ``Bash`` with the command, its plain output, the call id as tool_use_id."""
    assert imported.codex_hooked is not None
    hooked = codex_session_id(imported.codex_hooked)
    from_transcript = payloads_by_kind(imported, codex_session_id(imported.codex_read))
    from_hooks = payloads_by_kind(imported, hooked)
    assert from_transcript.keys() == from_hooks.keys() == {
        "session_init", "observation", "summarize"}  # fmt: skip
    assert from_transcript["session_init"] == from_hooks["session_init"]
    assert from_transcript["observation"] == from_hooks["observation"]
    # The fake model's last words count the request's characters, which the hooks' memory
    # block changes: the same kind of answer, not the same text.
    for said in (from_transcript["summarize"], from_hooks["summarize"]):
        assert said["last_assistant_message"].startswith("Done ("), said
    assert not [e for e in imported.events(hooked) if str(e["event_key"]).startswith(
        "transcript:")]  # fmt: skip
    (report,) = [
        r for r in imported.after_hooks["reports"] if r["path"] == str(imported.codex_hooked)
    ]
    assert report["imported"] == 0
    assert report["present"] == 3


def test_an_imported_session_holds_what_the_hooks_sent_for_the_same_session(
    imported: Imported,
) -> None:
    """The same ``READ notes.md`` session twice: once read from its transcript, once
    delivered by Claude Code's hooks. Each event kind holds the same payload both ways."""
    assert imported.hooked is not None
    by_kind: list[dict[str, Any]] = []
    for path in (imported.claude_read, imported.hooked):
        events = imported.events(path.stem)
        by_kind.append({e["kind"]: e["payload"] for e in events if e["kind"] in (
            "session_init", "observation", "summarize")})  # fmt: skip
    from_transcript, from_hooks = by_kind
    assert from_transcript.keys() == from_hooks.keys()
    for kind in from_hooks:  # tool_use_id too: the fake names a call by its prompt and step
        assert from_transcript[kind] == from_hooks[kind], kind


def test_the_readme_says_what_this_suite_checks() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text("utf-8")
    section = readme.split("## Import and watch agent transcripts", 1)[1].split("\n## ", 1)[0]
    flat = " ".join(section.split())
    for words in (
        "workbench import-transcripts",
        "~/.claude/projects/<folder>/<session>.jsonl",
        "~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl",
        "files, sessions, events imported, already present",
        "Nothing is read twice",
        "A session for which the hooks delivered a prompt, a turn's end or the session's end is "
        "left to the hooks",
        "keyed by its `tool_use_id`",
        "`transcript_watch` on (off by default)",
    ):
        assert words in flat, words
