"""The viewer end to end in headless Chromium (Debian's ``chromium``, driven by Playwright).

One service (seeded with the bundled demo) and one browser for the whole module; each test
gets a fresh page. No browser is downloaded: Playwright drives ``/usr/bin/chromium``, which
``.ci/run`` installs from Debian when it is missing. Every test also asserts the page raised
no script error and broke no Content-Security-Policy rule.

The module ends with the restart test (it replaces the service). The first test screenshots
the page with the demo data into its temporary folder, or to ``VIEWER_SCREENSHOT`` when that
names a file: ``make screenshot`` refreshes the README's ``docs/screenshot.png`` that way, so a
test run never rewrites a tracked file.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service, base_env, free_port
from tests.viewer_page import CHROMIUM, MISSING, launch_browser, live_page
from tests.viewer_seed import seed_demo

pytestmark = pytest.mark.slow

if not CHROMIUM.exists():
    pytest.skip(MISSING, allow_module_level=True)
pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
TEST_PROJECT = "viewer-tests"  # kept apart from the demo projects shown in the screenshot
XSS = '<script>window.__xss=1</script><img src=x onerror="window.__xss=2">'


class Viewer:
    """The module's service; ``restart`` swaps in a new process on the same port and data."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.svc = self._new().start()

    def _new(self) -> Service:
        env = base_env(self.data_dir, self.port, WORKBENCH_EMBEDDER="none")
        return Service(data_dir=self.data_dir, port=self.port, env=env)

    def restart(self, between: Any = None) -> None:
        self.svc.stop()
        if between:
            between()
        self.svc = self._new().start()

    def save(self, text: str, title: str | None = None) -> int:
        body = {"text": text, "project": TEST_PROJECT, **({"title": title} if title else {})}
        status, result = self.svc.post("/api/memory/save", body)
        assert status == 200, result
        return int(result["id"])


@pytest.fixture(scope="module")
def viewer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Viewer]:
    data = tmp_path_factory.mktemp("viewer") / "data"
    data.mkdir()
    running = Viewer(data)
    seed_demo(running.svc)
    yield running
    running.svc.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_browser()


@pytest.fixture
def page(browser: Any, viewer: Viewer) -> Iterator[Any]:
    """A fresh page on the viewer, live; fails the test on any script error or CSP refusal."""
    yield from live_page(browser, viewer.svc.url)


def card(page: Any, key: str) -> Any:
    return page.locator(f'#feed .card[data-key="{key}"]')


def test_screenshot_of_the_feed_with_demo_data(page: Any, viewer: Viewer, tmp_path: Path):
    viewer.svc.get("/api/context/inject?projects=payments-api&contentSessionId=demo-a")
    viewer.svc.get("/api/context/inject?projects=payments-api&contentSessionId=demo-b")
    page.select_option("#f-project", "payments-api")
    page.wait_for_selector("#feed .card.t-bugfix")
    bugfix = page.locator("#feed .card.t-bugfix").first
    bugfix.locator(".card-toggle").click()
    bugfix.get_by_role("button", name="Details & timeline").click()
    page.wait_for_selector("#detail .timeline li.anchor")
    page.wait_for_selector("#detail .numbers")
    page.evaluate("window.scrollTo(0, 0)")
    page.mouse.move(0, 0)
    screenshot = Path(os.environ.get("VIEWER_SCREENSHOT") or tmp_path / "screenshot.png")
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(screenshot))
    assert screenshot.stat().st_size > 20_000
    # The detail shows what the ledger recorded.
    assert page.locator("#detail .number b").first.inner_text() == "2"


def test_feed_shows_an_observation_stored_after_the_page_loaded(page: Any, viewer: Viewer):
    obs_id = viewer.save("The feed shows this memory the moment it is stored.", "Live card")
    key = f"observation:{obs_id}"
    card(page, key).wait_for(timeout=3000)
    assert card(page, key).locator(".card-title").inner_text() == "Live card"
    assert card(page, key).count() == 1
    assert page.locator("#feed .card").first.get_attribute("data-key") == key


def test_a_name_two_folders_share_is_listed_with_both_folders(page: Any, viewer: Viewer):
    """Issue 19 item 8: ``clientA/shared`` and ``clientB/shared`` are two projects of one name;
    the project filter (by name) says which folders it covers."""
    for client in ("clientA", "clientB"):
        body = {"text": f"{client} note", "project": "shared", "projectKey": f"/w/{client}/shared"}
        status, result = viewer.svc.post("/api/memory/save", body)
        assert status == 200, result
    page.reload()
    option = page.locator("#f-project option[value='shared']")
    option.wait_for(state="attached", timeout=5000)
    assert option.inner_text() == "shared — shared (…/clientA/shared), shared (…/clientB/shared)"


def test_search_finds_a_seeded_memory(page: Any):
    page.keyboard.press("/")
    assert page.evaluate("document.activeElement.id") == "q"
    page.keyboard.type("idempotency key")
    page.keyboard.press("Enter")
    page.wait_for_selector("#feed-title >> text=Results for")
    # The title changes before the result cards render: wait for the card itself.
    hit = page.locator("#feed .card .card-title", has_text="idempotency key").first
    hit.wait_for(timeout=5000)
    titles = page.locator("#feed .card .card-title").all_inner_texts()
    assert any("idempotency key" in t for t in titles), titles
    page.keyboard.press("Escape")  # clears the search: back to the live feed
    page.wait_for_selector("#feed-title >> text=Live feed")


