"""The viewer and agent platforms: every list route (``/api/observations``, ``/api/summaries``,
``/api/prompts``, ``/api/sessions``) takes ``platform_source``; observations and their search
hits carry it; the page shows each observation's platform and filters by it (a select fed by
``/api/stats``'s ``platforms``). The real service; the page in headless Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service, seeded_service
from tests.platform_seed import SESSIONS, TITLES, seed
from tests.viewer_page import launch_browser, live_page
from workbench.platforms import PLATFORM_SOURCES

LISTS = ("observations", "summaries", "prompts", "sessions")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir: Path = tmp_path_factory.mktemp("viewer-platform") / "data"
    data_dir.mkdir()
    with seeded_service(data_dir, seed, WORKBENCH_EMBEDDER="none") as service:
        yield service


def items(service: Service, path: str) -> list[dict[str, Any]]:
    status, body = service.get(path)
    assert status == 200, body
    return body["items"]


@pytest.mark.parametrize("route", LISTS)
@pytest.mark.parametrize("param", ["platform_source", "platformSource"])
def test_every_list_keeps_one_platform(seeded: Service, route: str, param: str) -> None:
    listed = items(seeded, f"/api/{route}?{param}=gemini-cli")
    assert sorted(i["content_session_id"] for i in listed) == ["blog-gemini", "shop-gemini"]
    both = items(seeded, f"/api/{route}?project=shop&{param}=gemini-cli")
    assert [i["content_session_id"] for i in both] == ["shop-gemini"]
    assert len(items(seeded, f"/api/{route}")) == len(SESSIONS)


@pytest.mark.parametrize("route", LISTS)
def test_an_unknown_platform_is_a_422_on_every_list(seeded: Service, route: str) -> None:
    status, body = seeded.get(f"/api/{route}?platform_source=gemini")
    assert status == 422, body
    assert body["error"] == "UNKNOWN_PLATFORM"
    assert body["known"] == list(PLATFORM_SOURCES)


def test_observations_and_their_hits_carry_their_platform(seeded: Service) -> None:
    listed = {o["content_session_id"]: o for o in items(seeded, "/api/observations")}
    assert {sid: o["platform_source"] for sid, o in listed.items()} == {
        sid: spec[1] for sid, spec in SESSIONS.items()
    }
    status, one = seeded.get(f"/api/observation/{listed['shop-codex']['id']}")
    assert status == 200
    assert one["platform_source"] == "codex-cli"
    status, found = seeded.get("/api/search?query=coupon&format=json&mode=fts")
    assert status == 200, found
    assert [(h["title"], h["platform_source"]) for h in found["observations"]] == [
        (TITLES["shop-codex"], "codex-cli")
    ]


# ----- the page ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_browser()


@pytest.fixture
def page(browser: Any, seeded: Service) -> Iterator[Any]:
    """A fresh page on the viewer; fails the test on any script error or CSP refusal."""
    yield from live_page(browser, seeded.url)


def obs_card(page: Any, title: str) -> Any:
    return page.locator('#feed .card[data-key^="observation:"]', has_text=title)


def test_each_observation_card_shows_its_platform(page: Any) -> None:
    for sid, spec in SESSIONS.items():
        card = obs_card(page, TITLES[sid])
        card.wait_for()
        assert card.locator(".chip-platform").inner_text() == spec[1]
    gemini = obs_card(page, TITLES["shop-gemini"])
    gemini.locator(".card-toggle").click()
    gemini.get_by_role("button", name="Details & timeline").click()
    page.locator("#detail-title").wait_for()
    assert page.locator(".detail-meta .chip-platform").inner_text() == "gemini-cli"


def test_the_platform_select_filters_the_feed_and_search(page: Any) -> None:
    select = page.locator("#f-platform")
    page.wait_for_function("document.querySelectorAll('#f-platform option').length > 3")
    values = select.locator("option").evaluate_all("(os) => os.map((o) => o.value)")
    assert sorted(values) == ["", "claude-code", "codex-cli", "gemini-cli"]

    select.select_option("codex-cli")
    obs_card(page, TITLES["shop-codex"]).wait_for()  # the lists load together: all placed now
    shown = page.locator('#feed .card[data-key^="observation:"]').all_inner_texts()
    assert len(shown) == 1
    assert "codex-cli" in shown[0]
    assert page.locator('#feed .card[data-key^="summary:"]').count() == 1
    assert page.locator('#feed .card[data-key^="prompt:"]').count() == 1
    assert "platform codex-cli" in page.locator("#filter-note").inner_text()

    # A search keeps to the platform: Gemini's observations are not Codex's.
    page.locator("#q").fill("Gemini")
    page.locator("#q").press("Enter")
    page.wait_for_selector("#feed-empty:not([hidden])")
    assert page.locator("#feed .card").count() == 0

    select.select_option("gemini-cli")
    obs_card(page, TITLES["shop-gemini"]).wait_for()
    obs_card(page, TITLES["blog-gemini"]).wait_for()
    assert obs_card(page, TITLES["shop-codex"]).count() == 0
