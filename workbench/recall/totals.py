"""``totalResults``: how many records a search matches, not how many fit on the page.

Per kind of record, under the same filters as the search:

- with a query: the rows whose full text matches any of its words (the safe, quoted terms
  the ranking builds from the query; its phrases add no rows), plus, when a vector ranker
  ran, the candidates it returned that full text does not match (semantic neighbours have
  no natural end, so that part is what the ranker returned and the total is flagged a lower
  bound). Past the cap (below) the total is the cap alone ("1,000+"): the candidates are
  not checked then, since a lower bound at the cap already says "more than that";
- without a query (a listing): the rows the filters select.

Cost is bounded, and the total says when it is only a lower bound (``totalIsLowerBound``):
without filters, counting stops at ``COUNT_CAP`` matches per kind. Measured with
``bench/search.py``'s queries at 100,000 rows, a cap of 10,000 cost ~2 ms of a ~5 ms search
(an OR of common words merges long doclists), so the cap is 1,000: "1,000+" tells a person
as much as "10,000+", at a tenth of the cost. With filters each row costs a probe
(and, with a query, FTS work: ~3 µs a match measured at 100k), so the count gets a budget of
SQLite VM steps (``FILTERED_BUDGET``, ``LISTING_BUDGET``: about a millisecond); past it, the
total is the hits the rankers already found (``at_least``). Steps, not time: a total never
depends on the machine's load, nor (``_within_budget``) on what the connection ran before.

Past the cap, one word is enough: when a piece of the query (the one whose document
frequency the ranking already took as the largest) alone matches more than ``COUNT_CAP``
rows, counting its rows says so, and the OR of every piece is never walked.

Which vector candidates full text misses: without filters, the count reads the matching
rowids themselves (at most ``COUNT_CAP`` + 1 of them, the same walk as counting them) and the
candidates are looked up in that set; with filters they are asked of a scratch index of their
own text (``fusion.matching``). The set replaced that scratch index on the common path: its
build was a fifth of a hybrid search's own time at 100k (``bench/search.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable
from typing import Any

from workbench.recall import fts, fusion
from workbench.recall.filters import Kind, SearchFilters

COUNT_CAP = 1_000  # matches counted per kind, without filters (see above)
FILTERED_BUDGET = 1_000  # with filters and a query: SQLite VM steps (~6 per FTS match)
LISTING_BUDGET = 10_000  # a listing's rows cost no FTS work: more, cheaper steps
STEP_GRAIN = 8  # the budget is checked every 8 steps (a Python call each: ~0.4 µs)


def count(
    conn: sqlite3.Connection,
    kind: Kind,
    query: str | None,
    filters: SearchFilters,
    *,
    vector_ids: Iterable[int] = (),
    text_ids: Collection[int] = (),
    at_least: int = 0,
) -> tuple[int, bool]:
    """``(matches, is_lower_bound)`` for one kind of record; see the module docstring.

    ``vector_ids``: the candidates a vector ranker returned; ``text_ids``: the hits full text
    returned (they match by construction, so only the other candidates are checked);
    ``at_least``: how many hits the rankers found (the floor when counting runs out of budget).
    """
    candidates = list(vector_ids)
    if not filters.applies_to(kind):
        return 0, False
    fts_table, table = fts.tables_of(kind)
    clauses, params = filters.record_sql(kind, "r")
    where = " AND ".join(clauses) or "1"
    cap = COUNT_CAP
    if query is None:
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {table} r WHERE {where} LIMIT ?)"
        warm = f"SELECT 1 FROM {table} LIMIT 1"  # the schema, if another connection changed it
        counted = _within_budget(conn, sql, [*params, cap + 1], LISTING_BUDGET, warm=(warm, []))
        if counted is None:
            return at_least, True
        return min(counted, cap), counted > cap
    pieces = fts.query_pieces(query)
    if not pieces:
        return at_least, False
    # A row matching a phrase matches its words too: the words alone count the same rows,
    # with fewer doclists to merge.
    words = [p for p in pieces if " " not in p]
    expression = " OR ".join(words or pieces)
    try:
        if clauses:
            # The FTS match drives the join (CROSS JOIN fixes the order): one probe per match.
            source = f"{fts_table} f CROSS JOIN {table} r ON r.id = f.rowid"
            sql = (
                f"SELECT count(*) FROM (SELECT 1 FROM {source}"
                f" WHERE {fts_table} MATCH ? AND {where} LIMIT ?)"
            )
            warm = f"SELECT rowid FROM {fts_table} WHERE {fts_table} MATCH ? LIMIT 1"
            counted = _within_budget(
                conn,
                sql,
                [expression, *params, cap + 1],
                FILTERED_BUDGET,
                warm=(warm, [expression]),
            )
            matched: set[int] | None = None
        elif _a_piece_passes(conn, kind, words or pieces, cap):
            # Trigger: one piece alone matches more than the cap. Why: then so does the OR of
            # them all, and counting that one piece's rows reads one doclist where the OR
            # merged every piece's (the count of a JSON hybrid search at 100k: 1.20 -> 0.68
            # ms CPU, bench/search_stages.py). Outcome: past the cap, as the walk found.
            counted, matched = cap + 1, None
        elif candidates:
            matched = _matching_ids(conn, fts_table, expression, cap + 1)
            counted = len(matched)
        else:
            counted, matched = _matches(conn, fts_table, expression, cap + 1), None
        if counted is None:
            return at_least, True
        others = [i for i in candidates if i not in text_ids]
        if counted > cap:
            extra = 0  # past the cap: the cap alone (see the module docstring)
        elif matched is not None:
            extra = len({int(i) for i in others} - matched)
        else:
            extra = _not_matching(conn, kind, expression, others)
    except sqlite3.OperationalError:
        # Trigger: the FTS table is missing or corrupt. Why: ``fts.rank`` has already told the
        # user (InvalidInput) if the query itself could not run; a count must not add a 500.
        # Outcome: the total is what the rankers found, and says it may be more.
        return at_least, True
    total = max(min(counted, cap) + extra, at_least)
    return total, counted > cap or bool(candidates)


def _within_budget(
    conn: sqlite3.Connection,
    sql: str,
    params: list[Any],
    budget: int,
    warm: tuple[str, list[Any]] | None = None,
) -> int | None:
    """``sql``'s single integer, or None when it needs more than ``budget`` VM steps.

    ``warm``: a statement run first, unbudgeted, in the same read transaction. Why: the
    steps include whatever the connection must (re)load before it can run ``sql``: the
    schema after another connection changed it, FTS5's configuration and segment structure
    on a connection's first match or after another connection wrote. That cost ~2,000
    steps, twice the count's budget, so the same count was exact on one of the service's
    threads and a lower bound on the next. Warmed on the snapshot the count then reads, the
    budget pays for the count alone.

    The steps are counted here, from this run's first: SQLite's handler fires every N steps
    of the *prepared statement's lifetime* (the cached statement's counter carries over from
    its earlier runs), so a handler at N = ``budget`` stopped the same count anywhere from
    its first step to its budget. Called every ``STEP_GRAIN`` steps, it stops within that
    many steps of the budget, whatever ran before.
    """
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN")  # one snapshot: nothing reloads between the warm-up and the count
    try:
        if warm is not None:
            conn.execute(*warm).fetchall()
        calls = [0]
        limit = -(-budget // STEP_GRAIN)

        def spent() -> int:  # returning 1 interrupts the statement
            calls[0] += 1
            return 1 if calls[0] >= limit else 0

        conn.set_progress_handler(spent, STEP_GRAIN)
        try:
            return int(conn.execute(sql, params).fetchone()[0])
        except sqlite3.OperationalError as exc:
            if "interrupted" not in str(exc):
                raise
            return None
        finally:
            conn.set_progress_handler(None, 0)
    finally:
        if began and conn.in_transaction:  # (an interrupted write would have rolled it back)
            conn.execute("COMMIT")


def _a_piece_passes(conn: sqlite3.Connection, kind: Kind, pieces: list[str], cap: int) -> bool:
    """True when one of ``pieces`` alone matches more than ``cap`` rows (so their OR does).

    The piece tried is the one whose document frequency this search (or the cache) already
    took as the largest (``fts.known_frequency``), and only when that is past the cap; its
    rows are then counted now, up to ``cap`` + 1, so a frequency gone stale (rows deleted
    since it was cached) costs one count, never a wrong total.
    """
    known = {p: n for p in pieces if (n := fts.known_frequency(conn, kind, p)) is not None}
    if not known:
        return False
    commonest = max(known, key=known.__getitem__)
    if known[commonest] <= cap:
        return False
    return _matches(conn, fts.tables_of(kind)[0], commonest, cap + 1) > cap


def _matches(conn: sqlite3.Connection, fts_table: str, expression: str, limit: int) -> int:
    """Rows matching ``expression``, counted up to ``limit``."""
    sql = f"SELECT count(*) FROM (SELECT 1 FROM {fts_table} WHERE {fts_table} MATCH ? LIMIT ?)"
    return int(conn.execute(sql, [expression, limit]).fetchone()[0])


def _matching_ids(
    conn: sqlite3.Connection, fts_table: str, expression: str, limit: int
) -> set[int]:
    """The rowids matching ``expression``, the first ``limit`` of them (``_matches``' walk)."""
    sql = f"SELECT rowid FROM {fts_table} WHERE {fts_table} MATCH ? LIMIT ?"
    return {int(r[0]) for r in conn.execute(sql, [expression, limit])}


def _not_matching(conn: sqlite3.Connection, kind: Kind, expression: str, ids: list[int]) -> int:
    """How many of ``ids`` (a ranker's candidates, at most a few hundred) full text misses.

    Asked of the candidates' own text (``fusion.matching``), not the real index, where the
    OR of the query's words walks every word's whole doclist first.
    """
    wanted = sorted({int(i) for i in ids})
    return len(wanted) - len(fusion.matching(conn, kind, expression, wanted)) if wanted else 0
