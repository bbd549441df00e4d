"""Can a 2–3-layer student of the shipped MiniLM embed fast enough *and* hold recall? Builds one.

Issue 21 goal 2: vectors for a 100k history within 5 minutes of import on 2 cores, i.e.
~330 texts/s. The int8 MiniLM costs ~10 ms of CPU per text of a real history (~100 texts per
CPU-second on this box, one thread), so even both cores fully used need ~8 minutes: only a
smaller model can meet the goal. This bench makes the candidates from the shipped weights,
offline, and writes them as ONNX artifacts that ``bench/embed_recall.py`` measures:

- ``drop``: the first ``--layers`` layers of MiniLM as they are (``onnx_export.build(layers=)``);
- ``distil``: the same student trained to reproduce the int8 MiniLM's normalised sentence
  vectors (cosine loss, mean pooling over the mask), on texts that are on every install and in
  none of the relevance sets: the docstrings of this Python's standard library (``corpus``).
  Torch on the CPU, fixed seed, one pass in a fixed order.

Speed (``--speed``, 600 texts of the seeded 100k store, mean 298 characters, one thread, CPU
time; one run at load ~2, another at ~17): the int8 MiniLM 104 / 91 texts per CPU-second, L3
192 / 172, L2 274 / 252. So 100k texts cost ~16 CPU-minutes with MiniLM (≥ 8 min on two
idle cores: the 5-minute goal cannot be met by scheduling alone), ~9 with L3, ~6 with L2.

At 100k through the real worker (``bench/vectors_catch_up.py --observations 100000
--burners --before-ref HEAD --after-models DIR`` with the untrained L2 as the model, 420 s
cap, sides one after the other at load ~15–20): MiniLM 8.5 texts/s, 96,416 behind at the
cap; L2 36.0 texts/s, 84,896 behind; neither reached full vectors. The load moved between the
sides (the import alone took 392 s then 238 s), so the CPU-time ratio above (~2.7×) is the
figure to trust, not 4.2×.

First run of the distillation (stop 30, 12,000 docstring texts, batch 32, L3): the teacher's
vectors took ~10 min and a training step ~21 s on the box at load ~20 (seven helpers'
benches); the loss (1 − cosine) fell 0.78 → 0.52 in 40 of 375 steps, and the run was stopped
there: a full pass would have taken over 2 h here, and even on an idle box (~2–3 s per
step, est.) it is far past what an install may take. The pipeline was checked end to end on
64 texts (built, loaded by ``OnnxEmbedder``).

Trained students, measured (issue 21, stop 48; an idle 2-core box, ~1.3 s a step of 32):

- Which layers to start from (``--picks``; untrained, mean cosine of the pooled vector to the
  full model's on 600 meeting turns no run trains on): first three 0,1,2 0.312; 0,2,4 0.384;
  1,3,5 0.429; 0,1,5 0.506; 0,2,5 0.565; 0,3,5 0.616; **0,4,5 0.674**; 0,5 0.386. The first
  layer (the word pieces in context) and the last two (the space the pooled vector lives in)
  matter most.
- Training texts (``--corpus mixed``): 8,000 standard-library docstrings and 8,000 turns of
  QMSum's train split (meetings no relevance set reads). One pass, 500 steps:
  - first three layers, rate 5e-5: loss 0.60 → 0.40 (≈ 0.6 cosine), 751 s;
  - layers 0,4,5, rate 1e-4: loss 0.23 at step 20, flat at ~0.15 from step 300 on, 701 s.
    On the seeded 100k store's texts: mean cosine 0.851 to MiniLM's, 99 against 54 texts per
    CPU-second (×1.83, one thread, ``--speed``).
- Recall of the 0,4,5 student (``bench/embed_recall.py --variant "rows8 t128" --variant "L3
  distil t128" --baseline "rows8 t128" --cv``, eight sets; Δ hybrid against MiniLM ± 2 SE):
  coding R@10 −0.167 ± 0.097, MRR −0.106 ± 0.063; conversations MRR −0.073 ± 0.071;
  meetings R@10 −0.031 ± 0.016; musique R@10 −0.058 ± 0.044, MRR −0.084 ± 0.058 (vector
  alone −0.178 MRR); committee, memorybank, friends, hotpot within noise. **Not adopted**:
  it loses outside noise on four of eight sets, and ×1.83 would still not give full vectors
  for 100k in five minutes beside two burners (~820 s with MiniLM, so ~450 s). A student
  that keeps recall needs far more than 16,000 texts and one pass; at ~1.3 s a step that is
  hours of an idle box, not an install step.
- The same student on 35,305 texts (every docstring, 23,000 turns; 1,104 steps, 2,219 s):
  loss 0.157 at step 420 (the 16k run's at that step), 0.124 at the end; mean cosine to
  MiniLM 0.863 against 0.851. Recall not measured. 2.2× the text moved it 0.012 closer.

Nothing is chosen on a relevance set: the sets only measure (``bench/embed_recall.py
--variant "L3 distil t128"``), so every recall figure is held out by construction.

Usage: python bench/embed_student.py [--layers 3 | --keep 0,4,5] [--texts 8000] [--epochs 1]
       [--corpus stdlib|mixed] [--rate 5e-5]
       python bench/embed_student.py --picks 0,1,2 0,4,5 ...
       python bench/embed_student.py --store DATA/workbench.db --speed MODEL_DIR ...
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.embed_recall import VARIANT_DIR, student_dir  # noqa: E402

NAMES = ("input_ids", "attention_mask", "token_type_ids", "last_hidden_state")


def corpus(limit: int) -> list[str]:
    """Docstring paragraphs of the standard library (sorted files, 40–800 characters, unique)."""
    lib = Path(sys.base_prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    seen: dict[str, None] = {}
    for path in sorted(lib.rglob("*.py")):
        if "site-packages" in path.parts or "test" in path.parts or "tests" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
                doc = ast.get_docstring(node)
                for para in (doc or "").split("\n\n"):
                    text = " ".join(para.split())
                    if 40 <= len(text) <= 800:
                        seen.setdefault(text, None)
        if len(seen) >= limit:
            break
    return list(seen)[:limit]


def spoken(turn: dict[str, Any]) -> str | None:
    """A QMSum turn's words, its disfluency marks gone and its spaces collapsed; None when it
    is too short to mean anything alone ("Okay .") or too long for one memory (40-800)."""
    text = " ".join(str(turn.get("content") or "").replace("{disfmarker}", "").split())
    return text if 40 <= len(text) <= 800 else None


def meeting_turns(limit: int, qmsum: Path | None = None) -> list[str]:
    """Turns of QMSum's *train* split (40–800 characters, unique, files sorted): dialogue like
    a memory's, from meetings no relevance set reads (``meetings`` and ``committee`` read the
    test and val splits), so a student trained on them is still measured on held-out text.
    ``qmsum``: QMSum's ``data/ALL`` (default: where ``relevance_set_qmsum`` reads it)."""
    from bench.relevance_set_qmsum import DEFAULT_PATH

    root = qmsum or DEFAULT_PATH
    seen: dict[str, None] = {}
    for path in sorted((root / "train").glob("*.json")):
        for turn in json.loads(path.read_text(encoding="utf-8")).get("meeting_transcripts", []):
            text = spoken(turn)
            if text is not None:
                seen.setdefault(text, None)
        if len(seen) >= limit:
            break
    if not seen:
        sys.exit(f"no QMSum train split at {root / 'train'} (see relevance_set_qmsum)")
    return list(seen)[:limit]


