"""The token table of the ``maxsim`` reranker: one vector per MiniLM word piece, built locally.

Late interaction (ColBERT's MaxSim) compares every query word with every word of a candidate.
Running the transformer over 30–50 candidates per search costs 0.3–1 s on two busy cores,
so the table holds each word piece's vector *out of context*: the shipped MiniLM (its int8
ONNX copy, ``workbench models build``) run once over ``[CLS] piece [SEP]`` for the whole
vocabulary and mean-pooled, as model2vec distils a static model. Scoring a search is then a
table lookup and one matrix product (``rerank_maxsim``).

Built offline from the shipped weights by ``workbench rerank build`` (~30 s on 2 cores, no
network; 30–70 s on a busy machine), into this venv's ``share/workbench`` (or
``$WORKBENCH_RERANK_TOKENS_DIR``): ``tokens.npy`` (float16, unit rows), the tokenizer, and a
manifest naming the ONNX build it came from. Derived: delete it and rebuild. A missing or
altered table is reported (``problem``), never raised into a search.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.locate import model_dir

TABLE_NAME = "minilm-l6-v2-tokens"
TABLE_FILE = "tokens.npy"
TOKENIZER_FILE = "tokenizer.json"
MANIFEST = "manifest.json"
FORMAT = 1
BATCH = 1024  # word pieces per ONNX call while building
CLS, SEP = 101, 102  # BERT's [CLS] and [SEP] in MiniLM's vocabulary
# Rows of the static model a process keeps read (``RowFile``): the pieces of a few hundred
# searches' candidates (the 100k bench's 300 timeline searches read 559 distinct rows); 4 MiB.
CACHE_ROWS = 4096


def tokens_dir() -> Path:
    """This venv's share dir, or ``$WORKBENCH_RERANK_TOKENS_DIR`` (tests, benches)."""
    return model_dir("WORKBENCH_RERANK_TOKENS_DIR", TABLE_NAME)


def build(
    target: Path | None = None,
    onnx_dir: Path | None = None,
    *,
    token_ids: Iterable[int] | None = None,
) -> Path:
    """Write the table from the int8 ONNX MiniLM at ``onnx_dir``; returns its directory.

    ``token_ids``: only those rows (the others stay zero, so they match nothing); tests build
    the few pieces their texts use in a second. Raises FileNotFoundError without the ONNX
    model (``workbench models build`` first).
    """
    import numpy as np
    import onnxruntime
    from tokenizers import Tokenizer

    from workbench.recall import onnx_export

    source = onnx_dir or onnx_export.onnx_model_dir()
    manifest = onnx_export.read_manifest(source)
    if manifest is None:
        raise FileNotFoundError(
            f"no ONNX int8 MiniLM at {source}; build it first with `workbench models build`"
        )
    out = target or tokens_dir()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = max(1, os.cpu_count() or 1)
    options.log_severity_level = 3
    session = onnxruntime.InferenceSession(
        str(source / onnx_export.MODEL_FILE), options, providers=["CPUExecutionProvider"]
    )
    inputs = {i.name for i in session.get_inputs()}
    vocab = Tokenizer.from_file(str(source / onnx_export.TOKENIZER_FILE)).get_vocab_size()
    wanted = sorted({int(t) for t in token_ids if 0 <= int(t) < vocab}) if token_ids else None
    pieces = np.asarray(wanted if wanted is not None else range(vocab), dtype=np.int64)
    table = np.zeros((vocab, 384), dtype=np.float32)
    for start in range(0, len(pieces), BATCH):
        chunk = pieces[start : start + BATCH]
        ids = np.stack([np.full_like(chunk, CLS), chunk, np.full_like(chunk, SEP)], axis=1)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        if "token_type_ids" in inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(["last_hidden_state"], feed)[0]
        pooled = hidden.mean(axis=1)
        table[chunk] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-9)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    staging.chmod(0o755)  # mkdtemp's 0700 would hide the table from other users of the venv
    np.save(staging / TABLE_FILE, table.astype(np.float16))
    shutil.copyfile(source / onnx_export.TOKENIZER_FILE, staging / TOKENIZER_FILE)
    doc = {
        "format": FORMAT,
        "onnx_sha256": manifest["sha256"],
        "vocab": vocab,
        "rows_built": len(pieces),
        "sha256": onnx_export.sha256_file(staging / TABLE_FILE),
    }
    (staging / MANIFEST).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    staging.replace(out)
    return out


@dataclass(frozen=True)
class TokenTable:
    """The loaded table: ``vectors`` (vocab × dim, one row per word piece) and its tokenizer."""

    vectors: Any
    tokenizer: Any
    sha256: str
    unit: bool = True  # rows of unit length (the static model's are not: ``load_static``)


