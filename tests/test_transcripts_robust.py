"""Transcript import when files misbehave: written to, cut, rotated, deleted, damaged.

The transcripts are real (``tests/real_transcripts.py``: one real Claude Code session with a
``Read``, one real Codex session with ``cat notes.md``), copied and then damaged the way a
disk, an editor or a running agent damages them. Each test gives the copy to a real service
(``POST /api/transcripts/import``, what ``workbench import-transcripts`` sends per file) and
reads back what it stored and reported.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agent_home import agent_env
from tests.conftest import Service, run_workbench
from tests.real_transcripts import claude_session, codex_session
from tests.real_world import open_world
from tests.test_real_codex import READ_PROMPT

KINDS = ("session_init", "observation", "summarize")


@dataclass(frozen=True)
class Originals:
    claude: bytes
    claude_other: bytes
    codex: bytes


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Originals]:
    with open_world(tmp_path_factory.mktemp("robust")) as world:
        (world.project / "notes.md").write_text("The secret word is pumpernickel.\n", "utf-8")
        claude = claude_session(world, f"READ {world.project / 'notes.md'}")
        other = claude_session(world, "Say hello.")
        codex = codex_session(world, READ_PROMPT)
        yield Originals(claude.read_bytes(), other.read_bytes(), codex.read_bytes())


def send(service: Service, path: Path) -> dict[str, Any]:
    status, report = service.post("/api/transcripts/import", {"path": str(path)})
    assert status == 200, report
    assert isinstance(report, dict)
    return report


def stored(service: Service) -> list[tuple[str, str]]:
    """(kind, event_key) of every logged event, in order."""
    conn = sqlite3.connect(f"file:{service.data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return [(str(k), str(key)) for k, key in conn.execute(
            "SELECT kind, event_key FROM events ORDER BY id")]  # fmt: skip
    finally:
        conn.close()


def kinds(service: Service) -> list[str]:
    return sorted(kind for kind, _ in stored(service))


def test_a_line_still_being_written_waits_for_its_newline(
    originals: Originals, make_service: Any, tmp_path: Path
) -> None:
    service = make_service()
    path = tmp_path / "live.jsonl"
    cut = originals.claude.rindex(b"\n", 0, len(originals.claude) - 1)  # the last line
    first_part = originals.claude[: cut + 1 + 40]  # 40 bytes of the last line
    path.write_bytes(first_part)
    report = send(service, path)
    assert report["pendingBytes"] == 40
    assert report["badLines"] == 0
    with path.open("ab") as stream:  # the agent finishes the line, then the next ones
        stream.write(originals.claude[len(first_part) :])
    again = send(service, path)
    assert again["pendingBytes"] == 0
    assert again["badLines"] == 0
    assert again["lines"] == 1  # only the finished line: nothing before it was read twice
    assert kinds(service) == sorted(KINDS)


def test_bad_utf8_and_broken_json_lose_only_their_own_line(
    originals: Originals, make_service: Any, tmp_path: Path
) -> None:
    service = make_service()
    lines = originals.codex.splitlines(keepends=True)
    damaged = [b"\xff\xfe\x00garbage\n", b'{"type": "event_msg", "payload": {\n', b"[1, 2]\n"]
    # A prompt whose text holds bytes that are not UTF-8 and an escaped lone surrogate.
    prompt = json.loads(next(line for line in lines if b'"UserMessage"' in line))
    prompt["payload"]["item"]["content"][0]["text"] = "caf\udce9 PLACEHOLDER \ud83d"
    prompt["payload"]["turn_id"] = "a-later-turn"
    raw = json.dumps(prompt).encode().replace(b"PLACEHOLDER", b"\xe9t\xe9")
    raw = raw.replace(b"caf\\udce9", b"caf")
    path = tmp_path / "rollout-damaged.jsonl"
    path.write_bytes(b"".join(lines[:3] + damaged + lines[3:]) + raw + b"\n")
    report = send(service, path)
    assert report["badLines"] == 3  # the bytes, the cut object, JSON that is no object
    assert report["errors"] == []
    assert kinds(service) == sorted([*KINDS, "session_init"])
    conn = sqlite3.connect(f"file:{service.data_dir / 'workbench.db'}?mode=ro", uri=True)
    texts = [r[0] for r in conn.execute("SELECT prompt_text FROM user_prompts ORDER BY id")]
    conn.close()
    assert texts[-1] == "caf \ufffdt\ufffd \ufffd"


def test_a_huge_line_is_skipped_and_counted_without_losing_the_rest(
    originals: Originals, make_service: Any, tmp_path: Path
) -> None:
    service = make_service(WORKBENCH_TRANSCRIPT_MAX_LINE_BYTES=str(1024 * 1024))
    huge = json.dumps({"type": "assistant", "message": {"content": "x" * (5 * 1024 * 1024)}})
    path = tmp_path / "huge.jsonl"
    lines = originals.claude.splitlines(keepends=True)
    path.write_bytes(b"".join(lines[:2]) + huge.encode() + b"\n" + b"".join(lines[2:]))
    report = send(service, path)
    big_real_lines = sum(1 for line in lines if len(line) > 1024 * 1024)
    assert report["badLines"] == 1 + big_real_lines
    assert kinds(service) == sorted(KINDS)


def test_unknown_line_types_are_skipped_and_counted(
    originals: Originals, make_service: Any, tmp_path: Path
) -> None:
    service = make_service()
    future = [
        {"type": "from-a-later-version", "sessionId": "x", "what": "a new kind of line"},
        {"no": "type at all"},
        {"type": "user", "message": "not an object"},
    ]
    path = tmp_path / "future.jsonl"
    path.write_bytes(b"".join(json.dumps(f).encode() + b"\n" for f in future) + originals.claude)
    report = send(service, path)
    assert report["unknown"] == 3
    assert report["badLines"] == 0
    assert kinds(service) == sorted(KINDS)


def test_a_rotated_or_rewritten_file_is_read_again_from_its_start(
    originals: Originals, make_service: Any, tmp_path: Path
) -> None:
    service = make_service()
    path = tmp_path / "session.jsonl"
    path.write_bytes(originals.claude)
    assert send(service, path)["imported"] == 3
    replacement = tmp_path / "session.jsonl.new"
    replacement.write_bytes(originals.claude_other)
    replacement.replace(path)  # a new file under the old name (a new inode)
    report = send(service, path)
    assert report["restarted"] is True
    assert report["imported"] == 2  # its prompt and its turn's end
    path.write_bytes(originals.claude)  # rewritten in place: the first session again
    again = send(service, path)
    assert again["restarted"] is True
    assert again["imported"] == 0
    assert again["present"] == 3  # the same keys: nothing stored twice
    assert len(stored(service)) == 5


def test_a_deleted_file_is_an_error_in_the_report_not_a_failure(
    originals: Originals, make_service: Any, tmp_path: Path
) -> None:
    service = make_service()
    path = tmp_path / "gone.jsonl"
    path.write_bytes(originals.claude)
    path.unlink()
    report = send(service, path)
    assert report["errors"] == [f"{path}: the file is gone (deleted or moved)"]
    assert stored(service) == []


def test_a_path_that_is_no_transcript_is_refused_with_the_fix(make_service: Any) -> None:
    service = make_service()
    for path, words in [
        ("relative/x.jsonl", "not an absolute path"),
        ("/etc/passwd", "not a .jsonl file"),
    ]:
        status, reply = service.post("/api/transcripts/import", {"path": path})
        assert status == 400, reply
        assert words in reply["message"], reply


def test_a_tool_call_and_its_result_read_in_two_passes_are_one_observation(
    originals: Originals, make_service: Any, tmp_path: Path
) -> None:
    """The watcher may read a ``tool_use`` in one round and its result in the next: the
    waiting call is persisted with the offset (``transcript_offsets.state``)."""
    service = make_service()
    lines = originals.claude.splitlines(keepends=True)
    (call,) = [n for n, line in enumerate(lines) if b'"type":"tool_use"' in line]
    path = tmp_path / "two-passes.jsonl"
    path.write_bytes(b"".join(lines[: call + 1]))
    assert send(service, path)["imported"] == 1  # the prompt; the call waits for its result
    with path.open("ab") as stream:
        stream.write(b"".join(lines[call + 1 :]))
    assert send(service, path)["imported"] == 2  # the call with its result, the turn's end
    assert kinds(service) == sorted(KINDS)
    conn = sqlite3.connect(f"file:{service.data_dir / 'workbench.db'}?mode=ro", uri=True)
    (payload,) = conn.execute("SELECT payload FROM events WHERE kind = 'observation'").fetchone()
    conn.close()
    assert json.loads(payload)["tool_name"] == "Read"


def test_the_watcher_without_history_follows_old_files_from_their_end(
    originals: Originals, make_service: Any, tmp_path: Path
) -> None:
    """``transcript_watch_history`` off: a file written before the service started is not
    imported; what the agent appends to it afterwards is."""
    folder = tmp_path / "transcripts"
    folder.mkdir()
    path = folder / "old.jsonl"
    path.write_bytes(originals.claude)
    os.utime(path, (time.time() - 3600, time.time() - 3600))
    service = make_service(
        WORKBENCH_TRANSCRIPT_WATCH="1",
        WORKBENCH_TRANSCRIPT_WATCH_INTERVAL_S="0.3",
        WORKBENCH_TRANSCRIPT_WATCH_HISTORY="0",
        WORKBENCH_TRANSCRIPT_GLOBS=json.dumps([str(folder / "*.jsonl")]),
    )
    wait_for(lambda: offset_of(service, path) == len(originals.claude), "the file's end")
    assert stored(service) == []
    with path.open("ab") as stream:
        stream.write(originals.claude_other)  # the agent goes on: a new prompt and its answer
    wait_for(lambda: len(stored(service)) == 2, "the appended session's two events")
    assert kinds(service) == ["session_init", "summarize"]


def offset_of(service: Service, path: Path) -> int | None:
    conn = sqlite3.connect(f"file:{service.data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        row = conn.execute(
            "SELECT offset FROM transcript_offsets WHERE path = ?", (str(path),)
        ).fetchone()
    finally:
        conn.close()
    return None if row is None else int(row[0])


def wait_for(ready: Any, what: str, timeout: float = 60) -> None:
    """Poll ``ready()`` until true (a liveness bound, not a speed claim)."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, f"waited {timeout} s for {what}"
        time.sleep(0.1)


