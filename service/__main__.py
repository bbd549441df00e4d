"""``python -m service``: load settings, run uvicorn on loopback with one process.

One process on purpose: the service is the store's only writer and holds the embedding model
once. ``--port`` / ``--data-dir`` override the settings for this run only.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

import uvicorn

from service.app import create_app
from service.file_limit import raise_file_limit
from service.http_protocol import protocol_for
from workbench.errors import WorkbenchError
from workbench.pidfile import AlreadyRunning, PidFile
from workbench.recall.heap_trim import cap_arenas, fix_heap_thresholds
from workbench.settings import load_settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service", description=__doc__)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    cap_arenas()  # before any of the service's threads allocates (heap_trim.py)
    fix_heap_thresholds()  # freed MiB arrays go back to the OS (heap_trim.py)
    raise_file_limit()  # a burst of connections must not lock hooks out (file_limit.py)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    overrides = {"port": args.port} if args.port else {}
    settings = load_settings(args.data_dir, **overrides)
    # The PID lock is taken here, before uvicorn starts, and held until it returns: a second
    # service (started at the same moment, or on another port) then gets one line that names
    # the running one, never a lifespan traceback, and there is no window between a check and
    # the lock.
    settings.ensure_dirs()
    pidfile = PidFile(settings.pid_path)
    try:
        pidfile.acquire(port=settings.port)
    except AlreadyRunning as exc:
        print(f"workbench: {exc.message}", file=sys.stderr)  # noqa: T201
        return 1
    try:
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
        )
        for warning in settings.load_warnings:
            logging.getLogger("workbench.settings").warning(warning)
        app = create_app(settings, pid_lock=pidfile)  # held; the runtime releases it
        uvicorn.run(
            app,
            host=settings.host,
            port=settings.port,
            http=protocol_for(app.state.instance_id),  # JSON 414 / 431: an over-long URL or head
            log_level="warning",
            access_log=False,
            lifespan="on",
        )
    except WorkbenchError as exc:
        print(f"workbench: {exc.message}", file=sys.stderr)  # noqa: T201
        return 1
    finally:
        pidfile.release()  # a no-op after a normal shutdown; covers a failed startup
    return 0


if __name__ == "__main__":
    sys.exit(main())
