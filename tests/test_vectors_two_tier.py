"""The two-tier vector index: every memory searchable by meaning at once, upgraded later.

Real service (``make_service``), real embedding worker process, real models built by the CLI
(``onnx_model`` and ``static_model`` in tests/onnx_model.py). The worker is paused with
SIGSTOP so MiniLM falls behind, as it does after an import of a long history or under a
burst on a busy machine: the static tier must hold what MiniLM lacks, searchable, and let go
of each memory once its MiniLM vector lands. Without the static model the service degrades
to today's behaviour and says why.
"""

from __future__ import annotations

import os
import signal
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service
from tests.test_embed_worker import first_pass_done, running_worker, wait_vectors

pytestmark = pytest.mark.slow

OLD = [
    ("Stripe webhook retries caused duplicate refunds", "Added idempotency keys per event."),
    ("Multi-stage Docker build", "A slim runtime stage cut the image to 180 MB."),
]
NEW = [
    ("Pillow images not closed in thumbnail worker", "RSS grew to 3 GB over a day."),
    ("Websocket dropped behind load balancer", "Heartbeat ping every 25s fixed it."),
    ("AWS key committed in .env.example", "Rotated the key and added gitleaks."),
]


def start(make_service: Any, onnx_model: Path, static_dir: Path) -> Service:
    svc: Service = make_service(
        WORKBENCH_EMBEDDER="minilm",
        WORKBENCH_ONNX_MODEL_DIR=str(onnx_model),
        WORKBENCH_STATIC_MODEL_DIR=str(static_dir),
    )
    wait_vectors(svc, first_pass_done)
    return svc


def save(svc: Service, notes: list[tuple[str, str]]) -> None:
    for title, text in notes:
        status, body = svc.post("/api/memory/save", {"title": title, "text": text, "project": "p"})
        assert status == 200, body


def top_by_meaning(svc: Service, query: str) -> str:
    params = urllib.parse.urlencode({"query": query, "mode": "vector", "format": "json"})
    status, found = svc.get(f"/api/search?{params}")
    assert status == 200, found
    assert found["observations"], found
    return str(found["observations"][0]["title"])


@contextmanager
def minilm_paused(svc: Service) -> Iterator[None]:
    """MiniLM's worker stopped (SIGSTOP) for the block, so new memories wait for it as under
    load (the static tier, when there is one, covers them); resumed (SIGCONT) however the block
    ends, so a failing assert never leaves a stopped process behind. With no worker running
    (nothing was behind) ``running_worker`` starts one by saving ``WARM``."""
    pid = running_worker(svc)
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_memories_minilm_has_not_reached_are_found_by_the_static_tier_then_upgraded(
    make_service: Any, onnx_model: Path, static_model: Path
) -> None:
    svc = start(make_service, onnx_model, static_model)
    save(svc, OLD)
    wait_vectors(svc, lambda v: v["worker"]["embedded"] >= len(OLD) and v["behind"] == 0)
    with minilm_paused(svc):
        save(svc, NEW)
        vectors = wait_vectors(svc, lambda v: v["staticIndexed"] == len(NEW))
        assert vectors["behind"] == len(NEW)  # MiniLM has none of them
        assert vectors["unsearchable"] == 0  # but every memory has a vector in some tier
        # One ranking across both tiers: static-tier memories and MiniLM ones.
        assert top_by_meaning(svc, "thumbnail images never closed, memory grew") == NEW[0][0]
        assert top_by_meaning(svc, "load balancer drops the websocket") == NEW[1][0]
        assert top_by_meaning(svc, "duplicate refunds from webhook retries") == OLD[0][0]
        assert top_by_meaning(svc, "docker image size, runtime stage") == OLD[1][0]
        _, status = svc.get("/api/index/status")
        assert status["static"]["state"] == "ready", status
        assert status["static"]["indexed"] == len(NEW)
    # The upgrade replaces them: MiniLM catches up and the static tier lets go of each.
    vectors = wait_vectors(svc, lambda v: v["behind"] == 0 and v["staticIndexed"] == 0)
    assert vectors["unsearchable"] == 0
    assert top_by_meaning(svc, "thumbnail images never closed, memory grew") == NEW[0][0]
    _, status = svc.get("/api/index/status")
    assert status["indexed"] == len(OLD) + len(NEW)
    assert status["static"]["embeddedTotal"] >= len(NEW)


