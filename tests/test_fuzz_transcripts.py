"""Property-based fuzzing of transcript import (issue 22 item 2): any bytes an agent's session
file may hold.

A transcript is written by another program, is read while it is being written and may be
damaged: lines of every Claude Code and Codex type with hostile fields (lone surrogates,
``<private>`` blocks, NaN-like numbers, 2**80, wrong types, nesting), bytes that are not
UTF-8, lines cut short, a last line with no newline. For every file, given to one real
service (``POST /api/transcripts/import``):

- the answer is a 200 report, never a fault; the lines it counts are exactly the file's
  complete lines, and the bytes after the last newline are reported as pending;
- reading the same file again reads nothing (the offset was saved);
- no stored event holds a ``<private>`` block's marker, and ``PRAGMA integrity_check`` is ok.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Service
from tests.fuzz_harness import budget, integrity, read_only, start_service
from tests.fuzz_strategies import MARKER, json_values, render, texts

pytestmark = pytest.mark.slow

FUZZ_SETTINGS: dict[str, Any] = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large,
                              HealthCheck.function_scoped_fixture],
}  # fmt: skip
_files = itertools.count()

sessions = st.sampled_from(["s-1", "s-2", "", None, 7, "<private>s</private>"])
block_types = st.sampled_from(["text", "tool_use", "tool_result", "image", None, 3])
blocks = st.fixed_dictionaries(
    {"type": block_types},
    optional={"text": texts, "id": st.sampled_from(["t1", "t2", None]), "name": texts,
              "input": json_values, "tool_use_id": st.sampled_from(["t1", "t2", 5]),
              "content": json_values},
)  # fmt: skip
claude_lines = st.fixed_dictionaries(
    {"type": st.sampled_from(["user", "assistant", "attachment", "summary", "x-new", 4])},
    optional={"sessionId": sessions, "cwd": st.sampled_from(["/tmp/p", "", "rel", 1]),
              "uuid": texts, "timestamp": st.sampled_from(["2026-12-04T19:01:29Z", "x", 5]),
              "isSidechain": st.booleans(), "isMeta": st.booleans(),
              "toolUseResult": json_values,
              "message": st.one_of(json_values, st.fixed_dictionaries(
                  {"content": st.one_of(texts, st.lists(blocks, max_size=3))},
                  optional={"stop_reason": st.sampled_from(["end_turn", "tool_use", None])}))},
)  # fmt: skip
codex_payloads = st.fixed_dictionaries(
    {"type": st.sampled_from(["item_completed", "user_message", "task_complete",
                              "function_call", "function_call_output", "custom_tool_call",
                              "message", None])},
    optional={"id": sessions, "cwd": texts, "turn_id": texts, "message": texts,
              "last_agent_message": texts, "call_id": st.sampled_from(["c1", "c2", None]),
              "name": st.sampled_from(["exec_command", "apply_patch", "search", 1]),
              "namespace": st.sampled_from(["mcp__workbench", "mcp__x", None]),
              "arguments": st.one_of(texts, json_values), "output": json_values,
              "item": st.fixed_dictionaries({"type": st.just("UserMessage"),
                                             "content": st.lists(blocks, max_size=2)})},
)  # fmt: skip
codex_lines = st.fixed_dictionaries(
    {"type": st.sampled_from(["session_meta", "turn_context", "event_msg", "response_item",
                              "compacted", "x-new"]),
     "payload": st.one_of(codex_payloads, json_values)},
    optional={"timestamp": texts},
)  # fmt: skip


def encoded(value: Any) -> bytes:
    """One line's bytes: JSON as ``fuzz_strategies.render`` writes it (raw numbers such as
    ``1e400`` and ``NaN`` as written, surrogates escaped)."""
    return render(value).encode("utf-8", errors="surrogatepass")


raw_lines = st.one_of(
    claude_lines.map(encoded),
    codex_lines.map(encoded),
    st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ")),
    st.sampled_from([b"", b"{", b"[]", b"null", b'"x"', b"\xff\xfe", b'{"type": "user"}']),
)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    svc = start_service(tmp_path_factory.mktemp("fuzz-transcripts") / "data")
    try:
        yield svc
    finally:
        svc.stop()


@settings(max_examples=budget(60), **FUZZ_SETTINGS)
@given(
    lines=st.lists(raw_lines, max_size=12),
    codex_name=st.booleans(),
    tail=st.one_of(st.just(b""), st.binary(min_size=1, max_size=30).map(
        lambda b: b.replace(b"\n", b" "))),
)  # fmt: skip
def test_any_transcript_bytes_are_read_once_and_never_fault(
    service: Service, tmp_path: Path, lines: list[bytes], codex_name: bool, tail: bytes
) -> None:
    name = f"rollout-{next(_files)}.jsonl" if codex_name else f"session-{next(_files)}.jsonl"
    path = tmp_path / name
    path.write_bytes(b"".join(line + b"\n" for line in lines) + tail)
    status, report = service.post("/api/transcripts/import", {"path": str(path)})
    assert status == 200, report
    assert report["lines"] == len(lines), report
    assert report["pendingBytes"] == len(tail), report
    assert report["errors"] == [] or all("gone" not in e for e in report["errors"]), report
    status, again = service.post("/api/transcripts/import", {"path": str(path)})
    assert status == 200, again
    assert again["lines"] == 0, again
    assert again["imported"] == 0, again


def _call_and_result(arguments: str) -> bytes:
    """A Claude Code tool call whose input is ``arguments`` (JSON text), and its result."""
    head = '{"type":"assistant","sessionId":"s-odd","cwd":"/tmp/p","uuid":"u1","message":'
    call = head + '{"content":[{"type":"tool_use","id":"t-odd","name":"Read","input":'
    result = (
        '{"type":"user","sessionId":"s-odd","cwd":"/tmp/p","uuid":"u2","message":'
        '{"content":[{"type":"tool_result","tool_use_id":"t-odd","content":"ok"}]}}'
    )
    return (call + arguments + "}]}}\n" + result + "\n").encode()


@pytest.mark.parametrize(
    "arguments",
    [
        '{"n": NaN}',
        '{"n": Infinity}',
        '{"n": 1e400}',
        "[" * 2000 + "]" * 2000,
        '{"a":' * 200 + "1" + "}" * 200,
    ],
    ids=["nan", "infinity", "overflow", "deep-2000", "deep-200"],
)
def test_numbers_json_refuses_and_deep_nesting_cost_only_their_line(
    service: Service, tmp_path: Path, arguments: str
) -> None:
    path = tmp_path / f"odd-{next(_files)}.jsonl"
    path.write_bytes(_call_and_result(arguments))
    status, report = service.post("/api/transcripts/import", {"path": str(path)})
    assert status == 200, report
    assert report["lines"] == 2, report
    assert report["badLines"] == 1, report  # the call's line; its result is then unknown
    assert report["unknown"] == 1, report


def test_after_the_fuzzing_no_private_marker_is_stored_and_the_store_is_sound(
    service: Service,
) -> None:
    db = service.data_dir / "workbench.db"
    assert integrity(db) == ["ok"]
    with read_only(db) as conn:
        for table in ("events", "user_prompts", "observations", "session_summaries"):
            rows = conn.execute(f"SELECT * FROM {table}").fetchall()
            assert MARKER not in json.dumps([list(r) for r in rows], ensure_ascii=False), table
