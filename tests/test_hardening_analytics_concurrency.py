"""Analytics never run inside the writing service (issue 19, item 1).

The report: hook writes every 0.2 s while a loop called ``GET /api/stats/economics`` killed
the service with SIGBUS within 12–41 s and left ``integrity_check`` errors. The cause: DuckDB's
sqlite extension (a second SQLite library) opened the store inside the service, beside
Python's sqlite3, and POSIX locks are per process. Now the reports run in a child process and
the service refuses to open its store through DuckDB at all. Checked here for real:

- 60 s of writes, every ``/api/stats/<report>``, reindex and forget at once against a real
  service (``bench/concurrency_analytics.run_load``): no death, no error, ``integrity_check``
  ok (before the fix, run for 60 s: 5 deaths by SIGBUS, 94 integrity problems);
- the service process never maps the extension's file, after every stats route, the corpus
  and knowledge-agent routes, search and export (``/proc/<pid>/maps``);
- ``duck.connect`` refuses a store this process writes; the child sees new rows, holds no
  read transaction between reports (checkpoints pass), and one killed is replaced.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from bench.concurrency_analytics import REPORTS, integrity, run_load
from tests import analytics_data
from tests.conftest import Service, http_json
from tests.test_crash import wait_for
from workbench.errors import WorkbenchError
from workbench.knowledge.report_process import ReportProcess
from workbench.knowledge.stats import ALL, Scope
from workbench.models import ObservationDraft
from workbench.store import duck, observations
from workbench.store.connection import atomic

pytestmark = pytest.mark.slow

LOAD_SECONDS = 60.0
EXTENSION_FILE = "sqlite_scanner"


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text(encoding="utf-8").split()]
    return found


def _report_worker(svc: Service) -> int:
    """The pid of the service's analytics child (started by the first report)."""
    assert svc.proc is not None
    for child in _children(svc.proc.pid):
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        if b"workbench.knowledge.report_worker" in cmdline:
            return child
    raise AssertionError("the service has no analytics child")


def test_writes_every_report_reindex_and_forget_at_once_never_kill_or_corrupt(
    make_service: Any,
) -> None:
    svc = make_service()
    deaths: list[int | None] = []

    def restart() -> int | None:
        assert svc.proc is not None
        code = svc.proc.wait()
        deaths.append(code)
        svc.start()
        return code

    counts = run_load(
        lambda: svc.port,
        LOAD_SECONDS,
        alive=lambda: svc.proc is not None and svc.proc.poll() is None,
        restart=restart,
    )
    figures = counts.to_json()
    print(f"\nconcurrency {LOAD_SECONDS:.0f} s: {figures}")  # the figures, in -s runs
    assert svc.proc is not None
    assert svc.proc.poll() is None, "the service died at the end"
    assert deaths == [], f"the service died {len(deaths)} times (exit codes {deaths})"
    assert figures["errors"] == {}
    assert all(counts.requests[f"stats/{r}"] > 0 for r in REPORTS), figures
    assert counts.requests["write"] > 0, figures
    assert counts.requests["forget"] > 0, figures
    assert counts.requests["reindex"] > 0, figures
    svc.stop()
    assert integrity(svc.data_dir / "workbench.db") == ["ok"]


def test_the_service_process_never_loads_duckdbs_sqlite_extension(service: Service) -> None:
    assert service.proc is not None
    status, body = service.post("/api/import", analytics_data.export_document())
    assert status == 200, body
    for report in REPORTS:
        status, body = service.get(f"/api/stats/{report}")
        assert status == 200, (report, body)
    assert service.get("/api/stats")[0] == 200
    built = service.post("/api/corpus", {"name": "all"})
    assert built[0] == 200, built
    for method, path, payload in (
        ("GET", "/api/corpus", None),
        ("GET", "/api/corpus/all", None),
        ("POST", "/api/corpus/all/rebuild", None),
        ("POST", "/api/corpus/all/prime", None),
        ("POST", "/api/corpus/all/query", {"question": "what about the cache?"}),
        ("POST", "/api/corpus/all/reprime", None),
        ("GET", "/api/search?query=cache", None),
        ("GET", "/api/export", None),
        ("DELETE", "/api/corpus/all", None),
    ):
        status, body = http_json(method, service.url + path, payload)
        assert status == 200, (method, path, body)
    maps = Path(f"/proc/{service.proc.pid}/maps").read_text(encoding="utf-8")
    assert EXTENSION_FILE not in maps  # never the second SQLite library
    # The reports did run, in the child, which maps it.
    child = _report_worker(service)
    assert EXTENSION_FILE in Path(f"/proc/{child}/maps").read_text(encoding="utf-8")


def test_duck_refuses_a_store_this_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "workbench.db"
    store = analytics_data.seed(path, with_ledger=False)
    try:
        duck.refuse_in_this_process(path)
        with pytest.raises(WorkbenchError, match="two SQLite libraries in one process"):
            duck.connect(path)
        duck.allow_in_this_process(path)
        duck.connect(path).close()
    finally:
        duck.allow_in_this_process(path)
        store.close()


def test_the_child_sees_new_rows_and_never_blocks_checkpoints(tmp_path: Path) -> None:
    path = tmp_path / "live.db"
    store = analytics_data.seed(path, with_ledger=False)
    reports = ReportProcess(path)
    try:
        assert reports.report("types", ALL)["summary"]["observations"] == 3
        with atomic(store.conn):
            observations.insert(
                store.conn,
                ObservationDraft(title="written while the child reads"),
                content_session_id=None,
                project="gamma",
            )
        assert reports.report("types", ALL)["summary"]["observations"] == 4
        gamma = reports.report("types", Scope(project="gamma"))
        assert gamma["summary"]["observations"] == 1
        busy, _, _ = store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        assert busy == 0  # the child holds no read transaction between reports
    finally:
        reports.close()
        store.close()


def test_a_killed_analytics_child_is_replaced_by_the_next_report(service: Service) -> None:
    status, body = service.post("/api/import", analytics_data.export_document())
    assert status == 200, body
    assert service.get("/api/stats/types")[0] == 200
    child = _report_worker(service)
    os.kill(child, signal.SIGKILL)
    wait_for(lambda: not Path(f"/proc/{child}").exists() or _zombie(child), what="the kill")
    status, body = service.get("/api/stats/types")
    assert status == 200, body
    assert body["summary"]["observations"] == 3
    assert _report_worker(service) != child


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8")
        return stat.split(")")[-1].split()[0] == "Z"
    except OSError:
        return True
