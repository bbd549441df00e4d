"""The Stop hook: it posts the last assistant message (and its no-ops send nothing), read from
the tail of the transcript by ``stop.last_assistant_message``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hooks import _runtime, stop
from tests.conftest import base_env
from tests.hook_harness import (
    FINAL_ANSWER,
    SECRET,
    TRANSCRIPT,
    Recorder,
    load_payload,
    run_hook,
    spooled,
)

# ----- posting the last assistant message -----------------------------------------------------


def test_stop_posts_the_last_assistant_message(
    tmp_path: Path, data_dir: Path, recorder: Recorder
) -> None:
    payload = load_payload("stop", tmp_path)
    assert run_hook("stop", payload, base_env(data_dir, recorder.port)).output() == {}
    (request,) = recorder.to(stop.ROUTE)
    assert request.json() == {
        "contentSessionId": payload["session_id"],
        "last_assistant_message": FINAL_ANSWER,
    }


@pytest.mark.parametrize(
    "payload_of",
    [
        lambda p: load_payload("stop_hook_active", p),
        lambda p: load_payload("stop_subagent", p),
        lambda p: {**load_payload("stop", p), "agent_id": "a1b2c3"},
        lambda p: {**load_payload("stop", p), "stop_hook_active": True},
    ],
    ids=["stop_hook_active", "subagent_stop", "stop_with_agent_id", "stop_active_flag"],
)
def test_stop_no_ops_send_and_spool_nothing(
    payload_of: Any, tmp_path: Path, data_dir: Path, recorder: Recorder, down_env: dict[str, str]
) -> None:
    payload = payload_of(tmp_path)
    assert run_hook("stop", payload, base_env(data_dir, recorder.port)).output() == {}
    assert run_hook("stop", payload, down_env).output() == {}
    assert recorder.requests == []
    assert spooled(data_dir) == []


# ----- the transcript reader -------------------------------------------------------------------


def _assistant(text_blocks: list[Any], message_id: str = "msg_1") -> str:
    return json.dumps(
        {
            "type": "assistant",
            "message": {"id": message_id, "role": "assistant", "content": text_blocks},
        }
    )


def _write(path: Path, *lines: str) -> str:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_last_assistant_message_from_the_fixture_transcript() -> None:
    assert stop.last_assistant_message(str(TRANSCRIPT)) == FINAL_ANSWER
    for chunk in (1, 7, 100, 4096):
        assert stop.last_assistant_message(str(TRANSCRIPT), chunk_bytes=chunk) == FINAL_ANSWER


def test_a_transcript_path_with_a_nul_byte_is_no_transcript() -> None:
    """``open`` raises ValueError (not OSError) for it: the summary goes on without the answer
    (found by the fuzz suite: the Stop hook printed nothing)."""
    assert stop.last_assistant_message("\x00") == ""
    assert stop.last_assistant_message("/tmp/a\x00b.jsonl") == ""


def test_last_assistant_message_shapes(tmp_path: Path) -> None:
    user = json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}})
    tool = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}
    text = {"type": "text", "text": "first"}
    cases = {
        "plain string content": (
            [
                user,
                json.dumps(
                    {"type": "assistant", "message": {"role": "assistant", "content": "plain"}}
                ),
            ],
            "plain",
        ),
        "text blocks joined": (
            [_assistant([text, tool, {"type": "text", "text": "second"}])],
            "first\nsecond",
        ),
        "same message split over lines": (
            [user, _assistant([text], "m2"), _assistant([tool], "m2")],
            "first",
        ),
        "an earlier message is not joined": (
            [_assistant([{"type": "text", "text": "old"}], "m1"), user, _assistant([text], "m2")],
            "first",
        ),
        "no text in the last message": ([_assistant([text], "m1"), _assistant([tool], "m2")], ""),
        "half-written last line skipped": (
            [_assistant([text]), '{"type": "assistant", "mes'],
            "first",
        ),
        "no assistant at all": ([user, user], ""),
        "garbage lines": (["not json", "[]", '{"type": 3}', _assistant([text]), "{{"], "first"),
    }
    for name, (lines, expected) in cases.items():
        path = _write(tmp_path / f"{abs(hash(name))}.jsonl", *lines)
        assert stop.last_assistant_message(path) == expected, name
        assert stop.last_assistant_message(path, chunk_bytes=3) == expected, name
    assert stop.last_assistant_message("") == ""
    assert stop.last_assistant_message(str(tmp_path / "missing.jsonl")) == ""
    assert stop.last_assistant_message(str(tmp_path)) == ""  # a directory


def test_last_assistant_message_is_redacted_before_sending(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "t.jsonl",
        _assistant([{"type": "text", "text": f"done <private>{SECRET}</private> ok"}]),
    )
    payload = {**load_payload("stop"), "transcript_path": path}
    body = stop.build_body(_runtime.HookInput(payload))
    assert body == {"contentSessionId": payload["session_id"], "last_assistant_message": "done  ok"}


def test_only_the_tail_of_a_large_transcript_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    filler = json.dumps(
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x" * 2000}
                ],
            },
        }
    )
    path = tmp_path / "big.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for _ in range(5000):
            fh.write(filler + "\n")
        fh.write(_assistant([{"type": "text", "text": "the end"}]) + "\n")
    assert path.stat().st_size > 10_000_000
    read: list[int] = []

    class Counting:
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __enter__(self) -> Counting:
            return self

        def __exit__(self, *exc: object) -> None:
            self.inner.close()

        def seek(self, *args: int) -> int:
            return int(self.inner.seek(*args))

        def read(self, size: int) -> bytes:
            data: bytes = self.inner.read(size)
            read.append(len(data))
            return data

    monkeypatch.setattr(stop, "open", lambda p, mode: Counting(open(p, mode)), raising=False)  # noqa: PLW1514
    assert stop.last_assistant_message(str(path)) == "the end"
    assert 0 < sum(read) <= 2 * stop.CHUNK_BYTES


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    lines=st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=30),
    chunk=st.integers(min_value=1, max_value=64),
    trailing_newline=st.booleans(),
)
def test_iter_lines_reversed_matches_a_naive_split(
    lines: list[bytes], chunk: int, trailing_newline: bool
) -> None:
    data = b"\n".join(lines) + (b"\n" if trailing_newline else b"")
    with tempfile.NamedTemporaryFile() as fh:
        fh.write(data)
        fh.flush()
        got = list(stop.iter_lines_reversed(fh.name, chunk_bytes=chunk))
    assert got == [line for line in reversed(data.split(b"\n")) if line.strip()]
