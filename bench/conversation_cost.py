"""What the conversation levers cost per search at 100k memories (i21-context). Prints figures.

The two steps a hybrid search adds when they are on, timed in-process on a copy of a seeded
store (``--db``, e.g. ``/tmp/i21lat/seeded100k/workbench.db`` copied first: this script opens
it read-only but a shared store must not be touched), each over the top ``--depth`` full-text
hits of ``--queries`` queries made of three words of random stored titles:

- ``context gate``: the hits' neighbouring turns (``fusion.neighbours``), which of them are
  conversation turns (``turn_gate.turns_among``) and the gated pairs (``turn_gate.gated``):
  what ``search_context_weight`` > 0 adds with ``search_context_gate = "turns"``;
- ``session term``: the hits' sessions (``session_term.sessions_of``) and the lift
  (``session_term.lifted``): what ``search_session_weight`` > 0 adds; and the same as if every
  hit were a conversation turn (a seeded store holds tool notes, which the term leaves out);
- ``session spread``: the hits' sessions and the demotion (``session_spread.spread``): what
  ``search_spread_weight`` > 0 adds; and the same as if every hit were a turn;
- ``full text``: ``fts.rank`` itself, for scale.

Figures, never assertions: the box may be loaded by other work; say so next to them.

Stop 29, a copy of the seeded 100k store (tool notes), 200 queries, 100 hits each, load
average 15 from other helpers' benches (p50 / p95 ms): full text 10.3 / 27.2, context gate
1.2 / 15.5, session term 0.08 / 0.14 (no turns: one lookup finds none), session term with
every hit a turn 0.24 / 13.0. The p95s are the box's scheduling, not the steps.

Same, with the session spread (load average 21): full text 41.4 / 98.2, session term 0.10 /
0.23, session term every hit a turn 0.26 / 43.0, session spread 0.09 / 0.35, session spread
with every hit a turn 0.17 / 24.5.

Usage: python bench/conversation_cost.py --db PATH [--queries 200] [--depth 100]
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workbench.recall import fts, fusion, session_spread, session_term, turn_gate  # noqa: E402
from workbench.recall.session_keys import session_keys  # noqa: E402

T = TypeVar("T")


def timed(step: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    value = step()
    return value, (time.perf_counter() - started) * 1000


def gate(conn: sqlite3.Connection, text: list[tuple[int, float]]) -> dict[int, tuple[int, ...]]:
    """What ``SearchEngine._with_context`` adds with the ``turns`` gate."""
    beside = fusion.neighbours(conn, [j for i, _ in text for j in (i, i + 1)])
    around = {j for i, near in beside.items() for j in (i, *near)}
    return turn_gate.gated(beside, turn_gate.turns_among(conn, sorted(around)))


def term(conn: sqlite3.Connection, text: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """What ``SearchEngine._rank_observations`` adds with the session term on."""
    sessions = session_term.sessions_of(conn, [i for i, _ in text])
    return session_term.lifted(text, sessions, 0.25, 2)


def term_as_turns(
    conn: sqlite3.Connection, text: list[tuple[int, float]]
) -> list[tuple[int, float]]:
    """The session term as if every hit were a turn (a seeded store holds tool notes, whose
    sessions ``sessions_of`` leaves out): the same lookup (``session_keys``) without the shape
    test, and a lift over every hit's session."""
    sessions = session_keys(conn, [i for i, _ in text])
    return session_term.lifted(text, sessions, 0.25, 2)


def spread(conn: sqlite3.Connection, text: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """What ``SearchEngine._rank_observations`` adds with the session spread on."""
    sessions = session_term.sessions_of(conn, [i for i, _ in text])
    return session_spread.spread(text, sessions, 0.5, 1)


def spread_as_turns(
    conn: sqlite3.Connection, text: list[tuple[int, float]]
) -> list[tuple[int, float]]:
    """The session spread as if every hit were a turn (see ``term_as_turns``)."""
    return session_spread.spread(text, session_keys(conn, [i for i, _ in text]), 0.5, 1)


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))]
    return f"p50 {statistics.median(ordered):6.2f} ms  p95 {p95:6.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--depth", type=int, default=100)
    args = parser.parse_args()
    conn = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    rows = int(conn.execute("SELECT count(*) FROM observations").fetchone()[0])
    top = int(conn.execute("SELECT max(id) FROM observations").fetchone()[0])
    rng = random.Random(21)
    queries = []
    while len(queries) < args.queries:
        row = conn.execute("SELECT title FROM observations WHERE id = ?", (rng.randint(1, top),))
        found = row.fetchone()
        words = str(found[0]).split() if found else []
        if len(words) >= 3:
            queries.append(" ".join(rng.sample(words, 3)))
    costs: dict[str, list[float]] = {
        "full text": [],
        "context gate": [],
        "session term": [],
        "session term, every hit a turn": [],
        "session spread": [],
        "session spread, every hit a turn": [],
    }
    hits = 0
    for query in queries:
        with fts.one_search():
            text, cost = timed(partial(fts.rank, conn, "observations", query, limit=args.depth))
            costs["full text"].append(cost)
            hits += len(text)
            costs["context gate"].append(timed(partial(gate, conn, text))[1])
            costs["session term"].append(timed(partial(term, conn, text))[1])
            costs["session term, every hit a turn"].append(
                timed(partial(term_as_turns, conn, text))[1]
            )
            costs["session spread"].append(timed(partial(spread, conn, text))[1])
            costs["session spread, every hit a turn"].append(
                timed(partial(spread_as_turns, conn, text))[1]
            )
    print(
        f"{rows} memories, {len(queries)} queries, {hits / len(queries):.0f} hits each"
        f" (depth {args.depth})"
    )
    for name, values in costs.items():
        print(f"  {name:<33} {percentiles(values)}")


if __name__ == "__main__":
    main()
