"""One spelling per filter field on every route that filters, not only search (issue 13).

The list routes, ``/api/stats/*`` and ``/api/context/inject`` take ``platform_source`` and the
stats take ``since``/``until``, as ``SearchQuery`` does; the old ``platformSource``,
``dateStart`` and ``dateEnd`` still work for one release and say so with the same
``Deprecation``/``Warning`` headers as ``/api/search``. The real service over the platform seed.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Service, seeded_service
from tests.platform_seed import seed

FILTERING = [
    "/api/observations?",
    "/api/sessions?",
    "/api/prompts?",
    "/api/summaries?",
    "/api/stats/types?project=shop&",
    "/api/context/inject?projects=shop&",
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir: Path = tmp_path_factory.mktemp("filter-spellings") / "data"
    data_dir.mkdir()
    with seeded_service(data_dir, seed, WORKBENCH_EMBEDDER="none") as service:
        yield service


def fetch(service: Service, path: str) -> tuple[int, bytes, list[tuple[str, str]]]:
    try:
        with urllib.request.urlopen(service.url + path, timeout=30) as answer:
            return answer.status, answer.read(), list(answer.headers.items())
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), list(exc.headers.items())


def warnings(headers: list[tuple[str, str]]) -> list[str]:
    return [value for name, value in headers if name.lower() == "warning"]


@pytest.mark.parametrize("route", FILTERING)
def test_the_old_platform_spelling_works_and_says_it_is_deprecated(
    seeded: Service, route: str
) -> None:
    new_status, new_body, new_headers = fetch(seeded, f"{route}platform_source=gemini-cli")
    old_status, old_body, old_headers = fetch(seeded, f"{route}platformSource=gemini-cli")
    assert new_status == old_status == 200
    assert old_body == new_body
    assert not warnings(new_headers)
    assert ("Deprecation", "true") in old_headers or ("deprecation", "true") in old_headers
    assert any(
        "platformSource is deprecated, use platform_source" in w for w in warnings(old_headers)
    )


def test_stats_take_since_and_until_and_the_old_dates_are_deprecated(seeded: Service) -> None:
    window = "project=shop&{}=2020-01-01&{}=2999-12-31"
    status, new_body, new_headers = fetch(
        seeded, "/api/stats/types?" + window.format("since", "until")
    )
    assert status == 200
    assert not warnings(new_headers)
    status, old_body, old_headers = fetch(
        seeded, "/api/stats/types?" + window.format("dateStart", "dateEnd")
    )
    assert status == 200
    assert old_body == new_body
    notes = warnings(old_headers)
    assert any("dateStart is deprecated, use since" in w for w in notes)
    assert any("dateEnd is deprecated, use until" in w for w in notes)
    status, empty, _ = fetch(seeded, "/api/stats/types?project=shop&since=2999-01-01")
    assert status == 200
    assert empty != new_body


def test_stats_dates_that_disagree_are_a_422_naming_both(seeded: Service) -> None:
    status, body = seeded.get("/api/stats/types?since=2026-01-01&dateStart=2025-01-01")
    assert status == 422, body
    assert "since" in body["message"]
    assert "dateStart" in body["message"]


def test_a_stats_date_error_names_the_spelling_sent(seeded: Service) -> None:
    for name in ("since", "dateStart"):
        status, body = seeded.get(f"/api/stats/types?{name}=yesterday")
        assert status == 400, body
        assert f"{name}='yesterday'" in body["message"]
