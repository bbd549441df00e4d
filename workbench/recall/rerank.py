"""The second stage: reorder the fused top-N with a small linear model over ``rerank_features``.

Hybrid search fuses two rankers by their scores; this stage looks at the candidates' words
too (identifier and phrase matches, title vs body coverage, recency, type) and reorders the
best ``search_rerank_depth`` (50) by ``w · features``. Rules it keeps, whatever the model:

- it only **reorders**: the same ids come back, none dropped, none added (checked; a mismatch
  falls back to the fused order);
- it **fails open**: any error (a bad model file, a store hiccup) gives the fused order, logged;
- it is **derived**: the weights live in ``<data_dir>/rerank.json`` (``workbench rerank train``
  writes it from the user's own history, ``rerank_train``); deleting the file, or a file this
  code cannot read, means the built-in ``DEFAULT_WEIGHTS``.

Whether it runs is ``settings.search_rerank``; ``mode=fts`` and ``mode=vector`` never rerank
(they show one ranker, for comparison). ``search_rerank_method`` picks the stage: ``features``
(this linear model) or ``maxsim`` (late interaction over MiniLM's word pieces,
``rerank_maxsim``) or ``learned`` (a shipped learning-to-rank model over ranker, word, MaxSim
and session features, ``rerank_learned``); for either, its word-piece vectors missing (the
``workbench rerank build`` table for ``maxsim``, the static model of ``workbench models build``
for ``learned``) → the fused order, and ``problem`` says why for /api/health and the search's
``degraded``).
"""

from __future__ import annotations

import json
import logging
import math
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.recall import rerank_features
from workbench.recall.rerank_features import FEATURES, Candidates

__all__ = ["Candidates", "Model", "load_model", "order", "rerank_or_fused", "save_model"]

log = logging.getLogger("workbench.recall")

MODEL_FILE = "rerank.json"
MODEL_VERSION = 1
DEFAULT_DEPTH = 50
# Untrained: the fused order, nudged by exact evidence the fusion cannot see (an identifier
# held whole, a run of query words in order, the title covering the query). The fused score
# dominates, so without such evidence the order is the fusion's.
DEFAULT_WEIGHTS: dict[str, float] = {
    "fused": 4.0,
    "fused_rr": 0.5,
    "phrase": 0.6,
    "title_cover": 0.4,
    "identifier": 0.6,
}


@dataclass(frozen=True)
class Model:
    """A linear scorer: ``weights`` in ``FEATURES`` order; ``source`` says where it came from."""

    weights: tuple[float, ...]
    source: str  # "default" or "trained"

    @classmethod
    def default(cls) -> Model:
        return cls(tuple(DEFAULT_WEIGHTS.get(name, 0.0) for name in FEATURES), "default")

    def score(self, row: list[float]) -> float:
        return math.fsum(w * x for w, x in zip(self.weights, row, strict=True))

    def to_json(self, **extra: Any) -> dict[str, Any]:
        return {
            "version": MODEL_VERSION,
            "features": list(FEATURES),
            "weights": dict(zip(FEATURES, self.weights, strict=True)),
            **extra,
        }


def model_path(settings: Any) -> Path | None:
    data_dir = getattr(settings, "data_dir", None)
    return Path(data_dir) / MODEL_FILE if data_dir is not None else None


def load_model(settings: Any) -> Model:
    """The trained model in the data dir, else the default (a bad file is logged, not raised)."""
    path = model_path(settings)
    if path is None or not path.exists():
        return Model.default()
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("version") != MODEL_VERSION or doc.get("features") != list(FEATURES):
            raise ValueError("written for other features; run `workbench rerank train` again")
        weights = tuple(float(doc["weights"][name]) for name in FEATURES)
        if not all(math.isfinite(w) for w in weights):
            raise ValueError("a weight is not a finite number")
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("rerank model %s unusable (%s); using the built-in default", path, exc)
        return Model.default()
    return Model(weights, "trained")


