"""The int8 ONNX MiniLM for tests: built once per test session by the real CLI.

``workbench models build --into DIR`` runs as a subprocess (~15 s of CPU, once); tests point
``WORKBENCH_ONNX_MODEL_DIR`` at the result, so nothing writes into the venv.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def models_build(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``workbench models build ARGS --json`` as a user runs it: offline, no WORKBENCH_*."""
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
        },
    )


@pytest.fixture(scope="session")
def onnx_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("onnx") / "minilm-l6-v2-int8"
    done = models_build("--into", str(target), "--no-static", timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["built"] is True
    return target


@pytest.fixture(scope="session")
def static_model(onnx_model: Path) -> Path:
    """The static model (the two-tier index's fast tier), distilled by the real CLI from the
    session's ONNX MiniLM (kept, not rebuilt) into a temporary directory."""
    target = onnx_model.parent / "minilm-static-256"
    done = models_build("--into", str(onnx_model), "--static-into", str(target), timeout=600)
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["built"] is False  # the session's ONNX model was kept
    assert body["static"]["built"] is True
    return target
