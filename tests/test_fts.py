"""FTS5 query building and BM25 ranking on a real store: user text can never break MATCH."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.relevance_set import Seeded, seed
from workbench.errors import InvalidInput
from workbench.models import ObservationDraft
from workbench.recall import fts
from workbench.recall.filters import SearchFilters
from workbench.recall.fts import match_expression
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Store, Seeded]]:
    store = Store(tmp_path_factory.mktemp("fts") / "workbench.db")
    labels = seed(store)
    yield store, labels
    store.close()


# -- the expression ---------------------------------------------------------------------------
def test_question_becomes_or_of_quoted_content_words() -> None:
    # The whole question and its run of content words as phrases (an exact sentence ranks
    # first), then the content words.
    assert match_expression("Why were refunds charged twice?") == (
        '"why were refunds charged twice" OR "refunds charged twice" OR "refunds" OR "charged"'
        ' OR "twice"'
    )


def test_all_stopwords_fall_back_to_every_word() -> None:
    assert match_expression("what is this") == '"what is this" OR "what" OR "is" OR "this"'


@pytest.mark.parametrize("text", ["", "   ", "???", '"', "(((", "*", "-- ** ''", "\x00\x01"])
def test_no_words_means_nothing_to_search(text: str) -> None:
    assert match_expression(text) is None


def test_compound_is_a_phrase_and_its_parts() -> None:
    assert match_expression("foo-bar") == '"foo bar" OR "foo" OR "bar"'
    assert match_expression("snake_case") == '"snake case" OR "snake" OR "case"'


def test_operators_are_plain_words() -> None:
    expr = match_expression("refund AND retry OR NOT NEAR(x)")
    assert expr is not None
    for raw in (" AND ", " NOT ", "NEAR("):
        assert raw not in expr
    assert '"near"' in expr
    assert '"refund"' in expr


def test_trailing_star_is_a_prefix_query_only_after_a_word() -> None:
    assert match_expression("idempot*") == '"idempot"*'
    assert match_expression("ab*") == '"ab"'  # too short to be worth a prefix scan
    assert match_expression("* foo") == '"foo"'


def test_terms_are_deduplicated_and_capped() -> None:
    assert match_expression("Refund refund REFUND") == '"refund"'
    many = " ".join(f"word{i}" for i in range(200))
    expr = match_expression(many)
    assert expr is not None
    assert expr.count(" OR ") == fts.MAX_TERMS - 1


def test_quote_doubles_inner_quotes() -> None:
    assert fts.quote('say "hi"') == '"say ""hi"""'


# -- ranking on the real FTS tables ------------------------------------------------------------
SPECIAL = [
    "foo-bar",
    '"unbalanced',
    'a "quoted phrase" here',
    "AND",
    "OR OR OR",
    "NOT refund",
    "refund AND",
    "*",
    "refund*",
    "(",
    "refund)",
    "NEAR(",
    "NEAR(refund retry, 2)",
    "col:refund",
    "title:refund",
    "^refund",
    "refund + retry",
    "{refund}",
    "'; DROP TABLE observations; --",
    "naïve café 日本語 🚀",
    "Ünïcödé-ßtraße",
    "\\",
    "\x00",
    "a" * 5000,
]


@pytest.mark.parametrize("text", SPECIAL)
@pytest.mark.parametrize("kind", ["observations", "sessions", "prompts"])
def test_special_characters_never_error(seeded: tuple[Store, Seeded], text: str, kind: str) -> None:
    store, _ = seeded
    fts.rank(store.conn, kind, text, limit=5)  # type: ignore[arg-type]


def test_special_queries_still_find_their_words(seeded: tuple[Store, Seeded]) -> None:
    store, labels = seeded
    ids = [i for i, _ in fts.rank(store.conn, "observations", '"idempotency-key', limit=3)]
    assert labels.ids["refund-idempotency"] in ids
    ids = [i for i, _ in fts.rank(store.conn, "observations", "NEAR(webhook", limit=3)]
    assert labels.ids["webhook-retry"] in ids


