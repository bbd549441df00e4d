"""``GET /api/stats/*`` on a real service: data goes in through ``POST /api/import``.

The same fixed memory as the library tests (``tests/analytics_data.py``), so the HTTP numbers
are the hand-computed ones, in the JSON shape of ``workbench stats --json``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests import analytics_data
from tests.conftest import Service, seeded_service
from workbench.knowledge.reports import REPORTS

ROUTES = REPORTS  # every /api/stats/<report>


def load(service: Service) -> Service:
    status, body = service.post("/api/import", analytics_data.export_document())
    assert status == 200, body
    assert body["imported"]["observations"] == {"imported": 3, "skipped": 0}
    return service


@pytest.fixture
def loaded(service: Service) -> Service:
    """The fixed memory on this test's own service: for the tests that add to it."""
    return load(service)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """The fixed memory on one service for the tests that only read it (one start, not eight)."""
    data_dir = tmp_path_factory.mktemp("analytics-http") / "data"
    data_dir.mkdir()
    with seeded_service(data_dir, lambda store: None, WORKBENCH_EMBEDDER="none") as service:
        yield load(service)


def get(service: Service, path: str) -> Any:
    status, body = service.get(path)
    assert status == 200, body
    return body


def test_economics(shared: Service) -> None:
    assert get(shared, "/api/stats/economics") == {
        "items": analytics_data.ECONOMICS_BY_PROJECT,
        "summary": analytics_data.ECONOMICS_SUMMARY,
    }
    by_type = get(shared, "/api/stats/economics?by=type")["items"]
    assert [(i["type"], i["read_tokens"], i["savings_pct"]) for i in by_type] == [
        ("feature", 7, 93.0),
        ("bugfix", 4, 80.0),
    ]
    by_day = get(shared, "/api/stats/economics?by=day&project=alpha")["items"]
    assert [(i["day"], i["observations"]) for i in by_day] == [("2023-11-14", 2)]
    window = get(shared, "/api/stats/economics?dateStart=2023-11-15&dateEnd=2023-11-16")
    assert window["items"] == analytics_data.ECONOMICS_BY_PROJECT[1:]


def test_every_route_answers_with_items(shared: Service) -> None:
    bodies = {name: get(shared, f"/api/stats/{name}") for name in ROUTES}
    assert [i["type"] for i in bodies["types"]["items"]] == ["feature", "bugfix"]
    assert bodies["activity"]["summary"]["discovery_tokens"] == 127
    assert [i["file"] for i in bodies["files"]["items"]] == ["a.py", "b.py", "c.py"]
    assert bodies["files"]["items"][0]["last_seen"] == "2023-11-16T02:01:00.000Z"
    assert [(i["concept"], i["observations"]) for i in bodies["concepts"]["items"]] == [
        ("cache", 3),
        ("loader", 2),
        ("lock", 2),
    ]
    assert bodies["cooccurrence"]["items"][0] == {
        "concept_a": "cache",
        "concept_b": "loader",
        "observations": 2,
    }
    assert [(i["content_session_id"], i["duration_s"]) for i in bodies["sessions"]["items"]] == [
        ("s2", 60.0),
        ("s1", 600.0),
    ]
    assert bodies["roi"] == {  # nothing injected or fetched yet
        "items": [],
        "summary": {
            "injections": 0,
            "injected_tokens": 0,
            "items_shown": 0,
            "observations_injected": 0,
            "fetches": 0,
            "fetches_after_injection": 0,
        },
    }


@pytest.mark.slow
def test_limits_and_new_rows(loaded: Service) -> None:
    assert len(get(loaded, "/api/stats/concepts?limit=1")["items"]) == 1
    # Rows written after the first analytics request show up in the next one.
    status, _ = loaded.post(
        "/api/import",
        {"observations": [{"project": "gamma", "title": "later", "concepts": ["cache"]}]},
    )
    assert status == 200
    concepts = get(loaded, "/api/stats/concepts?limit=1")["items"]
    assert concepts[0]["concept"] == "cache"
    assert concepts[0]["observations"] == 4


@pytest.mark.slow
def test_roi_counts_fetches_made_through_the_api(loaded: Service) -> None:
    ids = [o["id"] for o in loaded.get("/api/observations?limit=10")[1]["items"]]
    status, _ = loaded.post("/api/observations/batch", {"ids": ids[:2], "source": "test"})
    assert status == 200
    roi = get(loaded, "/api/stats/roi")
    assert roi["summary"]["fetches"] == 2
    assert sorted(i["fetched"] for i in roi["items"]) == [1, 1]


@pytest.mark.parametrize(
    ("path", "status", "words"),
    [
        ("/api/stats/economics?by=week", 422, "by"),
        ("/api/stats/activity?by=type", 422, "by"),
        ("/api/stats/files?limit=0", 422, "limit"),
        ("/api/stats/economics?dateStart=yesterday", 400, "dateStart='yesterday' is not an ISO"),
        (
            "/api/stats/types?dateStart=2023-12-01&dateEnd=2023-11-01",
            400,
            "dateStart is after dateEnd",
        ),
    ],
)
def test_bad_parameters_say_what_to_fix(
    shared: Service, path: str, status: int, words: str
) -> None:
    got, body = shared.get(path)
    assert got == status, body
    assert words in body["message"]


def test_the_store_overview_still_answers(shared: Service) -> None:
    body = get(shared, "/api/stats")
    assert body["totals"]["observations"] == 3
