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


@pytest.fixture(scope="session")
def onnx_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("onnx") / "minilm-l6-v2-int8"
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "models", "build", "--into", str(target)]
        + ["--no-static", "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")},
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        },
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["built"] is True
    return target


@pytest.fixture(scope="session")
def static_model(onnx_model: Path) -> Path:
    """The static model (the two-tier index's fast tier), distilled by the real CLI from the
    session's ONNX MiniLM (kept, not rebuilt) into a temporary directory."""
    target = onnx_model.parent / "minilm-static-256"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "workbench",
            "models",
            "build",
            "--into",
            str(onnx_model),
            "--static-into",
            str(target),
            "--json",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")},
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
        },
    )
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["built"] is False  # the session's ONNX model was kept
    assert body["static"]["built"] is True
    return target
