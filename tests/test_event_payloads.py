"""One typed payload per event kind, shared by ingest (writes) and derive (reads).

The events log's JSON is a stored contract (an older version's log must replay, exports carry
it), so the first test pins it key for key through the real ``Ingestor`` and a real store; the
others check that every stored payload reads back to the class that wrote it and that derive
takes its fields from there (``agent_id`` reaching the observation row).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from workbench import event_payloads
from workbench.compress.base import build_compressor
from workbench.derive import compress_event, store_result
from workbench.event_payloads import MemorySave, SessionEnd, SessionInit, Summarize, ToolCall
from workbench.ingest import Ingestor
from workbench.settings import load_settings
from workbench.store import events
from workbench.store.database import Store


@pytest.fixture
def ingest(tmp_path: Path) -> Iterator[tuple[Ingestor, Store]]:
    settings = load_settings(tmp_path, compressor="offline")
    with Store(settings.db_path) as store:
        yield Ingestor(store, settings), store


def stored(store: Store) -> list[tuple[str, dict[str, Any]]]:
    rows = store.conn.execute("SELECT kind, payload FROM events ORDER BY id").fetchall()
    return [(kind, json.loads(payload)) for kind, payload in rows]


def test_ingest_writes_each_kind_as_it_always_did(
    ingest: tuple[Ingestor, Store], tmp_path: Path
) -> None:
    ingestor, store = ingest
    cwd = str(tmp_path / "proj")
    ingestor.session_init(
        content_session_id="s1", project="proj", prompt="fix <private>x</private>it"
    )
    ingestor.observation(
        content_session_id="s1",
        tool_name="Read",
        tool_input={"file_path": "a.py"},
        tool_response={"content": "print(1)"},
        cwd=cwd,
        tool_use_id="t1",
        agent_id="ag",
        agent_type="explorer",
    )
    ingestor.summarize(content_session_id="s1", last_assistant_message="done")
    ingestor.session_end(content_session_id="s1", reason="exit")
    ingestor.memory_save(text="keep this", title="T", project="proj")
    ingestor.memory_save(text="and this", project="proj", platform_source="gemini-cli")
    assert stored(store) == [
        ("session_init", {"project": "proj", "prompt": "fix it", "platformSource": "claude-code"}),
        (
            "observation",
            {
                "tool_name": "Read",
                "tool_input": {"file_path": "a.py"},
                "tool_response": {"content": "print(1)"},
                "cwd": cwd,
                "tool_use_id": "t1",
                "agent_id": "ag",
                "agent_type": "explorer",
            },
        ),
        ("summarize", {"last_assistant_message": "done"}),
        ("session_end", {"reason": "exit"}),
        ("memory_save", {"text": "keep this", "title": "T", "project": "proj"}),
        (
            "memory_save",
            {
                "text": "and this",
                "title": "and this",
                "project": "proj",
                "platform_source": "gemini-cli",
            },
        ),
    ]
    for kind, payload in stored(store):
        typed = event_payloads.parse(kind, payload)
        assert typed is not None
        assert typed.KIND == kind
        assert typed.to_wire() == payload


def test_every_kind_ingest_writes_has_a_class() -> None:
    assert set(event_payloads.KINDS) == {
        "session_init",
        "observation",
        "summarize",
        "session_end",
        "memory_save",
    }
    assert event_payloads.parse("a_kind_from_a_newer_version", {}) is None


def test_an_old_payload_missing_keys_reads_with_the_defaults_derive_used() -> None:
    assert event_payloads.parse("observation", {}) == ToolCall("", None, None)
    assert event_payloads.parse("summarize", {}) == Summarize("")
    assert event_payloads.parse("session_end", {}) == SessionEnd("")
    assert event_payloads.parse("session_init", {"prompt": "p"}) == SessionInit("", "p", "")
    assert event_payloads.parse("memory_save", {"text": "t"}) == MemorySave("t", "", "")


def test_derive_reads_the_typed_payload(ingest: tuple[Ingestor, Store], tmp_path: Path) -> None:
    ingestor, store = ingest
    ingestor.session_init(content_session_id="s1", project="proj", prompt="read the config")
    result = ingestor.observation(
        content_session_id="s1",
        tool_name="Read",
        tool_input={"file_path": str(tmp_path / "config.toml")},
        tool_response={"file": {"content": "[server]\nport = 8080\n"}},
        cwd=str(tmp_path),
        agent_id="sub-1",
        agent_type="explorer",
    )
    assert result.event_id is not None
    event = events.get(store.conn, result.event_id)
    assert event is not None
    compressor = build_compressor(load_settings(tmp_path, compressor="offline"))
    derived = store_result(store, event, compress_event(store, compressor, event))
    assert derived.observation_ids
    rows = store.conn.execute(
        "SELECT agent_id, agent_type FROM observations WHERE event_id = ?", (event.id,)
    ).fetchall()
    assert {tuple(r) for r in rows} == {("sub-1", "explorer")}


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner),
    max_leaves=10,
)


@settings(max_examples=budget(100), deadline=None)
@given(
    kind=st.sampled_from(sorted(event_payloads.KINDS)),
    payload=st.dictionaries(
        st.sampled_from(
            ["tool_name", "tool_input", "cwd", "agent_id", "prompt", "platformSource", "reason"]
            + ["text", "title", "project", "platform_source", "last_assistant_message"]
        )
        | st.text(max_size=8),
        JSON,
    ),
)
def test_fuzz_any_stored_payload_reads_without_raising(kind: str, payload: dict[str, Any]) -> None:
    """A hand-edited or foreign log row never stops the worker: it reads, typed, or defaults."""
    typed = event_payloads.parse(kind, payload)
    assert typed is not None
    assert json.loads(json.dumps(typed.to_wire())) == typed.to_wire()
