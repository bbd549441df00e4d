"""One spawner: ``workbench serve --detach`` and the SessionStart hook start the same service.

Each caller is run for real (the CLI as ``python -m workbench``, the hook as ``python -S
hooks/session_start.py``) from inside a user's project that holds a decoy ``service`` package,
with a ``PYTHONPATH`` that names that project first. Whatever each one starts is then read back
through ``/proc/<pid>``: its command line, its working directory and its environment. Both
must be identical, run in the data dir, and be our service (the decoy would leave a mark).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HOOKS_DIR, ROOT, base_env, free_port, http_json, run_workbench
from workbench import spawn

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path("/proc/self/environ").exists(), reason="reads the spawned process through /proc"
    ),
]

DECOY_MAIN = """\
from pathlib import Path
Path(__file__).with_name("ran").write_text("the decoy ran", encoding="utf-8")
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's project with its own ``service`` package, which ``-m service`` must never run."""
    folder = tmp_path / "project"
    (folder / "service").mkdir(parents=True)
    (folder / "service" / "__init__.py").write_text("", encoding="utf-8")
    (folder / "service" / "__main__.py").write_text(DECOY_MAIN, encoding="utf-8")
    return folder


@pytest.fixture
def env(data_dir: Path, project: Path) -> dict[str, str]:
    return base_env(data_dir, free_port(), PYTHONPATH=os.pathsep.join([str(project), str(ROOT)]))


def spawned_by_cli(env: dict[str, str], project: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "serve", "--detach"],
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def spawned_by_hook(env: dict[str, str], project: Path) -> None:
    payload = {
        "session_id": "s-spawn",
        "hook_event_name": "SessionStart",
        "cwd": str(project),
        "source": "startup",
    }
    proc = subprocess.run(
        [sys.executable, "-S", str(HOOKS_DIR / "session_start.py")],
        input=json.dumps(payload).encode(),
        env=env,
        cwd=project,
        capture_output=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr


def health(env: dict[str, str], timeout: float = 60.0) -> dict[str, Any]:
    """The spawned service's health (the hook's own wait is bounded; a cold start may be slow)."""
    url = f"http://127.0.0.1:{env['WORKBENCH_PORT']}/api/health"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status, body = http_json("GET", url, timeout=1.0)
            if status == 200 and isinstance(body, dict) and body.get("service") == "workbench":
                return body
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"nothing of ours answered on {url}")


def process_view(pid: int) -> dict[str, Any]:
    """What the kernel says process ``pid`` runs: argv, cwd, environment."""
    proc = Path(f"/proc/{pid}")
    environ = (proc / "environ").read_bytes().decode("utf-8", "replace").split("\0")
    return {
        "argv": (proc / "cmdline").read_bytes().decode().split("\0")[:-1],
        "cwd": os.readlink(proc / "cwd"),
        "env": dict(item.split("=", 1) for item in environ if "=" in item),
    }


def spawn_and_look(caller: Any, env: dict[str, str], project: Path) -> dict[str, Any]:
    caller(env, project)
    try:
        return process_view(int(health(env)["pid"]))
    finally:
        stopped = run_workbench(env, "stop")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr


def test_the_cli_and_the_hook_spawn_the_same_service(
    env: dict[str, str], data_dir: Path, project: Path
) -> None:
    by_cli = spawn_and_look(spawned_by_cli, env, project)
    by_hook = spawn_and_look(spawned_by_hook, env, project)

    assert by_cli == by_hook
    assert by_cli["argv"] == [sys.executable, "-m", "service"]
    assert by_cli["cwd"] == str(data_dir)  # not the user's project, not the checkout
    assert by_cli["env"]["PYTHONPATH"] == str(ROOT)  # this code, never the project's package
    assert by_cli["env"]["WORKBENCH_DATA_DIR"] == str(data_dir)
    assert by_cli["env"]["WORKBENCH_PORT"] == env["WORKBENCH_PORT"]
    assert not (project / "service" / "ran").exists()
    assert (data_dir / "logs" / "service.log").stat().st_mode & 0o077 == 0


def test_the_environment_keeps_the_callers_and_pins_where_the_service_listens(
    tmp_path: Path,
) -> None:
    caller = {
        "PATH": "/usr/bin",
        "ANTHROPIC_API_KEY": "sk-test",
        "PYTHONPATH": "/home/me/project",
        "WORKBENCH_DATA_DIR": "/somewhere/else",
        "WORKBENCH_PORT": "1",
        "HF_HUB_OFFLINE": "0",
    }
    env = spawn.service_env(tmp_path, 40123, caller)
    assert env == {
        "PATH": "/usr/bin",
        "ANTHROPIC_API_KEY": "sk-test",
        "PYTHONPATH": str(spawn.CODE_ROOT),
        "WORKBENCH_DATA_DIR": str(tmp_path),
        "WORKBENCH_PORT": "40123",
        "HF_HUB_OFFLINE": "0",  # the caller's explicit choice stands
        "TRANSFORMERS_OFFLINE": "1",
    }
    assert caller["PYTHONPATH"] == "/home/me/project"  # the caller's mapping is not changed


@pytest.mark.parametrize("folder", ["site-packages", "dist-packages"])
def test_an_installed_package_adds_no_pythonpath(folder: str, tmp_path: Path) -> None:
    """Installed, the code root is the interpreter's site-packages: the child finds it there,
    and naming it in PYTHONPATH would put it ahead of the standard library."""
    env = spawn.service_env(tmp_path, 40123, {"PYTHONPATH": "/x"}, code_root=Path("/v") / folder)
    assert "PYTHONPATH" not in env
