"""How good is the timeline's anchor by query, today's and cheaper ones (issue 21).

``GET /api/timeline?query=…`` anchors on the first hit of a full hybrid search (query
embedding, vector scan, fusion, learned second stage): ~26 ms at 100k, against a target of
10 ms. A cheaper anchor (the full-text top hit) skips the vector side, but is only worth it if
the timeline it opens is as useful. This bench measures that on the project's own relevance
sets (``bench/relevance_sets.py``; never the held-out set), per question:

- ``anchor gold``: the anchor is an evidence memory;
- ``window gold``: the timeline around it (the route's default depth, 5 observations before
  and 5 after, in the question's project) holds an evidence memory;
- ``answered``: the anchor exists (full text finds nothing for a query with no shared word).

Anchors compared:

- ``hybrid (today)``: ``SearchEngine.top_observation`` with the service's default settings
  (the first hit of ``/api/search``);
- ``fts``: the BM25 top hit alone (no answer when nothing matches);
- ``fts, else hybrid``: the BM25 top hit, the hybrid one when full text finds nothing;
- ``fts top 50 by cosine, else hybrid``: the full-text top 50 rescored by the query's cosine
  to each (the query embedding and 50 dot products, no scan of the whole index);
- ``vector``: MiniLM's top hit alone (for reference: it pays for the scan too).

What it found at e5db436 (984 questions, eight sets): no cheaper anchor is as good. Today's
anchor is gold for 0.527 of questions and its window holds gold for 0.710; full text's top hit
0.449 / 0.630, and it is below today's on every set, most where full text loses to vectors
(coding −0.278 anchor gold, conversations −0.226). A confidence gate (full text when its
second BM25 score is well below its first) chosen leaving each set out never routes a query to
full text without a loss on the other sets, and the cut that would send half the queries there
(p50 under the target) costs coding −0.153. So the route keeps paying for the hybrid anchor.

Run: ``nice -n 5 .venv/bin/python bench/timeline_anchor.py [--sets coding conversations …]``.
Embeddings come from the bench's on-disk cache, so a run costs seconds per set once warm.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.relevance_sets import Loaded, available_sets, load, minilm  # noqa: E402
from workbench.recall import fts  # noqa: E402
from workbench.recall.filters import SearchFilters  # noqa: E402
from workbench.recall.search import SearchEngine  # noqa: E402
from workbench.recall.timeline import build  # noqa: E402
from workbench.settings import load_settings  # noqa: E402

DEPTH = 5  # the route's default depth_before / depth_after
Anchor = Callable[[str, SearchFilters], int | None]
POOL = 50  # full-text candidates the cosine anchor rescores
ANCHORS = (
    "hybrid (today)",
    "fts",
    "fts, else hybrid",
    f"fts top {POOL} by cosine, else hybrid",
    "vector",
)


def anchors_for(engine: SearchEngine) -> dict[str, Anchor]:
    """Each candidate anchor: a query and its filters → an observation id, or None."""

    def hybrid(query: str, filters: SearchFilters) -> int | None:
        hit = engine.top_observation(query, filters)
        return None if hit is None else hit.id

    def text(query: str, filters: SearchFilters) -> int | None:
        found = fts.rank(engine.conn, "observations", query, filters, limit=1)
        return found[0][0] if found else None

    def text_else_hybrid(query: str, filters: SearchFilters) -> int | None:
        found = text(query, filters)
        return found if found is not None else hybrid(query, filters)

    def text_by_cosine(query: str, filters: SearchFilters) -> int | None:
        found = fts.rank(engine.conn, "observations", query, filters, limit=POOL)
        if not found:
            return hybrid(query, filters)
        cosines = engine._cosines_of(query, [i for i, _ in found]) or {}
        return max(found, key=lambda hit: cosines.get(hit[0], -1.0))[0]

    def vector(query: str, filters: SearchFilters) -> int | None:
        result = engine.search(query, filters, types="observations", mode="vector", limit=1)
        return result.observations[0].id if result.observations else None

    return {
        "hybrid (today)": hybrid,
        "fts": text,
        "fts, else hybrid": text_else_hybrid,
        f"fts top {POOL} by cosine, else hybrid": text_by_cosine,
        "vector": vector,
    }


def window(engine: SearchEngine, anchor: int, project: str | None) -> set[int]:
    """The observation ids of the timeline the route would answer around ``anchor``."""
    found = build(engine, anchor, None, DEPTH, DEPTH, project)
    return {item.id for item in found.items if item.kind == "observation"}


@dataclass
class Reading:
    """One question's anchors: per anchor (id or None, anchor gold, window gold)."""

    found: dict[str, tuple[int | None, bool, bool]]
    ratio: float  # full text's second score over its first (1.0: one hit or none): low = sure


