"""Export/import at the store level: round trip, idempotence, implied sessions, redaction.

Two real SQLite files in ``tmp_path``; rows are written with the store's own functions.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workbench.errors import InvalidInput
from workbench.models import ObservationDraft, SummaryDraft
from workbench.store import observations, sessions, stats, summaries, transfer
from workbench.store.connection import atomic
from workbench.store.database import Store

KINDS = ("sessions", "prompts", "observations", "summaries")


@pytest.fixture
def stores(tmp_path: Path) -> Iterator[tuple[Store, Store]]:
    source, target = Store(tmp_path / "a.db"), Store(tmp_path / "b.db")
    try:
        yield source, target
    finally:
        source.close()
        target.close()


def fill(store: Store) -> None:
    conn = store.conn
    with atomic(conn):
        s1 = sessions.ensure(conn, "sess-1", "alpha", at_ms=1_700_000_000_000)
        sessions.record_prompt(conn, s1, "add a cache to the loader", 1_700_000_001_000)
        s1 = sessions.get(conn, "sess-1")  # record_prompt numbers from the row it is given
        sessions.record_prompt(conn, s1, "now make it thread safe", 1_700_000_002_000)
        s2 = sessions.ensure(conn, "sess-2", "beta", at_ms=1_700_000_003_000)
        sessions.record_prompt(conn, s2, "why is CI red", 1_700_000_004_000)
        sessions.end(conn, "sess-2", "completed", 1_700_000_009_000)
        observations.insert(
            conn,
            ObservationDraft(
                type="feature",
                title="Loader cache added",
                narrative="An LRU cache.",
                facts=["maxsize=128"],
                concepts=["cache"],
                files_modified=["loader.py"],
            ),
            content_session_id="sess-1",
            project="alpha",
            prompt_number=1,
            discovery_tokens=40,
            agent_id="a1",
            agent_type="explorer",
            created_ms=1_700_000_001_500,
        )
        observations.insert(
            conn,
            ObservationDraft(type="bugfix", title="Lock around cache fill"),
            content_session_id="sess-1",
            project="alpha",
            prompt_number=2,
            created_ms=1_700_000_002_500,
        )
        observations.insert(
            conn,
            ObservationDraft(title="Remember the staging URL", concepts=["manual"]),
            content_session_id=None,
            project="manual",
            generated_by="manual",
            created_ms=1_700_000_005_000,
        )
        summaries.upsert(
            conn,
            SummaryDraft(
                request="add a cache", completed="Loader cache added", files_edited=["loader.py"]
            ),
            content_session_id="sess-1",
            project="alpha",
            prompt_number=1,
            discovery_tokens=7,
            created_ms=1_700_000_001_900,
        )


def counts(store: Store) -> dict[str, int]:
    totals = stats.totals(store.conn)
    return {k: totals[k] for k in KINDS}


def comparable(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k != "exported_at"}


def import_json(store: Store, document: Any) -> dict[str, dict[str, int]]:
    """Import the way the service does: through JSON text, then parse, then import."""
    return transfer.import_document(store.conn, transfer.parse(json.loads(json.dumps(document))))


# ----- round trip -----------------------------------------------------------------------------
def test_round_trip_reproduces_the_export(stores: tuple[Store, Store]) -> None:
    source, target = stores
    fill(source)
    document = transfer.export(source.conn)
    assert document["format"] == "workbench-export"
    assert document["version"] == 1

    report = import_json(target, document)

    assert report == {
        "sessions": {"imported": 2, "skipped": 0},
        "prompts": {"imported": 3, "skipped": 0},
        "observations": {"imported": 3, "skipped": 0},
        "summaries": {"imported": 1, "skipped": 0},
    }
    assert (
        counts(target)
        == counts(source)
        == {"sessions": 2, "prompts": 3, "observations": 3, "summaries": 1}
    )
    assert comparable(transfer.export(target.conn)) == comparable(document)


def test_round_trip_keeps_links_to_sessions(stores: tuple[Store, Store]) -> None:
    source, target = stores
    fill(source)
    import_json(target, transfer.export(source.conn))
    conn = target.conn
    orphans = conn.execute(
        "SELECT count(*) FROM observations WHERE content_session_id IS NOT NULL"
        " AND session_id IS NULL"
    ).fetchone()[0]
    assert orphans == 0
    assert (
        conn.execute(
            "SELECT count(*) FROM user_prompts p JOIN sessions s ON s.id = p.session_id"
        ).fetchone()[0]
        == 3
    )
    assert sessions.get(conn, "sess-1").prompt_counter == 2
    assert sessions.get(conn, "sess-2").status == "completed"


def test_import_keeps_the_hash_dedup_and_fts(stores: tuple[Store, Store]) -> None:
    source, target = stores
    fill(source)
    import_json(target, transfer.export(source.conn))
    src = {r[0] for r in source.conn.execute("SELECT content_hash FROM observations")}
    dst = {r[0] for r in target.conn.execute("SELECT content_hash FROM observations")}
    assert src == dst
    hits = target.conn.execute(
        "SELECT count(*) FROM observations_fts WHERE observations_fts MATCH 'staging'"
    ).fetchone()[0]
    assert hits == 1


def test_export_of_one_project(stores: tuple[Store, Store]) -> None:
    source, _ = stores
    fill(source)
    document = transfer.export(source.conn, "beta")
    assert [s["content_session_id"] for s in document["sessions"]] == ["sess-2"]
    assert [p["prompt_text"] for p in document["prompts"]] == ["why is CI red"]
    assert document["observations"] == []
    assert document["summaries"] == []


# ----- idempotence ----------------------------------------------------------------------------
def test_reimport_skips_everything(stores: tuple[Store, Store]) -> None:
    source, target = stores
    fill(source)
    document = transfer.export(source.conn)
    import_json(target, document)
    before = comparable(transfer.export(target.conn))

    report = import_json(target, document)

    assert report == {
        "sessions": {"imported": 0, "skipped": 2},
        "prompts": {"imported": 0, "skipped": 3},
        "observations": {"imported": 0, "skipped": 3},
        "summaries": {"imported": 0, "skipped": 1},
    }
    assert comparable(transfer.export(target.conn)) == before


def test_import_into_the_same_store_skips_everything(stores: tuple[Store, Store]) -> None:
    source, _ = stores
    fill(source)
    before = counts(source)
    report = import_json(source, transfer.export(source.conn))
    assert all(r["imported"] == 0 for r in report.values())
    assert counts(source) == before


# ----- implied sessions -----------------------------------------------------------------------
def test_rows_for_an_unknown_session_get_a_session(stores: tuple[Store, Store]) -> None:
    _, target = stores
    document = {
        "format": "workbench-export",
        "version": 1,
        "prompts": [
            {
                "content_session_id": "ghost",
                "project": "gamma",
                "prompt_number": 3,
                "prompt_text": "from another machine",
            }
        ],
        "observations": [
            {"content_session_id": "ghost-2", "project": "delta", "title": "an orphan observation"}
        ],
        "summaries": [
            {
                "content_session_id": "ghost",
                "project": "gamma",
                "prompt_number": 3,
                "request": "from another machine",
            }
        ],
    }
    report = import_json(target, document)
    conn = target.conn
    ghost = sessions.get(conn, "ghost")
    assert ghost is not None
    assert ghost.project == "gamma"
    assert ghost.prompt_counter == 3
    assert sessions.get(conn, "ghost-2").project == "delta"
    assert report["prompts"] == {"imported": 1, "skipped": 0}
    linked = conn.execute(
        "SELECT count(*) FROM user_prompts WHERE session_id = ?", (ghost.id,)
    ).fetchone()[0]
    assert linked == 1
    obs_session = conn.execute("SELECT session_id FROM observations").fetchone()[0]
    assert obs_session == sessions.get(conn, "ghost-2").id


# ----- redaction ------------------------------------------------------------------------------
def test_private_text_in_imported_rows_is_stripped(
    stores: tuple[Store, Store], tmp_path: Path
) -> None:
    _, target = stores
    secret = "TOKEN-ABC123"
    document = {
        "sessions": [{"content_session_id": "s", "project": "p"}],
        "prompts": [
            {
                "content_session_id": "s",
                "prompt_number": 1,
                "prompt_text": f"deploy it <private>{secret}</private> now",
            },
            {
                "content_session_id": "s",
                "prompt_number": 2,
                "prompt_text": f"<private>{secret}</private>",
            },
        ],
        "observations": [
            {
                "content_session_id": "s",
                "title": f"Deploy <private>{secret}</private>",
                "subtitle": f"<private>{secret}</private>sub",
                "narrative": f"ran <system-reminder>{secret}</system-reminder> deploy",
                "facts": [f"<private>{secret}</private>fact"],
            }
        ],
        "summaries": [
            {
                "content_session_id": "s",
                "prompt_number": 1,
                "learned": f"<private>{secret}</private>learned",
                "notes": f"n <private>{secret}</private>",
            }
        ],
    }
    report = import_json(target, document)

    assert report["prompts"] == {"imported": 1, "skipped": 1}  # the private-only one
    conn = target.conn
    assert [r[0] for r in conn.execute("SELECT prompt_text FROM user_prompts")] == [
        "deploy it  now"
    ]
    obs = conn.execute("SELECT title, subtitle, narrative, facts FROM observations").fetchone()
    assert tuple(obs) == ("Deploy", "sub", "ran  deploy", '["fact"]')
    summary = conn.execute("SELECT learned, notes FROM session_summaries").fetchone()
    assert tuple(summary) == ("learned", "n")
    target.close()
    for path in tmp_path.iterdir():
        if path.name.startswith("b.db"):
            assert secret.encode() not in path.read_bytes(), path


def test_observation_with_only_private_title_gets_a_placeholder(
    stores: tuple[Store, Store],
) -> None:
    _, target = stores
    import_json(target, {"observations": [{"title": "<private>x</private>", "narrative": "n"}]})
    assert target.conn.execute("SELECT title FROM observations").fetchone()[0] == "untitled"


# ----- invalid files --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("document", "words"),
    [
        ([], "expects a JSON object"),
        ("text", "expects a JSON object"),
        ({"format": "claude-mem"}, "unknown import format 'claude-mem'"),
        ({"version": 2}, "unsupported export version 2"),
        ({"observations": [{"title": ""}]}, "observations.0.title"),
        ({"prompts": [{"content_session_id": "s", "prompt_number": 1}]}, "prompts.0.prompt_text"),
        ({"sessions": [{"project": "p"}]}, "sessions.0.content_session_id"),
        ({"observations": [{"title": "t", "facts": "not a list"}]}, "observations.0.facts"),
        (
            {"observations": [{"title": "t", "created_at": "last tuesday"}]},
            "observations.0.created_at",
        ),
        (
            {"sessions": [{"content_session_id": "s", "started_at": "soon"}]},
            "sessions.0.started_at",
        ),
    ],
)
def test_invalid_document_is_refused_with_its_location(
    stores: tuple[Store, Store], document: Any, words: str
) -> None:
    _, target = stores
    with pytest.raises(InvalidInput, match=words.replace(".", r"\.")):
        import_json(target, document)
    assert counts(target) == dict.fromkeys(KINDS, 0)


def test_an_integer_too_large_for_sqlite_writes_nothing(stores: tuple[Store, Store]) -> None:
    """Refused at parse time, naming the field (it used to reach SQLite): nothing is written."""
    _, target = stores
    document = {
        "sessions": [{"content_session_id": "s", "project": "p"}],
        "prompts": [{"content_session_id": "s", "prompt_number": 1, "prompt_text": "ok"}],
        "observations": [{"title": "t", "discovery_tokens": 2**70}],
    }
    with pytest.raises(InvalidInput, match=r"observations\.0\.discovery_tokens"):
        import_json(target, document)
    assert counts(target) == dict.fromkeys(KINDS, 0)
    assert not target.conn.in_transaction