def problem(where: Path | None = None) -> str | None:
    """Why the table at ``where`` cannot be used, or None when it can."""
    try:
        load(where)
    except (OSError, ValueError) as exc:
        return str(exc)
    return None


def static_problem(where: Path | None = None) -> str | None:
    """Why the static model's word pieces at ``where`` cannot be used, or None when they can."""
    try:
        load_static(where)
    except (OSError, ValueError) as exc:
        return str(exc)
    return None


def load(where: Path | None = None) -> TokenTable:
    """The table at ``where`` (default ``tokens_dir()``), cached while its files are unchanged.

    Raises FileNotFoundError (not built) or ValueError (altered, partial) naming the fix.
    """
    path = where or tokens_dir()
    stamp = _stamp(
        path / MANIFEST,
        path / TABLE_FILE,
        missing=f"no maxsim token table at {path}; build it from the shipped MiniLM with "
        "`workbench rerank build` (offline, ~30 s), or set search_rerank_method=features",
    )
    return _load(str(path), stamp)


def _stamp(first: Path, second: Path, *, missing: str) -> tuple[int, int]:
    """The two files' mtimes: the cache key of a loaded table (a rebuilt one is read again).

    Raises FileNotFoundError(``missing``) when either is absent: the table is not built.
    """
    try:
        return first.stat().st_mtime_ns, second.stat().st_mtime_ns
    except OSError:
        raise FileNotFoundError(missing) from None


@functools.lru_cache(maxsize=4)
def _load(path: str, stamp: tuple[int, int]) -> TokenTable:
    """``stamp`` (the files' mtimes) is only the cache key: a rebuilt table is read again."""
    del stamp
    import numpy as np
    from tokenizers import Tokenizer

    from workbench.recall import onnx_export

    where = Path(path)
    fix = "rebuild it with `workbench rerank build`"
    try:
        doc = json.loads((where / MANIFEST).read_text(encoding="utf-8"))
        if not isinstance(doc, dict) or doc.get("format") != FORMAT:
            raise ValueError("written by another version")
        if onnx_export.sha256_file(where / TABLE_FILE) != doc.get("sha256"):
            raise ValueError("tokens.npy does not match its manifest")
        vectors = np.load(where / TABLE_FILE, mmap_mode="r")
        tokenizer = Tokenizer.from_file(str(where / TOKENIZER_FILE))
        tokenizer.no_padding()  # the embedder's file pads to 128: pieces here are the text's own
        tokenizer.no_truncation()
    except (OSError, ValueError, TypeError) as exc:
        raise ValueError(f"the maxsim token table at {where} is unusable ({exc}); {fix}") from None
    if vectors.ndim != 2 or vectors.shape[0] != tokenizer.get_vocab_size():
        raise ValueError(f"the maxsim token table at {where} does not fit its tokenizer; {fix}")
    return TokenTable(vectors, tokenizer, str(doc["sha256"]))


def load_static(where: Path | None = None) -> TokenTable:
    """The distilled static model's token vectors as a table (``workbench models build``
    writes it at install, for the two-tier index), cached while the file is unchanged.

    The static model is this table's recipe (each MiniLM word piece through the int8 ONNX
    MiniLM as ``[CLS] piece [SEP]``, mean-pooled), reduced by PCA to 256 dimensions and
    weighted per row by rarity: a cosine between two rows does not see that weight. So the
    ``learned`` stage needs no artifact of its own. The rows a search touches are read from
    ``model.safetensors`` (``RowFile``), and are *not* unit length: ``rerank_maxsim.scores``
    normalises the rows it gathers. The tokenizer is the static tier's own
    (``embed.shared_tokenizer``): one copy per process.

    Raises FileNotFoundError (not built) or ValueError (not a static model) naming the fix.
    """
    from workbench.recall.embed import static_model_dir

    path = where or static_model_dir()
    stamp = _stamp(
        path / "model.safetensors",
        path / TOKENIZER_FILE,
        missing=f"no distilled static model at {path}; build it from the shipped MiniLM with "
        "`workbench models build` (offline, ~1 min; `make install` runs it)",
    )
    return _load_static(str(path), stamp)


