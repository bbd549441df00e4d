"""Fuzz: the timeline anchor memo never answers one key with another key's anchor.

``recall.anchor_memo`` keys a ranking's first observation by the query as ranked and the
project filter, under a generation. For any query text (blanks, controls, other scripts,
FTS syntax) and any project name:

- the memo itself: every key reads back exactly the last id stored under it (or nothing),
  never another key's, at any capacity; another generation reads nothing;
- through a real store: after any sequence of searches, writes and forgets, the timeline's
  anchor from an engine with the memo is the anchor an engine without one ranks.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from workbench.errors import InvalidInput
from workbench.models import ObservationDraft
from workbench.recall.anchor_memo import AnchorMemo, key_of
from workbench.recall.filters import SearchFilters
from workbench.recall.search import SearchEngine
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store
from workbench.store.deletions import delete_observation

pytestmark = pytest.mark.slow

WORDS = ["refund", "charged", "twice", "token", "expired", "login", "RefundWorker", "a.b/c.py"]
word = st.one_of(
    st.sampled_from(WORDS),
    st.sampled_from([" ", "\t", "\n", "\x00", "\u00a0", '"', "*", "-", "(", "NEAR", "OR"]),
    st.text(max_size=8),
)
query = st.lists(word, max_size=6).map(" ".join)
project = st.one_of(st.none(), st.sampled_from(["api", " api ", "web", ""]), st.text(max_size=6))


def filters_of(name: str | None) -> SearchFilters | None:
    try:
        return SearchFilters(project=name)
    except InvalidInput:
        return None


@settings(max_examples=budget(300), deadline=None)
@given(
    puts=st.lists(
        st.tuples(query, project, st.one_of(st.none(), st.integers(1, 2**62))), max_size=30
    ),
    capacity=st.integers(1, 40),
)
def test_every_key_reads_back_its_own_anchor(
    puts: list[tuple[str, str | None, int | None]], capacity: int
) -> None:
    memo = AnchorMemo(capacity=capacity)
    generation = ("g", 1)
    stored: dict[tuple[str, str | None], int | None] = {}
    for text, name, first in puts:
        filters = filters_of(name)
        if filters is None:
            continue
        key = key_of(text, filters)
        if key is None:
            assert not text.strip()
            continue
        assert key == (text.strip(), filters.project)
        memo.put(generation, key, first)
        stored[key] = first
    assert memo.status()["held"] <= capacity
    for key, first in stored.items():
        known, found = memo.get(generation, key)
        if known:  # a key the LRU kept reads its own last id, never another's
            assert found == first, key
    for key in stored:
        assert memo.get(("g", 2), key) == (False, None)


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("anchor")


# Mostly a few words and projects, so searches, saves and timelines meet on one key often.
few = st.lists(st.sampled_from(["refund", "charged", "token", "login"]), min_size=1, max_size=3)
asked = st.one_of(few.map(" ".join), few.map(" ".join), query)
scope = st.one_of(st.sampled_from([None, "api", "web"]), project)
step = st.one_of(
    st.tuples(st.just("search"), asked, scope),
    st.tuples(st.just("timeline"), asked, scope),
    st.tuples(st.just("save"), asked, st.sampled_from(["api", "web"])),
    st.tuples(st.just("forget"), st.integers(0, 20), st.none()),
)


@settings(
    max_examples=budget(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(first=st.tuples(asked, scope), steps=st.lists(step, max_size=25))
def test_the_memo_anchor_is_the_ranked_anchor(
    store_dir: Path, first: tuple[str, str | None], steps: list[tuple[str, object, object]]
) -> None:
    """A search of ``first``, any steps, then the timeline of ``first`` (and of every timeline
    step): what the memo gives is what a ranking gives."""
    path = Path(tempfile.mkdtemp(dir=store_dir)) / "workbench.db"
    store = Store(path)
    try:
        for text in ("refund charged twice", "expired login token", "RefundWorker retries"):
            save(store, text, "api")
        memo = AnchorMemo(capacity=8)
        with_memo = SearchEngine(store, None, anchors=memo)
        plain = SearchEngine(store, None)
        for action, value, name in [("search", *first), *steps, ("timeline", *first)]:
            if action == "save":
                save(store, str(value), str(name))
                continue
            if action == "forget":
                ids = [r[0] for r in store.conn.execute("SELECT id FROM observations ORDER BY id")]
                if ids:
                    with atomic(store.conn):
                        delete_observation(store.conn, ids[int(str(value)) % len(ids)])
                continue
            filters = filters_of(name if name is None else str(name))
            if filters is None:
                continue
            if action == "search":
                try:
                    with_memo.search(str(value), filters, types=["observations"])
                except InvalidInput:  # no words and no filter: refused, nothing ranked
                    assert not str(value).strip()
                continue
            assert with_memo.anchor_of(str(value), filters) == plain.anchor_of(
                str(value), filters
            ), (value, name)
    finally:
        store.close()


def save(store: Store, text: str, name: str) -> None:
    with atomic(store.conn):
        observations.insert(
            store.conn,
            ObservationDraft(type="discovery", title=text[:80] or "untitled", narrative=text),
            content_session_id=None,
            project=name,
        )
