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

Index kinds (``settings.vector_index``; figures at 100k × 384 clustered, one thread, from
``bench/search_vectors.py``):
- ``flat``: ``IndexFlatIP``, exact cosine (vectors are normalised); 1.5 KB per vector,
  ~6.5 ms per query.
- ``fp16`` (default): ``IndexScalarQuantizer`` fp16, a scan of half-size codes: the same top
  10 as exact, cosines within ~1e-3, 0.77 KB per vector, ~3.8 ms per query (~32 ms at 1M).
- ``hnsw`` / ``hnsw_fp16``: HNSW graphs over fp32 / fp16 vectors, approximate. A search
  walks the graph only from ``settings.vector_graph_from`` live vectors and when its filter
  keeps at least ``GRAPH_MIN_SHARE`` of them; every other search scans the graph's stored
  codes exactly (the same list as ``flat``/``fp16``). At 100k seeded vectors (2,000 MiniLM
  centres + noise: many near-duplicates, hard for a graph) with real MiniLM queries, top 50:
  efSearch 256/512/1024 give recall 0.88/0.95/0.99 in 0.4/0.7/1.4 ms (efConstruction 80),
  but a few queries land in the wrong cluster and lose their whole list; efConstruction 200
  + efSearch 1024 (the defaults) reach 1.000 on average in ~1.6 ms, and through
  ``/api/search`` (``bench/search_stages.py --dump``, 150 queries per route) 149/150 hybrid
  replies, 147/150 JSON ones and 150/150 timeline anchors were identical to ``fp16``'s (one
  JSON reply shared 1 hit of 20). Through HTTP (``bench/search.py``, loaded box) a hybrid
  search's service CPU fell from 20.9 to 15.7 ms. Cost at 100k: ~30 s CPU to build (an add
  costs ~350 µs per vector, ~3 µs for ``fp16``), +26 MB of links (service RSS 292 → 321
  MiB), save 0.7 s, load 0.3 s. So ``fp16`` stays the default (replies must not change);
  a graph pays past ~300k, where the scan passes ~10 ms.
- ``sq8``: 8-bit codes (fixed [-1, 1] range: no training), 0.4 KB per vector; its top
  candidates are rescored exactly from the embeddings cache (``exact=``).

The prefilter (``vector_prefilter.py``, ``settings.vector_prefilter``): from
``vector_prefilter_from`` live vectors a ``flat``/``fp16`` search first scans 4-bit fast-scan
codes of every slot for ``FACTOR`` candidates per wanted hit, then runs its own exact scan
restricted to them by a bitmap: the same scores bit for bit, the same list for every measured
query at 100k but a few in a thousand (a hit lost at rank 40-49 of 50), ~1 ms instead of 5-8.

Slots, not ids: FAISS labels are slots, and arrays over slots give the observation id, its
project code and a live bit. A project filter is a bitmap over slots cached per project until
the next add/remove (no SQL collecting ids); a removal clears a live bit (no kind rebuilds) and
overwrites the slot's codes with zeros (``_scrub``: a forgotten vector leaves no copy in memory
or in the next save); dead slots are compacted away once they outnumber the live ones.

Filtered search: a tiny allowed set (``_direct_limit``: a few dozen slots, ~200 at 100k) is
scored from its decoded vectors; a set up to ``SUBSET_EXACT`` slots by an exact FAISS scan of
the stored codes under its ``IDSelectorBitmap`` (a graph kind: its storage), both exact under
any selectivity; a larger one is searched as the whole index is (the prefilter, or the graph
unless the set keeps less than ``GRAPH_MIN_SHARE``), under its bitmap.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from workbench.recall import vector_prefilter
from workbench.recall.slot_map import SlotMap
from workbench.store.connection import atomic