@pytest.mark.slow
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=st.text(max_size=120))
def test_fuzz_arbitrary_text_never_raises(seeded: tuple[Store, Seeded], text: str) -> None:
    store, _ = seeded
    for kind in ("observations", "sessions", "prompts"):
        results = fts.rank(store.conn, kind, text, limit=5)  # type: ignore[arg-type]
        assert all(score > 0 for _, score in results)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    words=st.lists(
        st.sampled_from(["refund", "AND", "OR", "NOT", "NEAR", '"', "(", ")", "*", "-", ":", "^"]),
        max_size=12,
    )
)
def test_fuzz_fts_syntax_soup_never_raises(seeded: tuple[Store, Seeded], words: list[str]) -> None:
    store, _ = seeded
    for joiner in (" ", ""):
        fts.rank(store.conn, "observations", joiner.join(words), limit=5)


def test_multi_word_query_matches_on_terms_not_the_phrase(seeded: tuple[Store, Seeded]) -> None:
    store, labels = seeded
    # No record contains this phrase; each word appears in different records.
    ids = [i for i, _ in fts.rank(store.conn, "observations", "webhook backoff cookie", limit=10)]
    assert labels.ids["webhook-retry"] in ids
    assert labels.ids["samesite-cookie"] in ids


def test_porter_stemming_matches_other_forms(seeded: tuple[Store, Seeded]) -> None:
    store, labels = seeded
    ids = [i for i, _ in fts.rank(store.conn, "observations", "charging refunding", limit=3)]
    assert ids[0] == labels.ids["refund-idempotency"]


def test_scores_are_positive_and_best_first(seeded: tuple[Store, Seeded]) -> None:
    store, _ = seeded
    results = fts.rank(store.conn, "observations", "database index", limit=10)
    scores = [s for _, s in results]
    assert scores
    assert all(s > 0 for s in scores)
    assert scores == sorted(scores, reverse=True)


def test_title_weighs_more_than_narrative(tmp_path: Path) -> None:
    store = Store(tmp_path / "w.db")
    conn = store.conn
    with atomic(conn):
        in_narrative, _ = observations.insert(
            conn,
            ObservationDraft(title="Unrelated change", narrative="the zebra crossing was moved"),
            content_session_id="s",
            project="p",
        )
        in_title, _ = observations.insert(
            conn,
            ObservationDraft(title="Zebra crossing", narrative="it was moved a little"),
            content_session_id="s",
            project="p",
        )
    ids = [i for i, _ in fts.rank(conn, "observations", "zebra", limit=5)]
    assert ids == [in_title, in_narrative]
    store.close()


def test_limit_offset_and_filters(seeded: tuple[Store, Seeded]) -> None:
    store, labels = seeded
    everything = fts.rank(store.conn, "observations", "retry retries retried", limit=50)
    assert len(everything) >= 3
    assert (
        fts.rank(store.conn, "observations", "retry retries", limit=2, offset=1)
        == (fts.rank(store.conn, "observations", "retry retries", limit=3)[1:3])
    )
    web = fts.rank(store.conn, "observations", "retry", SearchFilters(project="webapp"), limit=10)
    assert [i for i, _ in web] == [labels.ids["web-retry-fetch"]]


def test_filters_that_cannot_apply_return_nothing(seeded: tuple[Store, Seeded]) -> None:
    store, _ = seeded
    bugfixes = SearchFilters(obs_types=["bugfix"])
    assert fts.rank(store.conn, "prompts", "refund", bugfixes) == []
    assert fts.rank(store.conn, "sessions", "refund", bugfixes) == []
    assert fts.rank(store.conn, "prompts", "refund", SearchFilters(files=["src/"])) == []


def test_a_broken_index_is_a_helpful_error_not_a_crash(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / "bare.db")  # no FTS tables at all
    with pytest.raises(InvalidInput, match="full-text search could not run"):
        fts.rank(conn, "observations", "refund")
    conn.close()