def mixed(limit: int, qmsum: Path | None = None) -> list[str]:
    """Half standard-library docstrings (code), half meeting turns (dialogue), interleaved."""
    code, talk = corpus(limit // 2), meeting_turns(limit - limit // 2, qmsum)
    out = [t for pair in zip(code, talk, strict=False) for t in pair]
    return out + code[len(talk) :] + talk[len(code) :]


def padded_tokenizer() -> Any:
    """MiniLM's tokenizer cut at 128 pieces (the shipped embedder's cut), padding a batch."""
    from tokenizers import Tokenizer

    from workbench.recall.embed import ONNX_MAX_TOKENS, minilm_dir

    tokenizer = Tokenizer.from_file(str(minilm_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(max_length=ONNX_MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def pooled(model: Any, texts: list[str]) -> Any:
    """``model``'s normalised mean-pooled vectors of ``texts`` (no gradient), as torch rows."""
    import torch

    encoded = padded_tokenizer().encode_batch(texts)
    mask = torch.tensor([e.attention_mask for e in encoded])
    with torch.no_grad():
        hidden = model(input_ids=torch.tensor([e.ids for e in encoded]), attention_mask=mask)
    return mean_pooled(hidden.last_hidden_state, mask)


def mean_pooled(hidden: Any, mask: Any) -> Any:
    """The sentence vectors MiniLM gives: hidden states averaged over the mask, normalised."""
    import torch

    weights = mask.unsqueeze(-1).float()
    vectors = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(vectors, dim=1)


def kept_layers(keep: list[int]) -> Any:
    """MiniLM (torch) with only its layers ``keep``, in that order: an untrained student."""
    import torch
    from transformers import AutoModel

    from workbench.recall.embed import minilm_dir

    model = AutoModel.from_pretrained(str(minilm_dir()))
    model.encoder.layer = torch.nn.ModuleList([model.encoder.layer[i] for i in keep])
    model.config.num_hidden_layers = len(keep)
    return model


def compare_picks(picks: list[list[int]], count: int = 600) -> None:
    """Mean cosine of each untrained pick's pooled vectors to the full model's, on ``count``
    meeting turns past the first 20,000 (the mixed corpus trains on the first ones)."""
    import torch

    torch.set_num_threads(1)
    texts = meeting_turns(20_000 + count)[20_000:]
    full = pooled(kept_layers(list(range(6))).eval(), texts)
    for keep in picks:
        cosine = (pooled(kept_layers(keep).eval(), texts) * full).sum(1).mean().item()
        print(f"layers {','.join(map(str, keep))}: mean cosine to the full model {cosine:.3f}")


def layer_list(text: str) -> list[int]:
    """``0,4,5`` → ``[0, 4, 5]``: the argument type of ``--keep`` and ``--picks``."""
    return [int(i) for i in text.split(",")]


def teacher_vectors(texts: list[str]) -> Any:
    from workbench.recall.embed import OnnxEmbedder

    return OnnxEmbedder(threads=2).embed(texts)


def distil(
    keep: list[int], texts: list[str], targets: Any, epochs: int, batch: int, rate: float
) -> Any:
    """MiniLM's layers ``keep`` (in order), trained so their pooled vector meets the teacher's."""
    import torch

    torch.manual_seed(0)
    torch.set_num_threads(2)
    model = kept_layers(keep)
    model.train()
    tokenizer = padded_tokenizer()
    optimiser = torch.optim.AdamW(model.parameters(), lr=rate, weight_decay=0.01)
    goal = torch.tensor(targets, dtype=torch.float32)
    steps = epochs * ((len(texts) + batch - 1) // batch)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: max(0.0, 1 - s / max(steps, 1))
    )
    order = list(range(len(texts)))
    generator = torch.Generator().manual_seed(0)
    started, step = time.monotonic(), 0
    for _epoch in range(epochs):
        order = torch.randperm(len(texts), generator=generator).tolist()
        for first in range(0, len(order), batch):
            chunk = order[first : first + batch]
            encoded = tokenizer.encode_batch([texts[i] for i in chunk])
            ids = torch.tensor([e.ids for e in encoded])
            mask = torch.tensor([e.attention_mask for e in encoded])
            hidden = model(input_ids=ids, attention_mask=mask).last_hidden_state
            pooled = mean_pooled(hidden, mask)
            loss = (1 - (pooled * goal[chunk]).sum(1)).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            step += 1
            if step % 20 == 0:
                print(
                    f"step {step}/{steps} loss {loss.item():.4f} "
                    f"{time.monotonic() - started:.0f} s",
                    file=sys.stderr,
                    flush=True,
                )
    model.eval()
    return model


def save_onnx(model: Any, target: Path, recipe: dict[str, Any]) -> None:
    """Export like the shipped build (encoder only), quantise the same way, write a manifest."""
    import torch

    from workbench.recall import onnx_export
    from workbench.recall.embed import minilm_dir

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    with onnx_export.building(target) as work:
        fp32 = work / "fp32.onnx"
        ids = torch.full((2, 16), 1000, dtype=torch.long)
        mask = torch.ones((2, 16), dtype=torch.long)
        axes = {0: "batch", 1: "sequence"}
        with torch.no_grad():
            torch.onnx.export(
                Encoder(),
                (ids, mask, torch.zeros_like(ids)),
                str(fp32),
                input_names=list(NAMES[:3]),
                output_names=[NAMES[3]],
                dynamic_axes=dict.fromkeys(
                    ("input_ids", "attention_mask", "token_type_ids", "last_hidden_state"), axes
                ),
                opset_version=onnx_export.OPSET,
                dynamo=False,
            )
        onnx_export._quantise(fp32, work / onnx_export.MODEL_FILE, onnx_export.QUANTISED_OPS)
        fp32.unlink()
        shutil.copyfile(
            minilm_dir() / onnx_export.TOKENIZER_FILE, work / onnx_export.TOKENIZER_FILE
        )
        manifest = {
            "format": onnx_export.FORMAT,
            "name": "minilm-student",
            "sha256": onnx_export.sha256_file(work / onnx_export.MODEL_FILE),
            **recipe,
        }
        (work / onnx_export.MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")


def store_texts(database: Path, count: int) -> list[str]:
    """The embedded texts of ``count`` observations of a real store, spread over its ids."""
    import sqlite3

    from workbench.recall.vectors import embed_text

    with sqlite3.connect(f"file:{database}?mode=ro", uri=True) as connection:
        connection.row_factory = sqlite3.Row
        rows = connection.execute(
            "SELECT title, subtitle, narrative, facts, concepts FROM observations "
            "WHERE id % 97 = 0 ORDER BY id LIMIT ?",
            (count,),
        ).fetchall()
    return [embed_text(row) for row in rows]


def speed(database: Path, models: list[Path], count: int) -> None:
    """Texts per CPU-second of each model (one thread) on ``count`` texts of a real store.

    CPU time, not wall: on a box shared with other benches wall time measures the queue."""
    from workbench.recall.embed import OnnxEmbedder

    texts = store_texts(database, count)
    mean = sum(map(len, texts)) / max(len(texts), 1)
    print(f"{len(texts)} texts of {database} (mean {mean:.0f} characters), one thread")
    reference = None
    for path in models:
        model = OnnxEmbedder(path=path, threads=1)
        model.embed(texts[:8])
        started = time.process_time()
        vectors = model.embed(texts)
        cpu = time.process_time() - started
        line = f"{path.name}: {len(texts) / cpu:.0f} texts per CPU-second"
        if reference is None:
            reference = vectors
        else:
            line += f", mean cosine to the first model {(reference * vectors).sum(1).mean():.3f}"
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--speed",
        type=Path,
        nargs="+",
        metavar="MODEL_DIR",
        help="only measure these built models' texts per CPU-second (see --store)",
    )
    parser.add_argument("--store", type=Path, help="a workbench.db whose texts --speed embeds")
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument(
        "--keep",
        type=layer_list,
        help="which of MiniLM's six layers the student starts from, e.g. 0,4,5 "
        "(default: the first --layers)",
    )
    parser.add_argument("--rate", type=float, default=5e-5, help="AdamW's learning rate")
    parser.add_argument(
        "--picks",
        type=layer_list,
        nargs="+",
        metavar="LAYERS",
        help="only print how close untrained students of these layers (0,4,5 …) start",
    )
    parser.add_argument("--texts", type=int, default=8000)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument(
        "--corpus",
        choices=("stdlib", "mixed"),
        default="stdlib",
        help="training texts: stdlib docstrings, or those and QMSum train turns (mixed)",
    )
    args = parser.parse_args()
    if args.picks:
        compare_picks(args.picks)
        return
    if args.speed:
        if args.store is None:
            parser.error("--speed needs --store PATH/workbench.db")
        speed(args.store, args.speed, 600)
        return
    started = time.monotonic()
    texts = corpus(args.texts) if args.corpus == "stdlib" else mixed(args.texts)
    print(f"{len(texts)} corpus texts", file=sys.stderr, flush=True)
    cache = VARIANT_DIR / f"teacher-{args.corpus}-{len(texts)}.npy"
    if cache.exists():
        import numpy as np

        targets = np.load(cache)
    else:
        import numpy as np

        targets = teacher_vectors(texts)
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, targets)
    print(f"teacher vectors after {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
    keep = args.keep or list(range(args.layers))
    model = distil(keep, texts, targets, args.epochs, args.batch, args.rate)
    target = student_dir(len(keep))
    save_onnx(
        model,
        target,
        {
            "layers": len(keep),
            "keep": keep,
            "rate": args.rate,
            "texts": len(texts),
            "corpus": args.corpus,
            "epochs": args.epochs,
            "batch": args.batch,
        },
    )
    print(f"{target} after {time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    main()