IndexKind = Literal["flat", "hnsw", "fp16", "hnsw_fp16", "sq8"]
KINDS: tuple[str, ...] = ("flat", "hnsw", "fp16", "hnsw_fp16", "sq8")
SUBSET_EXACT = 4096
# A filter this small (or ``ntotal // DIRECT_SHARE``) is scored from its decoded vectors; a
# larger one up to ``SUBSET_EXACT`` by an exact FAISS scan under its bitmap (``_direct_limit``).
DIRECT_MIN = 32
DIRECT_SHARE = 512
HNSW_M = 32
# 200, not 80: at 100k near-duplicate clusters an efConstruction-80 graph left ~1% of queries
# stranded in the wrong cluster even at efSearch 1024; 200 builds in ~30 s per 100k, not 12.
HNSW_EF_CONSTRUCTION = 200
# The walk's width when no setting gives one (``settings.vector_graph_ef``, see there); and
# ``graph_from`` 0: a graph kind built directly walks its graph at any size.
HNSW_EF_SEARCH = 1024
GRAPH_FROM = 0
# A filtered search walks the graph only when the filter keeps at least this share of the
# live slots: a graph loses recall as a filter gets selective (at 100k clustered, efSearch
# 256: recall@100 0.87 at 50% kept, 0.48 at 10%), while an exact scan that skips the
# filtered-out slots costs in proportion to what it keeps (0.9 ms at 10%, 2.6 ms at 50%).
GRAPH_MIN_SHARE = 0.5
GRAPH_KINDS: tuple[str, ...] = ("hnsw", "hnsw_fp16")
# ``sq8`` fetches max(RESCORE_FACTOR * k, RESCORE_MIN) candidates and rescores them exactly
# from the embeddings cache: at 100k clustered vectors recall@10 goes from 0.82 (codes only)
# to 0.985 with 2x, 1.000 with 4x/100, each cache row read costing ~20-80 µs
# (bench/search_vectors.py).
RESCORE_FACTOR = 2
RESCORE_MIN = 20
# Exact-scan kinds whose scan a prefilter may shorten (graphs walk; ``sq8`` rescores).
PREFILTER_KINDS = ("flat", "fp16")
COMPACT_MIN = 1024  # dead slots tolerated before ``compact`` runs, whatever the live count
_VERSIONS = itertools.count(1)  # every index's versions (``VectorIndex.version``)
_ALL_LIVE = ("\0all live slots",)  # a cache key no project name can equal
FORMAT = 2  # 2: slot arrays + live bits (1: IndexIDMap2 + tombstones; rebuilt on load)
KEY_WIDTH = 64  # a text hash is sha256 in hex: 64 ASCII characters
KEY_DTYPE = f"S{KEY_WIDTH}"


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


_CACHED = (
    "SELECT {columns} FROM embeddings WHERE model = ? AND text_hash IN"
    " (SELECT value FROM json_each(?)) AND (? IS NULL OR dim = ?)"
)


def cached_vectors(
    conn: sqlite3.Connection, model: str, hashes: Iterable[str], dim: int | None = None
) -> dict[str, Any]:
    """Cached vectors for ``hashes`` under ``model``, in one query (json_each: no 999-param cap).

    ``dim``: only rows of that many dimensions. A row of another size (a model that changed
    shape under the same name, a bad import) is derived data gone stale: it counts as not
    cached, so it is embedded again and replaced, instead of failing every index pass.
    """
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        return {}
    sql = _CACHED.format(columns="text_hash, dim, vector")
    rows = conn.execute(sql, (model, json.dumps(wanted), dim, dim))
    return {row[0]: unpack(row[2], row[1]) for row in rows}


def cached_hashes(
    conn: sqlite3.Connection, model: str, hashes: Iterable[str], dim: int | None = None
) -> set[str]:
    """Which of ``hashes`` the cache holds for ``model`` (one query; the vectors not read);
    ``dim`` as in ``cached_vectors``."""
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        return set()
    sql = _CACHED.format(columns="text_hash")
    rows = conn.execute(sql, (model, json.dumps(wanted), dim, dim))
    return {row[0] for row in rows}


def store_vectors(
    conn: sqlite3.Connection,
    model: str,
    vectors: Mapping[str, Any],
    *,
    owners: Mapping[str, Sequence[int]] | None = None,
) -> None:
    """Write new cache rows in one transaction. A duplicate of the same size is ignored (same
    text, same row); one of another size replaces the stale row (see ``cached_vectors``).

    ``owners``: text hash -> the observation ids its text was read from. A text none of them
    still exists for, checked inside the write transaction, is not stored. Why: the
    embedding worker reads its rows, then embeds them for seconds; a forget in between
    deleted their cached vectors already, and the worker's write would bring one back for
    good (no observation holds that text, so nothing deletes it again).
    """
    if not vectors:
        return
    now = int(time.time())
    with atomic(conn):
        if owners is not None:
            ids = sorted({int(i) for h in vectors for i in owners.get(h, ())})
            alive = {
                int(r[0])
                for r in conn.execute(
                    "SELECT id FROM observations WHERE id IN (SELECT value FROM json_each(?))",
                    (json.dumps(ids),),
                )
            }
            vectors = {h: v for h, v in vectors.items() if alive & set(owners.get(h, ()))}
        conn.executemany(
            "INSERT INTO embeddings (model, text_hash, dim, vector, created_at_epoch)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (model, text_hash) DO UPDATE SET"
            " dim = excluded.dim, vector = excluded.vector,"
            " created_at_epoch = excluded.created_at_epoch WHERE dim != excluded.dim",
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
    found = cached_vectors(conn, embedder.name, texts, getattr(embedder, "dim", None))
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
    """The FAISS index of one kind; its labels are slots (see ``VectorIndex``), not ids."""
    import numpy as np

    faiss = _faiss()
    ip = faiss.METRIC_INNER_PRODUCT
    if kind == "flat":
        return faiss.IndexFlatIP(dim)
    if kind == "hnsw":
        inner = faiss.IndexHNSWFlat(dim, HNSW_M, ip)
    elif kind == "hnsw_fp16":
        inner = faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_fp16, HNSW_M, ip)
    elif kind == "fp16":
        return faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_fp16, ip)
    elif kind == "sq8":
        inner = faiss.IndexScalarQuantizer(dim, faiss.ScalarQuantizer.QT_8bit, ip)
    else:
        raise ValueError(f"unknown vector index kind {kind!r}; use one of {', '.join(KINDS)}")
    if kind in ("hnsw", "hnsw_fp16"):
        inner.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        inner.hnsw.efSearch = HNSW_EF_SEARCH
    if not inner.is_trained:
        # Trigger: 8-bit codes need a value range per dimension. Why: the vectors are
        # normalised, so every component lies in [-1, 1]; a fixed range needs no data, never
        # clips a later vector and never needs retraining. Outcome: a step of 2/255 per
        # component, a cosine error of ~0.002, and exact rescoring fixes the order.
        inner.train(np.stack([-np.ones(dim), np.ones(dim)]).astype(np.float32))
    return inner


