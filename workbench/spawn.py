"""Start ``python -m service`` detached: the one spawner of the CLI and the hooks. Stdlib only.

``workbench serve --detach`` (through ``workbench.launch``) and the SessionStart hook (and
``hooks/context_file.py`` through it) both call ``spawn_service``, so a service runs the same
way whoever started it:

- command: ``<this interpreter> -m service``;
- cwd: the data dir. The service outlives the session that started it, so it must not hold the
  user's project folder (or the hook's folder), and ``-m`` looks in the cwd first: started in
  a project that has its own ``service`` package, it would run that one;
- environment: the caller's, except
  - ``WORKBENCH_DATA_DIR`` and ``WORKBENCH_PORT`` are the values the caller resolved, so the
    service listens exactly where the caller then polls;
  - ``PYTHONPATH`` is the folder that holds ``workbench/`` and ``service/`` (``CODE_ROOT``),
    replacing the caller's: the service and the embedding worker it starts run this very code,
    never a ``service`` from the user's own path. When ``CODE_ROOT`` is the interpreter's
    site-packages (an installed package), ``PYTHONPATH`` is dropped instead: the child looks
    there anyway, and naming it would put it ahead of the standard library;
  - Claude Code's ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` pass through like the rest,
    but the service uses them only when its settings name claude (``Settings.api_key_source``):
    the settings, not the spawner, decide the compressor;
  - ``WORKBENCH_ONNX_MODEL_DIR`` and the other model folders (``locate.MODEL_DIR_VARS``)
    are made absolute against the caller's cwd: the service runs in the data dir, where a
    relative path names another folder (``locate.absolute_model_dirs``);
  - ``HF_HUB_OFFLINE`` and ``TRANSFORMERS_OFFLINE`` default to 1 (loading a model by hub name
    otherwise hangs ~70 s offline); a caller's explicit value stands;
- stdin from /dev/null, stdout and stderr appended to ``<data_dir>/logs/service.log`` (0600),
  a session of its own (it survives the hook or CLI that started it) and no inherited
  descriptors: Claude Code waits for a hook's pipes to close, and the service would hold them.

``subprocess`` is imported inside ``spawn_service``: most session starts find the service up,
and a hook pays for every module it loads (bench/hooks.py).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from workbench import locate

TYPE_CHECKING = False  # ``typing`` costs hook start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    import subprocess
    from collections.abc import Mapping

CODE_ROOT = Path(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INSTALLED_FOLDERS = ("site-packages", "dist-packages")
LOG_NAME = "service.log"
SPAWN_LOCK = "spawn.lock"  # a SessionStart hook's record of the service it spawned: "<pid> <epoch>"
SPAWN_GRACE_S = 60.0  # a spawned service still starting after this is presumed dead


def service_command(python: str | None = None) -> list[str]:
    """``<python> -m service``, with the running interpreter unless told otherwise."""
    return [python or sys.executable, "-m", "service"]


def service_env(
    data_dir: Path,
    port: int,
    base: Mapping[str, str] | None = None,
    code_root: Path = CODE_ROOT,
) -> dict[str, str]:
    """The service's environment: ``base`` (default ``os.environ``) with the rules above."""
    env = dict(os.environ if base is None else base)
    env["WORKBENCH_DATA_DIR"] = str(data_dir)
    env["WORKBENCH_PORT"] = str(port)
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.setdefault("TRANSFORMERS_OFFLINE", "1")
    locate.absolute_model_dirs(env)
    if code_root.name in INSTALLED_FOLDERS:
        env.pop("PYTHONPATH", None)
    else:
        env["PYTHONPATH"] = str(code_root)
    return env


def spawn_service(data_dir: Path, port: int, python: str | None = None) -> subprocess.Popen[bytes]:
    """Start the service for ``data_dir`` on ``port``, detached; the caller polls its health."""
    import subprocess

    logs = data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True, mode=0o700)
    log_fd = os.open(logs / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        return subprocess.Popen(
            service_command(python),
            cwd=str(data_dir),
            env=service_env(data_dir, port),
            stdin=subprocess.DEVNULL,
            stdout=log_fd,
            stderr=log_fd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(log_fd)  # the child holds its own copy


def recent_spawn(record: str) -> int | None:
    """The pid a ``spawn.lock`` record names when it was written less than ``SPAWN_GRACE_S``
    ago, else None (empty, unreadable or old). Whether that pid still lives is the caller's
    question: a hook treats another user's pid as alive, ``workbench stop`` cannot signal it.
    """
    pid_text, _, when_text = record.partition(" ")
    try:
        pid, when = int(pid_text), float(when_text)
    except ValueError:
        return None
    if pid <= 0 or not -1.0 < time.time() - when < SPAWN_GRACE_S:  # whole seconds written
        return None
    return pid
