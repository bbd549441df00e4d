"""Full text that knows code: identifiers match by their parts and whole, phrases rank first.

Issue 10, item 3: "Bumped cypress for TimelineScheduler" was not in the full-text top 10 for
its own title, and ``ReviewBuildWorker`` could not be found as "build worker". Every test
here runs the real FTS5 tables (triggers, migrations) on a SQLite file in ``tmp_path``; the
title case also goes through a real service over HTTP.
"""

from __future__ import annotations

import re
import sqlite3
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import Service, base_env, free_port
from workbench.models import ObservationDraft
from workbench.recall import fts
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

TITLE = "Bumped cypress for TimelineScheduler"


def add(conn: sqlite3.Connection, title: str, narrative: str = "", **extra: object) -> int:
    obs_id, created = observations.insert(
        conn,
        ObservationDraft(title=title, narrative=narrative, **extra),  # type: ignore[arg-type]
        content_session_id="s",
        project="p",
    )
    assert created
    return obs_id


def top(conn: sqlite3.Connection, query: str, limit: int = 10) -> list[int]:
    return [i for i, _ in fts.rank(conn, "observations", query, limit=limit)]


# -- the reported case: an exact title in a store where its words are everywhere --------------
def seed_dependency_bumps(store: Store) -> int:
    """A project named after its main class, with months of dependency-bump memories.

    The target is the oldest row. "bumped" and "cypress" are common (hundreds of bumps),
    and "TimelineScheduler" is in more than a quarter of the rows (the project's own name),
    so no single word of the title singles it out: only the words together do.
    """
    with atomic(store.conn):
        target = add(store.conn, TITLE, "Upgraded the end-to-end test runner of the app.")
        for i in range(500):
            add(
                store.conn,
                f"Bumped cypress from 12.{i} to 12.{i + 1}",
                "Dependabot upgrade of the end-to-end test runner; the suite passed.",
            )
        for i in range(450):
            add(
                store.conn,
                f"TimelineScheduler slot {i} fix",
                f"The TimelineScheduler skipped slot {i} when the week began on a Sunday.",
            )
        for i in range(300):
            add(store.conn, f"Bumped eslint to 8.{i}", "Lint rules updated, no code change.")
    return target


@pytest.fixture(scope="module")
def bumps_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, int]]:
    data_dir: Path = tmp_path_factory.mktemp("bumps") / "data"
    data_dir.mkdir()
    with Store(data_dir / "workbench.db") as store:
        target = seed_dependency_bumps(store)
    port = free_port()
    service = Service(
        data_dir=data_dir, port=port, env=base_env(data_dir, port, WORKBENCH_EMBEDDER="none")
    ).start()
    yield service, target
    service.stop()


def test_an_exact_title_is_top_1_for_its_own_title(bumps_service: tuple[Service, int]) -> None:
    svc, target = bumps_service
    params = urllib.parse.urlencode({"query": TITLE, "mode": "fts", "format": "json"})
    status, body = svc.get(f"/api/search?{params}")
    assert status == 200, body
    assert body["observations"][0]["id"] == target, body["observations"][:3]


def test_an_exact_title_in_other_case_and_spacing_is_still_top_1(
    bumps_service: tuple[Service, int],
) -> None:
    svc, target = bumps_service
    for query in (
        "bumped cypress for timelinescheduler",
        "  Bumped   Cypress for TimelineScheduler",
    ):
        params = urllib.parse.urlencode({"query": query, "mode": "fts", "format": "json"})
        _, body = svc.get(f"/api/search?{params}")
        assert body["observations"][0]["id"] == target, query


# -- identifiers: by their parts and by their whole ---------------------------------------------
@pytest.fixture(scope="module")
def code_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, dict[str, int]]]:
    store = Store(tmp_path_factory.mktemp("code") / "workbench.db")
    ids: dict[str, int] = {}
    with atomic(store.conn):
        ids["camel"] = add(store.conn, "ReviewBuildWorker stalls on large diffs")
        ids["snake"] = add(store.conn, "Session guard", "check_token now rejects expired keys.")
        ids["kebab"] = add(store.conn, "Deploy notes", "payments-api needs the new vault role.")
        ids["path"] = add(
            store.conn, "Refund rounding", "Edited src/payments/refund.py to round half-even."
        )
        ids["scattered"] = add(
            store.conn,
            "Weekly notes",
            "The review of the build queue showed one worker idle; a token check in the "
            "payments UI and an api refund page in the src tree.",
        )
        for i in range(40):  # background rows so document frequencies mean something
            add(store.conn, f"Unrelated note {i}", "Tweaked the dashboard colours again.")
    yield store, ids
    store.close()


