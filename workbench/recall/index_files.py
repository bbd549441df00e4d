"""The saved vector indexes of one model under ``settings.index_dir``, kind by kind.

Why a module: each ``vector_index`` kind of a model is saved as its own file set
(``observations.<model>.<kind>.faiss`` / ``.ids.json`` / ``.json``, ``vectors.paths``), so a
switch of the setting used to leave the other kind's set (76-107 MB at 100k memories) in
``index/`` forever (issue 21). This module says which kinds a model has saved (the indexer
serves the newest while the kind it switched to is built) and removes the sets the kind in use
has replaced.

What it never removes: the kind in use, any other model's files (switching ``embedder`` back
reuses them; nothing here knows they are dead), or anything before the kind in use is
complete on disk (``remove_replaced`` checks its meta and fsyncs its set first): a kill -9 at
any moment leaves a loadable set, and the next start serves it.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import cast

from workbench.recall.vectors import KINDS, IndexKind, fsync_file, fsync_folder, paths

log = logging.getLogger("workbench.recall")


def saved_kinds(index_dir: Path, model: str, *, besides: str) -> list[IndexKind]:
    """The kinds other than ``besides`` that ``model`` has a saved meta for, newest save first.

    Only the meta is read (``saved_at``); whether the set loads is ``VectorIndex.load``'s call.
    """
    found: list[tuple[float, IndexKind]] = []
    for kind in _kinds():
        if kind == besides:
            continue
        meta = paths(index_dir, model, kind)["meta"]
        try:
            saved_at = float(json.loads(meta.read_text(encoding="utf-8")).get("saved_at") or 0)
        except (OSError, ValueError, AttributeError):
            continue
        found.append((saved_at, kind))
    return [kind for _, kind in sorted(found, reverse=True)]


def remove_replaced(index_dir: Path, model: str, in_use: IndexKind) -> list[str]:
    """Remove ``model``'s file sets of every kind but ``in_use``, and its interrupted saves'
    temp files; return the names removed. Nothing is removed unless ``in_use``'s set is
    complete on disk (its meta, the commit mark ``save`` writes last, exists).

    Trigger: the kind in use was just loaded from disk or saved to it. Why: only then is the
    replaced set surely unneeded (a crash from here on restarts from the kind in use).
    Outcome: the meta goes first (a set without it never loads, so a kill -9 midway leaves
    nothing half-valid), then the slot arrays and the FAISS file; the next call finishes.
    Called by the indexer's thread only, which is also the only one that saves: no save is
    under way, so its temp files are leftovers of a killed one. With nothing to remove (every
    periodic save after the first) it costs a few ``stat`` calls, no fsync.
    """
    where = paths(index_dir, model, in_use)
    doomed: list[Path] = []
    for kind in _kinds():
        files = paths(index_dir, model, kind)
        parts = [files["meta"], files["ids"], files["faiss"]] if kind != in_use else []
        parts += [Path(f"{files[part]}.tmp") for part in ("meta", "ids", "faiss")]
        doomed += [path for path in parts if path.exists()]
    if not doomed or not where["meta"].is_file():  # a periodic save: no fsync, nothing to do
        return []
    try:
        _durable([where["faiss"], where["ids"], where["meta"]])
    except OSError as exc:  # not surely on disk: keep the replaced sets for now
        log.warning("vector index: %s not synced to disk (%s); nothing removed", where["meta"], exc)
        return []
    removed: list[str] = []
    for path in doomed:
        try:
            path.unlink()
        except FileNotFoundError:
            continue
        except OSError as exc:  # derived files: say so, try again at the next save
            log.warning("could not remove the replaced index file %s: %s", path, exc)
            continue
        removed.append(path.name)
    if removed:
        log.info("vector index: removed %s (replaced by the saved %s set)", removed, in_use)
    return removed


def _kinds() -> list[IndexKind]:
    return [cast(IndexKind, kind) for kind in KINDS]


def _durable(files: list[Path]) -> None:
    """fsync ``files`` and their folder: the set in use is on disk before another goes.

    ``save`` makes its own set durable, but the set in use may have been loaded from disk as
    an older version saved it (without fsyncing the FAISS file); before the only other copy
    is removed, it must be on disk.
    """
    for path in files:
        fsync_file(path)
    fsync_folder(files[0].parent)
