"""Vectors keyed by content, and the FAISS index of observations under ``settings.index_dir``.

Why keyed by content: the text an observation is embedded from is built by one function
(``embed_text``) and hashed (``text_hash``, sha256). The ``embeddings`` table caches one
vector per (model, text hash), so re-indexing unchanged text costs zero model calls, two
observations with the same text share one vector, and a rebuilt FAISS index is filled from
SQLite without touching the model. ``vectors_for`` asks the cache about a whole batch in ONE
query, embeds only what is missing and writes the new rows inside ``atomic()``.

Why FAISS is derived, not canonical: the index is a fast copy of the cache for the texts of
the observations that exist now. It is persisted (``save``: temp files + rename, the meta
written last as the commit mark) so a restart does not re-read every vector, and ``load``
refuses any file set that does not agree with itself; ``workbench reindex`` rebuilds it.

Index kinds (``settings.vector_index``):
- ``flat`` (default): ``IndexIDMap2(IndexFlatIP)``, exact cosine search (vectors are
  normalised), real removal. ~12 ms per query at 100k × 384 on one thread.
- ``hnsw``: ``IndexIDMap2(IndexHNSWFlat)``, approximate (~0.1 ms). HNSW cannot remove, so
  removed ids become tombstones filtered out of results, and the graph is rebuilt from the
  live vectors when tombstones pass 10% or a removed id comes back.

Filtered search (``allowed_ids``): a small allowed set (≤ ``SUBSET_EXACT`` ids) is scored
exactly from its reconstructed vectors, which stays exact under any selectivity; a larger one
is passed to FAISS as an ``IDSelectorBatch``. ``bench/relevance.py`` measures both against
post-filtering with oversampling.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from workbench.store.db import atomic

IndexKind = Literal["flat", "hnsw"]
SUBSET_EXACT = 4096
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 80
HNSW_EF_SEARCH = 128
COMPACT_RATIO = 0.10
FORMAT = 1


# ----- the embedded text and its hash ---------------------------------------------------------
def _as_list(value: Any) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.startswith("[") else [value]
        except json.JSONDecodeError:
            value = [value]
    return [str(v) for v in (value or []) if str(v).strip()]


def embed_text(obs: Any) -> str:
    """The exact text an observation is embedded from (and hashed by). One function, always.

    ``obs`` is an ``Observation``, a dict or a ``sqlite3.Row`` with title, subtitle,
    narrative, facts and concepts (lists or their JSON text).
    """
    get = obs.__getitem__ if isinstance(obs, Mapping | sqlite3.Row) else obs.__getattribute__
    parts = [str(get("title") or "").strip(), str(get("subtitle") or "").strip()]
    parts.append(str(get("narrative") or "").strip())
    parts.extend(f.strip() for f in _as_list(get("facts")))
    concepts = _as_list(get("concepts"))
    if concepts:
        parts.append("Concepts: " + ", ".join(c.strip() for c in concepts))
    return "\n".join(p for p in parts if p)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ----- the embeddings cache (SQLite, little-endian float32 blobs) -----------------------------
def pack(vector: Any) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def unpack(blob: bytes, dim: int) -> Any:
    import numpy as np

    return np.frombuffer(blob, dtype="<f4", count=dim).astype(np.float32)


def cached_vectors(conn: sqlite3.Connection, model: str, hashes: Iterable[str]) -> dict[str, Any]:
    """Cached vectors for ``hashes`` under ``model``, in one query (json_each: no 999-param cap)."""
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        return {}
    rows = conn.execute(
        "SELECT text_hash, dim, vector FROM embeddings WHERE model = ? AND text_hash IN"
        " (SELECT value FROM json_each(?))",
        (model, json.dumps(wanted)),
    )
    return {row[0]: unpack(row[2], row[1]) for row in rows}


def store_vectors(conn: sqlite3.Connection, model: str, vectors: Mapping[str, Any]) -> None:
    """Write new cache rows in one transaction (a duplicate is ignored: same text, same row)."""
    if not vectors:
        return
    now = int(time.time())
    with atomic(conn):
        conn.executemany(
            "INSERT OR IGNORE INTO embeddings (model, text_hash, dim, vector, created_at_epoch)"
            " VALUES (?, ?, ?, ?, ?)",
            [(model, h, int(len(v)), pack(v), now) for h, v in vectors.items()],
        )


def forget(conn: sqlite3.Connection, hashes: Iterable[str]) -> int:
    """Drop the cached vectors of texts no observation has any more (every model).

    A deleted memory must not linger as a vector: embeddings can be inverted to text.
    """
    gone = list(dict.fromkeys(hashes))
    if not gone:
        return 0
    with atomic(conn):
        return conn.execute(
            "DELETE FROM embeddings WHERE text_hash IN (SELECT value FROM json_each(?))",
            (json.dumps(gone),),
        ).rowcount


@dataclass
class Embedded:
    """The vectors of one batch of texts and where they came from."""

    vectors: dict[str, Any]
    embedded: int = 0  # texts the model embedded now
    reused: int = 0  # texts found in the cache


def vectors_for(conn: sqlite3.Connection, embedder: Any, texts: Mapping[str, str]) -> Embedded:
    """Vectors for ``{text_hash: text}``: one cache query, the model only for the rest."""
    found = cached_vectors(conn, embedder.name, texts)
    missing = [h for h in texts if h not in found]
    fresh: dict[str, Any] = {}
    if missing:
        matrix = embedder.embed([texts[h] for h in missing])
        fresh = {h: matrix[i] for i, h in enumerate(missing)}
        store_vectors(conn, embedder.name, fresh)
    return Embedded({**found, **fresh}, embedded=len(fresh), reused=len(found))


# ----- the FAISS index ------------------------------------------------------------------------
def _faiss() -> Any:
    import faiss

    # Single queries: one thread is 12 ms at 100k where two take 14-40 ms (ENVIRONMENT.md).
    faiss.omp_set_num_threads(1)
    return faiss


def _make(kind: IndexKind, dim: int) -> Any:
    faiss = _faiss()
    if kind == "hnsw":
        inner = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        inner.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        inner.hnsw.efSearch = HNSW_EF_SEARCH
    else:
        inner = faiss.IndexFlatIP(dim)
    return faiss.IndexIDMap2(inner)


def paths(index_dir: Path, model: str, kind: IndexKind) -> dict[str, Path]:
    stem = f"observations.{model}.{kind}"
    return {
        "faiss": index_dir / f"{stem}.faiss",
        "ids": index_dir / f"{stem}.ids.json",
        "meta": index_dir / f"{stem}.json",
    }


class VectorIndex:
    """Observation id → vector, searchable by cosine. Thread-safe (one lock, short holds)."""

    def __init__(self, model: str, dim: int, kind: IndexKind = "flat") -> None:
        self.model = model
        self.dim = dim
        self.kind: IndexKind = kind
        self._index = _make(kind, dim)
        self._hashes: dict[int, str] = {}  # live ids and the text hash each was embedded from
        self._tombstones: set[int] = set()  # hnsw only: removed ids still in the graph
        self._lock = threading.RLock()
        self.built_at = time.time()
        self.dirty = False

    def __len__(self) -> int:
        return len(self._hashes)

    def ids(self) -> set[int]:
        with self._lock:
            return set(self._hashes)

    def hashes(self) -> dict[int, str]:
        with self._lock:
            return dict(self._hashes)

    @property
    def max_id(self) -> int:
        with self._lock:
            return max(self._hashes, default=0)

    def add(self, ids: Sequence[int], hashes: Sequence[str], vectors: Any) -> None:
        """Add (or replace) vectors for ``ids``; ``vectors`` is (n, dim) float32, normalised."""
        import numpy as np

        if not len(ids):
            return
        matrix = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        keys = np.asarray(ids, dtype=np.int64)
        with self._lock:
            present = [i for i in ids if i in self._hashes or i in self._tombstones]
            if present:
                self.remove(present)
                if self.kind == "hnsw":
                    # Trigger: an id already in the graph comes back. Why: HNSW cannot drop
                    # its old vector, and a tombstone would hide the new one. Outcome: rebuild.
                    self._compact()
            self._index.add_with_ids(matrix, keys)
            self._hashes.update(zip((int(i) for i in ids), hashes, strict=True))
            self.dirty = True

    def remove(self, ids: Iterable[int]) -> list[str]:
        """Remove ``ids``; return the text hashes no live id uses any more."""
        import numpy as np

        with self._lock:
            gone = [int(i) for i in ids if int(i) in self._hashes]
            if not gone:
                return []
            hashes = {self._hashes.pop(i) for i in gone}
            if self.kind == "hnsw":
                self._tombstones.update(gone)
                if len(self._tombstones) > COMPACT_RATIO * max(1, self._index.ntotal):
                    self._compact()
            else:
                selector = _faiss().IDSelectorBatch(np.asarray(gone, dtype=np.int64))
                self._index.remove_ids(selector)
            self.dirty = True
            still = set(self._hashes.values())
            return sorted(h for h in hashes if h not in still)

    def _compact(self) -> None:
        """Rebuild the HNSW graph from the live vectors (drops the tombstones)."""
        import numpy as np

        live = sorted(self._hashes)
        vectors = (
            self._index.reconstruct_batch(np.asarray(live, dtype=np.int64))
            if live
            else np.zeros((0, self.dim), dtype=np.float32)
        )
        self._index = _make(self.kind, self.dim)
        if live:
            self._index.add_with_ids(vectors, np.asarray(live, dtype=np.int64))
        self._tombstones.clear()

    def search(
        self, query: Any, k: int, allowed_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """Top ``k`` (id, cosine) for one query vector, best first, within ``allowed_ids``."""
        import numpy as np

        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        with self._lock:
            if not self._hashes or k <= 0:
                return []
            if allowed_ids is not None:
                live = [int(i) for i in allowed_ids if int(i) in self._hashes]
                if not live:
                    return []
                if len(live) <= SUBSET_EXACT:
                    return self._exact_subset(q, k, live)
                params = self._params(_faiss().IDSelectorBatch(np.asarray(live, dtype=np.int64)))
                scores, found = self._index.search(q, min(k, len(live)), params=params)
                return _pairs(scores[0], found[0], self._tombstones)
            extra = len(self._tombstones)
            scores, found = self._index.search(q, min(k + extra, self._index.ntotal))
            return _pairs(scores[0], found[0], self._tombstones)[:k]

    def _exact_subset(self, q: Any, k: int, live: list[int]) -> list[tuple[int, float]]:
        import numpy as np

        keys = np.asarray(live, dtype=np.int64)
        scores = self._index.reconstruct_batch(keys) @ q[0]
        top = np.argsort(-scores, kind="stable")[:k]
        return [(int(keys[i]), float(scores[i])) for i in top]

    def _params(self, selector: Any) -> Any:
        faiss = _faiss()
        if self.kind == "hnsw":
            return faiss.SearchParametersHNSW(sel=selector, efSearch=max(HNSW_EF_SEARCH, 128))
        return faiss.SearchParameters(sel=selector)

    # ----- persistence -------------------------------------------------------------------
    def save(self, index_dir: Path) -> None:
        """Write the index, its id map and its meta atomically (temp + rename, meta last)."""
        faiss = _faiss()
        index_dir.mkdir(parents=True, exist_ok=True)
        where = paths(index_dir, self.model, self.kind)
        token = uuid.uuid4().hex
        with self._lock:
            ids = sorted(self._hashes)
            id_doc = {
                "token": token,
                "ids": ids,
                "hashes": [self._hashes[i] for i in ids],
                "tombstones": sorted(self._tombstones),
            }
            meta = {
                "format": FORMAT,
                "model": self.model,
                "dim": self.dim,
                "kind": self.kind,
                "count": len(ids),
                "ntotal": int(self._index.ntotal),
                "built_at": self.built_at,
                "saved_at": time.time(),
                "token": token,
            }
            faiss.write_index(self._index, str(where["faiss"]) + ".tmp")
            _write_json(Path(str(where["ids"]) + ".tmp"), id_doc)
            self.dirty = False
        os.replace(str(where["faiss"]) + ".tmp", where["faiss"])
        os.replace(str(where["ids"]) + ".tmp", where["ids"])
        _write_json(Path(str(where["meta"]) + ".tmp"), meta)
        os.replace(str(where["meta"]) + ".tmp", where["meta"])

    @classmethod
    def load(
        cls, index_dir: Path, model: str, dim: int, kind: IndexKind
    ) -> tuple[VectorIndex | None, str]:
        """The saved index, or ``(None, why)`` when absent or not self-consistent."""
        where = paths(index_dir, model, kind)
        if not where["meta"].exists():
            return None, f"no saved index at {where['meta']}"
        try:
            meta = json.loads(where["meta"].read_text(encoding="utf-8"))
            if (meta.get("format"), meta.get("model"), meta.get("dim"), meta.get("kind")) != (
                FORMAT,
                model,
                dim,
                kind,
            ):
                return None, f"saved index {where['meta']} is for another model or format"
            id_doc = json.loads(where["ids"].read_text(encoding="utf-8"))
            raw = _faiss().read_index(str(where["faiss"]))
        except (OSError, ValueError, RuntimeError) as exc:
            return None, f"saved index under {index_dir} is unreadable ({exc})"
        if (
            id_doc.get("token") != meta.get("token")
            or len(id_doc.get("ids", [])) != meta.get("count")
            or int(raw.ntotal) != meta.get("ntotal")
        ):
            return None, f"saved index under {index_dir} is incomplete (interrupted save)"
        index = cls(model, dim, kind)
        index._index = raw
        index._hashes = dict(zip(id_doc["ids"], id_doc["hashes"], strict=True))
        index._tombstones = set(id_doc.get("tombstones", []))
        index.built_at = float(meta.get("built_at") or time.time())
        return index, f"loaded {len(index)} vectors from {where['faiss'].name}"

    def memory_bytes(self) -> int:
        """Approximate RAM of the vectors (plus the HNSW links when approximate)."""
        per = self.dim * 4 + (HNSW_M * 2 * 4 if self.kind == "hnsw" else 0) + 16
        return int(self._index.ntotal) * per


def _pairs(scores: Any, ids: Any, hidden: set[int]) -> list[tuple[int, float]]:
    return [
        (int(i), float(s)) for s, i in zip(scores, ids, strict=True) if i >= 0 and i not in hidden
    ]


def _write_json(path: Path, data: Any) -> None:
    with path.open("w", encoding="utf-8") as handle:
        json.dump(data, handle, separators=(",", ":"))
        handle.flush()
        os.fsync(handle.fileno())
