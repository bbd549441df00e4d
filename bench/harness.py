"""What every bench script needs to run the real service: a free port, start, wait, stop.

Before, ``free_port`` and a ``start_service`` were copied into six scripts, each with its own
environment, cwd and idea of "up". One copy here, and it starts the service the way a user's
would be started (``workbench.spawn``: cwd the data dir, ``PYTHONPATH`` the checkout), as the
bench's child rather than detached so that a crashed script never leaves one behind:

- the environment is the shell's minus every ``WORKBENCH_*`` (a developer's settings must not
  leak into a figure) and ``PYTHONDONTWRITEBYTECODE`` (an installed service and its hooks run
  with their bytecode cached), plus what the script asks for;
- ``root`` chooses the checkout whose code runs (A/B scripts start an older one beside this);
- "up" means ``/api/health`` answers with ``"service": "workbench"``; a service that exits or
  never answers raises ``ServiceDidNotStart`` with its log's tail when there is a log.

Figures, never assertions: nothing here times anything.
"""

from __future__ import annotations

import functools
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from workbench import spawn  # noqa: E402

DROPPED_ENV = ("PYTHONDONTWRITEBYTECODE",)
LOG_TAIL_CHARS = 4000


class ServiceDidNotStart(RuntimeError):
    """The bench's service exited or never answered; the message says where to look."""


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def hook_env(data_dir: Path, port: int, **extra: str) -> dict[str, str]:
    """The environment a hook under measurement runs with: it finds the bench's service."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("WORKBENCH_") and k not in DROPPED_ENV
    }
    env.update(
        WORKBENCH_DATA_DIR=str(data_dir),
        WORKBENCH_PORT=str(port),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        **extra,
    )
    return env


def service_env(data_dir: Path, port: int, *, root: Path = ROOT, **extra: str) -> dict[str, str]:
    """The service's environment: ``hook_env`` as ``workbench.spawn`` completes it for ``root``,
    with ``root``'s own model builds (``own_models``) unless ``extra`` names others."""
    base = hook_env(data_dir, port, **{**own_models(root), **extra})
    return spawn.service_env(data_dir, port, base, code_root=root.resolve())


def own_models(root: Path) -> dict[str, str]:
    """The model builds in another checkout's venv (``<root>/.venv/share/workbench``), as the
    ``WORKBENCH_*_MODEL_DIR`` settings that point its service at them; nothing for this one.

    Why: every variant's service runs on this interpreter, and a model directory defaults to
    the interpreter's venv, so a checkout from before a model change served the new model and
    a before/after run compared it with itself (issue 21, stop 50: the fine-tuned MiniLM).
    """
    if root.resolve() == ROOT.resolve():
        return {}
    from workbench.recall.embed import STATIC_MODEL_NAME
    from workbench.recall.onnx_export import ONNX_MODEL_NAME

    share = root / ".venv" / "share" / "workbench"
    wanted = {
        "WORKBENCH_ONNX_MODEL_DIR": share / ONNX_MODEL_NAME,
        "WORKBENCH_STATIC_MODEL_DIR": share / STATIC_MODEL_NAME,
    }
    return {key: str(where) for key, where in wanted.items() if (where / "manifest.json").is_file()}


def health(port: int, timeout: float = 1.0) -> dict[str, Any] | None:
    """The health document when our service answers on ``port``, else None."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", "/api/health")
        response = conn.getresponse()
        body = json.loads(response.read()) if response.status == 200 else None
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        conn.close()
    return body if isinstance(body, dict) and body.get("service") == "workbench" else None


def wait_health(
    port: int, timeout: float, proc: subprocess.Popen[bytes] | None = None
) -> dict[str, Any]:
    """Poll until the service answers; raise when ``timeout`` passes or ``proc`` exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        body = health(port)
        if body is not None:
            return body
        if proc is not None and proc.poll() is not None:
            raise ServiceDidNotStart(f"the service exited with {proc.returncode}")
        time.sleep(0.05)
    raise ServiceDidNotStart(f"the service did not answer on port {port} within {timeout:.0f} s")


def _limit_files(limit: tuple[int, int]) -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, limit)


