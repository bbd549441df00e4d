"""Lake upkeep (``workbench team maintain``): expire old snapshots, compact, delete dead files.

Why it is needed: every publish writes small Parquet files (one per table it touched), and
DuckLake never deletes anything on its own: an UPDATE (a tombstone) or DELETE (a superseded
summary) only hides rows from newer snapshots, so **a forgotten observation's text stays in
the older Parquet files** for as long as a snapshot refers to them. Maintenance closes that
gap with the steps DuckLake's own ``CHECKPOINT`` bundles
(https://ducklake.select/docs/stable/duckdb/maintenance/checkpoint), rewrite before merge:

1. ``ducklake_expire_snapshots(older_than => cutoff)``, before and again after steps 2-3
   (they commit snapshots of their own): snapshots older than the retention
   (``team_snapshot_retention`` or ``--older-than``) are dropped; time travel
   (``sql --team --at-snapshot``) reaches back to the oldest one kept. The newest snapshot is
   never expired.
2. ``ducklake_rewrite_data_files(delete_threshold => 0)``: a data file with any deleted row is
   rewritten without the rows no kept snapshot can see (a forgotten observation's text).
3. ``ducklake_merge_adjacent_files``: small files merged into fewer, larger ones (kept
   snapshots still see exactly what they saw: merged files keep their snapshot ranges).
4. ``ducklake_cleanup_old_files(older_than => cutoff)``: files the steps above unreferenced
   are deleted once they have waited as long as the retention (readers that started before
   may still scan them; ``--older-than 0s`` deletes them now).
5. ``ducklake_delete_orphaned_files``: files no snapshot ever referenced (a publisher killed
   mid-run) older than ``ORPHAN_MIN_AGE_S``, whatever the retention: a younger one may belong
   to a publish still under way.
6. The catalog's column statistics: the guard that keeps text out of them is installed if
   missing (``catalog_stats.ensure``, which blanks what an older release stored), and both
   statistics tables are rewritten (``VACUUM FULL``) so no old row version keeps a word of a
   forgotten memory in PostgreSQL's table files.

``dry_run`` lists the snapshots and files steps 1, 4 and 5 would remove and changes nothing
(steps 2 and 3 have no dry run in DuckLake, so they are skipped). The steps commit one by one;
a step that conflicts with a concurrent publish fails with a message saying to run it again,
and what the steps before it did stays done (each leaves the lake consistent).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import WorkbenchError
from workbench.sections.duration import parse_seconds
from workbench.team import catalog_stats, lake

if TYPE_CHECKING:
    from workbench.settings import Settings

ORPHAN_MIN_AGE_S = 3600.0
_CUTOFF = "now() - to_microseconds(CAST(? * 1000000 AS BIGINT))"


class MaintenanceConflict(WorkbenchError):
    """A maintenance step collided with a concurrent publish."""

    status_code = 409
    code = "MAINTENANCE_CONFLICT"


@dataclass
class MaintainReport:
    older_than_s: float
    dry_run: bool
    expired_snapshots: list[int] = field(default_factory=list)
    rewritten_files: int = 0
    merged_files: int = 0  # files read by the merge
    merged_into: int = 0  # files it wrote
    removed_files: list[str] = field(default_factory=list)  # dead files deleted (or to delete)
    orphaned_files: list[str] = field(default_factory=list)
    oldest_snapshot: int | None = None  # after the run: how far time travel reaches
    newest_snapshot: int | None = None
    parquet_before: tuple[int, int] | None = None  # (files, bytes) under the data path
    parquet_after: tuple[int, int] | None = None
    catalog_vacuumed: bool = False  # step 6 rewrote the statistics tables

    def to_json(self) -> dict[str, Any]:
        def files(pair: tuple[int, int] | None) -> dict[str, int] | None:
            return None if pair is None else {"files": pair[0], "bytes": pair[1]}

        return {
            "olderThanS": self.older_than_s,
            "dryRun": self.dry_run,
            "expiredSnapshots": self.expired_snapshots,
            "rewrittenFiles": self.rewritten_files,
            "mergedFiles": self.merged_files,
            "mergedInto": self.merged_into,
            "removedFiles": len(self.removed_files),
            "orphanedFiles": len(self.orphaned_files),
            "oldestSnapshot": self.oldest_snapshot,
            "newestSnapshot": self.newest_snapshot,
            "parquetBefore": files(self.parquet_before),
            "parquetAfter": files(self.parquet_after),
            "catalogVacuumed": self.catalog_vacuumed,
        }


def retention_seconds(settings: Settings, older_than: str | None) -> float:
    """``--older-than`` when given, else ``team_snapshot_retention``; ValueError if malformed."""
    return parse_seconds(older_than if older_than is not None else settings.team_snapshot_retention)


def parquet_usage(data: str, con: Any) -> tuple[int, int]:
    """(Parquet files, bytes) under the data path (``con``: a lake connection, for S3).

    A directory is walked; an S3 prefix is listed through ``con``'s httpfs (``read_blob``
    reads the sizes from the listing and fetches no file content when ``content`` is not
    selected).
    """
    if not data.startswith("s3://"):
        files = [p for p in Path(data).rglob("*.parquet") if p.is_file()]
        return len(files), sum(p.stat().st_size for p in files)
    pattern = data.rstrip("/") + "/**/*.parquet"
    count, size = con.execute(
        "SELECT count(*), coalesce(sum(size), 0) FROM read_blob(?)", [pattern]
    ).fetchone()
    return int(count), int(size)


def maintain(settings: Settings, *, older_than_s: float, dry_run: bool = False) -> MaintainReport:
    """Run the steps of the module docstring on the team lake; what each did, in a report."""
    import duckdb

    _, data = lake.require_configured(settings)
    report = MaintainReport(older_than_s=older_than_s, dry_run=dry_run)
    con = lake.connect(settings, create_tables=False)
    try:
        try:
            report.parquet_before = parquet_usage(data, con)
            _steps(con, report, older_than_s, dry_run)
            report.parquet_after = parquet_usage(data, con)
            if not dry_run:
                catalog_stats.ensure(con, lake.LAKE)
                report.catalog_vacuumed = catalog_stats.vacuum(con, lake.LAKE)
        except duckdb.IOException as exc:  # the data path: S3 down, no bucket, disk full
            raise lake.storage_error(data, exc) from None
        except duckdb.TransactionException as exc:
            raise MaintenanceConflict(
                f"a publish changed the lake during maintenance ({_last_line(exc)}); run "
                "`workbench team maintain` again (what was done so far stays done)"
            ) from None
        low, high = con.execute(
            f"SELECT min(snapshot_id), max(snapshot_id) FROM {lake.LAKE}.snapshots()"
        ).fetchone()  # type: ignore[misc]
        report.oldest_snapshot, report.newest_snapshot = int(low), int(high)
    finally:
        con.close()
    return report


def _steps(con: Any, report: MaintainReport, older_than_s: float, dry_run: bool) -> None:
    name = lake.LAKE
    dry = "true" if dry_run else "false"
    report.expired_snapshots = _expire(con, older_than_s, dry)
    if not dry_run:
        report.rewritten_files = _processed(
            con, f"ducklake_rewrite_data_files('{name}', delete_threshold => 0)"
        )[0]
        report.merged_files, report.merged_into = _processed(
            con, f"ducklake_merge_adjacent_files('{name}')"
        )
        # Trigger: the rewrite and the merge commit snapshots of their own. / Why: the snapshot
        # that was newest a moment ago (a tombstone's, say) still refers to the files they
        # replaced. / Outcome: expire again with the same cutoff, so cleanup can delete them.
        report.expired_snapshots = sorted({*report.expired_snapshots, *_expire(con, older_than_s)})
    report.removed_files = [
        str(r[0])
        for r in con.execute(
            f"SELECT path FROM ducklake_cleanup_old_files('{name}', dry_run => {dry},"
            f" older_than => {_CUTOFF})",
            [older_than_s],
        ).fetchall()
    ]
    report.orphaned_files = [
        str(r[0])
        for r in con.execute(
            f"SELECT path FROM ducklake_delete_orphaned_files('{name}', dry_run => {dry},"
            f" older_than => {_CUTOFF})",
            [max(older_than_s, ORPHAN_MIN_AGE_S)],
        ).fetchall()
    ]


def _expire(con: Any, older_than_s: float, dry: str = "false") -> list[int]:
    """Expire (or, ``dry`` "true", list) the snapshots older than the cutoff."""
    return sorted(
        int(r[0])
        for r in con.execute(
            f"SELECT snapshot_id FROM ducklake_expire_snapshots('{lake.LAKE}', dry_run => {dry},"
            f" older_than => {_CUTOFF})",
            [older_than_s],
        ).fetchall()
    )


def _processed(con: Any, call: str) -> tuple[int, int]:
    """(files processed, files created) summed over the tables a rewrite/merge call reports."""
    # fetchall, not fetchone: the call commits only once its result is read to the end.
    ((processed, created),) = con.execute(
        f"SELECT coalesce(sum(files_processed), 0), coalesce(sum(files_created), 0) FROM {call}"
    ).fetchall()
    return int(processed), int(created)


def _last_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[-1] if lines else type(exc).__name__
