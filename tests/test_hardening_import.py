"""Issue 9, item 3: out-of-range numbers in an import are a 422 naming the field, never a 500.

Epochs must be real calendar instants (0 … year 9999, in ms); counters must fit SQLite's
INTEGER (0 … 2**63-1). Nothing is written when one row is refused. The real service, a real
store.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service
from workbench.errors import InvalidInput
from workbench.store import transfer

HUGE = 99999999999999999999  # the value: beyond int64
OBS = {"title": "t", "project": "p"}
SESSION = {"content_session_id": "s1", "project": "p"}
PROMPT = {"content_session_id": "s1", "prompt_number": 1, "prompt_text": "hi"}
SUMMARY = {"content_session_id": "s1", "prompt_number": 1, "request": "r"}

CASES: list[tuple[dict[str, Any], str]] = [
    ({"observations": [{**OBS, "created_at_epoch": HUGE}]}, "observations.0.created_at_epoch"),
    ({"observations": [{**OBS, "created_at_epoch": -5}]}, "observations.0.created_at_epoch"),
    ({"observations": [{**OBS, "created_at_epoch": 10**15}]}, "observations.0.created_at_epoch"),
    ({"observations": [{**OBS, "discovery_tokens": HUGE}]}, "observations.0.discovery_tokens"),
    ({"observations": [{**OBS, "discovery_tokens": -1}]}, "observations.0.discovery_tokens"),
    ({"observations": [{**OBS, "prompt_number": 2**63}]}, "observations.0.prompt_number"),
    ({"sessions": [{**SESSION, "started_at_epoch": HUGE}]}, "sessions.0.started_at_epoch"),
    ({"sessions": [{**SESSION, "completed_at_epoch": -1}]}, "sessions.0.completed_at_epoch"),
    ({"sessions": [{**SESSION, "prompt_counter": HUGE}]}, "sessions.0.prompt_counter"),
    ({"prompts": [{**PROMPT, "created_at_epoch": HUGE}]}, "prompts.0.created_at_epoch"),
    ({"prompts": [{**PROMPT, "prompt_number": HUGE}]}, "prompts.0.prompt_number"),
    ({"summaries": [{**SUMMARY, "created_at_epoch": HUGE}]}, "summaries.0.created_at_epoch"),
    ({"summaries": [{**SUMMARY, "discovery_tokens": HUGE}]}, "summaries.0.discovery_tokens"),
    ({"summaries": [{**SUMMARY, "prompt_number": -3}]}, "summaries.0.prompt_number"),
    (
        {"observations": [{**OBS, "created_at": "0001-01-01T00:00:00Z"}]},
        "observations.0.created_at",
    ),
]


def counts(data_dir: Path) -> dict[str, int]:
    with sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True) as conn:
        return {
            t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("sessions", "user_prompts", "observations", "session_summaries")
        }


def test_out_of_range_numbers_are_a_422_naming_the_field(data_dir: Path, service: Service) -> None:
    before = counts(data_dir)
    for document, field in CASES:
        full = {"format": "workbench-export", "version": 1, **document}
        # A valid session next to the bad row: the whole file is refused, nothing is written.
        full.setdefault("sessions", [{"content_session_id": "ok", "project": "p"}])
        status, reply = service.post("/api/import", full)
        assert status == 422, (field, status, reply)
        assert field in reply["message"], (field, reply)
    assert counts(data_dir) == before


def test_in_range_values_still_import(data_dir: Path, service: Service) -> None:
    document = {
        "sessions": [{**SESSION, "started_at_epoch": 1_764_000_000_000, "prompt_counter": 3}],
        "prompts": [{**PROMPT, "created_at_epoch": 0}],
        "observations": [{**OBS, "created_at_epoch": 253_402_300_799_999, "discovery_tokens": 7}],
        "summaries": [{**SUMMARY, "discovery_tokens": 2**63 - 1}],
    }
    status, reply = service.post("/api/import", document)
    assert status == 200, reply
    assert counts(data_dir) == {
        "sessions": 1,
        "user_prompts": 1,
        "observations": 1,
        "session_summaries": 1,
    }


@pytest.mark.parametrize(("document", "field"), CASES[:3])
def test_the_library_refuses_them_before_writing(document: dict[str, Any], field: str) -> None:
    with pytest.raises(InvalidInput, match=field.replace(".", r"\.")) as caught:
        transfer.parse(document)
    assert caught.value.status_code == 422
