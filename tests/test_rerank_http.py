"""Over HTTP, a real service with MiniLM and ``search_rerank`` on: hits say they were reranked.

``GET /api/search?format=json`` keeps its contract fields (``rankers``, ``ranks``, ``score``…)
and adds ``rerank``: ``features-default`` with the built-in weights, ``features`` once a
trained model is in the data dir (read on each search: no restart), ``null`` for modes that
are never reranked.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from tests.conftest import Service, api_search, base_env, free_port
from workbench.recall.rerank_features import FEATURES

pytestmark = pytest.mark.slow

MEMORIES = [
    ("Expired tokens passed the login check", "check_token compared the expiry in local time."),
    ("Refunds issued twice on webhook retries", "Idempotency keys stop the duplicate refunds."),
    ("Dark palette follows the operating system", "The UI switches colours with the OS theme."),
    ("Nightly backup job moved to 02:00", "Backups overlapped the report export at midnight."),
]

AS_JSON = {"format": "json", "type": "observations"}  # every search here asks for this


def test_reranked_hits_say_so_and_keep_their_fields(tmp_path: Any) -> None:
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    env = base_env(
        data,
        port,
        WORKBENCH_EMBEDDER="minilm",
        WORKBENCH_SEARCH_RERANK="true",
        WORKBENCH_SEARCH_RERANK_METHOD="features",
    )
    svc = Service(data_dir=data, port=port, env=env).start()
    try:
        for title, text in MEMORIES:
            status, body = svc.post("/api/memory/save", {"title": title, "text": text})
            assert status == 200, body
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            embeddings = svc.get("/api/health")[1]["embeddings"]
            if embeddings["state"] == "ready" and embeddings["indexed"] >= len(MEMORIES):
                break
            time.sleep(0.2)
        body = api_search(svc, "check_token expiry", **AS_JSON)
        assert body["mode"] == "hybrid", body
        hits = body["observations"]
        assert hits[0]["title"] == MEMORIES[0][0]
        assert {h["rerank"] for h in hits} == {"features-default"}
        assert hits[0]["rankers"] == ["fts", "vector"]
        assert {"id", "score", "ranks", "rankers", "title", "tokens"} <= set(hits[0])
        # A trained model dropped into the data dir is used by the next search.
        weights = {name: (1.0 if name == "recency" else 0.0) for name in FEATURES}
        model = {"version": 1, "features": list(FEATURES), "weights": weights}
        (data / "rerank.json").write_text(json.dumps(model), "utf-8")
        again = api_search(svc, "check_token expiry", **AS_JSON)["observations"]
        assert {h["rerank"] for h in again} == {"features"}
        assert sorted(h["id"] for h in again) == sorted(h["id"] for h in hits)
        assert again[0]["title"] == MEMORIES[-1][0]  # the newest, as recency alone says
        fts = api_search(svc, "check_token expiry", **AS_JSON, mode="fts")
        assert all(h["rerank"] is None for h in fts["observations"])
    finally:
        svc.stop()