def save_model(settings: Any, model: Model, **extra: Any) -> Path:
    """Write the model atomically (a reader never sees half a file)."""
    path = model_path(settings)
    if path is None:
        raise ValueError("settings without a data_dir cannot hold a rerank model")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(model.to_json(**extra), indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def enabled(settings: Any) -> bool:
    return bool(getattr(settings, "search_rerank", False))


def depth(settings: Any) -> int:
    return int(getattr(settings, "search_rerank_depth", DEFAULT_DEPTH))


def method(settings: Any) -> str:
    return str(getattr(settings, "search_rerank_method", "features"))


def reach(settings: Any) -> int | None:
    """How many of the fused list's first hits the second stage reads and reorders (it keeps
    the rest in the fused order), or None: no stage runs, or Claude's may (it reads the list
    the first stage left)."""
    from workbench.recall import rerank_llm

    if not enabled(settings) or rerank_llm.enabled(settings):
        return None
    if method(settings) == "learned":
        from workbench.recall import rerank_learned

        return min(depth(settings), rerank_learned.weights().depth)
    return depth(settings)


def problem(settings: Any) -> str | None:
    """Why the configured stage cannot run (its model is missing), or None."""
    if not enabled(settings) or method(settings) not in ("maxsim", "learned"):
        return None
    from workbench.recall import rerank_tokens

    learned = method(settings) == "learned"
    reason = rerank_tokens.static_problem() if learned else rerank_tokens.problem()
    return None if reason is None else f"rerank skipped, results in fused order: {reason}"


def inputs(settings: Any) -> tuple[object, ...] | None:
    """What the configured stage reads besides the store, the candidates and the settings:
    its files' stamps (a retrained ``rerank.json``, a rebuilt token table or static model
    reorders). None when no stage runs. For ``recall.anchor_memo``: equal tuples, equal order.
    """
    if not enabled(settings):
        return None
    from workbench.recall import rerank_tokens

    chosen = method(settings)
    if chosen == "maxsim":
        where = str(rerank_tokens.tokens_dir())
        files = [f"{where}/{rerank_tokens.MANIFEST}", f"{where}/{rerank_tokens.TABLE_FILE}"]
    elif chosen == "learned":
        from workbench.recall.embed import static_model_dir

        where = str(static_model_dir())
        files = [f"{where}/model.safetensors", f"{where}/{rerank_tokens.TOKENIZER_FILE}"]
    else:
        files = [str(path)] if (path := model_path(settings)) is not None else []
    return (chosen, *(_stamp(f) for f in files))


def _stamp(path: str) -> tuple[str, int, int, int] | None:
    """``(path, inode, size, mtime)`` of a file, or None when there is none."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return path, found.st_ino, found.st_size, found.st_mtime_ns


def _first_stage(
    conn: sqlite3.Connection,
    query: str,
    candidates: Candidates,
    settings: Any,
    first_only: bool = False,
) -> tuple[list[tuple[int, float]], str, int]:
    """The configured stage's order, its name and how deep it reordered; raises on failure.
    ``first_only``: only the first hit must be right (``rerank_learned.order``)."""
    if method(settings) == "maxsim":
        from workbench.recall import rerank_maxsim, rerank_tokens

        weight = float(
            getattr(settings, "search_rerank_maxsim_fused", rerank_maxsim.DEFAULT_FUSED_WEIGHT)
        )
        table = rerank_tokens.load()
        reordered = rerank_maxsim.order(conn, query, candidates, table, depth(settings), weight)
        return reordered, "maxsim", depth(settings)
    if method(settings) == "learned":
        from workbench.recall import rerank_learned, rerank_tokens

        table = rerank_tokens.load_static()
        learned = rerank_learned.weights()
        reordered = rerank_learned.order(
            conn, query, candidates, depth(settings), table, learned, first_only=first_only
        )
        return reordered, "learned", min(depth(settings), learned.depth)
    model = load_model(settings)
    name = "features" if model.source == "trained" else "features-default"
    return order(conn, query, candidates, model, depth(settings)), name, depth(settings)


def order(
    conn: sqlite3.Connection,
    query: str,
    candidates: Candidates,
    model: Model,
    top_n: int = DEFAULT_DEPTH,
) -> list[tuple[int, float]]:
    """The fused list with its first ``top_n`` reordered by ``model`` (ties: fused order).

    Raises on any failure; ``rerank_or_fused`` is the fail-open wrapper search calls.
    """
    head, tail = candidates.fused[:top_n], candidates.fused[top_n:]
    if len(head) < 2:
        return list(candidates.fused)
    sub = Candidates(head, candidates.text, candidates.vector, candidates.cosines)
    ids, rows = rerank_features.compute(conn, query, sub)
    fused = dict(head)
    reordered = [(i, fused[i]) for i in ranked(model, ids, rows)]
    if sorted(i for i, _ in reordered) != sorted(i for i, _ in head):
        raise RuntimeError("the reranker changed the candidate set")
    return reordered + list(tail)


def ranked(model: Model, ids: list[int], rows: list[list[float]]) -> list[int]:
    """``ids`` best first by ``model``; equal scores keep their given (fused) order."""
    scored = sorted(
        ((model.score(row), -n, i) for n, (i, row) in enumerate(zip(ids, rows, strict=True))),
        reverse=True,
    )
    return [i for _, _, i in scored]


def rerank_or_fused(
    conn: sqlite3.Connection,
    query: str,
    candidates: Candidates,
    settings: Any,
    *,
    first_only: bool = False,
) -> tuple[list[tuple[int, float]], dict[int, str], str | None]:
    """``(list, id -> reranker, skipped)``: the fused list reordered by whichever stages are on,
    and ``problem(settings)`` (why the configured stage could not run, else None), found
    once here so a search does not look at the model's files twice.

    The configured stage (``search_rerank``, ``search_rerank_method``) reorders the top
    ``search_rerank_depth``; then, with ``search_rerank_llm`` and a key, Claude reorders the
    top ``search_rerank_llm_depth`` (``rerank_llm``). Each stage fails open on its own. The
    names (``"features"``, ``"features-default"``, ``"maxsim"``, ``"learned"``, ``"claude"``) go
    into each hit's ``rerank`` field; an id absent from the map kept its fused place.
    ``first_only``: only the first hit is read (the timeline's anchor); the rest of the list
    may then be left in the fused order.
    """
    from workbench.recall import rerank_llm

    fused = candidates.fused
    placed: dict[int, str] = {}
    skipped = problem(settings)  # a missing model: said (the search's ``degraded``), not raised
    if len(fused) < 2:
        return fused, placed, skipped
    if enabled(settings) and skipped is None:
        try:
            fused, name, deep = _first_stage(conn, query, candidates, settings, first_only)
            placed = {i: name for i, _ in fused[:deep]}
        except Exception:  # fail open: a second stage must never cost the first stage's answer
            log.exception("rerank failed; returning the fused order")
            fused, placed = candidates.fused, {}
    if rerank_llm.enabled(settings):
        try:
            by_claude = rerank_llm.order(conn, query, fused, settings)
        except Exception:
            log.exception("Claude rerank failed; keeping the order")
            by_claude = None
        if by_claude is not None:
            top = int(getattr(settings, "search_rerank_llm_depth", rerank_llm.DEFAULT_DEPTH))
            fused = by_claude
            placed.update({i: "claude" for i, _ in fused[:top]})
    return fused, placed, skipped
