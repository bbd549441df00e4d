"""One publishing run: this machine's redacted memory into the team lake, in one snapshot.

Guarantees, and how:

- **Allowlist only.** Rows are read project by project, only for projects on ``team_projects``
  and not in ``excluded_projects``; ``--project P`` must be on the allowlist. Text is re-redacted
  on the way out (``local_rows.team_text``).
- **Atomic.** The whole run is one DuckDB transaction on the lake, so one DuckLake snapshot: a
  publisher killed mid-run commits nothing (Parquet files it already wrote stay unreferenced,
  invisible to readers; ``ducklake_cleanup_old_files`` removes them).
- **Idempotent.** Each row's content hash; an insert skips hashes this author already has.
  A run with nothing new rolls back: no empty snapshot.
- **Incremental.** High-water marks per (author, machine, table, project) live *in the
  lake*, in the append-only ``publish_marks`` table, written in the same transaction as the
  rows. Why the lake and not a local SQLite table: the mark and the rows it covers commit or
  vanish together (a local mark could say "published" for a run the lake never saw), and the
  local store needs no new migration. Why per machine (``team/machine.py``): each machine of an
  author numbers its rows from 1, so one machine's mark says nothing about another's rows.
  Marks written before machine ids (no ``machine_id``) are not used: such a machine reads its
  rows from the start once, and the content hashes keep what the lake has from being added
  again. A run with ``--since`` narrows what it reads and writes no marks: it never makes
  older rows skipped.
- **Whose rows.** Supersedes and tombstones touch only the lake rows of this store: the
  author's, with this store's ``(local_id, content_session_id)``; a row is taken as gone
  (recompress) only when its session is one of this store's. Another machine of the same
  author keeps its rows.
- **Rewrites.** A summary re-written in place (same id, new text) is read again (its mark is
  ``updated_at_epoch``) and its old version is deleted from the current snapshot as the new
  one goes in. An observation ``recompress`` replaced (deleted locally, no tombstone; its new
  version has a new id) is tombstoned like a forgotten one. ``superseded`` counts both.
- **Tombstones.** A forgotten observation (``deleted_observations``) already published by this
  author is marked ``deleted_at_epoch`` and its text and lists are blanked in the current
  snapshot. Older snapshots keep it until ``ducklake_expire_snapshots`` runs.
- **Concurrent publishers.** Appends from two authors commit side by side; DuckLake refuses a
  commit that conflicts (an insert into a table another transaction deleted from: a tombstone),
  and the whole run is retried (it is idempotent) up to ``MAX_ATTEMPTS`` times. Two runs of
  the *same* author (two processes on one machine, a restored copy of a store) would both read
  the same marks and hashes and append every row twice, so each run deletes and re-inserts the
  author's row in ``publish_locks`` (``_claim``): deletes of one row conflict, and the retry
  sees the other run's rows.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.clock import now_ms
from workbench.errors import NotFound, WorkbenchError
from workbench.team import lake, local_rows

if TYPE_CHECKING:
    from workbench.settings import Settings

BATCH_ROWS = 5000
LOCK_FILENAME = "team_publish.lock"  # in the data dir: one run at a time per data dir
MAX_ATTEMPTS = 8
Progress = Callable[[str, int, int], None]  # (what, advance, total)


class ProjectNotAllowed(WorkbenchError):
    """``--project P`` for a project that is not on the team allowlist (or is excluded)."""

    status_code = 409
    code = "PROJECT_NOT_ALLOWED"


@dataclass
class PublishResult:
    author: str
    projects: list[str]
    machine: str = ""  # this data dir's machine id (team/machine.py)
    added: dict[str, int] = field(default_factory=dict)
    tombstoned: int = 0
    # Old versions of rows rewritten locally: summaries deleted from the current snapshot,
    # observations recompress replaced tombstoned (see ``_run``).
    superseded: int = 0
    snapshot: int | None = None  # the run's snapshot; None when there was nothing to publish
    attempts: int = 1

    def to_json(self) -> dict[str, Any]:
        return {
            "author": self.author,
            "projects": self.projects,
            "added": self.added,
            "tombstoned": self.tombstoned,
            "superseded": self.superseded,
            "snapshot": self.snapshot,
            "attempts": self.attempts,
        }


def publishable_projects(settings: Settings, project: str | None) -> list[str]:
    """The allowlist minus excluded projects; just ``project`` when given (and allowed).

    Fails closed like capture: while the exclusion rule cannot be read (``capture_paused``),
    nothing is published, since an excluded project could be on the allowlist.
    """
    from workbench.locate import is_excluded

    if settings.capture_paused is not None:
        raise ProjectNotAllowed(f"nothing is published: {settings.capture_paused}")
    excluded = settings.excluded_projects
    allowed = [p for p in settings.team_projects if not is_excluded(excluded, p)]
    if project is not None:
        if project not in allowed:
            why = (
                "it matches excluded_projects"
                if is_excluded(excluded, project)
                else "it is not on the team allowlist"
            )
            raise ProjectNotAllowed(
                f"project {project!r} cannot be published: {why}. Run `workbench team allow "
                f"{project}` (and remove it from excluded_projects) first"
            )
        return [project]
    if not allowed:
        raise ProjectNotAllowed(
            "no project is on the team allowlist, so nothing may be published; run "
            "`workbench team allow PROJECT`"
        )
    return allowed


def publish(
    settings: Settings,
    *,
    project: str | None = None,
    since_ms: int | None = None,
    progress: Progress | None = None,
) -> PublishResult:
    """Publish new rows of the allowlisted projects; retry the whole run on a lake conflict."""
    lake.require_configured(settings)
    projects = publishable_projects(settings, project)
    if not settings.db_path.is_file():
        raise NotFound(f"no workbench database at {settings.db_path}; nothing to publish")
    from workbench.team.machine import machine_id

    result = PublishResult(
        author=settings.team_author_id(),
        projects=projects,
        machine=machine_id(settings.data_dir),
    )
    with _one_run_per_data_dir(settings.data_dir):
        return _publish_locked(settings, result, since_ms, progress)


@contextmanager
def _one_run_per_data_dir(data_dir: Path) -> Iterator[None]:
    """Wait for any other publishing run from this data dir (the CLI and the service's
    publisher may both start one): two runs of one store would only conflict in the lake and
    retry. ``flock`` is released by the kernel if the holder dies."""
    try:
        import fcntl
    except ImportError:  # no flock (Windows): the lake's publish_locks conflict still holds
        yield
        return
    data_dir.mkdir(parents=True, exist_ok=True)
    with (data_dir / LOCK_FILENAME).open("a+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _publish_locked(
    settings: Settings, result: PublishResult, since_ms: int | None, progress: Progress | None
) -> PublishResult:
    import duckdb

    con = lake.connect(settings)
    store = local_rows.open_store(str(settings.db_path))
    try:
        for attempt in range(1, MAX_ATTEMPTS + 1):
            result.attempts = attempt
            try:
                _run(con, store, result, since_ms, progress)
                return result
            except duckdb.TransactionException as exc:
                _rollback(con)
                if attempt == MAX_ATTEMPTS or "conflict" not in str(exc).lower():
                    raise WorkbenchError(
                        f"the team lake refused the publish after {attempt} attempts "
                        f"({str(exc).splitlines()[-1]}); run workbench publish again"
                    ) from None
                time.sleep(random.uniform(0.05, 0.3) * attempt)  # let the other commit land
            except duckdb.IOException as exc:  # the data path: S3 down, no bucket, disk full
                _rollback(con)
                raise lake.storage_error(settings.team_data or "", exc) from None
    finally:
        store.close()
        con.close()
    raise AssertionError("unreachable")


def _rollback(con: Any) -> None:
    try:
        con.execute("ROLLBACK")
    except Exception:  # noqa: BLE001 - no transaction left to roll back
        pass


def _run(
    con: Any,
    store: Any,
    result: PublishResult,
    since_ms: int | None,
    progress: Progress | None,
) -> None:
    author = result.author
    since = since_ms or 0
    run_id = uuid.uuid4().hex
    published_at = now_ms()
    result.added = dict.fromkeys(local_rows.TABLES, 0)
    result.tombstoned = result.superseded = 0
    _ensure_lock_row(con, author)
    con.execute("BEGIN")
    _claim(con, author, run_id, published_at)
    marks = _read_marks(con, author, result.machine)
    total = sum(
        local_rows.count_candidates(store, t, p, marks.get(t, p), since)
        for t in local_rows.TABLES
        for p in result.projects
    )
    if progress:
        progress("rows", 0, total)
    new_marks: list[tuple[str, str, int]] = []
    for table in local_rows.TABLES:
        highs: dict[str, int] = {}
        rows = _candidates(store, table, author, result.projects, marks, since, highs)
        known, live = _published(con, table, author, result.projects)
        for batch in _batches(_with_machine(rows, result.machine)):
            fresh = [row for row in batch if row["content_hash"] not in known]
            known.update(row["content_hash"] for row in fresh)
            for row in fresh:
                row["published_at_epoch"] = published_at
            if table == "summaries":
                rewritten = [_key(row) for row in fresh if _key(row) in live]
                result.superseded += _supersede_summaries(con, author, rewritten)
            result.added[table] += _insert(con, table, fresh)
            if progress:
                progress(table, len(batch), total)
        if table == "observations":
            # Trigger: a published observation is gone locally without a tombstone.
            # Why: recompress replaced it (a new row, a new id) / Outcome: it is superseded.
            held, sessions = local_rows.observation_keys(store, result.projects)
            gone = [k for k in live if k[1] in sessions and k not in held]
            result.superseded += _apply_tombstones(
                con, author, [(i, s, published_at) for i, s in sorted(gone, key=str)]
            )
        for project in result.projects:
            old = marks.get(table, project)
            if since_ms is None and highs.get(project, old) > old:
                new_marks.append((table, project, highs[project]))
    for project in result.projects:
        old = marks.get("tombstones", project)
        deleted = local_rows.tombstones(store, project, old)
        result.tombstoned += _apply_tombstones(con, author, deleted)
        if since_ms is None and deleted and deleted[-1][2] > old:
            new_marks.append(("tombstones", project, deleted[-1][2]))
    if (
        not any(result.added.values())
        and not result.tombstoned
        and not result.superseded
        and not new_marks
    ):
        con.execute("ROLLBACK")
        result.snapshot = None
        return
    if new_marks:
        con.executemany(
            f"INSERT INTO {lake.LAKE}.publish_marks (author, machine_id, table_name, project,"
            " mark, published_at_epoch) VALUES (?, ?, ?, ?, ?, ?)",
            [(author, result.machine, t, p, m, published_at) for t, p, m in new_marks],
        )
    con.execute(f"CALL {lake.LAKE}.set_commit_message(?, ?)", [author, f"publish {run_id}"])
    con.execute("COMMIT")
    row = con.execute(
        f"SELECT max(snapshot_id) FROM {lake.LAKE}.snapshots() WHERE commit_message = ?",
        [f"publish {run_id}"],
    ).fetchone()
    result.snapshot = int(row[0]) if row and row[0] is not None else None


def _ensure_lock_row(con: Any, author: str) -> None:
    """Give ``author`` a row in ``publish_locks`` (its own small commit, once per author).

    Why before the run: two first runs that each found no row would both only insert, and
    inserts do not conflict. Two concurrent first calls here may add two rows; ``_claim``
    deletes them all, which still conflicts.
    """
    import duckdb

    table = f"{lake.LAKE}.{lake.LOCK_TABLE}"
    if con.execute(f"SELECT count(*) FROM {table} WHERE author = ?", [author]).fetchone()[0]:
        return
    try:
        con.execute("BEGIN")
        con.execute(f"INSERT INTO {table} VALUES (?, '', ?)", [author, now_ms()])
        con.execute("COMMIT")
    except duckdb.TransactionException:  # a concurrent first run made the lake change: fine
        _rollback(con)


def _claim(con: Any, author: str, run_id: str, at: int) -> None:
    """Delete and re-insert the author's ``publish_locks`` row inside the run's transaction,
    so a concurrent run of the same author conflicts with this one at commit."""
    table = f"{lake.LAKE}.{lake.LOCK_TABLE}"
    con.execute(f"DELETE FROM {table} WHERE author = ?", [author])
    con.execute(f"INSERT INTO {table} VALUES (?, ?, ?)", [author, run_id, at])


def _read_marks(con: Any, author: str, machine: str) -> local_rows.Marks:
    rows = con.execute(
        f"SELECT table_name, project, max(mark) FROM {lake.LAKE}.publish_marks"
        " WHERE author = ? AND machine_id = ? GROUP BY ALL",
        [author, machine],
    ).fetchall()
    return local_rows.Marks({(t, p): int(m) for t, p, m in rows})


def _batches(rows: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch


def _key(row: dict[str, Any]) -> local_rows.Key:
    return int(row["local_id"]), row["content_session_id"]


def _with_machine(rows: Iterator[dict[str, Any]], machine: str) -> Iterator[dict[str, Any]]:
    """``rows`` with this machine's id (not part of the content hash: a store restored into a
    new data dir has rows the lake already holds)."""
    for row in rows:
        row["machine_id"] = machine
        yield row


def _candidates(
    store: Any,
    table: str,
    author: str,
    projects: list[str],
    marks: local_rows.Marks,
    since: int,
    highs: dict[str, int],
) -> Iterator[dict[str, Any]]:
    """Every project's rows of ``table`` past its mark, in one stream; ``highs`` gets each
    project's highest mark seen (read once the stream is exhausted)."""
    reader = local_rows.READERS[table]
    for project in projects:
        high = marks.get(table, project)
        for row in reader(store, author, project, high, since):
            high = max(high, row.pop("_mark"))
            yield row
        highs[project] = high


