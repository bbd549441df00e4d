"""``GET /api/search`` and ``GET /api/timeline`` through a real service on a seeded store."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from typing import Any

import pytest

from tests import conftest
from tests.conftest import Service, http_json
from tests.relevance_set import Seeded

CONTRACT_KEYS = {"observations", "sessions", "prompts", "totalResults", "query"}
OPTIONAL_KEYS = {"mode", "degraded", "totalIsLowerBound", "vectorsBehind", "vectorsStatic"}


@pytest.fixture(scope="module")
def seeded_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Seeded]]:
    """One service for the module, on a store seeded before it starts (it then owns it)."""
    with conftest.relevance_set_service(tmp_path_factory.mktemp("api") / "data") as found:
        yield found


@pytest.fixture
def svc(seeded_service: tuple[Service, Seeded]) -> Service:
    return seeded_service[0]


@pytest.fixture
def labels(seeded_service: tuple[Service, Seeded]) -> Seeded:
    return seeded_service[1]


def get(svc: Service, path: str, params: list[tuple[str, Any]] | dict[str, Any]) -> tuple[int, Any]:
    return svc.get(f"{path}?{urllib.parse.urlencode(params)}")


def test_json_shape_is_exactly_the_contract(svc: Service, labels: Seeded) -> None:
    status, body = get(
        svc, "/api/search", {"query": "why were refunds charged twice", "format": "json"}
    )
    assert status == 200, body
    assert CONTRACT_KEYS <= set(body) <= CONTRACT_KEYS | OPTIONAL_KEYS
    assert body["query"] == "why were refunds charged twice"
    # every match, not the page (tests/test_search_total.py pins the counts)
    assert body["totalResults"] >= sum(
        len(body[k]) for k in ("observations", "sessions", "prompts")
    )
    assert body["totalIsLowerBound"] is False
    assert body["observations"][0]["id"] == labels.ids["refund-idempotency"]
    for kind in ("observations", "sessions", "prompts"):
        for hit in body[kind]:
            assert {"id", "type", "title", "created_at_epoch", "score"} <= set(hit)
            assert isinstance(hit["id"], int)
            assert isinstance(hit["score"], float)
    assert body["mode"] == "fts"
    assert "semantic search unavailable" in body["degraded"]
    assert body["sessions"]
    assert body["prompts"]


def test_default_is_the_compact_text_index(svc: Service, labels: Seeded) -> None:
    status, text = get(svc, "/api/search", {"query": "docker image too large"})
    assert status == 200
    assert isinstance(text, str)
    lines = text.splitlines()
    assert lines[0].startswith('workbench search "docker image too large":')
    assert re.match(
        rf"#{labels.ids['docker-slim']}  2026-11-06 09:00  refactor  Multi-stage", lines[3]
    )
    assert "/api/timeline" in lines[-1]
    assert "/api/observations/batch" in lines[-1]


@pytest.mark.parametrize(
    ("csv", "repeated"),
    [
        ({"obs_type": "bugfix,feature"}, [("obs_type", "bugfix"), ("obs_type", "feature")]),
        ({"concepts": "retries,money"}, [("concepts", "retries"), ("concepts", "money")]),
        (
            {"files": "src/refunds,src/webhooks"},
            [("files", "src/refunds"), ("files", "src/webhooks")],
        ),
        ({"type": "observations,prompts"}, [("type", "observations"), ("type", "prompts")]),
    ],
)
def test_csv_and_repeated_keys_are_the_same(
    svc: Service, csv: dict[str, str], repeated: list[tuple[str, str]]
) -> None:
    base = [("query", "refund retry webhook invoice"), ("format", "json")]
    status_a, a = get(svc, "/api/search", base + list(csv.items()))
    status_b, b = get(svc, "/api/search", base + repeated)
    assert status_a == status_b == 200
    assert a == b
    assert a["totalResults"] > 0


def test_filters_through_http(svc: Service, labels: Seeded) -> None:
    _, body = get(
        svc,
        "/api/search",
        {
            "project": "infra",
            "obs_type": "refactor,security_note",
            "dateStart": "2026-11-14",
            "dateEnd": "2026-11-14",
            "platform_source": "cursor",
            "format": "json",
        },
    )
    assert {h["id"] for h in body["observations"]} == {
        labels.ids["ci-cache"],
        labels.ids["vault-secrets"],
    }
    assert body["sessions"] == []
    assert body["prompts"] == []
    assert body["query"] is None


def test_order_limit_offset_and_type(svc: Service) -> None:
    params = {"query": "database", "type": "observations", "format": "json", "orderBy": "date_asc"}
    _, body = get(svc, "/api/search", params)
    epochs = [h["created_at_epoch"] for h in body["observations"]]
    assert epochs == sorted(epochs)
    assert len(epochs) > 2
    assert body["sessions"] == []
    assert body["prompts"] == []
    _, page = get(svc, "/api/search", {**params, "limit": 2, "offset": 1})
    assert [h["id"] for h in page["observations"]] == [h["id"] for h in body["observations"][1:3]]


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({}, 400, "give a query or at least one filter"),
        ({"query": "  "}, 400, "give a query or at least one filter"),
        ({"query": "x", "obs_type": "bugfix,nope"}, 400, "allowed: decision, bugfix"),
        ({"query": "x", "dateStart": "soon"}, 400, "dateStart='soon' is not an ISO date"),
        ({"query": "x", "mode": "vector"}, 400, "semantic search is unavailable"),
        ({"query": "x", "mode": "magic"}, 400, "mode='magic' is not allowed"),
        ({"query": "x", "orderBy": "newest"}, 400, "orderBy='newest' is not allowed"),
        ({"query": "x", "type": "events"}, 400, "not a search type"),
        ({"query": "x", "format": "xml"}, 400, "format='xml' is not allowed"),
        ({"query": "x", "limit": 0}, 422, "limit"),
        ({"query": "x", "limit": 101}, 422, "limit"),
    ],
)
def test_errors_are_clear(svc: Service, params: dict[str, Any], status: int, message: str) -> None:
    got, body = get(svc, "/api/search", params)
    assert got == status, body
    assert message in body["message"]


@pytest.mark.parametrize("query", ['foo-bar "x', "NEAR(", "AND OR NOT", "*", "(((", "日本語 🚀"])
def test_special_characters_through_http(svc: Service, query: str) -> None:
    status, body = get(svc, "/api/search", {"query": query, "format": "json"})
    assert status == 200, body


def test_timeline_json(svc: Service, labels: Seeded) -> None:
    anchor = labels.ids["ws-leak"]
    status, body = get(svc, "/api/timeline", {"anchor": anchor, "depth_before": 1, "depthAfter": 2})
    assert status == 200, body
    assert set(body) == {"anchor", "items"}
    assert body["anchor"]["kind"] == "observation"
    assert body["anchor"]["id"] == anchor
    marked = [i for i in body["items"] if i["is_anchor"]]
    assert [(i["kind"], i["id"]) for i in marked] == [("observation", anchor)]
    assert sum(i["kind"] == "observation" for i in body["items"]) == 4
    epochs = [i["created_at_epoch"] for i in body["items"]]
    assert epochs == sorted(epochs)


def test_timeline_other_anchors_and_text(svc: Service, labels: Seeded) -> None:
    summary = labels.summaries["pay-2"]
    status, body = get(svc, "/api/timeline", {"anchor": f"S{summary}"})
    assert status == 200
    assert body["anchor"]["kind"] == "summary"
    status, body = get(
        svc, "/api/timeline", {"query": "invoice rounding", "project": "payments-api"}
    )
    assert status == 200
    assert body["anchor"]["id"] == labels.ids["invoice-rounding"]
    status, text = get(svc, "/api/timeline", {"anchor": "2026-11-10T12:00:00Z", "format": "text"})
    assert status == 200
    assert text.startswith("workbench timeline around time 2026-11-10T12:00")
    assert sum(line.startswith("> ") for line in text.splitlines()) == 1


@pytest.mark.parametrize(
    ("params", "status", "message"),
    [
        ({"anchor": "1", "query": "x"}, 400, "not both"),
        ({}, 400, "give an anchor or a query"),
        ({"anchor": "424242"}, 404, "no observation with id 424242"),
        ({"anchor": "S424242"}, 404, "no summary with id S424242"),
        ({"anchor": "next week"}, 400, "ISO timestamp"),
        ({"anchor": "1", "depth_before": 99}, 400, "depth_before must be an integer from 0 to 50"),
    ],
)
def test_timeline_errors(svc: Service, params: dict[str, Any], status: int, message: str) -> None:
    got, body = get(svc, "/api/timeline", params)
    assert got == status, body
    assert message in body["message"]


def test_search_then_timeline_then_batch(svc: Service, labels: Seeded) -> None:
    """The 3-layer workflow end to end, as an agent would run it."""
    _, found = get(svc, "/api/search", {"query": "flaky CI timeout", "format": "json", "limit": 3})
    first = found["observations"][0]["id"]
    assert first == labels.ids["e2e-flaky"]
    _, around = get(svc, "/api/timeline", {"anchor": first, "depth_before": 1, "depth_after": 1})
    ids = [i["id"] for i in around["items"] if i["kind"] == "observation"]
    status, full = http_json("POST", f"{svc.url}/api/observations/batch", {"ids": ids})
    assert status == 200
    assert {o["id"] for o in full} == set(ids)
    assert any("iframe" in o["narrative"] for o in full)


@pytest.mark.parametrize("key", ["platform_source", "platformSource"])
def test_an_unknown_platform_is_a_422_listing_the_known_ones(svc: Service, key: str) -> None:
    """As in context, corpora and stats: a typo must not silently match nothing."""
    from workbench.platforms import PLATFORM_SOURCES

    status, body = get(svc, "/api/search", {key: "gemini", "format": "json"})
    assert status == 422, body
    assert body["error"] == "UNKNOWN_PLATFORM"
    assert "'gemini'" in body["message"]
    assert body["known"] == list(PLATFORM_SOURCES)