@functools.lru_cache(maxsize=4)
def _load_static(path: str, stamp: tuple[int, int]) -> TokenTable:
    """``stamp`` (the files' mtimes) is only the cache key: a rebuilt model is read again."""
    del stamp
    from workbench.recall.embed import shared_tokenizer

    where = Path(path)
    fix = "rebuild it with `workbench models build --force`"
    weights = where / "model.safetensors"
    try:
        with weights.open("rb") as stream:
            size = int.from_bytes(stream.read(8), "little")
            if not 2 <= size <= 1 << 20:
                raise ValueError("not a safetensors file")
            header = json.loads(stream.read(size).decode("utf-8"))
        entry = header["embeddings"]
        if entry["dtype"] != "F32" or len(entry["shape"]) != 2:
            raise ValueError("its embeddings are not a 2-d float32 tensor")
        rows, dim = (int(n) for n in entry["shape"])
        start, end = (int(n) for n in entry["data_offsets"])
        if end - start != rows * dim * 4 or 8 + size + end > weights.stat().st_size:
            raise ValueError("its embeddings do not fit the file")
        vectors = RowFile(weights, 8 + size + start, rows, dim)
        tokenizer = shared_tokenizer(where / TOKENIZER_FILE)
    except (OSError, ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
        raise ValueError(f"the static model at {where} is unusable ({exc}); {fix}") from None
    if rows != tokenizer.get_vocab_size():
        raise ValueError(f"the static model at {where} does not fit its tokenizer; {fix}")
    return TokenTable(vectors, tokenizer, f"static:{path}:{weights.stat().st_mtime_ns}", False)


class RowFile:
    """A float32 matrix in a file, whose rows are read through a bounded cache.

    Why: a search gathers ~200 of the static model's 30k rows, mostly the same ones from one
    search to the next (the pieces of common words). A plain mapping keeps every page a read
    touched resident, and the kernel maps neighbouring pages with each fault: ~21 MiB of the
    service's RSS after a few hundred searches (issue 21). So the mapping's pages are let go
    right after each read from it (``MADV_DONTNEED``). But faulting them back in on every
    search cost ~0.7 ms of its CPU at 100k, against ~0.02 ms for the same rows resident
    (``bench/search_stages.py``). So the rows read are kept in a cache of ``cache_rows`` rows
    (anonymous memory, touched as it fills: 4 MiB at 256 dimensions), emptied when a read
    would overflow it; only the rows a read misses come from the file. A read of more rows
    than the cache holds (the whole matrix, for tests) goes to the file alone.

    ``rows[ids]`` gives what ``numpy.memmap(...)[ids]`` gave (a copy, any shape of integer
    ids, negative ones from the end, ``IndexError`` past either end). Searches read on several
    threads: one lock covers the cache.
    """

    def __init__(
        self, path: Path, offset: int, rows: int, dim: int, cache_rows: int = CACHE_ROWS
    ) -> None:
        import mmap

        import numpy as np

        self.path = path
        self.offset = offset
        self.shape = (rows, dim)
        self.ndim = 2
        with path.open("rb") as stream:
            self._map = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
        self._rows = np.frombuffer(self._map, dtype="<f4", count=rows * dim, offset=offset).reshape(
            rows, dim
        )
        self._slot = np.full(rows, -1, dtype=np.int32)  # row -> its place in the cache, or -1
        self._cache = np.empty((max(1, min(cache_rows, rows)), dim), dtype="<f4")
        self.cached = 0  # rows in the cache (its first ``cached`` places)
        self.from_file = 0  # rows read from the file so far (tests, benches)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, ids: Any) -> Any:
        """A copy of the rows of ``ids`` (row numbers), in that order."""
        import numpy as np

        wanted = np.asarray(ids)
        if wanted.dtype.kind not in "iu":
            if wanted.size:  # numpy would read a boolean array as a mask: not row numbers
                raise IndexError(f"row ids must be integers, not {wanted.dtype}")
            wanted = wanted.astype(np.int64)  # [] (float64 to numpy): no row
        rows = self.shape[0]
        flat = wanted.ravel()
        if flat.size and (int(flat.min()) < -rows or int(flat.max()) >= rows):
            raise IndexError(f"row ids must lie in [-{rows}, {rows}), the matrix's rows")
        flat = np.where(flat < 0, flat + rows, flat)
        distinct = np.unique(flat)
        with self._lock:
            if distinct.size > len(self._cache):  # more than it holds: the file alone
                return self._from_file(flat).reshape(*wanted.shape, self.shape[1])
            missing = distinct[self._slot[distinct] < 0]
            if self.cached + missing.size > len(self._cache):
                self._slot[:] = -1  # full: start over with this read's rows
                self.cached = 0
                missing = distinct
            if missing.size:
                places = np.arange(self.cached, self.cached + missing.size)
                self._cache[places] = self._from_file(missing)
                self._slot[missing] = places
                self.cached += missing.size
            return self._cache[self._slot[flat]].reshape(*wanted.shape, self.shape[1])

    def _from_file(self, rows: Any) -> Any:
        """A copy of ``rows`` read from the mapping, whose pages are let go at once."""
        import mmap

        self.from_file += len(rows)
        try:
            return self._rows[rows]  # fancy indexing copies: the pages can go at once
        finally:
            if hasattr(mmap, "MADV_DONTNEED"):  # Linux; elsewhere the pages stay mapped
                self._map.madvise(mmap.MADV_DONTNEED)

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        """A copy of the whole matrix (tests compare against it)."""
        import numpy as np

        return self[np.arange(self.shape[0])].astype(dtype or "<f4", copy=False)