def _published(
    con: Any, table: str, author: str, projects: list[str]
) -> tuple[set[str], set[local_rows.Key]]:
    """This author's content hashes in ``table`` for ``projects`` (from every machine), and the
    ``(local_id, content_session_id)`` of its live rows (observations and summaries; none for
    sessions, whose versions all stay), read once.

    Why once per run and table: checking each batch with ``NOT IN (SELECT content_hash …)``
    re-read the author's hashes from the lake per batch (bench/team.py measured it). A set
    read at the start of the run's transaction, kept up to date with what the run inserts, is
    the same check: the per-batch query saw that same snapshot plus this run's own rows.
    """
    live = {
        "observations": "deleted_at_epoch IS NULL",
        "summaries": "true",
        "sessions": "false",
    }[table]
    rows = con.execute(
        f"SELECT content_hash, local_id, content_session_id, {live} FROM {lake.LAKE}.{table}"
        " WHERE author = ? AND list_contains(?, project)",
        [author, projects],
    ).fetchall()
    return {h for h, _, _, _ in rows}, {(int(i), s) for _, i, s, is_live in rows if is_live}


def _supersede_summaries(con: Any, author: str, keys: list[local_rows.Key]) -> int:
    """Delete this author's published versions of summaries re-written locally (their new
    versions are inserted next): the current snapshot holds one version per summary; older
    snapshots keep the old text until ``workbench team maintain`` expires them. Matched on
    ``(local_id, content_session_id)``: another machine's summary with the same id stays."""
    removed = 0
    for local_id, session in keys:
        where = (
            f"FROM {lake.LAKE}.summaries WHERE author = ? AND local_id = ?"
            " AND content_session_id IS NOT DISTINCT FROM ?"
        )
        row = con.execute(f"SELECT count(*) {where}", [author, local_id, session]).fetchone()
        con.execute(f"DELETE {where}", [author, local_id, session])
        removed += int(row[0])
    return removed


