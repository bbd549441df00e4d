"""Does a cheaper MiniLM (a 64-token cut, an int8 word-embedding table) hold recall? Prints it.

Issue 21 goal 2 wants full vectors sooner and a smaller service; two levers were measured for
speed and size last stop but never for recall, so neither was adopted:

- ``t64``: the ONNX tokenizer cuts a text at 64 tokens instead of 128 (+~70% texts/s on long
  texts: attention and the MatMuls scale with the length);
- ``table8``: the build also quantises the word-embedding ``Gather`` with ONNX Runtime's
  dynamic quantisation (one scale for the whole table); ``rows8``: the table as int8 with a
  scale per row (``onnx_export._quantise_word_table``, the build's default since). The model
  file falls from ~59 to ~23 MB, and so does what each process holding it maps;
- ``torch fp32``: the same weights unquantised, for scale: how far int8 had already moved.

Verdict of the first run (2-core box at load 15–20): ``rows8`` within 2 SE of the shipped build
on every set, mode and metric (largest: coding R@10 −0.042 ± 0.047, 3 of 72 questions; torch
fp32 against int8 moves meetings vector R@10 by −0.008 ± 0.006): adopted. ``t64`` costs
committee (long parliamentary turns) vector R@10 −0.054 ± 0.038: not adopted.

``rows8 t96`` (issue 21, stop 31; ``--variant "rows8 t128" --variant "rows8 t96" --baseline
"rows8 t128" --cv``, box at load 7-19): a 96-token cut keeps 0.76 of demo-shaped texts' tokens
against 0.87 at 128 (bench/embed_lengths.py), but friends hybrid MRR falls −0.010 ± 0.008
(outside 2 SE: the fusion chosen without friends moves) and committee vector R@10 −0.022 ±
0.024 sits at the edge; every other set, mode and metric within 2 SE. Not adopted.

Layer-drop students (issue 21 goal 2, stop 30): ``L3``/``L2`` keep MiniLM's first three/two
layers as they are (``onnx_export.build(layers=)``); ``L3 distil``/``L2 distil`` are those
students trained by ``bench/embed_student.py``. One run (``--baseline "rows8 t128"``, shipped
fusion defaults, box at load 2–13): the untrained students are far outside noise on every
set; vector R@10 L3 −0.06 (meetings) to −0.40 (memorybank), L2 −0.06 to −0.46; hybrid R@10
L3 −0.03 to −0.15 (coding), L2 −0.05 to −0.38 (coding).
With ``--cv`` (each set fused as chosen leaving it out, same run) hybrid R@10 falls by
−0.33 ± 0.11 (L3) / −0.38 ± 0.12 (L2) on coding and −0.10 ± 0.08 / −0.19 ± 0.10 on
conversations; on the four sets where full text leads, hybrid stays within 2 SE (meetings,
committee, memorybank, friends: −0.04 to +0.01). Their pooled vectors are a different
space (mean cosine to MiniLM's 0.21–0.23; a least-squares linear map onto MiniLM reaches only
0.82 on held-out texts). Not adopted; a student needs training (see embed_student.py).
Trained (stop 48: layers 0,4,5, 16,000 texts, one pass; ``L3 distil t128``): hybrid still
loses outside 2 SE on coding (R@10 −0.167), conversations (MRR −0.073), meetings (R@10 −0.031)
and musique (MRR −0.084). Not adopted; the figures are in embed_student.py.

``tuned t128`` (issue 21, stop 49): all six layers fine-tuned on QMSum train's query → span
pairs by ``bench/embed_tune.py``: nothing outside 2 SE against the shipped model on any set,
vector MRR up on meetings, memorybank and friends; the figures and the held-out run are in
embed_tune.py.
``rows8 t128 fused-ln`` (issue 21, stop 34): the shipped build with ONNX Runtime's
``SkipLayerNormalization`` fusion on, as the embedder ran before it turned it off
(``embed.UNFUSED``, ~17% less CPU a text); ``--variant "rows8 t128 fused-ln" --variant "rows8
t128" --baseline "rows8 t128 fused-ln" --cv``. The figures: the closing note of stop 34.

Every variant embeds the six relevance sets (``bench/relevance_sets.py``) through the real
``OnnxEmbedder``; the vectors are cached on disk under the variant's own name (the embedder's
``name`` carries the model's sha256 and the cut), so a second run costs seconds.

Nothing here is chosen on a set: the embedder has no parameter fitted to the data, so each set's
figures are held out by construction. Hybrid is fused with each fold's parameters chosen by
``bench/relevance_cv.py``'s grid, leaving the reported set out (``--cv``; otherwise with the
shipped defaults, ``FusionParams()``). Per set and variant: R@5 / R@10 / MRR of vector alone and
of hybrid, and the difference to the shipped build (``int8 t128``) with twice its standard error
over questions (paired): "within noise" means |Δ| < 2 SE. The last line per variant counts its
cells (set × vector/hybrid × R@10/MRR) more than 2 SE below the baseline, and names those
Holm's method finds worse with a family-wise error of 0.05 (``holm_worse``): the adoption
rule for a retrained model since stop 52 (``bench/embed_tune.py``).

Usage: python bench/embed_recall.py [--variant NAME ...] [--set NAME ...] [--cv]
       [--baseline NAME]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import relevance_cv  # noqa: E402
from bench.relevance_sets import (  # noqa: E402
    CachedEmbedder,
    available_sets,
    load,
    minilm,
    onnx_cached,
)
from workbench.recall.fusion import FusionParams  # noqa: E402

VARIANT_DIR = Path(tempfile.gettempdir()) / "workbench-bench-onnx-variants"
ROWS8 = ("MatMul", "WordTable")
# name → (quantised op types, token cut, encoder layers kept: None = all six)
VARIANTS: dict[str, tuple[tuple[str, ...], int, int | None]] = {
    "int8 t128": (("MatMul",), 128, None),  # the shipped build before this bench
    "int8 t64": (("MatMul",), 64, None),
    "table8 t128": (("MatMul", "Gather"), 128, None),  # ONNX Runtime's Gather: one scale
    "table8 t64": (("MatMul", "Gather"), 64, None),
    "rows8 t128": (ROWS8, 128, None),  # the word table int8 with a scale per row (shipped)
    "rows8 t96": (ROWS8, 96, None),  # issue 21 stop 31: a cut between 64 (lost) and 128
    "L3 rows8 t128": (ROWS8, 128, 3),  # the first three layers (a layer-drop student)
    "L2 rows8 t128": (ROWS8, 128, 2),
}
# the shipped build run with ONNX Runtime's SkipLayerNormalization fusion on, as the embedder
# ran it before issue 21 stop 34 (``embed.UNFUSED``): does the unfused layer norm keep recall?
FUSED_LN = "rows8 t128 fused-ln"
# name → layers of a student trained by bench/embed_student.py (it must have run first)
STUDENTS: dict[str, int] = {"L3 distil t128": 3, "L2 distil t128": 2}
# all six layers fine-tuned on QMSum train's question → span pairs by bench/embed_tune.py
TUNED = "tuned t128"
TUNED_MIXED = "tuned qmsum+friends t128"
TUNED_MIXED2 = "tuned 2qmsum+friends t128"  # QMSum keeps its 600 steps, FriendsQA adds 300
TUNED_ON = {
    TUNED: ("qmsum",),
    TUNED_MIXED: ("qmsum", "friends"),
    TUNED_MIXED2: ("qmsum:2", "friends"),
}  # embed_tune.py --data
BASELINE = "int8 t128"
TORCH = "torch fp32"  # the same weights unquantised: how far int8 already moved recall


def model_dir(ops: tuple[str, ...], layers: int | None = None) -> Path:
    """A complete ONNX artifact quantising ``ops`` (of the first ``layers`` layers), built once
    under ``VARIANT_DIR``."""
    from workbench.recall import onnx_export

    target = VARIANT_DIR / "-".join(o.lower() for o in ops)
    if layers is not None:
        target = target.with_name(f"{target.name}-l{layers}")
    if onnx_export.read_manifest(target) is None:
        onnx_export.build(target, ops=ops, layers=layers)
    return target


def student_dir(layers: int) -> Path:
    """Where ``bench/embed_student.py`` writes its distilled ``layers``-layer student."""
    return VARIANT_DIR / f"distil-l{layers}"


def tuned_dir(data: Sequence[str] = ("qmsum",)) -> Path:
    """Where ``bench/embed_tune.py`` writes its MiniLM fine-tuned on ``data``'s pairs
    (``tuned``: QMSum's alone, the shipped model's recipe)."""
    parts = [d.replace(":", "x") for d in data]
    return VARIANT_DIR / ("tuned" if parts == ["qmsum"] else "-".join(["tuned", *parts]))


def embedder(name: str) -> CachedEmbedder:
    from workbench.recall import embed
    from workbench.recall.onnx_export import read_manifest

    if name == TORCH:
        return minilm()
    unfused = embed.UNFUSED
    if name == FUSED_LN:
        name, unfused = "rows8 t128", ()
    if name in STUDENTS:
        path, cut = student_dir(STUDENTS[name]), 128
        if read_manifest(path) is None:
            sys.exit(f"no student at {path}: run bench/embed_student.py --layers {STUDENTS[name]}")
    elif name in TUNED_ON:
        path, cut = tuned_dir(TUNED_ON[name]), 128
        if read_manifest(path) is None:
            data = ",".join(TUNED_ON[name])
            sys.exit(f"no fine-tuned model at {path}: run bench/embed_tune.py --data {data}")
    else:
        ops, cut, layers = VARIANTS[name]
        path = model_dir(ops, layers)
    return onnx_cached(path, unfused, cut)


Rows = list[relevance_cv.Row]


def hybrid_rows(cs: Sequence[relevance_cv.Case], names: Sequence[str], cv: bool) -> Rows:
    """Hybrid's per-question rows: each set fused with parameters chosen without it (``cv``),
    or with the shipped defaults."""
    if not cv:
        return relevance_cv.rows_of(cs, relevance_cv.fused(cs, FusionParams()))
    table = relevance_cv.Table(cs)
    out: dict[int, relevance_cv.Row] = {}
    for name in names:
        train = [i for i, c in enumerate(cs) if c.set != name]
        params, _ = table.choose(train)
        rows = table.rows[table.points.index(params)]
        for i, c in enumerate(cs):
            if c.set == name:
                out[i] = rows[i]
    return [out[i] for i in range(len(cs))]


def paired(base: Rows, other: Rows, idx: Sequence[int], k: int) -> tuple[float, float]:
    """Mean difference (other − base) of metric ``k`` over ``idx`` and its standard error."""
    diffs = [other[i][k] - base[i][k] for i in idx]
    mean = sum(diffs) / len(diffs)
    var = sum((d - mean) ** 2 for d in diffs) / max(len(diffs) - 1, 1)
    return mean, math.sqrt(var / len(diffs))


def worse_p(mean: float, se: float) -> float:
    """One-sided p-value of "worse than the baseline" for a paired mean difference and its
    standard error (normal approximation; a difference with no spread is certain)."""
    if se <= 0:
        return 0.0 if mean < 0 else 1.0 if mean > 0 else 0.5
    return statistics.NormalDist().cdf(mean / se)


def holm_worse(cells: Sequence[tuple[str, float, float]], alpha: float = 0.05) -> list[str]:
    """The cells (``label, mean, se``) Holm's step-down method finds worse than the baseline
    with family-wise error ``alpha`` over all of them.

    Why: an adoption rule of "no cell more than 2 SE below" over 32 cells (8 sets × 2 modes ×
    R@10 and MRR) is broken by chance often even by a model as good as the baseline (stop 52).
    Holm's method keeps the chance that any flagged cell is a false alarm at ``alpha``."""
    ranked = sorted((worse_p(mean, se), label) for label, mean, se in cells)
    worse: list[str] = []
    for n, (p, label) in enumerate(ranked):
        if p > alpha / (len(ranked) - n):
            break
        worse.append(label)
    return worse


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--variant", choices=[*VARIANTS, FUSED_LN, *STUDENTS, *TUNED_ON, TORCH], action="append"
    )
    parser.add_argument("--set", action="append", help="only these sets (default: every one)")
    parser.add_argument("--cv", action="store_true", help="hybrid fused per held-out set")
    parser.add_argument(
        "--baseline",
        choices=[*VARIANTS, FUSED_LN, *TUNED_ON],
        default=BASELINE,
        help="the Δ columns' reference",
    )
    parser.add_argument(
        "--embed-only", action="store_true", help="fill the variants' caches only (in parallel)"
    )
    args = parser.parse_args()
    chosen = args.variant or list(VARIANTS)
    if args.embed_only:
        for variant in chosen:
            model = embedder(variant)
            with tempfile.TemporaryDirectory() as tmp:
                for name in available_sets():
                    load(name, Path(tmp), model).store.close()
            model.save()
            print(f"{variant}: {model.embedded} texts in {model.seconds:.0f} s", file=sys.stderr)
        return
    baseline = args.baseline
    if baseline not in chosen:
        chosen.insert(0, baseline)
    names = [n for n in available_sets() if not args.set or n in args.set]
    results: dict[str, dict[str, Rows]] = {}
    sets_of: list[str] = []
    for variant in chosen:
        model = embedder(variant)
        started = time.perf_counter()
        every: list[relevance_cv.Case] = []
        with tempfile.TemporaryDirectory() as tmp:
            for name in names:
                loaded = load(name, Path(tmp), model)
                every += relevance_cv.cases(loaded)
                loaded.store.close()
        model.save()
        rate = model.embedded / model.seconds if model.seconds else float("nan")
        print(
            f"{variant}: {model.name}, {model.embedded} texts embedded now "
            f"({rate:.1f} texts/s, 2 threads, box shared), {time.perf_counter() - started:.0f} s",
            file=sys.stderr,
            flush=True,
        )
        sets_of = [c.set for c in every]
        results[variant] = {
            "fts": relevance_cv.rows_of(every, [[i for i, _ in c.text] for c in every]),
            "vector": relevance_cv.rows_of(every, [[i for i, _ in c.vector] for c in every]),
            "hybrid": hybrid_rows(every, names, args.cv),
        }
    fusion = "each set fused as chosen leaving it out" if args.cv else "shipped fusion defaults"
    print(f"R@5 / R@10 / MRR per set ({fusion}); Δ vs {baseline} ± 2 SE (paired, by question)")
    cells: dict[str, list[tuple[str, float, float]]] = {v: [] for v in chosen if v != baseline}
    for name in names:
        idx = [i for i, s in enumerate(sets_of) if s == name]
        fts = results[baseline]["fts"]
        means = [sum(fts[i][k] for i in idx) / len(idx) for k in range(3)]
        print(f"\n{name} ({len(idx)} questions)   fts {'/'.join(f'{m:.3f}' for m in means)}")
        for variant in chosen:
            shown_modes = []
            for mode in ("vector", "hybrid"):
                rows = results[variant][mode]
                base = results[baseline][mode]
                means = [sum(rows[i][k] for i in idx) / len(idx) for k in range(3)]
                shown = "/".join(f"{m:.3f}" for m in means)
                if variant != baseline:
                    (d10, e10), (dmrr, emrr) = (paired(base, rows, idx, k) for k in (1, 2))
                    shown += f" (R@10 {d10:+.3f}±{2 * e10:.3f}, MRR {dmrr:+.3f}±{2 * emrr:.3f})"
                    cells[variant] += [
                        (f"{name} {mode} R@10", d10, e10),
                        (f"{name} {mode} MRR", dmrr, emrr),
                    ]
                shown_modes.append(f"{mode} {shown}")
            print(f"  {variant:12s} " + " | ".join(shown_modes))
    for variant, mine in cells.items():
        beyond = [f"{label} {d:+.3f}±{2 * e:.3f}" for label, d, e in mine if d < -2 * e]
        worse = holm_worse(mine)
        print(
            f"\n{variant} vs {baseline} over {len(mine)} cells: {len(beyond)} more than 2 SE below"
            f"{': ' + '; '.join(beyond) if beyond else ''}; worse by Holm (one-sided, family"
            f" α 0.05): {', '.join(worse) if worse else 'none'}"
        )


if __name__ == "__main__":
    main()
