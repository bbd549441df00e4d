"""A relative ``WORKBENCH_ONNX_MODEL_DIR`` / ``WORKBENCH_STATIC_MODEL_DIR`` means the folder
the user meant: relative to where they set it, not to the service's cwd (the data dir).

The service is spawned with ``cwd=<data_dir>`` (workbench/spawn.py), so a relative path handed
on as is was looked up under the data dir: the service silently loaded no static tier and no
(or another) ONNX model. Each caller here is real (the CLI as ``python -m workbench serve``,
detached and in the foreground, and the SessionStart hook), started from a project folder
that holds the models under a relative path; the service must answer with both models loaded
and its environment (``/proc/<pid>/environ``) must name the absolute folders.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_env, free_port, http_json, run_workbench
from tests.test_spawn import health, process_view
from tests.test_spawn import spawned_by_cli as by_cli
from tests.test_spawn import spawned_by_hook as by_hook
from workbench import spawn
from workbench.recall.embed import STATIC_MODEL_NAME
from workbench.recall.onnx_export import ONNX_MODEL_NAME

SHARE = Path(sys.prefix) / "share" / "workbench"
BUILT = (SHARE / ONNX_MODEL_NAME / "model.onnx").is_file() and (
    SHARE / STATIC_MODEL_NAME / "model.safetensors"
).is_file()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not Path("/proc/self/environ").exists(), reason="reads the spawned process through /proc"
    ),
    pytest.mark.skipif(not BUILT, reason="needs `workbench models build` in this venv"),
]

ONNX_REL = os.path.join("models", "onnx")
STATIC_REL = os.path.join("models", "static")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's folder with the two built models under ``models/`` (links to this venv's)."""
    folder = tmp_path / "project"
    (folder / "models").mkdir(parents=True)
    (folder / ONNX_REL).symlink_to(SHARE / ONNX_MODEL_NAME, target_is_directory=True)
    (folder / STATIC_REL).symlink_to(SHARE / STATIC_MODEL_NAME, target_is_directory=True)
    return folder


@pytest.fixture
def env(data_dir: Path) -> dict[str, str]:
    return base_env(
        data_dir,
        free_port(),
        WORKBENCH_EMBEDDER="minilm",
        WORKBENCH_EMBED_RUNTIME="onnx",
        WORKBENCH_ONNX_MODEL_DIR=ONNX_REL,
        WORKBENCH_STATIC_MODEL_DIR=STATIC_REL,
    )


def in_the_foreground(env: dict[str, str], project: Path) -> subprocess.Popen[bytes] | None:
    """``workbench serve`` (no --detach) chdirs to the data dir and execs the service."""
    return subprocess.Popen(
        [sys.executable, "-m", "workbench", "serve"],
        env=env,
        cwd=project,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def loaded_index_status(env: dict[str, str], timeout: float = 60.0) -> dict[str, Any]:
    """``/api/index/status`` once the indexer has loaded (or failed to load) its embedder."""
    url = f"http://127.0.0.1:{env['WORKBENCH_PORT']}/api/index/status"
    deadline = time.monotonic() + timeout
    while True:
        status, body = http_json("GET", url, timeout=10.0)
        assert status == 200, body
        assert isinstance(body, dict)
        if body["state"] not in ("starting", "loading") or time.monotonic() > deadline:
            return body
        time.sleep(0.2)


@pytest.mark.parametrize("start", [by_cli, by_hook, in_the_foreground])
def test_relative_model_dirs_are_the_callers_folders(
    start: Callable[[dict[str, str], Path], subprocess.Popen[bytes] | None],
    env: dict[str, str],
    data_dir: Path,
    project: Path,
) -> None:
    child = start(env, project)
    try:
        pid = int(health(env)["pid"])
        seen = process_view(pid)
        assert seen["cwd"] == str(data_dir)  # the service still runs in the data dir
        status = loaded_index_status(env)
        assert status["state"] == "ready", status["reason"]
        # The ONNX build loaded, not a fallback to sentence-transformers (torch, ~300 MB more).
        assert status["torchImported"] is False, status["reason"]
        assert status["embedder"].startswith("minilm-int8-"), status["embedder"]
        static = status["static"]
        assert static is not None, status
        assert static["state"] == "ready", static
        assert seen["env"]["WORKBENCH_ONNX_MODEL_DIR"] == str(project / ONNX_REL)
        assert seen["env"]["WORKBENCH_STATIC_MODEL_DIR"] == str(project / STATIC_REL)
    finally:
        stopped = run_workbench(env, "stop")
        assert stopped.returncode == 0, stopped.stdout + stopped.stderr
        if child is not None:
            child.wait(timeout=30)


def test_service_env_makes_model_dirs_absolute_against_the_callers_cwd(tmp_path: Path) -> None:
    caller = {
        "WORKBENCH_ONNX_MODEL_DIR": "models/onnx",
        "WORKBENCH_STATIC_MODEL_DIR": "../static",
        "WORKBENCH_RERANK_TOKENS_DIR": "/already/absolute",
    }
    here = os.getcwd()
    env = spawn.service_env(tmp_path, 40123, caller)
    assert env["WORKBENCH_ONNX_MODEL_DIR"] == os.path.join(here, "models", "onnx")
    assert env["WORKBENCH_STATIC_MODEL_DIR"] == os.path.join(os.path.dirname(here), "static")
    assert env["WORKBENCH_RERANK_TOKENS_DIR"] == "/already/absolute"
    assert caller["WORKBENCH_ONNX_MODEL_DIR"] == "models/onnx"  # the caller's mapping stays
