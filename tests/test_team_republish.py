"""Memory rewritten locally after it was published reaches the lake as its new version, once.

Two local paths rewrite published memory:

- a summary is re-written in place (``summaries.upsert``: Stop fired again for the same prompt,
  or ``recompress``); it keeps its id;
- ``recompress`` re-derives an event's observations (``derive.store_result(replace=True)``):
  the new ones get new ids and the old ones are deleted, with no tombstone.

Real parts: the session's PostgreSQL as the catalog, stores written through those real
functions, ``workbench publish`` and ``workbench sql --team`` as CLI runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import Machine, init, machine, seed
from workbench.models import CompressionResult, ObservationDraft, SummaryDraft

pytestmark = pytest.mark.slow


def _sql(m: Machine, query: str) -> list[dict[str, Any]]:
    out = m.run("sql", "--json", "--team", query)
    assert out.returncode == 0, out.stderr + out.stdout
    rows: list[dict[str, Any]] = json.loads(out.stdout)
    return rows


def _rewrite_summary(data_dir: Path, text: str) -> None:
    from workbench.store import summaries
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    with Store(data_dir / "workbench.db") as store, atomic(store.conn):
        summaries.upsert(
            store.conn,
            SummaryDraft(request=text, learned=text),
            content_session_id="s1",
            project="api",
            prompt_number=1,
            created_ms=1_780_000_000_000,
        )


def test_a_summary_rewritten_in_place_is_published_again_and_supersedes_the_old(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", ["cache layer"], summary="first draft")
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()

    _rewrite_summary(ana.data_dir, "second draft")
    published = ana.publish_json()

    assert published["added"]["summaries"] == 1
    assert published["superseded"] == 1
    rows = _sql(ana, "SELECT author, request, learned FROM team_summaries")
    assert rows == [{"author": "ana", "request": "second draft", "learned": "second draft"}]
    in_lake = team_lake.query(tmp_path, "SELECT request FROM lake.summaries")
    assert in_lake == [("second draft",)]
    again = ana.publish_json()
    assert again["snapshot"] is None  # nothing changed since: nothing added, no snapshot
    assert team_lake.query(tmp_path, "SELECT count(*) FROM lake.summaries") == [(1,)]


def _recompress(data_dir: Path, event_id: int, titles: list[str]) -> None:
    """What ``workbench recompress`` stores for one event, with a compressor giving ``titles``."""
    from workbench.derive import store_result
    from workbench.store import events
    from workbench.store.database import Store

    with Store(data_dir / "workbench.db") as store:
        event = events.get(store.conn, event_id)
        assert event is not None
        result = CompressionResult(
            observations=[ObservationDraft(title=t, narrative=f"about {t}") for t in titles]
        )
        store_result(store, event, result, replace=True)


def _event_with_observations(data_dir: Path, titles: list[str]) -> int:
    """An observation event of session s1 (project api) and the observations derived from it."""
    from workbench.derive import store_result
    from workbench.store import events
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    with Store(data_dir / "workbench.db") as store:
        with atomic(store.conn):
            event_id, _ = events.append(
                store.conn,
                "observation",
                {"tool_name": "Read", "tool_input": {}, "tool_response": ""},
                event_key=None,
                content_session_id="s1",
                project="api",
                prompt_number=1,
                enqueue=False,
            )
        event = events.get(store.conn, event_id)
        assert event is not None
        result = CompressionResult(
            observations=[ObservationDraft(title=t, narrative=f"about {t}") for t in titles]
        )
        store_result(store, event, result)
    return event_id


def test_observations_a_recompress_replaced_are_superseded_in_the_lake(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "s1", [])
    event_id = _event_with_observations(ana.data_dir, ["old wording", "kept as is"])
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()

    _recompress(ana.data_dir, event_id, ["new wording", "kept as is"])
    published = ana.publish_json()

    assert published["added"]["observations"] == 1
    assert published["superseded"] == 1  # the old wording
    assert published["tombstoned"] == 0  # nobody forgot anything
    titles = _sql(ana, "SELECT title FROM team_observations ORDER BY title")
    assert titles == [{"title": "kept as is"}, {"title": "new wording"}]
    old = team_lake.query(
        tmp_path,
        "SELECT title, deleted_at_epoch IS NOT NULL FROM lake.observations"
        " WHERE narrative = '' OR title = 'old wording'",
    )
    assert old == [("", True)]  # the old version: tombstoned, its text blanked
    assert ana.publish_json()["snapshot"] is None
