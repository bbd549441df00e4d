"""Drop the attention softmaxes' NaN guards from the int8 MiniLM graph: same outputs, less CPU.

Why: torch's export of BERT's attention (the scaled-dot-product path) wraps each of the six
softmaxes in ``Where(IsNaN(p), 0, p)``: two more passes over every head's L×L scores, 11% of a
batch's CPU at 100 tokens on one thread (issue 21: full vectors for a 100k history within 5
minutes on 2 cores). A softmax row is NaN only when every one of its scores is -inf, that is
when the attention mask masks every key of a text. ``OnnxEmbedder`` never feeds such a row:
each text starts with [CLS], whose mask is always 1. So without the guards every output is the
same bits.

The proof is checked, not assumed: ``drop_nan_guards`` runs the guarded and the cleaned graph
on probe batches shaped as the embedder sends them (1 to 128 tokens, padded rows) and keeps
the cleaned one only if every output is equal; otherwise the model is left as exported.

``onnx`` and ``numpy`` are imported inside (an install step, never at search time).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from workbench.recall.rerank_tokens import CLS  # every text the embedder feeds starts with it

# (texts, longest) of the probe batches: a one-token batch, short, medium and the 128 cut
PROBES = ((1, 1), (1, 3), (4, 17), (3, 64), (2, 128))


def guards(graph: Any) -> dict[str, str]:
    """``{guard output: softmax output}`` for each ``Where(IsNaN(p), c, p)`` on a ``Softmax``."""
    made_by = {out: node for node in graph.node for out in node.output}
    found: dict[str, str] = {}
    for node in graph.node:
        if node.op_type != "Where" or len(node.input) != 3:
            continue
        test = made_by.get(node.input[0])
        kept = node.input[2]
        if (
            test is not None
            and test.op_type == "IsNaN"
            and test.input[0] == kept
            and kept in made_by
            and made_by[kept].op_type == "Softmax"
        ):
            found[node.output[0]] = kept
    return found


def _without_guards(model: Any) -> int:
    """Rewire each guard's readers to its softmax; drop the guard, then any ``IsNaN`` left
    with no reader."""
    graph = model.graph
    outputs = {out.name for out in graph.output}
    rewired = {guard: p for guard, p in guards(graph).items() if guard not in outputs}
    if not rewired:
        return 0
    kept = [node for node in graph.node if node.output[0] not in rewired]
    for node in kept:
        for position, name in enumerate(node.input):
            if name in rewired:
                node.input[position] = rewired[name]
    read = {name for node in kept for name in node.input} | outputs
    kept = [node for node in kept if node.op_type != "IsNaN" or node.output[0] in read]
    del graph.node[:]
    graph.node.extend(kept)
    return len(rewired)


def probe_feeds() -> list[dict[str, Any]]:
    """Batches as ``OnnxEmbedder`` feeds them: [CLS] first, rows padded to the longest."""
    import numpy as np

    rng = np.random.default_rng(21)
    feeds = []
    for rows, longest in PROBES:
        ids = rng.integers(1000, 30000, (rows, longest)).astype(np.int64)
        ids[:, 0] = CLS
        mask = np.ones((rows, longest), dtype=np.int64)
        for row in range(1, rows):
            mask[row, int(rng.integers(1, longest + 1)) :] = 0
        ids[mask == 0] = 0
        feeds.append({"input_ids": ids, "attention_mask": mask, "token_type_ids": 0 * ids})
    return feeds


def same_outputs(first: Path, second: Path) -> bool:
    """Whether two models give the same bits on every probe batch, as the embedder runs them."""
    import numpy as np

    from workbench.recall.embed import onnx_session

    one, other = onnx_session(first), onnx_session(second)
    for feed in probe_feeds():
        got, want = one.run(None, feed), other.run(None, feed)
        if len(got) != len(want):
            return False
        if not all(np.array_equal(a, b) for a, b in zip(got, want, strict=True)):
            return False
    return True


def drop_nan_guards(model_path: Path) -> int:
    """Drop the guards from the model at ``model_path`` in place; the number dropped.

    0 when there are none, or when the cleaned graph's outputs differ on a probe batch (then
    the file is left as it was: never a faster model with other vectors).
    """
    import onnx

    model = onnx.load(str(model_path))
    dropped = _without_guards(model)
    if not dropped:
        return 0
    handle, name = tempfile.mkstemp(suffix=".onnx", dir=model_path.parent)
    os.close(handle)
    cleaned = Path(name)
    try:
        onnx.checker.check_model(model)
        onnx.save(model, str(cleaned))
        if not same_outputs(model_path, cleaned):
            return 0
        os.replace(cleaned, model_path)
    finally:
        cleaned.unlink(missing_ok=True)
    return dropped