def start_service(
    data_dir: Path,
    port: int,
    *,
    root: Path = ROOT,
    log: Path | None = None,
    wait_s: float = 60.0,
    file_limit: tuple[int, int] | None = None,
    **extra: str,
) -> subprocess.Popen[bytes]:
    """The real service of checkout ``root`` on ``data_dir``, returned once its health answers.

    ``extra`` are environment variables (``WORKBENCH_EMBEDDER="none"``…); output goes to
    ``log`` (appended) or nowhere. ``file_limit``: the (soft, hard) open-files limit it starts
    with (a login session's, say), else this process's.
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    out = log.open("ab") if log is not None else subprocess.DEVNULL
    try:
        proc = subprocess.Popen(
            spawn.service_command(),
            cwd=data_dir,
            env=service_env(data_dir, port, root=root, **extra),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            # As hooks spawn it (workbench.spawn): a session, so an autogroup, of its own. In
            # the bench's session the niced embedding worker competed with the bench's own
            # processes for CPU and starved where a user's would not (issue 21).
            start_new_session=True,
            preexec_fn=None if file_limit is None else functools.partial(_limit_files, file_limit),
        )
    finally:
        if log is not None:
            out.close()  # type: ignore[union-attr]
    try:
        wait_health(port, wait_s, proc)
    except ServiceDidNotStart as exc:
        stop_service(proc)
        tail = log.read_text(encoding="utf-8", errors="replace")[-LOG_TAIL_CHARS:] if log else ""
        where = f"; its log ({log}):\n{tail}" if log else " (pass log= to keep its output)"
        raise ServiceDidNotStart(f"{exc} (code from {root}){where}") from None
    return proc


@contextmanager
def seeded_service(
    seeded: Path,
    folder: Path,
    *,
    root: Path = ROOT,
    prepare: Callable[[Path], object] | None = None,
    wait_s: float = 180.0,
    **extra: str,
) -> Iterator[int]:
    """The service of checkout ``root`` on a copy of the seeded data dir ``seeded`` (made under
    ``folder``: a bench writes to its store, the seeded original must stay as it is), yielding
    its port; stopped and the copy removed after.

    ``prepare`` edits the copy before the service starts; ``extra`` are environment variables
    (``start_service``); the service's log is ``folder/service-<port>.log``.
    """
    data = folder / f"data-{free_port()}"
    shutil.copytree(seeded, data)
    try:
        if prepare is not None:
            prepare(data)
        port = free_port()
        proc = start_service(
            data, port, root=root, log=folder / f"service-{port}.log", wait_s=wait_s, **extra
        )
        try:
            yield port
        finally:
            stop_service(proc, 30)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def stop_service(proc: subprocess.Popen[bytes], timeout: float = 20.0) -> None:
    """SIGTERM, then SIGKILL if it has not exited within ``timeout`` seconds."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def stop_detached(data_dir: Path, port: int) -> None:
    """Stop a service that is not our child (a hook spawned it): the pid its PID file names,
    or, while it is still starting and has written none, the pid in the hooks' spawn lock
    (SessionStart spawns and returns at once). SIGTERM, then SIGKILL after 10 s."""
    for name in ("service.pid", "spawn.lock"):
        try:
            pid = int((data_dir / name).read_text(encoding="ascii").split()[0])
        except (OSError, ValueError, IndexError):
            continue
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                break
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and alive(pid):
                time.sleep(0.05)
            if not alive(pid):
                break
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and health(port) is not None:
        time.sleep(0.05)


def alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie of ours is reaped, so it counts as gone)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass  # not our child: the kill(0) below decides
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def settings_spec(spec: str) -> dict[str, Any]:
    """``key=value`` pairs joined by ``&`` (``vector_index=hnsw_fp16&search_rerank=true``) as
    a settings dict: each value read as JSON when it parses (numbers, booleans), else kept as
    text. The benches' ``--also`` / ``--side`` options take this form."""
    changed: dict[str, Any] = {}
    for pair in spec.split("&"):
        key, _, raw = pair.partition("=")
        try:
            changed[key] = json.loads(raw)
        except ValueError:
            changed[key] = raw
    return changed


def progress(message: str) -> None:
    """A timestamped line on stderr, so stdout keeps only the figures."""
    sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
    sys.stderr.flush()


def module_at(ref: str, path: str, name: str) -> ModuleType:
    """``path`` as it was at git ``ref``, imported as module ``name``: the "before" side of a
    bench that runs old and new code in one process, so both figures come from one run.

    Registered in ``sys.modules`` (dataclasses look their module up there); the temporary copy
    is removed once executed.
    """
    import importlib.util
    import shutil
    import tempfile

    source = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{ref}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    where = Path(tempfile.mkdtemp(prefix="wb-before-")) / f"{name}.py"
    where.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(name, where)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        shutil.rmtree(where.parent, ignore_errors=True)
    return module


def tree_at(ref: str) -> Path:
    """``ref``'s whole tree in a temporary folder (``git archive``; no worktree is touched):
    the "before" side of a bench that runs the old service beside the new one."""
    import tempfile

    where = Path(tempfile.mkdtemp(prefix="wb-before-")) / ref
    where.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


@contextmanager
def burners(count: int) -> Iterator[None]:
    """``count`` processes spinning on the CPU for the block's duration, each in a session
    of its own, as other programs are: with the kernel's autogroup scheduling, burners in
    the bench's session would slow only the hooks, never the service they spawn (which
    starts a session of its own)."""
    procs = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], start_new_session=True)
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()
