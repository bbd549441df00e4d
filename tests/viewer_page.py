"""The viewer in headless Chromium: one browser per module, a fresh live page per test.

No browser is downloaded: Playwright drives Debian's ``/usr/bin/chromium`` (``.ci/run``
installs it when it is missing). A test that needs the page is skipped when either is
missing, so a module's API tests still run. Every page fails its test on any script error or
Content-Security-Policy refusal.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MISSING = (
    f"{CHROMIUM} is missing: install Debian's browser with `apt-get install -y chromium` "
    "(.ci/run does this); Playwright never downloads one here"
)


def launch_browser() -> Iterator[Any]:
    """For a module-scoped fixture (``yield from``): the launched browser, closed after."""
    if not CHROMIUM.exists():
        pytest.skip(MISSING)
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS)
        yield launched
        launched.close()


def live_page(browser: Any, url: str) -> Iterator[Any]:
    """For a fixture (``yield from``): a fresh page on the viewer at ``url``, live, with cards.

    After the test, asserts the page raised no script error and broke no CSP rule.
    """
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(5000)
    problems: list[str] = []
    opened.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    opened.on(
        "console",
        lambda msg: (
            problems.append(f"console {msg.type}: {msg.text}")
            if msg.type == "error" and "Content Security Policy" in msg.text
            else None
        ),
    )
    opened.goto(url + "/")
    opened.wait_for_selector("#conn.pill-live")
    opened.wait_for_selector("#feed .card")
    yield opened
    context.close()
    assert problems == []
