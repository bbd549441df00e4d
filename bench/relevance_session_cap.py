"""Choose the learned stage's ``session_cap`` by cross-validation across sets. Prints both readings.

Why (issue 21): a multi-hop question's evidence spans sessions, and on the held-out benchmark
multi-hop and open-domain questions are the weakest classes, session hit@10 0.927 against a
goal of 0.96. One session that repeats the question's words can fill the top 10 and leave the
second evidence session no slot (the session term's failure, ``session_spread``'s docstring).
``rerank_learned.spread`` caps one session's places on the first page; this bench says whether
a cap is worth it, and which.

Over the relevance sets (``--set``, default every one present; never the held-out benchmark),
each question's fused candidates and the learned stage's feature rows come from
``bench/relevance_ltr.items_of`` (the real ``SearchEngine``, the shipped fusion). The stage
reorders them with the shipped weights (``rerank_learned.json``) and each cap of ``CAPS``
(None: no cap, today). The weights are those shipped: fitted on coding, conversations,
meetings, committee, memorybank and friends (so the "+learned" rows of those sets are the
weights' training sets, as they are in every bench that reads the shipped file); hotpot and
musique were not among them. The cap itself is never chosen on the set it is reported on:

- leave one set out: the cap with the least shortfall below the better single part (R@5,
  R@10, MRR per set, ``relevance_ltr.shortfall``) on the other sets, ties to the best
  class-balanced mean of (R@5 + R@10 + MRR) / 3 (``relevance_ltr.balanced``), ties to no cap;
- 5-fold by question over the sets pooled, the same rule.

Rows per set: fts, vector, hybrid, +learned (no cap), +learned with each cap (in-sample, to
see the curve), +learned with the held-out cap of each scheme; both readings
(``relevance_readings``: share R@5 / R@10 / MRR, hit@5 / hit@10, session R@10 / hit@10),
overall and per class. The embeddings cache is saved after each set (a loaded box may stop a
run halfway; the next one starts where it stopped).

Result (this branch, 8 sets, a loaded 2-core box): no cap in 13 of 13 folds (both schemes);
a cap costs memorybank and friends (their evidence sits in one session) far more than it
gives conversations' multi-hop and musique's session R@10. Stage cost of a cap: one
primary-key SELECT of the candidates' sessions and a pass over ≤ 30 ids (p50 +0.24 ms).

``--latency SET``: instead, the stage's whole ``rerank_learned.order`` (one search's second
stage, the real store of that set) with no cap and with a cap of 3, taking turns question by
question, warm (each question once before): p50 / p95 ms of each, and of the difference.

Usage: python bench/relevance_session_cap.py [--set NAME ...] [--cache FILE] [--json]
       python bench/relevance_session_cap.py --latency conversations
"""

from __future__ import annotations

import argparse
import json
import pickle
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import relevance_readings  # noqa: E402
from bench.relevance_ltr import Item, balanced, items_of, shortfall  # noqa: E402
from bench.relevance_sets import available_sets, load, minilm  # noqa: E402
from workbench.recall import rerank_learned, rerank_tokens  # noqa: E402

CAPS: tuple[int | None, ...] = (None, 2, 3, 4, 5)
FOLDS = 5
DEPTH = 30  # the rows relevance_ltr collects


def sessions_of(conn: Any) -> dict[int, str]:
    """``id -> session`` keyed as the stage keys it (project and session)."""
    sql = "SELECT id, content_session_id, project FROM observations"
    return {int(i): f"{p}\x00{s}" for i, s, p in conn.execute(sql)}


def capped_order(
    it: Item, model: rerank_learned.Weights, cap: int | None, session_of: Mapping[int, str]
) -> list[int]:
    ids, rows = it.rows[DEPTH]
    with_cap = rerank_learned.Weights(model.values, model.depth, model.demotion, model.pin_gap, cap)
    head = rerank_learned.ranked(with_cap, ids, rows, session_of)
    return head + [i for i in it.fused if i not in set(head)]


def pick(items: Sequence[Item], orders: Mapping[int | None, Sequence[Sequence[int]]]) -> int | None:
    """The cap with the least shortfall below the better part, then the best balanced mean,
    then the earlier in ``CAPS`` (no cap first)."""
    ranked = []
    for n, cap in enumerate(CAPS):
        ranked.append(
            (round(shortfall(items, orders[cap]), 4), -round(balanced(items, orders[cap]), 6), n)
        )
    return CAPS[min(ranked)[2]]


def held_out(
    items: Sequence[Item], orders: Mapping[int | None, Sequence[Sequence[int]]], scheme: str
) -> tuple[list[list[int]], list[int | None]]:
    if scheme == "leave one set out":
        names = sorted({it.set for it in items})
        folds = [[n for n, it in enumerate(items) if it.set == s] for s in names]
    else:
        idx = list(range(len(items)))
        random.Random(5).shuffle(idx)
        folds = [idx[k::FOLDS] for k in range(FOLDS)]
    out: list[list[int] | None] = [None] * len(items)
    chosen = []
    for fold in folds:
        held = set(fold)
        train = [n for n in range(len(items)) if n not in held]
        cap = pick([items[n] for n in train], {c: [o[n] for n in train] for c, o in orders.items()})
        chosen.append(cap)
        for n in fold:
            out[n] = list(orders[cap][n])
    return [o for o in out if o is not None], chosen


