"""What the notebooks share: where the data is, how to read it, and how to reach the writer.

The marimo notebooks in ``notebooks/`` (and the Jupyter example) are read-only consumers:
they open the SQLite store read-only and DuckDB over it, and anything that writes (corpora,
the knowledge agent) goes through the service's HTTP API, like the CLI does. This module
holds the few pieces every notebook needs, so each one stays a thin layer of widgets:

- ``base_parser`` / ``parse_known``: ``--data-dir`` from the notebook's arguments, else
  ``WORKBENCH_DATA_DIR``, else the default data dir (``marimo edit nb.py -- --data-dir X`` and
  ``python nb.py --data-dir X`` both put the flag in ``sys.argv``; unknown flags are ignored);
- ``open_store``: the store read-only, with a message that says what to do when it is missing;
- ``service``: a client when the service answers, without starting one; ``writer``: start it
  if needed (what ``workbench corpus build`` does), saying so;
- ``catalogue``: the projects, concepts and date span the widgets offer;
- ``notebook_path``: the file of a notebook ``workbench notebook`` opens (the names, and
  marimo's snapshots of their outputs, are in ``notebook_files``);
- ``run_headless``: ``python notebooks/x.py --data-dir DIR``: refuses a data dir that is not
  there (exit 2) or holds no memory (exit 1), runs the notebook, prints its short summary,
  and stops a service the run started (a script never leaves a daemon behind).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError
from workbench.locate import trimmed
from workbench.notebook_files import NOTEBOOKS, NOTEBOOKS_DIR
from workbench.settings import Settings, load_settings


def notebook_path(name: str) -> Path:
    """The file of notebook ``name``; ``WorkbenchError`` lists the names when it is unknown."""
    if name not in NOTEBOOKS:
        raise WorkbenchError(
            f"no notebook named {name!r}; the notebooks are: {', '.join(NOTEBOOKS)} "
            "(run `workbench notebook` to list them)"
        )
    path = NOTEBOOKS_DIR / f"{name}.py"
    if not path.is_file():
        raise WorkbenchError(
            f"notebook {name} is not at {path}; the notebooks ship with the repository, so "
            "run workbench from a checkout (pip install -e .)"
        )
    return path


def base_parser(description: str) -> argparse.ArgumentParser:
    """A parser with ``--data-dir``; each notebook adds its own options."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("WORKBENCH_DATA_DIR") or None,
        help="workbench data dir (default: WORKBENCH_DATA_DIR, else ~/.workbench)",
    )
    return parser


