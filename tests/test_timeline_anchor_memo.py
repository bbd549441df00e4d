"""The timeline by query after its search reuses the search's anchor, and is never stale.

Issue 21: an agent's search → timeline of the same query ranked the query twice; the anchor
is ~97% of a timeline by query's cost. ``recall.anchor_memo`` remembers a ranking's first
observation under everything a ranking reads; ``GET /api/index/status`` counts the timeline
anchors it gave (``timelineAnchors.reused``) and those ranked (``ranked``). Over HTTP, on a
real MiniLM service:

- a timeline by query after a search of that query is not ranked again, and answers what a
  fresh service (no memo) answers;
- a new memory that outranks the anchor, once stored and indexed, moves the anchor;
- a forgotten anchor is never shown again;
- vectors catching up (the index changes, the store does not) re-rank the anchor.
"""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.conftest import Service
from tests.test_search_rankers_http import MEMORIES, PROJECT

pytestmark = pytest.mark.slow  # real MiniLM services, one or two per test

MINILM = {"WORKBENCH_EMBEDDER": "minilm"}


def save(svc: Service, title: str, text: str) -> int:
    status, body = svc.post("/api/memory/save", {"title": title, "text": text, "project": PROJECT})
    assert status == 200, body
    return int(body["id"])


def with_memories(make_service: Any, **env: str) -> tuple[Service, list[int]]:
    """A real MiniLM service (``env`` added) holding ``MEMORIES``, every one indexed."""
    svc = make_service(**MINILM, **env)
    ids = [save(svc, title, text) for title, text in MEMORIES]
    wait_indexed(svc, len(MEMORIES))
    return svc, ids


def index_status(svc: Service) -> dict[str, Any]:
    status, body = svc.get("/api/index/status")
    assert status == 200, body
    return dict(body)


def wait_indexed(svc: Service, count: int, timeout: float = 180.0) -> None:
    """Until the index holds the MiniLM vectors of exactly ``count`` observations (all)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = index_status(svc)
        if found["state"] == "ready" and found["indexed"] == found["observations"] == count:
            return
        time.sleep(0.2)
    raise AssertionError(f"the memories were never indexed: {index_status(svc)}")


def anchors(svc: Service) -> dict[str, int]:
    return dict(index_status(svc)["timelineAnchors"])


def search(svc: Service, query: str, **params: str) -> Any:
    status, body = svc.get(f"/api/search?{urlencode({'query': query, **params})}")
    assert status == 200, body
    return body


def first_hit(svc: Service, query: str) -> int:
    """The search's first observation (the anchor a timeline of ``query`` must take)."""
    found = search(svc, query, format="json", type="observations")
    assert found["observations"], found
    return int(found["observations"][0]["id"])


def timeline(svc: Service, query: str) -> tuple[int, Any]:
    return svc.get(f"/api/timeline?{urlencode({'query': query})}")


def shown(line: Any) -> set[int]:
    return {item["id"] for item in line["items"] if item["kind"] == "observation"}


def test_the_timeline_after_its_search_is_not_ranked_again(make_service: Any) -> None:
    svc, _ = with_memories(make_service)
    query = "expired login token"
    search(svc, query)  # the text index: what the MCP search tool asks
    before = anchors(svc)
    status, line = timeline(svc, query)
    assert status == 200, line
    after = anchors(svc)
    assert after["reused"] == before["reused"] + 1, (before, after)
    assert after["ranked"] == before["ranked"], (before, after)
    assert line["anchor"]["id"] == first_hit(svc, query)
    assert [i["id"] for i in line["items"] if i["is_anchor"]] == [line["anchor"]["id"]]

    # A fresh service on the same store (nothing remembered) ranks it, and answers the same.
    svc.stop()
    fresh = make_service(**MINILM)
    wait_indexed(fresh, len(MEMORIES))
    status, again = timeline(fresh, query)
    assert status == 200, again
    assert anchors(fresh)["ranked"] == 1
    assert again == line


def test_a_new_memory_that_outranks_the_anchor_moves_it(make_service: Any) -> None:
    svc, _ = with_memories(make_service)
    query = "nightly backup schedule"
    old = first_hit(svc, query)
    assert timeline(svc, query)[1]["anchor"]["id"] == old
    before = anchors(svc)
    assert before["reused"] >= 1, before  # the search's anchor was reused

    new = save(
        svc,
        "Nightly backup schedule",
        "The nightly backup schedule now starts at 03:00: the backup schedule clashed with "
        "the export.",
    )
    # At once (the store changed; its vector may not be in yet), then once it is indexed.
    for settle in (False, True):
        if settle:
            wait_indexed(svc, len(MEMORIES) + 1)
        status, line = timeline(svc, query)  # no search since the memory was stored
        assert status == 200, line
        if not settle:  # ranked again, not taken from the search before the write
            after = anchors(svc)
            assert after["ranked"] == before["ranked"] + 1, (before, after)
        assert line["anchor"]["id"] == new != old
        assert line["anchor"]["id"] == first_hit(svc, query)


def test_a_forgotten_anchor_is_never_shown(make_service: Any) -> None:
    svc, ids = with_memories(make_service)
    query = "refunds issued twice"
    gone = first_hit(svc, query)
    assert gone == ids[1]
    assert timeline(svc, query)[1]["anchor"]["id"] == gone
    before = anchors(svc)

    status, body = svc.post("/api/observations/forget", {"ids": [gone]})
    assert status == 200, body
    # At once (its vector may still be in the index until the indexer's next pass), and after.
    for settle in (False, True):
        if settle:
            wait_indexed(svc, len(MEMORIES) - 1)
        status, line = timeline(svc, query)
        if status == 200:
            assert line["anchor"]["id"] != gone
            assert gone not in shown(line)
        else:
            assert status == 404, line  # nothing else matches: never the forgotten one
    assert anchors(svc)["ranked"] >= before["ranked"] + 1
    status, line = timeline(svc, query)
    if status == 200:
        assert line["anchor"]["id"] == first_hit(svc, query)


def test_vectors_catching_up_re_rank_the_anchor(make_service: Any) -> None:
    # No static tier: a new memory has no vector at all until the embedding worker (which
    # leaves when idle, so it must start again) embeds it.
    svc, _ = with_memories(
        make_service, WORKBENCH_STATIC_TIER="false", WORKBENCH_EMBED_WORKER_LINGER_S="0"
    )
    # The new memory shares no word with the query: before its vector it is not found at all.
    query = "puppy adoption paperwork"
    late = save(
        svc, "Dog rescue forms", "The shelter's intake sheets for families taking a dog home."
    )
    before_catch_up = first_hit(svc, query)  # ranked before the new memory's vector landed
    status, line = timeline(svc, query)
    assert status == 200, line
    assert line["anchor"]["id"] == before_catch_up
    counts = anchors(svc)
    assert counts["reused"] == 1, counts

    wait_indexed(svc, len(MEMORIES) + 1)  # only the index changed since: no observation was written
    status, line = timeline(svc, query)
    assert status == 200, line
    after = anchors(svc)
    assert after["ranked"] == counts["ranked"] + 1, (counts, after)
    assert line["anchor"]["id"] == first_hit(svc, query) == late != before_catch_up