def table(
    items: Sequence[Item],
    variants: Mapping[str, Sequence[Sequence[int]]],
    sessions: Mapping[str, Mapping[int, str]],
) -> dict[str, Any]:
    """``{set: {variant: {class: {reading: mean}}}}`` (class "all" too)."""
    out: dict[str, Any] = {}
    for s in sorted({it.set for it in items}):
        idx = [n for n, it in enumerate(items) if it.set == s]
        out[s] = {}
        for label, orders in variants.items():
            per: dict[str, list[relevance_readings.Readings]] = {}
            for n in idx:
                r = relevance_readings.read(list(orders[n])[:50], items[n].gold, sessions[s])
                per.setdefault("all", []).append(r)
                per.setdefault(items[n].cls, []).append(r)
            out[s][label] = {c: relevance_readings.mean(rs) for c, rs in per.items()}
    return out


def line(r: Mapping[str, float | None]) -> str:
    def f(k: str) -> str:
        v = r[k]
        return "  -  " if v is None else f"{v:.3f}"

    return (
        f"{f('r5')} {f('r10')} {f('mrr')} {f('sess_r10')} | {f('hit5')} {f('hit10')} "
        f"{f('sess_hit10')}"
    )


def latency(name: str) -> None:
    """p50 / p95 ms of ``rerank_learned.order`` without and with a session cap (see above)."""
    import statistics

    from bench.relevance_rerank import collect

    token_table = rerank_tokens.load_static()
    model = minilm()
    shipped = rerank_learned.weights()
    models = {
        cap: rerank_learned.Weights(
            shipped.values, shipped.depth, shipped.demotion, shipped.pin_gap, cap
        )
        for cap in (None, 3)
    }
    times: dict[int | None, list[float]] = {cap: [] for cap in models}
    with tempfile.TemporaryDirectory() as tmp:
        loaded = load(name, Path(tmp), model)
        model.save()
        collected = collect(loaded)
        for c in collected:
            for cap, m in models.items():
                rerank_learned.order(loaded.conn, c.query, c.candidates, 30, token_table, m)
                started = time.perf_counter()
                rerank_learned.order(loaded.conn, c.query, c.candidates, 30, token_table, m)
                times[cap].append((time.perf_counter() - started) * 1000)
        loaded.store.close()
    extra = sorted(b - a for a, b in zip(times[None], times[3], strict=True))
    for cap, ts in times.items():
        ts.sort()
        print(
            f"{name}: stage, session cap {cap}: p50 {statistics.median(ts):.2f} ms,"
            f" p95 {ts[int(len(ts) * 0.95)]:.2f} ms ({len(ts)} questions)"
        )
    print(
        f"{name}: cap 3 minus none, per question: p50 {statistics.median(extra):.3f} ms,"
        f" p95 {extra[int(len(extra) * 0.95)]:.3f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--set", action="append", help="only these sets (default: every one)")
    parser.add_argument("--cache", type=Path, help="keep the collected rows in this pickle")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--latency", metavar="SET", help="time the stage with and without a cap")
    args = parser.parse_args()
    if args.latency:
        latency(args.latency)
        return
    reason = rerank_tokens.static_problem()
    if reason is not None:
        raise SystemExit(f"no static model for the learned stage's MaxSim: {reason}")
    token_table = rerank_tokens.load_static()
    model = minilm()
    here = available_sets()
    names = [n for n in args.set if n in here] if args.set else list(here)  # in the order asked
    items: list[Item] = []
    sessions: dict[str, dict[int, str]] = {}
    cached: dict[str, Any] = {}
    if args.cache is not None and args.cache.exists():
        cached = pickle.loads(args.cache.read_bytes())
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            if name in cached:
                got, sessions[name] = cached[name]
                items += got
                continue
            started = time.perf_counter()
            loaded = load(name, Path(tmp), model)
            model.save()  # the embeddings so far, whatever happens next
            got = items_of(loaded, token_table, None)
            sessions[name] = sessions_of(loaded.conn)
            loaded.store.close()
            items += got
            cached[name] = (got, sessions[name])
            if args.cache is not None:
                args.cache.write_bytes(pickle.dumps(cached))
            took = time.perf_counter() - started
            print(f"{name}: {len(got)} questions in {took:.0f} s", file=sys.stderr)
    shipped = rerank_learned.weights()
    orders = {
        cap: [capped_order(it, shipped, cap, sessions[it.set]) for it in items] for cap in CAPS
    }
    variants: dict[str, Sequence[Sequence[int]]] = {
        "fts": [it.fts for it in items],
        "vector": [it.vector for it in items],
        "hybrid": [it.fused for it in items],
        **{f"+learned cap {cap}": orders[cap] for cap in CAPS},
    }
    doc: dict[str, Any] = {"chosen": {}}
    for scheme in ("leave one set out", "5-fold"):
        held, chosen = held_out(items, orders, scheme)
        variants[f"+learned cap held out ({scheme})"] = held
        doc["chosen"][scheme] = chosen
    doc["every set"] = pick(items, orders)
    doc["tables"] = table(items, variants, sessions)
    doc["sets"] = dict(Counter(it.set for it in items))
    if args.json:
        print(json.dumps(doc, indent=2))
        return
    print(
        "per set, variant and class: share R@5 R@10 MRR sessR@10 | hit@5 hit@10 sessHit@10"
        " (cap rows other than 'held out' are in-sample for the cap)"
    )
    for s, by_variant in doc["tables"].items():
        print(f"-- {s} ({doc['sets'][s]} questions)")
        for label, classes in by_variant.items():
            print(f"   {label:<40} all        {line(classes['all'])}")
            for cls, r in classes.items():
                if (
                    cls != "all"
                    and label in ("hybrid", "+learned cap None")
                    or (cls != "all" and label.startswith("+learned cap held out"))
                ):
                    print(f"   {'':<40} {cls:<10} {line(r)}")
    for scheme, chosen in doc["chosen"].items():
        print(f"cap chosen per fold, {scheme}: {chosen}")
    print(f"cap chosen on every set at once: {doc['every set']}")


if __name__ == "__main__":
    main()