def test_reindex_rebuilds_both_tiers(
    make_service: Any, onnx_model: Path, static_model: Path
) -> None:
    svc = start(make_service, onnx_model, static_model)
    with minilm_paused(svc):
        save(svc, NEW)
        wait_vectors(svc, lambda v: v["staticIndexed"] == len(NEW))
        status, queued = svc.post("/api/reindex")
        assert status == 202, queued
        wait_vectors(svc, lambda v: svc.get("/api/index/status")[1]["reindex"]["state"] == "done")
        _, after = svc.get("/api/index/status")
        assert after["static"]["indexed"] == len(NEW)  # rebuilt from the canonical rows
        assert after["unsearchable"] == 0
        assert top_by_meaning(svc, "load balancer drops the websocket") == NEW[1][0]


def test_without_the_static_model_the_service_degrades_and_says_why(
    make_service: Any, onnx_model: Path, tmp_path: Path
) -> None:
    svc = start(make_service, onnx_model, tmp_path / "no-static-model-here")
    _, status = svc.get("/api/index/status")
    assert status["state"] == "ready"  # MiniLM still serves
    assert status["static"]["state"] == "off"
    assert "workbench models build" in status["static"]["reason"]
    _, health = svc.get("/api/health")
    assert health["status"] == "ok", health
    with minilm_paused(svc):
        save(svc, NEW)
        vectors = wait_vectors(svc, lambda v: v["behind"] == len(NEW))
        assert vectors["staticIndexed"] == 0
        assert vectors["unsearchable"] == len(NEW)  # full text alone finds them meanwhile
        status_code, found = svc.get("/api/search?query=websocket&format=json")
        assert status_code == 200, found
        assert found["observations"][0]["title"] == NEW[1][0]
    wait_vectors(svc, lambda v: v["behind"] == 0)
    assert top_by_meaning(svc, "load balancer drops the websocket") == NEW[1][0]


def test_the_static_embedder_reads_its_build_without_model2vec(static_model: Path) -> None:
    """Rows L2-normalised, an empty (or all-unknown) text a zero row, a text the same vector
    alone or in a batch, and the calibration read from the build's manifest."""
    import numpy as np

    from workbench.recall.embed import StaticEmbedder

    model = StaticEmbedder(static_model)
    texts = ["Stripe webhook retries caused duplicate refunds", "", "[UNK]", "refund " * 2000]
    rows = model.embed(texts)
    assert rows.shape == (4, model.dim)
    assert rows.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(rows[[0, 3]], axis=1), 1.0, atol=1e-5)
    assert not rows[1].any()
    assert not rows[2].any()
    np.testing.assert_allclose(model.embed(texts[:1])[0], rows[0], atol=1e-6)
    a, b = model.calibration
    assert a > 0
    assert (a, b) != (1.0, 0.0)
    assert model.name.startswith("static-")


def test_search_says_which_tier_covers_the_memories_minilm_lacks(
    make_service: Any, onnx_model: Path, static_model: Path
) -> None:
    """Issue 21: "vectors N behind: ... found by full text only" was wrong while the static
    tier held those memories. The search text, its JSON, the CLI and ``/api/index/status``
    say which tier covers what."""
    from tests.conftest import run_workbench

    svc = start(make_service, onnx_model, static_model)
    with minilm_paused(svc):
        save(svc, NEW)
        wait_vectors(svc, lambda v: v["staticIndexed"] == len(NEW))
        status, found = svc.get("/api/search?query=load+balancer+websocket&format=json")
        assert status == 200, found
        assert found["vectorsBehind"] == len(NEW)
        assert found["vectorsStatic"] == len(NEW)
        _, text = svc.get("/api/search?query=load+balancer+websocket")
        note = f"vectors: the newest {len(NEW)} observations are matched by the static model"
        assert note in text, text
        assert "full text only" not in text
        cli = run_workbench(svc.env, "search", "load balancer websocket")
        assert cli.returncode == 0, cli.stderr
        assert note in " ".join(cli.stdout.split()), cli.stdout
        _, index = svc.get("/api/index/status")
        # WARM: the one memory saved to start the worker (``minilm_paused``).
        assert index["tiers"] == {"minilm": 1, "static": len(NEW), "fullTextOnly": 0}, index
    wait_vectors(svc, lambda v: v["behind"] == 0 and v["staticIndexed"] == 0)
    _, index = svc.get("/api/index/status")
    assert index["tiers"] == {"minilm": 1 + len(NEW), "static": 0, "fullTextOnly": 0}, index
    _, text = svc.get("/api/search?query=load+balancer+websocket")
    assert "static model" not in text
    assert "full text only" not in text


