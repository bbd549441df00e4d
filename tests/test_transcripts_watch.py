"""The service's transcript watcher (``transcript_watch``) tailing real agents' transcripts.

A real service with the watcher on (a short interval), in one user's world
(``tests/real_world.py``): the real Claude Code and Codex CLIs run sessions with no hook
installed, and the watcher brings them in; its offsets are the ones ``workbench
import-transcripts`` reads, so the import afterwards reads nothing again. Then the Claude
Code hooks are installed and a session runs with them: once the watcher has read that file
to its end, the session holds the hooks' events only, each once.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.real_transcripts import claude_session, codex_session
from tests.real_world import World, open_world
from tests.test_real_codex import READ_PROMPT

pytestmark = pytest.mark.slow

WATCH = {"WORKBENCH_TRANSCRIPT_WATCH": "1", "WORKBENCH_TRANSCRIPT_WATCH_INTERVAL_S": "0.5"}


def read_to_end(world: World, path: Path, timeout: float = 90) -> dict[str, Any]:
    """Wait until the watcher's saved offset of ``path`` is the file's size; its row."""
    deadline = time.monotonic() + timeout
    while True:
        rows = world.rows("SELECT * FROM transcript_offsets WHERE path = ?", str(path))
        if rows and rows[0]["offset"] == path.stat().st_size:
            return rows[0]
        assert time.monotonic() < deadline, f"the watcher did not read {path} to its end: {rows}"
        time.sleep(0.2)


def kinds_of(world: World, session: str) -> Counter[str]:
    return Counter(e["kind"] for e in world.events() if e["content_session_id"] == session)


def test_the_watcher_imports_sessions_without_hooks_and_never_doubles_hooked_ones(
    tmp_path: Path,
) -> None:
    with open_world(tmp_path) as world:
        (world.project / "notes.md").write_text("The secret word is pumpernickel.\n", "utf-8")
        world.service.env = {**world.env, **WATCH}
        world.service.start(timeout=60)
        claude = claude_session(world, f"READ {world.project / 'notes.md'}")
        codex = codex_session(world, READ_PROMPT)
        claude_row = read_to_end(world, claude)
        assert claude_row["platform"] == "claude"
        assert read_to_end(world, codex)["platform"] == "codex"
        world.service.wait_idle(timeout=60)
        meta = json.loads(codex.read_text("utf-8").splitlines()[0])
        for session in (claude.stem, meta["payload"]["id"]):
            assert kinds_of(world, session) == Counter(
                {"session_init": 1, "observation": 1, "summarize": 1}
            ), session
        sources = world.rows("SELECT DISTINCT platform_source FROM sessions ORDER BY 1")
        assert [s["platform_source"] for s in sources] == ["claude-code", "codex-cli"]

        # The import reads from the watcher's offsets: nothing again.
        proc = world.workbench("import-transcripts", "--json")
        assert proc.returncode == 0, proc.stderr
        report = json.loads(proc.stdout)
        assert [r["lines"] for r in report["reports"]] == [0, 0]

        # Hooks installed: the watcher reads the hooked session's file, stores none of it.
        world.install("claude")
        world.service.stop()
        world.service.start(timeout=60)
        hooked = claude_session(world, f"READ {world.project / 'notes.md'}")
        read_to_end(world, hooked)
        world.service.wait_idle(timeout=60)
        events = [e for e in world.events() if e["content_session_id"] == hooked.stem]
        assert Counter(e["kind"] for e in events) == Counter(
            {"session_init": 1, "observation": 1, "summarize": 1, "session_end": 1}
        ), events
        assert not [e for e in events if str(e["event_key"]).startswith("transcript:")]
