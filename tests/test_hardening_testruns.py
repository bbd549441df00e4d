"""Test runs keep their counts and failing tests (issue 9, item 15).

The fixtures in ``tests/fixtures/hooks/testruns/`` are real-shaped Claude Code PostToolUse
Bash payloads carrying each runner's real output: ``uv run pytest``, ``python -m
unittest``, ``npm test`` (jest), ``npx vitest run``, ``cargo test``, ``go test ./...``,
``make test`` wrapping pytest, a CI script recognised by its output alone, and a passing
``.venv/bin/python -m pytest``. Each must become a test-run observation with the runner's
pass/fail counts and the failing tests' names, offline and through the real pipeline.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES
from tests.hook_harness import run_hook
from workbench.compress.offline import OfflineCompressor
from workbench.models import ObservationDraft, ToolEvent

RUNS = FIXTURES / "hooks" / "testruns"

# fixture -> (facts[0], failing tests)
EXPECTED: dict[str, tuple[str, list[str]]] = {
    "uv_run_pytest": (
        "pytest: 2 failed, 36 passed",
        [
            "tests/test_refunds.py::test_refund_is_idempotent",
            "tests/test_totals.py::test_partial_refund_total",
        ],
    ),
    "unittest": (
        "unittest: 1 failed, 1 error, 7 passed",
        [
            "test_config.ConfigTests.test_load_missing_file",
            "test_stock.StockTests.test_stock_never_negative",
        ],
    ),
    "npm_test_jest": (
        "npm test (jest): 1 failed, 17 passed",
        ["cart total › applies the discount once"],
    ),
    "vitest": (
        "vitest: 1 failed, 9 passed",
        ["src/cart/total.test.ts > cart total > applies the discount once"],
    ),
    "cargo_test": (
        "cargo test: 1 failed, 13 passed, 0 ignored",
        ["ledger::tests::rejects_overdraft"],
    ),
    "go_test": (
        "go test: 2 failed",
        ["TestClaimIsExclusive", "TestRetryBackoff", "TestRetryBackoff/after_three_attempts"],
    ),
    "make_test_pytest": (
        "make test (pytest): 1 failed, 35 passed",
        ["tests/test_export.py::test_csv_header_order"],
    ),
    "script_by_output": (
        "pytest: 1 failed, 35 passed",
        ["tests/test_export.py::test_csv_header_order"],
    ),
    "pytest_pass": ("pytest: 38 passed", []),
}


def payload(name: str) -> dict[str, Any]:
    path = RUNS / f"post_tool_use_bash_{name}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def observe(raw: dict[str, Any]) -> ObservationDraft:
    event = ToolEvent(
        content_session_id=raw["session_id"],
        project=Path(raw["cwd"]).name,
        tool_name=raw["tool_name"],
        tool_input=raw["tool_input"],
        tool_response=raw["tool_response"],
        cwd=raw["cwd"],
        prompt_number=1,
    )
    [draft] = OfflineCompressor().observe(event).observations
    return draft


def test_every_fixture_is_listed() -> None:
    names = {p.stem.removeprefix("post_tool_use_bash_") for p in RUNS.glob("*.json")}
    assert names == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_runner_keeps_counts_and_failing_tests(name: str) -> None:
    counts, failures = EXPECTED[name]
    raw = payload(name)
    obs = observe(raw)
    assert obs.facts[0] == counts
    for failure in failures[:5]:
        assert f"failed: {failure}" in obs.facts
    assert "testing" in obs.concepts
    if failures:
        assert obs.type == "bugfix"
        assert obs.title == f"Tests failing: `{raw['tool_input']['command']}`"
        assert f"First failure: {failures[0]}" in obs.narrative
    else:
        assert obs.type == "discovery"
        assert obs.title.startswith("Tests pass")


def test_the_original_pytest_fixture_keeps_its_counts_and_failing_test() -> None:
    raw = json.loads((FIXTURES / "hooks" / "post_tool_use_bash_pytest_fail.json").read_text())
    obs = observe(raw)
    assert obs.type == "bugfix"
    assert obs.facts[0] == "pytest: 1 failed, 13 passed"
    assert "failed: tests/test_auth.py::test_expired_token_rejected" in obs.facts
    assert any(f.startswith("first error: Failed: DID NOT RAISE") for f in obs.facts)


def test_reading_a_log_of_test_output_is_not_a_test_run() -> None:
    raw = payload("uv_run_pytest")
    raw["tool_input"]["command"] = "cat build/pytest.log"
    raw["tool_response"]["stderr"] = ""
    obs = observe(raw)
    assert not obs.title.startswith("Test")
    assert obs.type == "discovery"


def test_a_failing_run_is_stored_with_its_counts_through_the_real_pipeline(
    data_dir: Path, make_service: Any
) -> None:
    svc = make_service(WORKBENCH_COMPRESSOR="offline")
    for name in ("make_test_pytest", "go_test"):
        run_hook("post_tool_use", payload(name), svc.env).output()
    original = json.loads((FIXTURES / "hooks" / "post_tool_use_bash_pytest_fail.json").read_text())
    run_hook("post_tool_use", original, svc.env).output()
    svc.wait_idle()
    conn = sqlite3.connect(data_dir / "workbench.db")
    try:
        rows = conn.execute("SELECT type, facts FROM observations ORDER BY id").fetchall()
    finally:
        conn.close()
    facts = [json.loads(f) for _, f in rows]
    assert [t for t, _ in rows] == ["bugfix", "bugfix", "bugfix"]
    assert facts[0][0] == "make test (pytest): 1 failed, 35 passed"
    assert facts[1][0] == "go test: 2 failed"
    assert "packages: 1 failed, 2 ok" in facts[1]
    assert facts[2][0] == "pytest: 1 failed, 13 passed"
    assert "failed: tests/test_auth.py::test_expired_token_rejected" in facts[2]


def test_a_go_package_that_does_not_build_is_a_failed_package() -> None:
    """``go test`` ends a package that does not compile with ``FAIL\\tpkg [build failed]``.

    The package verdict pattern wanted a tab before the timing, so that line was not read as
    a package at all: the packages note left it out and the failure went unnamed.
    """
    raw = payload("go_test")
    raw["tool_response"]["stdout"] = (
        "# github.com/acme/queue/internal/api\n"
        "internal/api/handler.go:12:2: undefined: decodeBody\n"
        "ok  \tgithub.com/acme/queue/internal/clock\t0.004s\n"
        "FAIL\tgithub.com/acme/queue/internal/api [build failed]\n"
        "ok  \tgithub.com/acme/queue/internal/store\t0.031s\n"
        "FAIL\n"
    )
    obs = observe(raw)
    assert obs.facts[0] == "go test: 1 failed, 2 passed"
    assert "packages: 1 failed, 2 ok" in obs.facts
    assert any("github.com/acme/queue/internal/api [build failed]" in f for f in obs.facts)