def test_the_command_says_where_it_looked_when_there_is_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = agent_env(home, tmp_path / "data")
    proc = run_workbench(env, "import-transcripts")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [
        "no", "transcript", "files", "found", "in:",
        f"{home}/.claude/projects/**/*.jsonl,", f"{home}/.codex/sessions/**/*.jsonl",
    ]  # fmt: skip
    assert not (tmp_path / "data").exists()  # no service was started for nothing
    wrong = run_workbench(env, "import-transcripts", str(tmp_path))
    assert wrong.returncode == 0  # a folder without transcripts: the same message
    notes = tmp_path / "notes.txt"
    notes.write_text("x", "utf-8")
    refused = run_workbench(env, "import-transcripts", str(notes))
    assert refused.returncode != 0
    assert "is not a .jsonl file" in refused.stdout + refused.stderr


def renamed(transcript: bytes, n: int) -> bytes:
    """The session again as session ``n``: its session id and line ids made unique."""
    text = transcript.decode("utf-8")
    for line in transcript.decode("utf-8").splitlines():
        record = json.loads(line)
        for old in (record.get("sessionId"), record.get("uuid")):
            if isinstance(old, str):
                text = text.replace(old, f"{old[:-6]}{n:06d}")
    return text.replace("toolu_", f"toolu_{n}_").encode("utf-8")


