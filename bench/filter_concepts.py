"""The cost of the Unicode-aware ``concepts`` filter on the store: old clause vs new, one run.

SQLite's ``lower()`` folds ASCII only, so ``SearchFilters`` lowers a non-ASCII concept with a
registered Python function (``store.connection.unicode_lower``), called only for values whose
UTF-8 is longer than their characters. This prints the median time of the same concepts query
with the old clause (``lower(trim(c.value))``) and the new one (``SearchFilters.observation_sql``)
over a synthetic store of ``--rows`` observations, 3 concepts each, ``--non-ascii`` percent of
them non-ASCII. Figures only: nothing is asserted; the box may be loaded by other work.

    .venv/bin/python bench/filter_concepts.py --rows 100000 --non-ascii 5
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from workbench.recall.filters import SearchFilters  # noqa: E402
from workbench.store.connection import connect  # noqa: E402

ASCII = ["cache", "ledger", "payments", "Retry", "SQLite", "queue", "auth", "Docs"]
OTHER = ["CAFÉ", "Ærø", "naïve", "Größe"]
OLD = "EXISTS (SELECT 1 FROM json_each(o.concepts) c WHERE lower(trim(c.value)) IN ({marks}))"


def build(db: Path, rows: int, non_ascii: float) -> None:
    rng = random.Random(23)
    conn = connect(db)
    conn.execute("CREATE TABLE observations (id INTEGER PRIMARY KEY, concepts TEXT)")
    conn.execute("BEGIN")
    conn.executemany(
        "INSERT INTO observations (concepts) VALUES (?)",
        (
            (
                json.dumps(
                    [
                        rng.choice(OTHER) if rng.random() < non_ascii else rng.choice(ASCII)
                        for _ in range(3)
                    ]
                ),
            )
            for _ in range(rows)
        ),
    )
    conn.execute("COMMIT")
    conn.close()


def median_ms(db: Path, sql: str, params: list[object], repeats: int) -> tuple[float, int]:
    conn = connect(db, readonly=True)
    try:
        times, count = [], 0
        for _ in range(repeats):
            start = time.perf_counter()
            count = conn.execute(sql, params).fetchone()[0]
            times.append((time.perf_counter() - start) * 1000)
        return statistics.median(times), count
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--non-ascii", type=float, default=5.0, help="percent of concepts")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "bench.db"
        build(db, args.rows, args.non_ascii / 100)
        print(
            f"{args.rows} observations, {args.non_ascii}% non-ASCII concepts; median of "
            f"{args.repeats} (box shared with other work)"
        )
        print(f"{'filter':<22}{'old ms':>10}{'new ms':>10}{'old n':>9}{'new n':>9}")
        for asked in (["cache"], ["café"], ["cache", "ledger", "naïve"]):
            flt = SearchFilters(concepts=asked)
            clauses, params = flt.observation_sql("o")
            new_sql = f"SELECT count(*) FROM observations o WHERE {' AND '.join(clauses)}"
            old_sql = "SELECT count(*) FROM observations o WHERE " + OLD.format(
                marks=", ".join("?" * len(params))
            )
            old, old_n = median_ms(db, old_sql, params, args.repeats)
            new, new_n = median_ms(db, new_sql, params, args.repeats)
            print(f"{','.join(asked):<22}{old:>10.1f}{new:>10.1f}{old_n:>9}{new_n:>9}")


if __name__ == "__main__":
    main()