def test_the_static_table_is_released_once_caught_up_and_loaded_again_when_needed(
    make_service: Any, onnx_model: Path, static_model: Path
) -> None:
    """Issue 21: service RSS. The static model's table is needed only while memories wait for
    MiniLM; once caught up (the worker asleep) the service lets go of it, and loads it again
    when memories fall behind."""
    svc: Service = make_service(
        WORKBENCH_EMBEDDER="minilm",
        WORKBENCH_ONNX_MODEL_DIR=str(onnx_model),
        WORKBENCH_STATIC_MODEL_DIR=str(static_model),
        WORKBENCH_EMBED_WORKER_LINGER_S="0.5",
    )
    wait_vectors(svc, lambda v: (v["worker"] or {}).get("state") == "asleep")
    for round_, notes in enumerate((OLD, NEW), start=1):
        save(svc, notes)
        done = len(OLD) + (len(NEW) if round_ == 2 else 0)
        wait_vectors(
            svc,
            lambda v, done=done: (
                v["worker"]["state"] == "asleep"
                and v["worker"]["embedded"] >= done
                and v["behind"] == 0
                and v["staticIndexed"] == 0
            ),
        )
        _, status = svc.get("/api/index/status")
        assert status["static"]["embeddedTotal"] >= len(notes) * (round_ == 2) + len(OLD)
        assert status["static"]["loaded"] is False, status["static"]
    assert top_by_meaning(svc, "load balancer drops the websocket") == NEW[1][0]
    assert top_by_meaning(svc, "duplicate refunds from webhook retries") == OLD[0][0]


def test_the_static_table_is_mapped_from_its_file_not_copied_into_the_heap(
    static_model: Path,
) -> None:
    """Issue 21: service RSS. Each time memories fell behind, the service read the static
    model's whole float32 table (31 MB) and kept a float16 copy (15.6 MB) in its heap: +30 MiB
    RSS, +70 MiB peak at 100k while the worker caught up. The table is now mapped from the
    build's file (only the rows of the tokens seen are read), and the vectors are the same
    numbers: each row rounded to float16, summed in float32, as before.

    A child process (a clean heap) embeds texts; its anonymous memory must grow by well under
    the float16 copy's size."""
    import json
    import subprocess
    import sys

    import numpy as np
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    from workbench.recall.embed import STATIC_MAX_TOKENS, StaticEmbedder

    texts = [title + ". " + text for title, text in OLD + NEW] + ["refund " * 600, "", "[UNK]"]
    code = (
        "import sys, json\n"
        "from pathlib import Path\n"
        "import numpy, safetensors.numpy, tokenizers\n"
        "from workbench.recall.embed import StaticEmbedder\n"
        "def anon():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('RssAnon:'):\n"
        "            return int(line.split()[1]) * 1024\n"
        "model = StaticEmbedder(Path(sys.argv[1]))\n"
        "before = anon()\n"
        "vectors = model.embed(json.loads(sys.argv[2]))\n"
        "print(anon() - before)\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", code, str(static_model), json.dumps(texts)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    grew = int(child.stdout.split()[-1])
    table = load_file(str(static_model / "model.safetensors"))["embeddings"]
    float16_copy = table.shape[0] * table.shape[1] * 2
    assert grew < float16_copy / 4, f"anonymous memory grew {grew} bytes ({float16_copy=})"

    # The same numbers as the float16 copy gave.
    tokenizer = Tokenizer.from_file(str(static_model / "tokenizer.json"))
    tokenizer.no_truncation()  # as the embedder reads it: its own cut, after the [UNK]s go
    tokenizer.no_padding()
    unknown = tokenizer.token_to_id("[UNK]")
    got = StaticEmbedder(static_model).embed(texts)
    half = table.astype(np.float16)
    for row, text in zip(got, texts, strict=True):
        pieces = tokenizer.encode(text, add_special_tokens=False).ids[:STATIC_MAX_TOKENS]
        ids = [i for i in pieces if i != unknown]
        if not ids:
            assert not row.any()
            continue
        mean = half[ids].sum(axis=0, dtype=np.float32) / len(ids)
        np.testing.assert_allclose(row, mean / np.linalg.norm(mean), rtol=0, atol=1e-6)