def parse_known(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse what is ours and ignore the rest (marimo or pytest may add their own flags)."""
    args, _ = parser.parse_known_args(list(argv) if argv is not None else None)
    return args


def settings_for(data_dir: Path | str | None) -> Settings:
    """The settings of the notebook's data dir (None: ``WORKBENCH_DATA_DIR`` or the default).

    A relative path is taken from where the user typed it, the shell's ``$PWD``, not from
    the process's cwd: Jupyter starts each kernel in the notebook's own folder, so
    ``WORKBENCH_DATA_DIR=.demo/data jupyter lab`` would otherwise look in
    ``notebooks/.demo/data``.
    """
    if data_dir is None:
        data_dir = trimmed(os.environ.get("WORKBENCH_DATA_DIR", "")) or None
    if data_dir is not None:
        chosen = Path(data_dir).expanduser()
        typed_in = os.environ.get("PWD", "")
        if not chosen.is_absolute() and os.path.isabs(typed_in):
            data_dir = Path(typed_in) / chosen
    return load_settings(data_dir)


def open_store(settings: Settings) -> Any:
    """The store, read-only (``WorkbenchError`` with the fix when there is none yet)."""
    from workbench.store.database import Store

    if not settings.db_path.is_file():
        raise WorkbenchError(
            f"no workbench memory at {settings.db_path}. Seed the demo with `workbench demo` and "
            "open the notebook with `workbench notebook <name> --data-dir .demo/data`, or point "
            "--data-dir / WORKBENCH_DATA_DIR at your data dir."
        )
    return Store(settings.db_path, readonly=True)


@dataclass(frozen=True)
class Connection:
    """A service client and how it was obtained (for the notebook to say so)."""

    client: Any
    started: bool
    url: str


def service(settings: Settings) -> Connection | None:
    """A client for the service when it is running on this data dir, else None."""
    from workbench import launch
    from workbench.client import ServiceClient

    body = launch.health(settings.port)
    if body is None or Path(str(body.get("dataDir", ""))).resolve() != settings.data_dir.resolve():
        return None
    return Connection(ServiceClient(settings, timeout=60.0), False, settings.base_url)


def writer(settings: Settings) -> Connection:
    """A client for writes, starting the service when it is down (as the CLI does)."""
    from workbench.client import writer as start_writer

    client, started = start_writer(settings, temporary=False)
    return Connection(client, started, settings.base_url)


@dataclass(frozen=True)
class Catalogue:
    """What the memory holds, for the notebooks' widgets (options, date bounds)."""

    observations: int
    projects: list[str]
    concepts: list[str]  # most frequent first, lowercased, at most 200
    first_day: date | None
    last_day: date | None


def catalogue(conn: sqlite3.Connection) -> Catalogue:
    """Projects, concepts and the date span of the observations (read-only queries)."""
    total, first, last = conn.execute(
        "SELECT count(*), min(created_at_epoch), max(created_at_epoch) FROM observations"
    ).fetchone()
    projects = [r[0] for r in conn.execute("SELECT DISTINCT project FROM observations ORDER BY 1")]
    concepts = [
        r[0]
        for r in conn.execute(
            "SELECT lower(trim(c.value)) AS concept FROM observations o, json_each(o.concepts) c"
            " WHERE trim(c.value) != '' GROUP BY concept ORDER BY count(*) DESC, concept LIMIT 200"
        )
    ]

    def day(ms: int | None) -> date | None:
        return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC).date()

    return Catalogue(int(total), projects, concepts, day(first), day(last))


# ----- headless runs -------------------------------------------------------------------------
Summary = Callable[[Mapping[str, Any]], list[str]]


def run_headless(
    app: Any, args: argparse.Namespace, summarize: Summary, *, store: bool = True
) -> int:
    """Run a notebook as a script and print what it computed; the exit code for ``SystemExit``.

    ``summarize`` turns the notebook's definitions into a few lines; an empty list means the
    notebook stopped before computing anything (its own message is then the last line it
    could give), which is exit 1. ``store=False`` for a notebook that only talks to the
    service (``knowledge_agent``): the data dir must still exist.
    """

    settings = settings_for(args.data_dir)
    if not settings.data_dir.is_dir():
        return _fail(
            f"data dir {settings.data_dir} does not exist. Point --data-dir (or "
            "WORKBENCH_DATA_DIR) at a workbench data dir, or seed the demo with `workbench demo` "
            "and pass --data-dir .demo/data",
            code=2,
        )
    if store:
        try:
            open_store(settings).close()
        except (WorkbenchError, sqlite3.Error) as exc:
            return _fail(str(getattr(exc, "message", exc)))
    with stopping_what_it_starts(settings):
        _, defs = app.run(defs={"args": args})
    lines = summarize(defs)
    if not lines:
        return _fail(f"the notebook stopped before computing anything for {settings.data_dir}")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


@contextlib.contextmanager
def stopping_what_it_starts(settings: Settings) -> Iterator[None]:
    """Stop, at the end of the block, a service the block had to start (a notebook saving a
    corpus, the knowledge agent): a headless run, as a script or an HTML export, never leaves
    a daemon behind. A service that answered before is left alone."""
    from workbench import launch
    from workbench.pidfile import read_pid, terminate

    was_running = launch.health(settings.port) is not None
    try:
        yield
    finally:
        pid = None if was_running else read_pid(settings.pid_path)
        if pid is not None:
            terminate(settings.pid_path)
            sys.stderr.write(f"stopped the workbench service this run started (pid {pid})\n")


def _fail(message: str, code: int = 1) -> int:
    sys.stderr.write(f"error: {message}\n")
    return code