@pytest.mark.parametrize(
    ("label", "query"),
    [
        ("camel", "ReviewBuildWorker"),  # the whole, as written
        ("camel", "reviewbuildworker"),  # the whole, any case
        ("camel", "build worker"),  # its parts, as words
        ("camel", "BuildWorker"),  # a run of its parts, as an identifier
        ("camel", "review_build_worker"),  # its parts, in another style
        ("snake", "check_token"),
        ("snake", "check token"),
        ("snake", "checkToken"),
        ("kebab", "payments-api"),
        ("kebab", "payments api"),
        ("kebab", "PaymentsApi"),
        ("path", "src/payments/refund.py"),
        ("path", "payments/refund.py"),
        ("path", "refund.py"),
    ],
)
def test_each_identifier_form_matches_by_its_parts_and_whole(
    code_store: tuple[Store, dict[str, int]], label: str, query: str
) -> None:
    store, ids = code_store
    found = top(store.conn, query)
    assert found, query
    assert found[0] == ids[label], (query, found)


@pytest.mark.parametrize(
    ("label", "part"),
    [("camel", "Worker"), ("camel", "review"), ("snake", "token"), ("kebab", "payments")],
)
def test_a_single_part_finds_the_identifier(
    code_store: tuple[Store, dict[str, int]], label: str, part: str
) -> None:
    store, ids = code_store
    assert ids[label] in top(store.conn, part)


def test_a_camel_case_word_in_prompts_and_summaries_is_split_too(tmp_path: Path) -> None:
    from workbench.models import SummaryDraft
    from workbench.store import sessions, summaries

    store = Store(tmp_path / "w.db")
    with atomic(store.conn):
        session = sessions.ensure(store.conn, "s1", "p")
        _, prompt_id, _ = sessions.record_prompt(store.conn, session, "why is HttpRetryPolicy slow")
        summary_id = summaries.upsert(
            store.conn,
            SummaryDraft(learned="InvoiceMailer batches per tenant"),
            content_session_id="s1",
            project="p",
            prompt_number=1,
        )
    assert [i for i, _ in fts.rank(store.conn, "prompts", "retry policy")] == [prompt_id]
    assert [i for i, _ in fts.rank(store.conn, "sessions", "invoice mailer")] == [summary_id]
    store.close()


# -- phrases: contiguous query words rank above the same words scattered ------------------------
def test_a_phrase_ranks_above_scattered_terms(tmp_path: Path) -> None:
    store = Store(tmp_path / "w.db")
    with atomic(store.conn):
        # Same words, same counts, same lengths: bm25 alone ties them, and the newer row
        # (scattered) would win the tie. Only the phrase tells them apart.
        phrase = add(store.conn, "Note", "alpha refund webhook retry omega")
        scattered = add(store.conn, "Note", "retry alpha webhook omega refund")
        for i in range(20):
            add(store.conn, f"Other {i}", "nothing about payments here")
    assert top(store.conn, "refund webhook retry")[:2] == [phrase, scattered]
    assert top(store.conn, "why does the refund webhook retry")[:2] == [phrase, scattered]
    store.close()


def test_query_pieces_add_the_whole_query_and_runs_as_phrases() -> None:
    pieces = fts.query_pieces("Bumped cypress for TimelineScheduler")
    assert pieces[0] == '"bumped cypress for timelinescheduler timeline scheduler"'
    assert '"bumped cypress"' in pieces
    assert '"timeline scheduler"' in pieces
    for term in ('"bumped"', '"cypress"', '"timelinescheduler"', '"timeline"', '"scheduler"'):
        assert term in pieces
    assert '"for"' not in pieces  # a stopword is only ever inside a phrase


# -- hostile text never reaches MATCH raw --------------------------------------------------------
# One quoted string ("" doubles an inner quote), an optional prefix star, joined by " OR ".
SAFE_EXPRESSION = re.compile(r'"(?:[^"]|"")*"\*?(?: OR "(?:[^"]|"")*"\*?)*')
CODE_ALPHABET = st.sampled_from(
    list("aAbBzZ09_-/.:*\"'()^{}[]+ \t\n\\") + ["AND", "OR", "NOT", "NEAR", "Camel", "HTTPx", "é"]
)


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(words=st.lists(CODE_ALPHABET, max_size=40))
def test_fuzz_code_like_text_is_only_ever_quoted_strings(
    code_store: tuple[Store, dict[str, int]], words: list[str]
) -> None:
    store, _ = code_store
    text = "".join(words)
    expression = fts.match_expression(text)
    if expression is not None:
        assert SAFE_EXPRESSION.fullmatch(expression), expression
    for kind in ("observations", "sessions", "prompts"):
        results = fts.rank(store.conn, kind, text, limit=5)  # type: ignore[arg-type]
        assert all(score > 0 for _, score in results)