def measure(loaded: Loaded, data_dir: Path) -> tuple[list[Reading], dict[str, float]]:
    """Every question's anchors, and each anchor's p50 ms in-process at the set's size."""
    engine = SearchEngine(loaded.conn, load_settings(data_dir), loaded.ranker)
    times: dict[str, list[float]] = {name: [] for name in ANCHORS}
    readings: list[Reading] = []
    for q in loaded.questions:
        project = q.project or None
        filters = SearchFilters(project=project)
        found: dict[str, tuple[int | None, bool, bool]] = {}
        for name, find in anchors_for(engine).items():
            started = time.perf_counter()
            anchor = find(q.text, filters)
            times[name].append((time.perf_counter() - started) * 1000)
            if anchor is None:
                found[name] = (None, False, False)
                continue
            near = window(engine, anchor, project) & set(q.relevant)
            found[name] = (anchor, anchor in q.relevant, bool(near))
        top = fts.rank(engine.conn, "observations", q.text, filters, limit=2)
        ratio = top[1][1] / top[0][1] if len(top) == 2 else 1.0 if not top else 0.0
        readings.append(Reading(found, ratio))
    return readings, {name: sorted(ms)[len(ms) // 2] for name, ms in times.items()}


def shares(readings: Sequence[Reading], name: str) -> dict[str, float]:
    """answered / anchor gold / window gold / same anchor as today, as shares of questions."""
    n = len(readings)
    today = ANCHORS[0]
    return {
        "answered": sum(r.found[name][0] is not None for r in readings) / n,
        "anchor": sum(r.found[name][1] for r in readings) / n,
        "window": sum(r.found[name][2] for r in readings) / n,
        "same": sum(r.found[name][0] == r.found[today][0] for r in readings) / n,
    }


def print_table(name: str, readings: Sequence[Reading], p50: dict[str, float]) -> None:
    print(f"\n## {name} ({len(readings)} questions; window = {DEPTH} before / {DEPTH} after)")
    print("| anchor | answered | anchor gold | window gold | same as today | p50 ms |")
    print("|---|---|---|---|---|---|")
    for anchor in ANCHORS:
        r = shares(readings, anchor)
        print(
            f"| {anchor} | {r['answered']:.3f} | {r['anchor']:.3f} | {r['window']:.3f} "
            f"| {r['same']:.3f} | {p50[anchor]:.2f} |"
        )


def gated(readings: Sequence[Reading], cut: float) -> tuple[float, float, float]:
    """Full text's anchor when its ratio is at most ``cut`` (it found a clear winner), else
    today's: (anchor gold, window gold, share anchored by full text)."""
    n = len(readings)
    sure = [r.ratio <= cut for r in readings]
    pick = [r.found["fts" if s else ANCHORS[0]] for r, s in zip(readings, sure, strict=True)]
    return sum(p[1] for p in pick) / n, sum(p[2] for p in pick) / n, sum(sure) / n


CUTS = (0.0, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)


def choose_cut(train: Sequence[Reading]) -> float:
    """The cut sending most questions to full text while the training sets lose nothing
    against today's anchor (anchor gold and window gold, pooled)."""
    base_anchor, base_window, _ = gated(train, -1.0)
    fair = [
        c
        for c in CUTS
        if all(g >= b for g, b in zip(gated(train, c)[:2], (base_anchor, base_window), strict=True))
    ]
    return max(fair, default=-1.0)


def print_gate(every: dict[str, list[Reading]]) -> None:
    """The confidence gate, its cut chosen leaving the reported set out."""
    print("\n## gate: full text's anchor when its 2nd/1st BM25 score ratio ≤ cut, else today's")
    print("(cut chosen on the other sets: the most full text with no loss there; -1 = never)")
    print(
        "| held-out set | cut | to full text | anchor gold (today → gated) "
        "| window gold (today → gated) |"
    )
    print("|---|---|---|---|---|")
    for name, readings in every.items():
        train = [r for other, rs in every.items() if other != name for r in rs]
        cut = choose_cut(train)
        base = gated(readings, -1.0)
        got = gated(readings, cut)
        print(
            f"| {name} | {cut:g} | {got[2]:.3f} | {base[0]:.3f} → {got[0]:.3f} "
            f"| {base[1]:.3f} → {got[1]:.3f} |"
        )


def print_curve(every: dict[str, list[Reading]]) -> None:
    """What each cut trades, pooled, and its worst set (the gate's whole range, for the lead)."""
    pooled = [r for rs in every.values() for r in rs]
    base = gated(pooled, -1.0)
    print("\n## the gate's trade at each cut (pooled; worst set = largest anchor-gold loss)")
    print("| cut | to full text | anchor gold | window gold | worst set (anchor gold Δ) |")
    print("|---|---|---|---|---|")
    print(f"| never | 0.000 | {base[0]:.3f} | {base[1]:.3f} | — |")
    for cut in CUTS:
        got = gated(pooled, cut)
        worst = min(every, key=lambda n: gated(every[n], cut)[0] - gated(every[n], -1.0)[0])
        delta = gated(every[worst], cut)[0] - gated(every[worst], -1.0)[0]
        print(f"| {cut:g} | {got[2]:.3f} | {got[0]:.3f} | {got[1]:.3f} | {worst} ({delta:+.3f}) |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", nargs="*", help="set names (default: every available set)")
    args = parser.parse_args()
    names = tuple(args.sets) if args.sets else available_sets()
    embedder = minilm()
    every: dict[str, list[Reading]] = {}
    with tempfile.TemporaryDirectory(prefix="timeline-anchor-") as tmp:
        for name in names:
            here = Path(tmp) / name
            here.mkdir()
            loaded = load(name, here, embedder)
            every[name], p50 = measure(loaded, here)
            loaded.store.close()
            print_table(name, every[name], p50)
            sys.stdout.flush()
    embedder.save()
    pooled = [r for rs in every.values() for r in rs]
    print(f"\n## all sets, pooled by question ({len(pooled)})")
    print("| anchor | anchor gold | window gold | same as today |")
    print("|---|---|---|---|")
    for anchor in ANCHORS:
        r = shares(pooled, anchor)
        print(f"| {anchor} | {r['anchor']:.3f} | {r['window']:.3f} | {r['same']:.3f} |")
    if len(every) > 1:
        print_gate(every)
        print_curve(every)


if __name__ == "__main__":
    main()