def test_a_long_file_is_read_once_through_its_periodic_offset_saves(
    originals: Originals, make_service: Any, tmp_path: Path
) -> None:
    """More lines than ``importer.SAVE_EVERY``: the offset saved along the way must not move
    the reading (it hashes the file's head)."""
    copies = 12
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"".join(renamed(originals.claude, n) for n in range(copies)))
    lines = path.read_bytes().count(b"\n")
    assert lines > 200
    service = make_service()
    report = send(service, path)
    assert report["lines"] == lines
    assert report["imported"] == 3 * copies
    assert offset_of(service, path) == path.stat().st_size
    assert len(stored(service)) == 3 * copies


def test_the_watcher_leaves_lines_younger_than_the_settle_time_for_later(
    originals: Originals, make_service: Any, tmp_path: Path
) -> None:
    """``transcript_watch_settle_s``: a line is taken once the hooks had their time to
    deliver it; here an hour, so the real session (minutes old) is not read yet."""
    folder = tmp_path / "transcripts"
    folder.mkdir()
    path = folder / "young.jsonl"
    path.write_bytes(originals.claude)
    service = make_service(
        WORKBENCH_TRANSCRIPT_WATCH="1",
        WORKBENCH_TRANSCRIPT_WATCH_INTERVAL_S="0.3",
        WORKBENCH_TRANSCRIPT_WATCH_SETTLE_S="3600",
        WORKBENCH_TRANSCRIPT_GLOBS=json.dumps([str(folder / "*.jsonl")]),
    )
    wait_for(lambda: offset_of(service, path) is not None, "the watcher's first round")
    assert offset_of(service, path) == 0  # its first line is timestamped, and young
    assert stored(service) == []
    status, report = service.post("/api/transcripts/import", {"path": str(path)})
    assert status == 200  # the command does not wait: the user asked for it now
    assert report["imported"] == 3
