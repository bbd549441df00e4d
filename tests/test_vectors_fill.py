"""The index filled from the embeddings cache at start says so (``vectorsBehind``'s text, the
status's reason), instead of blaming the embedding worker.

Issue 21's closing note: with no usable saved index (a fresh file set, a corrupt or old one)
the service fills the index from the cache at start; meanwhile memories are behind and the
search note said "until the embedding worker catches up" (no worker is involved) while the
status said the index was "rebuilt". Real service, real store, the installed static model.
"""

from __future__ import annotations

import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from tests.test_vectors_switch import seeded, start, status, wait_complete

pytestmark = pytest.mark.slow


def test_a_first_build_from_the_cache_says_so_not_the_embedding_worker(
    make_service: Any, data_dir: Path, installed_static_model: Path
) -> None:
    """With no usable saved index (a fresh file set, a corrupt or old one) the index is
    filled from the embeddings cache at start; meanwhile ``vectorsBehind`` is above 0 and
    its text said "until the embedding worker catches up", a worker not involved (here there
    is none: the static embedder runs in the service), and the status said "rebuilt"."""
    n = 6000
    seeded(data_dir, n)
    svc = start(make_service, installed_static_model, "hnsw")
    wait_complete(svc, n, "hnsw")
    svc.stop()
    index_dir = data_dir / "index"
    for saved in index_dir.iterdir():  # the cache stays: the start rebuilds from it
        saved.unlink()

    svc = start(make_service, installed_static_model, "hnsw")
    query = urllib.parse.urlencode({"query": "cache leaked in the worker", "mode": "vector"})
    seen: tuple[dict[str, Any], str] | None = None
    deadline = time.monotonic() + 60
    while seen is None and time.monotonic() < deadline:
        body = status(svc)
        if body["state"] == "ready" and 0 < body["indexed"] < n:
            code, text = svc.get(f"/api/search?{query}")
            assert code == 200, text
            if "behind" in text:  # still filling when the search ran
                seen = body, text
        time.sleep(0.02)
    assert seen is not None, "never saw the index part-filled"
    body, text = seen
    assert "rebuilding the index from the embeddings cache" in body["reason"], body["reason"]
    assert f" of {n})" in body["reason"], body["reason"]
    note = next(line for line in text.splitlines() if "behind" in line)
    assert "embedding worker" not in note, note
    assert "rebuilding the index from the embeddings cache" in note, note
    assert f" of {n})" in note, note

    done = wait_complete(svc, n, "hnsw")
    assert done["reason"].endswith("index rebuilt from the embeddings cache"), done["reason"]
    code, text = svc.get(f"/api/search?{query}")
    assert code == 200
    assert "behind" not in text, text
    svc.stop()