def test_a_corpus_is_built_and_queried_from_the_page(page: Any):
    page.select_option("#f-project", "payments-api")
    page.click("#f-corpus")
    assert page.locator("#c-filters").inner_text() == "project=payments-api"
    page.fill("#c-name", "bad name")
    page.click("#c-build")
    page.wait_for_selector("#corpus-form-msg.bad")
    assert "invalid corpus name" in page.locator("#corpus-form-msg").inner_text()

    page.fill("#c-name", "payments-ui")
    page.fill("#c-desc", "Everything about the refund bug")
    page.click("#c-build")
    page.wait_for_selector("#corpus-form-msg.ok")
    built = page.locator('.corpus[data-name="payments-ui"]')
    built.wait_for()
    assert "observations" in built.inner_text()
    assert page.locator("#ask-name").inner_text() == "payments-ui"

    page.fill("#ask-q", "Why were refunds charged twice when the gateway timed out?")
    page.click("#ask-btn")
    answer = page.locator("#answers .answer").first
    answer.wait_for(timeout=15000)
    assert answer.locator(".answer-a").inner_text().strip()
    assert "offline" in page.locator("#ask-agent").inner_text()
    cites = answer.locator(".cites button")
    assert cites.count() >= 1
    cites.first.click()  # a citation opens the cited observation
    page.wait_for_selector("#detail .detail-title")
    assert page.locator("#tab-feed").get_attribute("aria-selected") == "true"


def test_an_xss_shaped_memory_renders_as_text(page: Any, viewer: Viewer):
    obs_id = viewer.save(f"{XSS} and more text", title=XSS)
    key = f"observation:{obs_id}"
    card(page, key).wait_for(timeout=3000)
    shown = card(page, key)
    assert shown.locator(".card-title").inner_text() == XSS
    shown.locator(".card-toggle").click()
    assert XSS in shown.locator(".card-body .prose").inner_text()
    shown.get_by_role("button", name="Details & timeline").click()
    page.wait_for_selector("#detail .detail-title")
    assert page.locator("#detail .detail-title").inner_text() == XSS
    page.locator("#q").fill("window.__xss")
    page.keyboard.press("Enter")
    page.wait_for_selector("#feed-title >> text=Results for")
    time.sleep(0.3)
    assert page.evaluate("window.__xss") is None
    assert page.locator("main img").count() == 0
    assert page.locator("main script").count() == 0


def test_an_observation_is_deleted_from_the_page_after_confirming(page: Any, viewer: Viewer):
    obs_id = viewer.save("A wrong memory a person wants gone.", "Wrong memory")
    key = f"observation:{obs_id}"
    card(page, key).wait_for(timeout=3000)
    card(page, key).focus()
    page.keyboard.press("Enter")  # keyboard: Enter on a card opens its detail
    page.wait_for_selector("#delete-btn")
    page.click("#delete-btn")
    page.wait_for_selector("#confirm[open]")
    page.click("#confirm-cancel")  # cancelling keeps it
    assert viewer.svc.get(f"/api/observation/{obs_id}")[0] == 200
    page.click("#delete-btn")
    page.click("#confirm-ok")
    card(page, key).wait_for(state="detached")
    page.wait_for_selector("#toast >> text=deleted")
    assert viewer.svc.get(f"/api/observation/{obs_id}")[0] == 404


def test_settings_refusals_are_shown_and_good_values_saved(page: Any, viewer: Viewer):
    page.click("#tab-settings")
    page.wait_for_selector("#s-context_observations")
    page.fill("#s-context_observations", "9999")
    page.click("#settings-save")
    page.wait_for_selector("#settings-msg.bad")
    assert "Refused" in page.locator("#settings-msg").inner_text()
    assert "500" in page.locator("#s-context_observations-err").inner_text()
    assert page.get_attribute("#s-context_observations", "aria-invalid") == "true"

    page.fill("#s-context_observations", "40")
    page.fill("#s-excluded_projects", "scratch-*\nsandbox")
    page.click("#settings-save")
    page.wait_for_selector("#settings-msg.ok")
    settings = viewer.svc.get("/api/settings")[1]["settings"]
    assert settings["context_observations"] == 40
    assert settings["excluded_projects"] == ["scratch-*", "sandbox"]


def test_status_panel_shows_the_queue_and_the_index(page: Any):
    page.click("#tab-status")
    page.wait_for_selector("#status-cards .stat-card")
    text = page.locator("#status-cards").inner_text()
    for words in ("COMPRESSOR", "QUEUE", "SPOOL", "EMBEDDING INDEX", "offline", "disabled"):
        assert words in text, words
    assert "No parked events" in page.locator("#failed-list").inner_text()


def test_the_page_reconnects_after_a_restart_and_fills_the_gap(page: Any, viewer: Viewer):
    """Runs last: it replaces the module's service with a new process."""
    before = viewer.save("Saved before the restart.", "Before restart")
    card(page, f"observation:{before}").wait_for(timeout=3000)
    # The page notices the service is gone, then it comes back on the same port and data.
    viewer.restart(between=lambda: page.wait_for_selector("#conn.pill-wait", timeout=5000))
    # Stored before the page has reconnected: it must find them by itself.
    saved = [
        viewer.save(f"Saved right after the restart {n}.", f"After restart {n}") for n in (1, 2)
    ]
    for obs_id in saved:
        card(page, f"observation:{obs_id}").wait_for(timeout=10000)
    page.wait_for_selector("#conn.pill-live")
    keys = page.locator("#feed .card").evaluate_all("cards => cards.map(c => c.dataset.key)")
    assert len(keys) == len(set(keys)), "a card is shown twice"
    assert card(page, f"observation:{before}").count() == 1
    later = viewer.save("Live again after the restart.", "Live again")
    card(page, f"observation:{later}").wait_for(timeout=3000)
