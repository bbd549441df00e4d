"""Team lake figures: publish throughput, team search, a team-wide GROUP BY, 100k → 1M rows.

1. a lake: a throwaway PostgreSQL (tests/postgres.py starts one in a temp dir, 127.0.0.1 only)
   as the DuckLake catalog, or ``--catalog postgres://…`` for one you run; Parquet in a temp dir;
2. ``--authors`` stores (default 10), each seeded with ``--rows`` observations (default 100,000)
   in 12 projects, as ``bench/analytics.py`` seeds one;
3. each author publishes in turn with the real ``workbench.team.publish.publish`` (one run, one
   snapshot): rows/s per run, and the Parquet files it wrote (the small-files question: each
   batch of ``publish.BATCH_ROWS`` is one INSERT, so at least one file per batch);
4. after the first author (100k rows in the lake), the middle one and the last (1M):
   - team search: the lake-side query ``search --team`` will run, a case-insensitive text
     match over title/narrative with an author filter, newest 20: p50 / p95;
   - the same match over the whole team (no author filter): p50 / p95;
   - a GROUP BY over the whole team (author, project, type): p50.

Measured 2026-12-03 (2 cores shared by other jobs, load ~4, so p95s are noisy): publish
7k-16k rows/s per 100k-row run, the same for the first author (empty lake) and the tenth (900k
rows in it): the run reads only its own author's hashes, once per table. Each run wrote 45
Parquet files of ~0.2 MB (DuckDB writes several files per INSERT); larger batches did not
change throughput (cProfile: the time is in reading, re-redacting and hashing rows in Python,
not in the lake), so ``BATCH_ROWS`` stays 5,000; ``CALL ducklake_merge_adjacent_files('lake')``
compacts them
(https://ducklake.select/docs/stable/duckdb/maintenance/merge_adjacent_files).
Reads at 100k → 1M rows: search with author filter p50 107 → 63 ms, whole-team search p50
95 → 197 ms, team GROUP BY p50 22 → 42 ms.

``search --team``'s team half, before (open a reader, scan the lake: ``read.search_observations``)
and after (the team mirror, ``team/mirror.py``), measured 2026-12-03 in one run each, the machine
shared with 5 other jobs (load 7-8 on 2 cores, so every figure is inflated and noisy; compare
within a row). 2 × 100k: lake scan p50 2,841 / 2,588 ms at 100k / 200k rows; mirror search
alone p50 75 / 26 ms; mirror refresh (opening the lake to read its snapshot, which
``team_mirror_max_age_s`` skips for 30 s) + search p50 1,116 / 475 ms; catch-up: rebuild of
100k 27.6 s, the next 100k by the change feed 12.1 s. 10 × 100k (before new rows were indexed
in one statement): lake scan p50 4,687 / 4,851 / 2,676 ms at 100k / 500k / 1M; mirror search
alone p50 120 / 26 / 42 ms; refresh + search 1,406 / 744 / 172 ms.

Prints a table; no pass/fail. ``--quick`` (2 authors × 10,000) is what
tests/test_bench_team.py runs to keep this script working (no timing asserted there).
Usage: python bench/team.py [--quick] [--authors 10] [--rows 100000] [--batch-rows N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEARCH = (
    "SELECT author, local_id, title FROM lake.observations WHERE deleted_at_epoch IS NULL"
    " AND author = ? AND (title ILIKE ? OR narrative ILIKE ?)"
    " ORDER BY created_at_epoch DESC LIMIT 20"
)
SEARCH_TEAM = (
    "SELECT author, local_id, title FROM lake.observations WHERE deleted_at_epoch IS NULL"
    " AND (title ILIKE ? OR narrative ILIKE ?) ORDER BY created_at_epoch DESC LIMIT 20"
)
GROUP_BY = (
    "SELECT author, project, type, count(*) FROM lake.observations"
    " WHERE deleted_at_epoch IS NULL GROUP BY ALL"
)
PROJECTS = [f"project-{i}" for i in range(12)]  # what bench/analytics.py's seed writes


@contextmanager
def catalog(given: str | None) -> Iterator[str]:
    """The catalog URL: ``given``, or a fresh database in a throwaway cluster."""
    if given:
        yield given
        return
    from tests.postgres import running_cluster, unavailable_reason

    reason = unavailable_reason()
    if reason:
        raise SystemExit(f"cannot start PostgreSQL: {reason}; or pass --catalog postgres://…")
    with running_cluster() as cluster:
        yield cluster.dsn(cluster.new_database())


def settings_for(data_dir: Path, dsn: str, lake_dir: Path, author: str) -> Any:
    from workbench.settings import load_settings

    return load_settings(
        data_dir,
        team_catalog=dsn,
        team_data=str(lake_dir),
        team_projects=PROJECTS,
        team_author=author,
    )


def timed(fn: Callable[[], object], runs: int) -> list[float]:
    """Wall ms per call, after one warm-up call."""
    fn()
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def parquet_stats(lake_dir: Path) -> tuple[int, float]:
    files = list(lake_dir.rglob("*.parquet"))
    total = sum(f.stat().st_size for f in files)
    return len(files), (total / len(files) / 1e6 if files else 0.0)


def measure_reads(settings: Any, authors: list[str], runs: int) -> dict[str, float]:
    """Team search (author filter / whole team) p50 p95 and the GROUP BY p50, on one reader."""
    from workbench.team import lake

    rng = random.Random(7)
    con = lake.connect(settings, create_tables=False)
    try:
        rows = con.execute("SELECT count(*) FROM lake.observations").fetchone()[0]

        def search() -> None:
            term = f"%module {rng.randrange(300)}%"
            con.execute(SEARCH, [rng.choice(authors), term, term]).fetchall()

        def search_team() -> None:
            term = f"%module {rng.randrange(300)}%"
            con.execute(SEARCH_TEAM, [term, term]).fetchall()

        s = timed(search, runs)
        t = timed(search_team, runs)
        g = timed(lambda: con.execute(GROUP_BY).fetchall(), max(3, runs // 2))
    finally:
        con.close()
    return {
        "rows": rows,
        "search_p50": statistics.median(s),
        "search_p95": pct(s, 0.95),
        "team_p50": statistics.median(t),
        "team_p95": pct(t, 0.95),
        "group_p50": statistics.median(g),
    }


def measure_team_search(settings: Any, runs: int) -> dict[str, float]:
    """What ``search --team`` pays for its team half, before and after the mirror.

    - before: open a reader at the newest snapshot and scan the lake
      (``read.search_observations``, the ILIKE ranking), as ``search --team`` did;
    - the mirror's catch-up to this checkpoint (``mirror.refresh``: a rebuild the first time,
      then the change feed for the authors published since), seconds;
    - after: ``mirror.refresh`` when current (opens the lake to read its snapshot) plus
      ``mirror.search`` (BM25 over the mirror's FTS5), and the mirror search alone.
    """
    from workbench.team import mirror, mirror_read, read

    rng = random.Random(11)

    def query() -> str:
        return f"changed module {rng.randrange(300)}"

    def before() -> None:
        r = read.reader(settings)
        try:
            read.search_observations(r, query(), limit=20)
        finally:
            r.close()

    started = time.perf_counter()
    caught_up = mirror.refresh(settings)
    catch_up_s = time.perf_counter() - started
    conn = mirror.connect(settings)
    try:

        def after() -> None:
            mirror.refresh(settings)  # asks the lake every time (max_age_s unset)
            mirror_read.search(conn, query(), None, limit=20)

        old = timed(before, runs)
        new = timed(after, runs)
        alone = timed(lambda: mirror_read.search(conn, query(), None, limit=20), runs)
    finally:
        conn.close()
    return {
        "old_p50": statistics.median(old),
        "old_p95": pct(old, 0.95),
        "catch_up_s": catch_up_s,
        "catch_up_mode": caught_up.mode,
        "new_p50": statistics.median(new),
        "new_p95": pct(new, 0.95),
        "alone_p50": statistics.median(alone),
        "alone_p95": pct(alone, 0.95),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--authors", type=int, default=10)
    parser.add_argument("--rows", type=int, default=100_000, help="observations per author")
    parser.add_argument("--quick", action="store_true", help="2 authors × 10,000 rows")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per query")
    parser.add_argument("--catalog", help="postgres://USER@HOST:PORT/DB (default: start one)")
    parser.add_argument("--batch-rows", type=int, help="override publish.BATCH_ROWS")
    args = parser.parse_args(argv)
    if args.quick:
        args.authors, args.rows, args.runs = 2, 10_000, 5

    from rich.console import Console
    from rich.table import Table

    from bench.analytics import seed
    from workbench.team import publish as team_publish

    if args.batch_rows:
        team_publish.BATCH_ROWS = args.batch_rows
    console = Console()
    authors = [f"author-{i:02d}" for i in range(args.authors)]
    checkpoints = sorted({0, args.authors // 2 - 1, args.authors - 1} - {-1})
    publishes: list[tuple[str, ...]] = []
    reads: list[tuple[str, ...]] = []
    searches: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory(prefix="wb-bench-team-") as tmp, catalog(args.catalog) as dsn:
        root = Path(tmp)
        lake_dir = root / "lake"
        settings = None
        for index, author in enumerate(authors):
            data_dir = root / author
            data_dir.mkdir()
            seed(data_dir / "workbench.db", args.rows)
            settings = settings_for(data_dir, dsn, lake_dir, author)
            files_before, _ = parquet_stats(lake_dir)
            started = time.perf_counter()
            result = team_publish.publish(settings)
            seconds = time.perf_counter() - started
            files, mean_mb = parquet_stats(lake_dir)
            added = sum(result.added.values())
            publishes.append(
                (
                    author,
                    f"{added:,}",
                    f"{seconds:.1f}",
                    f"{added / seconds:,.0f}",
                    f"{files - files_before}",
                    f"{mean_mb:.2f}",
                )
            )
            console.print(f"published {author}: {added:,} rows in {seconds:.1f} s")
            if index in checkpoints:
                figures = measure_reads(settings, authors[: index + 1], args.runs)
                reads.append(
                    (
                        f"{figures['rows']:,}",
                        f"{figures['search_p50']:.1f}",
                        f"{figures['search_p95']:.1f}",
                        f"{figures['team_p50']:.1f}",
                        f"{figures['team_p95']:.1f}",
                        f"{figures['group_p50']:.1f}",
                    )
                )
                # One reader's data dir for the whole run, so its mirror catches up by the
                # change feed between checkpoints (rebuilt only at the first).
                reader_dir = root / "reader"
                reader_dir.mkdir(exist_ok=True)
                reader = settings_for(reader_dir, dsn, lake_dir, "reader")
                team = measure_team_search(reader, args.runs)
                searches.append(
                    (
                        f"{figures['rows']:,}",
                        f"{team['old_p50']:.1f}",
                        f"{team['old_p95']:.1f}",
                        f"{team['catch_up_s']:.1f} ({team['catch_up_mode']})",
                        f"{team['new_p50']:.1f}",
                        f"{team['new_p95']:.1f}",
                        f"{team['alone_p50']:.2f}",
                        f"{team['alone_p95']:.2f}",
                    )
                )
        assert settings is not None

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    head = (
        f"{args.authors} authors × {args.rows:,} observations, publish batch "
        f"{team_publish.BATCH_ROWS:,} rows ({os.cpu_count()} cores, load {load})"
    )
    grid = Table(title=f"publish: {head}", title_justify="left")
    for column in ("author", "rows", "s", "rows/s", "new parquet files", "mean file MB"):
        grid.add_column(column)
    for row in publishes:
        grid.add_row(*row)
    console.print(grid)
    grid = Table(title="reads (ms) as the lake grows", title_justify="left")
    for column in (
        "observations in lake",
        "search 1 author p50",
        "p95",
        "search team p50",
        "p95",
        "GROUP BY team p50",
    ):
        grid.add_column(column)
    for row in reads:
        grid.add_row(*row)
    console.print(grid)
    grid = Table(
        title="search --team, the team half (ms): lake scan vs mirror", title_justify="left"
    )
    for column in (
        "observations in lake",
        "lake scan p50",
        "p95",
        "mirror catch-up s",
        "mirror refresh+search p50",
        "p95",
        "mirror search p50",
        "p95",
    ):
        grid.add_column(column)
    for row in searches:
        grid.add_row(*row)
    console.print(grid)


if __name__ == "__main__":
    main()