def paths(index_dir: Path, model: str, kind: IndexKind) -> dict[str, Path]:
    stem = f"observations.{model}.{kind}"
    return {
        "faiss": index_dir / f"{stem}.faiss",
        "ids": index_dir / f"{stem}.ids.json",
        "meta": index_dir / f"{stem}.json",
    }


Exact = Callable[[list[str]], Mapping[str, Any]]


class VectorIndex:
    """Observation id → vector, searchable by cosine. Thread-safe (one lock, short holds).

    Slots: FAISS labels are slot numbers (the order vectors were added), and three arrays
    over slots say which observation a slot holds, its project code and whether it is live.
    A removal clears the slot's live bit; searches pass the live bits as an
    ``IDSelectorBitmap``, so no kind ever rebuilds for a removal. An id that comes back gets
    a new slot. Dead slots are dropped by ``compact`` when they outnumber the live ones.

    One mutator: ``add``/``remove``/``compact`` are called from one thread (the indexer);
    searches may run on any thread alongside it.
    """

    def __init__(
        self,
        model: str,
        dim: int,
        kind: IndexKind = "flat",
        *,
        graph_from: int = GRAPH_FROM,
        graph_ef: int = HNSW_EF_SEARCH,
        prefilter_from: int | None = None,
    ) -> None:
        """``graph_from``/``graph_ef``: when a graph kind walks its graph, and how widely
        (``settings.vector_graph_from`` / ``vector_graph_ef``); other kinds ignore them.
        ``prefilter_from``: from how many live vectors an exact-scan kind (``flat``,
        ``fp16``) scans coarse codes first (``vector_prefilter``; None: never)."""
        import numpy as np

        if kind not in KINDS:
            raise ValueError(f"unknown vector index kind {kind!r}; use one of {', '.join(KINDS)}")
        self.model = model
        self.dim = dim
        self.kind: IndexKind = kind
        self.graph_from = max(int(graph_from), 0)
        self.graph_ef = max(int(graph_ef), 1)
        self.prefilter_from = (
            max(int(prefilter_from), 0)
            if prefilter_from is not None
            and kind in PREFILTER_KINDS
            and vector_prefilter.supported(dim)
            else None
        )
        self._index = _make(kind, dim)
        # The prefilter's codes of every slot, in slot order (``prepare_prefilter``).
        self._prefilter: vector_prefilter.Prefilter | None = None
        # slot → the text hash its vector was embedded from (ASCII, fixed width): a dict of
        # 100k ids to 64-char strings held ~18 MB of the service's RSS, this array 6.4 MB
        # (issue 21: service + worker ≤ 300 MiB at 100k).
        self._keys = np.zeros(0, dtype=KEY_DTYPE)
        self._slot_of = SlotMap()  # live id → its slot (slot_map.py: arrays, not a dict)
        self._ids = np.zeros(0, dtype=np.int64)  # slot → observation id
        self._codes = np.zeros(0, dtype=np.int32)  # slot → project code (-1: not given)
        self._live = np.zeros(0, dtype=bool)  # slot → live
        self._projects: dict[str, int] = {}  # project name → code
        # Changed by every change; keys the cached selectors. Drawn from one count for the
        # process, so two indexes (a reindex's, a switch's) never share a version.
        self._version = next(_VERSIONS)
        self._selectors: dict[tuple[str, ...], tuple[int, tuple[Any, Any, Any]]] = {}
        self._lock = threading.RLock()
        self.built_at = time.time()
        self.dirty = False

    def __len__(self) -> int:
        return len(self._slot_of)

    @property
    def version(self) -> int:
        """Changes with every add, removal or compaction, and differs between any two indexes
        of this process: equal versions mean the same vectors (``recall.anchor_memo``)."""
        return self._version

    def _key(self, slot: int) -> str:
        return bytes(self._keys[slot]).decode("ascii")

    def ids(self) -> set[int]:
        with self._lock:
            return self._slot_of.ids()

    def hashes(self) -> dict[int, str]:
        with self._lock:
            return {i: self._key(s) for i, s in self._slot_of.items()}

    def hashes_of(self, ids: Iterable[int]) -> dict[int, str]:
        """The text hash of each of ``ids`` the index holds (the others are absent)."""
        with self._lock:
            return {i: self._key(s) for i, s in self._slot_of.slots_of(ids).items()}

    @property
    def max_id(self) -> int:
        with self._lock:
            return self._slot_of.max_id

    @property
    def dead(self) -> int:
        """Slots that still hold a removed (or replaced) vector."""
        return int(self._index.ntotal) - len(self._slot_of)

    @property
    def quantised(self) -> bool:
        """True when the index's scores are coarse enough to rescore exactly (8-bit codes).

        fp16 codes give cosines within ~1e-3 of fp32 and the same top 10 (measured), so
        they are used as they are.
        """
        return self.kind == "sq8"

    def add(
        self,
        ids: Sequence[int],
        hashes: Sequence[str],
        vectors: Any,
        *,
        projects: Sequence[str | None] | None = None,
    ) -> None:
        """Add (or replace) vectors for ``ids``; ``vectors`` is (n, dim) float32, normalised.

        ``projects`` (one per id) lets ``search(projects=…)`` filter without an id list.
        """
        import numpy as np

        if not len(ids):
            return
        matrix = np.ascontiguousarray(vectors, dtype=np.float32).reshape(len(ids), self.dim)
        keys = [int(i) for i in ids]
        if projects is not None and len(projects) != len(keys):
            raise ValueError(f"add: {len(keys)} ids but {len(projects)} projects")
        if any(len(h) > KEY_WIDTH or not h.isascii() for h in hashes):
            raise ValueError(f"add: text hashes are ASCII of at most {KEY_WIDTH} characters")
        with self._lock:
            self.remove(keys)
            codes = [self._code(p) for p in projects] if projects is not None else [-1] * len(keys)
            first = int(self._index.ntotal)
            self._index.add(matrix)
            if self._prefilter is not None:
                self._prefilter.add(matrix)
            self._ids = _appended(self._ids, np.asarray(keys, dtype=np.int64))
            self._codes = _appended(self._codes, np.asarray(codes, dtype=np.int32))
            self._live = _appended(self._live, np.ones(len(keys), dtype=bool))
            self._keys = _appended(self._keys, np.asarray(list(hashes), dtype=KEY_DTYPE))
            # A duplicate id within one batch: the last one wins, the earlier slots are dead.
            last = {i: first + offset for offset, i in enumerate(keys)}
            if len(last) < len(keys):
                winners = set(last.values())
                self._live[[first + o for o in range(len(keys)) if first + o not in winners]] = (
                    False
                )
            self._slot_of.put(list(last), list(last.values()))
            self._changed()
        if self.dead > max(COMPACT_MIN, len(self._slot_of)):
            self.compact()

    def _code(self, project: str | None) -> int:
        if project is None:
            return -1
        return self._projects.setdefault(project, len(self._projects))

    def _changed(self) -> None:
        self._version = next(_VERSIONS)
        self._selectors.clear()
        self.dirty = True

    def remove(self, ids: Iterable[int], *, orphans: bool = True) -> list[str]:
        """Remove ``ids`` (clear their live bits); return the text hashes no live id uses.

        ``orphans=False``: return nothing. Finding them builds a set of every live hash (tens
        of ms at 100k), and the static tier, which drops the memories MiniLM upgraded after
        every worker batch, never uses them (issue 21: CPU taken from the worker)."""

        with self._lock:
            slots = self._slot_of.pop(ids)
            if not len(slots):
                return []
            self._live[slots] = False
            self._scrub(slots)
            self._changed()
            if not orphans:
                return []
            hashes = set(self._keys[slots].tolist())
            still = set(self._keys[self._live].tolist()) if len(self._slot_of) else set()
            return sorted(h.decode("ascii") for h in hashes if h not in still)

    def _scrub(self, slots: Any) -> None:
        """Overwrite the codes of dead ``slots`` with zeros, here and in the prefilter.

        Trigger: a removal (a forget, an edit, a replacement, an upgrade out of the static
        tier). Why: embeddings can be inverted to text, and a dead slot's codes used to stay
        in memory and in every saved ``.faiss`` until a compaction, which runs only once dead
        slots outnumber live ones: at 100k a forgotten memory stayed on disk for good.
        Outcome: the slot decodes to a zero vector (it is never searched: dead slots are
        masked out), so the next save holds nothing of it; ~1 µs per slot. A graph kind keeps
        the node's links, which route a walk but hold no vector.
        """
        import numpy as np

        faiss = _faiss()
        inner = self._index
        if self.kind in GRAPH_KINDS:
            inner = faiss.downcast_index(inner.storage)
        codes = faiss.rev_swig_ptr(inner.codes.data(), inner.codes.size())
        rows = codes.reshape(int(inner.ntotal), int(inner.code_size))
        rows[np.asarray(slots, dtype=np.int64)] = 0
        if self._prefilter is not None:
            self._prefilter.scrub(slots)

    def compact(self) -> None:
        """Rebuild the index from the live slots only (drops the dead ones).

        Trigger: ``add`` sees more dead slots than live ones (and at least ``COMPACT_MIN``).
        Why: dead slots cost memory and scan time, and in HNSW they only route. Outcome: an
        amortised O(1) cost per removal, paid by the indexer thread; the new index is built
        outside the lock, so searches keep answering from the old one meanwhile.
        """
        import numpy as np

        with self._lock:
            version = self._version
            slots = np.flatnonzero(self._live)
            vectors = (
                self._index.reconstruct_batch(slots.astype(np.int64))
                if len(slots)
                else np.zeros((0, self.dim), dtype=np.float32)
            )
            ids, codes, keys = self._ids[slots], self._codes[slots], self._keys[slots]
        fresh = _make(self.kind, self.dim)
        if len(slots):
            fresh.add(np.ascontiguousarray(vectors, dtype=np.float32))
        with self._lock:
            if version != self._version:  # changed meanwhile (a second mutator): try later
                return
            self._index, self._ids, self._codes, self._keys = fresh, ids, codes, keys
            self._prefilter = None  # slots renumbered: ``prepare_prefilter`` builds anew
            self._live = np.ones(len(ids), dtype=bool)
            self._slot_of = SlotMap.of(ids, np.arange(len(ids)))
            self._changed()

    # ----- search ----------------------------------------------------------------------------
    def search(
        self,
        query: Any,
        k: int,
        allowed_ids: Sequence[int] | None = None,
        *,
        projects: Sequence[str] | None = None,
        exact: Exact | None = None,
    ) -> list[tuple[int, float]]:
        """Top ``k`` (id, cosine) for one query vector, best first (ties: lower id first).

        ``allowed_ids``: only these ids. ``projects``: only these projects' ids (from the
        slot → project array: no id list). ``exact``: text hashes → fp32 vectors (the
        embeddings cache); with it a quantised kind rescores its top candidates exactly.
        """
        import numpy as np

        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, self.dim)
        with self._lock:
            if not self._slot_of or k <= 0:
                return []
            if allowed_ids is not None or projects is not None:
                if allowed_ids is None and projects is not None:
                    # A project filter recurs: its slots and bitmap are cached per project
                    # until the next add/remove (no SQL, no id list).
                    mask, slots, selector = self._filter(tuple(projects))
                else:
                    mask = self._mask(allowed_ids, projects)
                    slots, selector = np.flatnonzero(mask), None
                if not len(slots):
                    return []
                if len(slots) <= self._direct_limit():
                    return self._score_slots(q, slots, k, exact)
                k = min(k, len(slots))
                # Trigger: a filter of a few hundred to ``SUBSET_EXACT`` slots. Why: FAISS
                # scans the stored codes exactly under the bitmap (a graph kind: its
                # storage), ~0.5 ms at 100k, where decoding each slot's vector for a numpy
                # product cost ~3 µs a slot (4,000 slots: 14 ms; bench/vector_subsets.py).
                # Outcome: exact at any selectivity, with the full scan's own scores; only a
                # larger filter may take the prefilter or walk the graph.
                small = len(slots) <= SUBSET_EXACT
                found = None if small else self._prefiltered(q, k, mask, len(slots))
                if found is not None:
                    return found
                if selector is None:
                    selector = self._bitmap(mask)
                graph = not small and self._graph_for(len(slots))
                return self._faiss_search(q, k, selector, exact, graph=graph)
            k = min(k, len(self._slot_of))
            mask = self._live if self.dead else None
            if (found := self._prefiltered(q, k, mask, len(self._slot_of))) is not None:
                return found
            selector = self._filter(_ALL_LIVE)[2] if self.dead else None
            graph = self._graph_for(len(self._slot_of))
            return self._faiss_search(q, k, selector, exact, graph=graph)

    def _prefiltered(
        self, q: Any, k: int, mask: Any, allowed: int
    ) -> list[tuple[int, float]] | None:
        """The top ``k`` of the ``allowed`` slots in ``mask`` (None: every live slot) scored
        exactly among the prefilter's candidates (``vector_prefilter.py``); None when there is
        no prefilter, the search is better served by the full scan, or too few candidates
        pass ``mask`` (then the caller scans). Only ``PREFILTER_KINDS`` build one: their
        scores need no rescoring."""
        import numpy as np

        prefilter = self._prefilter
        if prefilter is None or not self.prefiltered:
            return None
        total = int(self._index.ntotal)
        want = vector_prefilter.wanted(k, allowed / total, total)
        if want is None:
            return None
        slots = prefilter.candidates(q, want)
        if mask is not None:
            slots = slots[mask[slots]]
        if len(slots) < k:
            return None
        chosen = np.zeros(total, dtype=bool)
        chosen[slots] = True
        return self._faiss_search(q, k, self._bitmap(chosen), None, graph=False)

    def prepare_prefilter(self) -> bool:
        """Build (or drop) the prefilter as the live count asks; True when it was rebuilt.

        Called by the indexer thread, the index's one mutator, between passes: the codes are
        built outside the lock (~2 s of CPU at 100k; searches meanwhile scan exactly) from
        the index as it stands, which only this thread changes. Installing them changes the
        version: a remembered ranking (``recall.anchor_memo``) is not reused across it.
        """
        if self.prefilter_from is None:
            return False
        with self._lock:
            index, total, current = self._index, int(self._index.ntotal), self._prefilter
            wanted = len(self._slot_of) >= max(self.prefilter_from, vector_prefilter.MIN_VECTORS)
            if not wanted:
                if current is not None:  # removals took the index below the threshold
                    self._prefilter = None
                    self._version = next(_VERSIONS)
                return False
            if current is not None and current.ntotal == total and not current.stale(total):
                return False
            live = self._live.copy()
        built = vector_prefilter.Prefilter.build(index, total, live)
        with self._lock:
            if self._index is not index:  # compacted meanwhile: the next pass builds again
                return False
            if int(index.ntotal) > total:
                built.add(index.reconstruct_n(total, int(index.ntotal) - total))
            self._prefilter = built
            self._version = next(_VERSIONS)
        return True

    @property
    def prefiltered(self) -> bool:
        """Whether searches scan the prefilter's codes first (``prepare_prefilter`` built
        them for every slot)."""
        prefilter = self._prefilter
        return prefilter is not None and prefilter.ntotal == int(self._index.ntotal)

    def _direct_limit(self) -> int:
        """The most slots a filtered search scores from their decoded vectors (``_score_slots``)
        rather than by a FAISS scan under a bitmap.

        Decoding costs ~3 µs a slot; the scan ~30 µs plus ~5 ns for every slot of the index,
        allowed or not (measured on 2 cores, fp16, bench/vector_subsets.py): so a few dozen
        slots in a small index, ~200 at 100k.
        """
        return max(DIRECT_MIN, int(self._index.ntotal) // DIRECT_SHARE)

    def _graph_for(self, allowed: int) -> bool:
        """Whether a search over ``allowed`` live slots walks the graph (else: exact scan).

        Trigger: a graph kind. Why: the graph is approximate, and it pays only where a scan is
        long: below ``graph_from`` live vectors an exact scan is cheap enough, and a filter
        that keeps less than ``GRAPH_MIN_SHARE`` of the slots makes the graph lose recall
        while the scan gets cheaper. Outcome: the graph only for large, broad searches; every
        other search scans the graph's own stored codes exactly (no second copy).
        """
        live = len(self._slot_of)
        return (
            self.kind in GRAPH_KINDS
            and live >= self.graph_from
            and allowed >= GRAPH_MIN_SHARE * live
        )

    def _filter(self, projects: tuple[str, ...]) -> tuple[Any, Any, Any]:
        """(mask, slots, bitmap selector) of the live slots of ``projects``, cached.

        ``_ALL_LIVE`` is the key of all live slots (the unfiltered search's selector).
        """
        import numpy as np

        cached = self._selectors.get(projects)
        if cached is not None and cached[0] == self._version:
            return cached[1]
        everything = projects == _ALL_LIVE
        mask = self._live if everything else self._mask(None, projects)
        slots = np.flatnonzero(mask)
        wanted = everything or len(slots) > self._direct_limit()  # the smallest: directly
        entry = (mask, slots, self._bitmap(mask) if wanted else None)
        self._selectors[projects] = (self._version, entry)
        return entry

    def _mask(self, allowed_ids: Sequence[int] | None, projects: Sequence[str] | None) -> Any:
        import numpy as np

        mask = self._live.copy()
        if projects is not None:
            codes = [self._projects[p] for p in projects if p in self._projects]
            mask &= np.isin(self._codes, np.asarray(codes, dtype=np.int32))
        if allowed_ids is not None:
            chosen = np.zeros(len(mask), dtype=bool)
            slots = list(self._slot_of.slots_of(allowed_ids).values())
            chosen[np.asarray(slots, dtype=np.int64)] = True
            mask &= chosen
        return mask

    def _bitmap(self, mask: Any) -> Any:
        import numpy as np

        bits = np.packbits(mask, bitorder="little")
        selector = _faiss().IDSelectorBitmap(len(mask), _faiss().swig_ptr(bits))
        selector.bits_ref = bits  # the selector points into ``bits``: keep it alive
        return selector

    def _faiss_search(
        self, q: Any, k: int, selector: Any, exact: Exact | None, *, graph: bool
    ) -> list[tuple[int, float]]:
        want = max(RESCORE_FACTOR * k, RESCORE_MIN) if self.quantised and exact else k
        want = min(want, int(self._index.ntotal))
        faiss = _faiss()
        index = self._index
        if graph:
            params = faiss.SearchParametersHNSW(efSearch=max(self.graph_ef, want))
        else:
            params = faiss.SearchParameters()
            if self.kind in GRAPH_KINDS:  # the graph's stored codes, scanned exactly
                index = faiss.downcast_index(self._index.storage)
        if selector is not None:
            params.sel = selector
        scores, slots = index.search(q, want, params=params)
        keep = slots[0] >= 0
        slots, scores = slots[0][keep], scores[0][keep]
        if self.quantised and exact:
            return self._rescore(q, slots, k, exact, scores)
        return _ranked(self._ids[slots], scores, k)

    def _score_slots(
        self, q: Any, slots: Any, k: int, exact: Exact | None
    ) -> list[tuple[int, float]]:
        """Score a small set of slots from their stored vectors (exact for fp32 kinds)."""
        import numpy as np

        scores = self._index.reconstruct_batch(slots.astype(np.int64)) @ q[0]
        if self.quantised and exact:
            want = max(RESCORE_FACTOR * k, RESCORE_MIN)
            top = np.argsort(-scores, kind="stable")[:want]
            return self._rescore(q, slots[top], k, exact, scores[top])
        return _ranked(self._ids[slots], scores, k)

    def _rescore(
        self, q: Any, slots: Any, k: int, exact: Exact, approx: Any
    ) -> list[tuple[int, float]]:
        """Exact cosines for the candidates; a hash the cache lacks keeps its approximation."""
        import numpy as np

        ids = self._ids[slots]
        hashes = [self._key(int(s)) if self._live[s] else "" for s in slots]
        found = exact([h for h in hashes if h])
        scores = np.array(
            [
                float(found[h] @ q[0]) if h in found else float(a)
                for h, a in zip(hashes, approx, strict=True)
            ],
            dtype=np.float32,
        )
        return _ranked(ids, scores, k)

    # ----- persistence -------------------------------------------------------------------
    def save(self, index_dir: Path) -> None:
        """Write the index, its slot arrays and its meta atomically and durably.

        Order: the FAISS file and the slot arrays are written to temp files and fsynced,
        renamed into place and their folder fsynced; only then is the meta (the commit mark
        that declares the set complete: ``load`` and ``index_files.remove_replaced`` go by it)
        written, fsynced, renamed and the folder fsynced again. The FAISS file was not
        fsynced, so a power cut could leave a meta on disk over a torn ``.faiss``, and the
        replaced kind's files could go on the meta's word. The fsync runs outside the lock:
        searches are not held while the bytes reach the disk.
        """
        faiss = _faiss()
        index_dir.mkdir(parents=True, exist_ok=True)
        where = paths(index_dir, self.model, self.kind)
        token = uuid.uuid4().hex
        with self._lock:
            names = sorted(self._projects, key=self._projects.__getitem__)
            id_doc = {
                "token": token,
                "slots": self._ids.tolist(),
                "codes": self._codes.tolist(),
                "live": [int(s) for s in self._live.nonzero()[0]],
                "hashes": [self._key(int(s)) for s in self._live.nonzero()[0]],
                "projects": names,
            }
            meta = {
                "format": FORMAT,
                "model": self.model,
                "dim": self.dim,
                "kind": self.kind,
                "count": len(self._slot_of),
                "ntotal": int(self._index.ntotal),
                "built_at": self.built_at,
                "saved_at": time.time(),
                "token": token,
            }
            faiss.write_index(self._index, str(where["faiss"]) + ".tmp")
            _write_json(Path(str(where["ids"]) + ".tmp"), id_doc)
            self.dirty = False
        fsync_file(Path(str(where["faiss"]) + ".tmp"))  # the ids file: in _write_json
        os.replace(str(where["faiss"]) + ".tmp", where["faiss"])
        os.replace(str(where["ids"]) + ".tmp", where["ids"])
        fsync_folder(index_dir)  # the data's renames reach the disk before the meta's
        _write_json(Path(str(where["meta"]) + ".tmp"), meta)
        os.replace(str(where["meta"]) + ".tmp", where["meta"])
        fsync_folder(index_dir)

    @classmethod
    def load(
        cls,
        index_dir: Path,
        model: str,
        dim: int,
        kind: IndexKind,
        *,
        graph_from: int = GRAPH_FROM,
        graph_ef: int = HNSW_EF_SEARCH,
        prefilter_from: int | None = None,
    ) -> tuple[VectorIndex | None, str]:
        """The saved index, or ``(None, why)`` when absent, old or not self-consistent.

        ``None`` means "rebuild from the embeddings cache" (derived data, no model calls).
        """
        import numpy as np

        where = paths(index_dir, model, kind)
        if not where["meta"].exists():
            return None, f"no saved index at {where['meta']}"
        try:
            meta = json.loads(where["meta"].read_text(encoding="utf-8"))
            if meta.get("format") != FORMAT:
                return None, (
                    f"saved index {where['meta']} has format {meta.get('format')}, this version"
                    f" writes {FORMAT}; it is rebuilt from the embeddings cache"
                )
            if (meta.get("model"), meta.get("dim"), meta.get("kind")) != (model, dim, kind):
                return None, f"saved index {where['meta']} is for another model or format"
            id_doc = json.loads(where["ids"].read_text(encoding="utf-8"))
            raw = _faiss().read_index(str(where["faiss"]))
        except (OSError, ValueError, RuntimeError) as exc:
            return None, f"saved index under {index_dir} is unreadable ({exc})"
        slots, live = id_doc.get("slots", []), id_doc.get("live", [])
        codes = id_doc.get("codes", [])
        if (
            id_doc.get("token") != meta.get("token")
            or len(live) != meta.get("count")
            or len(id_doc.get("hashes", [])) != len(live)
            or len(slots) != int(raw.ntotal)
            or len(codes) != len(slots)
            or int(raw.ntotal) != meta.get("ntotal")
            or any(not 0 <= s < len(slots) for s in live)
        ):
            return None, f"saved index under {index_dir} is incomplete (interrupted save)"
        index = cls(
            model,
            dim,
            kind,
            graph_from=graph_from,
            graph_ef=graph_ef,
            prefilter_from=prefilter_from,
        )
        index._index = raw
        index._ids = np.asarray(slots, dtype=np.int64)
        index._codes = np.asarray(codes, dtype=np.int32)
        index._live = np.zeros(len(slots), dtype=bool)
        index._live[np.asarray(live, dtype=np.int64)] = True
        live_ids = [int(slots[s]) for s in live]
        if len(set(live_ids)) != len(live):
            return None, f"saved index under {index_dir} is inconsistent (an id in two slots)"
        index._slot_of = SlotMap.of(live_ids, live)
        hashes = id_doc["hashes"]
        if any(not isinstance(h, str) or len(h) > KEY_WIDTH or not h.isascii() for h in hashes):
            return None, f"saved index under {index_dir} holds a malformed text hash"
        index._keys = np.zeros(len(slots), dtype=KEY_DTYPE)
        if live:
            index._keys[np.asarray(live, dtype=np.int64)] = np.asarray(hashes, dtype=KEY_DTYPE)
        index._projects = {name: n for n, name in enumerate(id_doc.get("projects", []))}
        index.built_at = float(meta.get("built_at") or time.time())
        return index, f"loaded {len(index)} vectors from {where['faiss'].name}"

    def memory_bytes(self) -> int:
        """Approximate RAM of the index: codes, HNSW links and the slot arrays."""
        code = {"flat": 4, "hnsw": 4, "fp16": 2, "hnsw_fp16": 2, "sq8": 1}[self.kind] * self.dim
        links = HNSW_M * 2 * 4 + 16 if self.kind in ("hnsw", "hnsw_fp16") else 0
        coarse = self._prefilter.memory_bytes() if self._prefilter is not None else 0
        return int(self._index.ntotal) * (code + links + 8 + 4 + 1) + coarse


def _appended(array: Any, values: Any) -> Any:
    """``array`` + ``values`` as a view of a buffer that doubles when full.

    Why: the indexer adds in chunks of a few hundred (or one), and copying the whole slot
    arrays on every add would make a 1M reindex quadratic. ``array.base`` is the buffer.
    """
    import numpy as np

    buffer = array.base if isinstance(array.base, np.ndarray) and array.base.ndim == 1 else array
    used, need = len(array), len(array) + len(values)
    if need > len(buffer) or buffer is array:
        grown = np.empty(max(need, 2 * len(buffer), 1024), dtype=array.dtype)
        grown[:used] = array
        buffer = grown
    buffer[used:need] = values
    return buffer[:need]


def _ranked(ids: Any, scores: Any, k: int) -> list[tuple[int, float]]:
    """(id, score) best first, ties broken by the lower id (deterministic across kinds)."""
    import numpy as np

    if len(scores) > k:  # keep the top k and everything tied with the k-th, then sort those
        cut = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= cut
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((ids, -scores))[:k]
    return [(int(ids[i]), float(scores[i])) for i in order]


def fsync_file(path: Path) -> None:
    """fsync a file already written and closed (its bytes on disk before a rename names it)."""
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


def fsync_folder(folder: Path) -> None:
    """fsync a folder: the renames in it are on disk (POSIX leaves that to this call)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_json(path: Path, data: Any) -> None:
    with path.open("w", encoding="utf-8") as handle:
        json.dump(data, handle, separators=(",", ":"))
        handle.flush()
        os.fsync(handle.fileno())