# -- bounded ranking tiers (thresholds shrunk so a small table exercises them) ------------------
@pytest.fixture
def tiered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Store, dict[str, int]]]:
    monkeypatch.setattr(fts, "COMMON_DF", 5)
    monkeypatch.setattr(fts, "MAX_SCORED", 8)
    monkeypatch.setattr(fts, "WINDOW", 4)
    monkeypatch.setattr(fts, "UBIQUITOUS", 0.5)
    fts._df_cache.clear()
    store = Store(tmp_path / "tiers.db")
    ids: dict[str, int] = {}
    with atomic(store.conn):
        for i in range(31):
            words = ["filler"]
            if i < 20:
                words.append("everywhere")  # 20 of 31 rows: ubiquitous
            if 10 <= i < 20 or i == 30:
                words.append("alpha")  # 11 rows: common
            if i in (3, 25):
                words.append("beta")  # 2 rows: rare
            if i == 7:
                words.append("gamma")  # 1 row: rare
            oid, _ = observations.insert(
                store.conn,
                ObservationDraft(title=f"row {i}", narrative=" ".join(words)),
                content_session_id="s",
                project="p",
                created_ms=1_800_000_000_000 + i,
            )
            ids[f"row{i}"] = oid
    yield store, ids
    fts._df_cache.clear()
    store.close()


def test_tiers_drop_ubiquitous_and_rank_rare_first(tiered: tuple[Store, dict[str, int]]) -> None:
    store, _ = tiered
    plan = fts.tiers(store.conn, "observations", ['"gamma"', '"alpha"', '"everywhere"', '"nope"'])
    assert plan == [('"gamma"', False), ('"gamma" OR "alpha"', True)]
    both = fts.tiers(store.conn, "observations", ['"alpha"', '"filler"', '"beta"'])
    assert both[0] == ('"beta"', False)  # "filler" is in every row: dropped
    small = fts.tiers(store.conn, "observations", ['"beta"', '"gamma"'])
    assert small == [('"beta" OR "gamma"', False)]  # all matches fit: one exact OR
    assert fts.tiers(store.conn, "observations", ['"nope"']) == []


def test_tiered_results_are_best_first_unique_and_page_cleanly(
    tiered: tuple[Store, dict[str, int]],
) -> None:
    store, ids = tiered
    results = fts.rank(store.conn, "observations", "gamma alpha everywhere", limit=6)
    got = [i for i, _ in results]
    assert got[0] == ids["row7"]  # the rare word first
    assert len(got) == len(set(got)) == 6
    scores = [s for _, s in results]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)
    # then rows with the common word, drawn from its newest matches (the window: 7 rows here)
    newest_alpha = {ids[f"row{i}"] for i in (30, 19, 18, 17, 16, 15, 14)}
    assert set(got[1:]) <= newest_alpha
    pages = [
        i
        for offset in (0, 2, 4)
        for i, _ in fts.rank(
            store.conn, "observations", "gamma alpha everywhere", limit=2, offset=offset
        )
    ]
    assert pages == got


def test_all_common_words_rank_rows_having_all_of_them_first(
    tiered: tuple[Store, dict[str, int]],
) -> None:
    store, ids = tiered
    plan = fts.tiers(store.conn, "observations", ['"alpha"', '"filler"', '"everywhere"'])
    assert plan[0] == ('"alpha"', True)  # filler and everywhere are ubiquitous
    results = [i for i, _ in fts.rank(store.conn, "observations", "alpha everywhere", limit=3)]
    assert results
    assert set(results) <= {ids[f"row{i}"] for i in (*range(10, 20), 30)}


def test_a_new_word_is_found_at_once_despite_the_df_cache(
    tiered: tuple[Store, dict[str, int]],
) -> None:
    store, _ = tiered
    assert fts.rank(store.conn, "observations", "zebra") == []
    with atomic(store.conn):
        oid, _ = observations.insert(
            store.conn,
            ObservationDraft(title="zebra crossing", narrative="filler"),
            content_session_id="s",
            project="p",
        )
    assert [i for i, _ in fts.rank(store.conn, "observations", "zebra")] == [oid]
