"""The analytics child process: DuckDB reports over the store, run outside the service.

Why a child (issue 19): DuckDB reads the store through its ``sqlite_scanner`` extension,
which carries its own copy of SQLite. Two SQLite libraries on one database file in one
process corrupt it: POSIX advisory locks belong to the process, so neither library sees the
other's locks, and when one closes its file descriptor the kernel drops every lock the
process held on that file, the other library's included (sqlite.org/howtocorrupt.html, 2.2).
Running the reports inside the service killed it with SIGBUS within seconds and broke the
``events``/``observations`` indexes (``bench/concurrency_analytics.py``). In a process of its
own the extension is one more reader of a WAL database, which SQLite is built for. The
service talks to this process through ``report_process`` and refuses, by construction, to open
the store with DuckDB itself (``duck.refuse_in_this_process``).

Protocol, one JSON object per line:

- stdin: ``{"kind": <report>, "scope": {project, start_ms, end_ms, platform_source},
  "by": …, "limit": …}``; EOF means the service is gone: exit at once;
- stdout: ``{"ok": <report JSON>}`` or ``{"error": {"status", "code", "message", "details"}}``.

The connection (``duck.connect``: read-only, the four sandbox layers) is made on the first
request and kept; each request reads through a fresh cursor, so it sees every commit so far.
Like the embedding worker it dies with the service (``PR_SET_PDEATHSIG``).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import WorkbenchError
from workbench.recall.embed_worker import die_with_parent

if TYPE_CHECKING:
    import duckdb


def answer(con: duckdb.DuckDBPyConnection, request: dict[str, Any]) -> dict[str, Any]:
    """The report a request names, as the wire's ``{"ok": …}``."""
    from workbench.knowledge import reports
    from workbench.knowledge.stats import Scope

    scope = Scope(**request.get("scope") or {})
    cur = con.cursor()
    try:
        found = reports.report(
            cur, str(request["kind"]), scope, by=request.get("by"), limit=request.get("limit")
        )
        return {"ok": found.to_json()}
    finally:
        cur.close()


def failure(exc: BaseException) -> dict[str, Any]:
    """An exception as the wire's ``{"error": …}``: a ``WorkbenchError`` keeps its status."""
    if isinstance(exc, WorkbenchError):
        return {
            "error": {
                "status": exc.status_code,
                "code": exc.code,
                "message": exc.message,
                "details": exc.details,
            }
        }
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return {
        "error": {
            "status": 500,
            "code": "REPORT_FAILED",
            "message": f"the analytics report failed: {type(exc).__name__}: {first}",
            "details": {},
        }
    }


def serve(db_path: Path) -> None:
    """Answer requests from stdin until EOF."""
    from workbench.store import duck

    con: duckdb.DuckDBPyConnection | None = None
    try:
        for line in sys.stdin:
            try:
                if con is None:
                    con = duck.connect(db_path)
                reply = answer(con, json.loads(line))
            except Exception as exc:  # every request gets an answer; the process goes on
                reply = failure(exc)
            sys.stdout.write(json.dumps(reply, default=str) + "\n")
            sys.stdout.flush()
    finally:
        if con is not None:
            con.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workbench.knowledge.report_worker")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--parent-pid", type=int, default=None)
    args = parser.parse_args(argv)
    die_with_parent(args.parent_pid)
    try:
        serve(args.db)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