def _insert(con: Any, table: str, rows: list[dict[str, Any]]) -> int:
    """Append ``rows`` (already known to be new) in one INSERT; return how many."""
    if not rows:
        return 0
    import pyarrow as pa

    staged = pa.Table.from_pylist(rows)
    con.register("team_staged", staged)
    try:
        con.execute(f"INSERT INTO {lake.LAKE}.{table} BY NAME SELECT * FROM team_staged")
    finally:
        con.unregister("team_staged")
    return len(rows)


def _apply_tombstones(con: Any, author: str, deleted: list[tuple[int, str | None, int]]) -> int:
    """Mark this author's published copies of forgotten observations deleted, text blanked.

    ``deleted``: ``(local_id, content_session_id, deleted_at_epoch)``; a lake row matches on
    both ids, so another machine's row with the same local id is left alone.
    """
    if not deleted:
        return 0
    when = {(local_id, session): at for local_id, session, at in deleted}
    live = con.execute(
        f"SELECT local_id, content_session_id FROM {lake.LAKE}.observations WHERE author = ?"
        " AND deleted_at_epoch IS NULL AND list_contains(?, local_id)",
        [author, sorted({local_id for local_id, _ in when})],
    ).fetchall()
    hits = [(int(i), s) for i, s in live if (int(i), s) in when]
    for local_id, session in hits:
        con.execute(
            f"UPDATE {lake.LAKE}.observations SET deleted_at_epoch = ?, title = '',"
            " subtitle = '', narrative = '', facts = [], concepts = [], files_read = [],"
            " files_modified = [] WHERE author = ? AND local_id = ?"
            " AND content_session_id IS NOT DISTINCT FROM ? AND deleted_at_epoch IS NULL",
            [when[(local_id, session)], author, local_id, session],
        )
    return len(hits)
