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
from workbench.errors import WorkbenchError
from workbench.pidfile import read_pid
from workbench.settings import load_settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m service", description=__doc__)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--port", type=int, default=None)
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    overrides = {"port": args.port} if args.port else {}
    settings = load_settings(args.data_dir, **overrides)
    # Checked here as well as under the lock in the lifespan: uvicorn turns an error raised
    # during startup into a traceback, and a person deserves one line that says what to do.
    running = read_pid(settings.pid_path)
    if running is not None:
        print(  # noqa: T201
            f"workbench: another service (pid {running}) already serves this data dir "
            f"({settings.data_dir}); stop it with `workbench stop` or use another "
            "WORKBENCH_DATA_DIR",
            file=sys.stderr,
        )
        return 1
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    for warning in settings.load_warnings:
        logging.getLogger("workbench.settings").warning(warning)
    app = create_app(settings)
    try:
        uvicorn.run(
            app,
            host=settings.host,
            port=settings.port,
            log_level="warning",
            access_log=False,
            lifespan="on",
        )
    except WorkbenchError as exc:
        print(f"workbench: {exc.message}", file=sys.stderr)  # noqa: T201
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
