"""The compressor is chosen by the settings, whoever started the service (issue 20, item 5).

A service the SessionStart hook spawns inherits Claude Code's environment, with its
``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL``. It used to compress through them under the
default settings, while ``doctor`` (run from a shell without them) said offline and ``status``
said claude. Now an inherited key is used only when the settings name claude, and health,
``status`` and ``doctor`` all state what the running service uses, and why.

Everything is real: the SessionStart hook as a subprocess spawns the service, a PostToolUse
hook gives it an event to compress, the CLI runs as a subprocess from an environment without
the ANTHROPIC_* variables (the user's shell). Only the Anthropic API is a local fake server.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service, run_workbench
from tests.fake_anthropic import FakeAnthropic
from tests.hook_harness import _stop_detached, _wait_for_health, load_payload, run_hook
from tests.test_compress_claude import GOOD_REPLY
from workbench.settings import ANTHROPIC_DEFAULT_URL, load_settings

INHERITED_KEY = "sk-ant-from-claude-code"


def run_through_the_hook(
    svc: Service, data_dir: Path, fake: FakeAnthropic
) -> tuple[dict[str, Any], str, dict[str, str], list[str]]:
    """Spawn the service from a Claude Code-like environment, compress one event; then
    (health, ``status`` output, doctor's compressor row, what the stored rows were written by)."""
    hook_env = {**svc.env, "ANTHROPIC_API_KEY": INHERITED_KEY, "ANTHROPIC_BASE_URL": fake.base_url}
    try:
        started = run_hook("session_start", load_payload("session_start_startup"), hook_env)
        assert started.output() is not None  # it spawned the service (and did not wait for it)
        _wait_for_health(svc, timeout=60)
        payload = load_payload("post_tool_use_bash_pytest_fail")
        assert run_hook("post_tool_use", payload, hook_env).output() == {}
        health = svc.wait_idle()
        status = " ".join(run_workbench(svc.env, "status").stdout.split())
        doctor = json.loads(run_workbench(svc.env, "doctor", "--json").stdout)
    finally:
        _stop_detached(svc, data_dir)
    (row,) = [r for r in doctor if r["check"] == "compressor"]
    with sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True) as conn:
        written_by = [r[0] for r in conn.execute("SELECT generated_by FROM observations")]
    return health, status, row, written_by


@pytest.mark.slow
def test_default_settings_never_use_the_key_claude_code_passes_down(
    data_dir: Path, make_service: Any, fake_anthropic: FakeAnthropic
) -> None:
    svc: Service = make_service(start=False)
    health, status, doctor, written_by = run_through_the_hook(svc, data_dir, fake_anthropic)

    assert fake_anthropic.requests == []
    assert written_by
    assert set(written_by) == {"offline"}
    assert health["compressor"] == "offline"
    assert health["compressorReason"].startswith("offline: no compressor configured")
    assert "compressor offline" in status
    assert health["compressorReason"] in status
    assert doctor["status"] == "ok"
    assert doctor["detail"].startswith("offline"), doctor


@pytest.mark.slow
def test_settings_naming_claude_use_the_inherited_key_and_endpoint(
    data_dir: Path, make_service: Any, fake_anthropic: FakeAnthropic
) -> None:
    (data_dir / "settings.json").write_text(json.dumps({"compressor": "claude"}), "utf-8")
    fake_anthropic.queue_text(GOOD_REPLY)
    svc: Service = make_service(start=False)
    health, status, doctor, written_by = run_through_the_hook(svc, data_dir, fake_anthropic)

    (request,) = fake_anthropic.requests
    assert INHERITED_KEY in request.headers.get("x-api-key", "") + request.headers.get(
        "authorization", ""
    )
    assert written_by == ["claude:claude-haiku-4-5"]
    assert health["compressor"] == "claude"
    assert health["compressorReason"] == (
        "claude: settings compressor=claude, key from ANTHROPIC_API_KEY, "
        "endpoint from ANTHROPIC_BASE_URL"
    )
    assert "compressor claude" in status
    assert health["compressorReason"] in status
    # doctor's shell has no ANTHROPIC_API_KEY: it reports the service, not its own view
    assert doctor["status"] == "ok"
    assert doctor["detail"].startswith("claude"), doctor
    assert "not configured" not in doctor["detail"]


def test_the_inherited_key_counts_only_where_the_settings_name_claude(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", INHERITED_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/claude-code-proxy")
    default = load_settings(data_dir)
    assert (default.api_key(), default.compressor_names()) == (None, ["offline"])
    named = load_settings(data_dir, compressor_chain=["claude", "offline"])
    assert named.api_key() == INHERITED_KEY
    assert named.anthropic_endpoint() == (
        "http://127.0.0.1:9/claude-code-proxy",
        "ANTHROPIC_BASE_URL",
    )
    assert named.compressor_choice() == (
        "claude: settings compressor_chain=claude,offline, key from ANTHROPIC_API_KEY, "
        "endpoint from ANTHROPIC_BASE_URL"
    )


def test_workbenchs_own_key_never_goes_to_an_inherited_endpoint(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/claude-code-proxy")
    settings = load_settings(data_dir, anthropic_api_key="sk-ant-workbench")
    assert settings.compressor_choice() == (
        "claude: settings compressor=auto, key from WORKBENCH_ANTHROPIC_API_KEY"
    )
    assert settings.anthropic_endpoint() == (ANTHROPIC_DEFAULT_URL, "default")


def test_with_no_service_status_and_doctor_say_what_the_settings_give(
    data_dir: Path, make_service: Any
) -> None:
    (data_dir / "settings.json").write_text(json.dumps({"compressor": "claude"}), "utf-8")
    svc: Service = make_service(start=False, ANTHROPIC_API_KEY=INHERITED_KEY)
    status = " ".join(run_workbench(svc.env, "status").stdout.split())
    assert (
        "compressor (by the settings, once started) claude: settings compressor=claude, "
        "key from ANTHROPIC_API_KEY" in status
    )
    (row,) = [
        r
        for r in json.loads(run_workbench(svc.env, "doctor", "--json").stdout)
        if r["check"] == "compressor"
    ]
    assert row["detail"] == (
        "claude; by the settings (no service running): claude: settings compressor=claude, "
        "key from ANTHROPIC_API_KEY"
    )


def test_recompressing_with_claude_under_auto_says_how_to_opt_in(
    make_service: Any, fake_anthropic: FakeAnthropic
) -> None:
    service: Service = make_service(
        ANTHROPIC_API_KEY=INHERITED_KEY, ANTHROPIC_BASE_URL=fake_anthropic.base_url
    )
    status, body = service.post("/api/recompress", {"compressor": "claude"})
    assert status == 400, body
    assert "used only when the settings name claude" in json.dumps(body)
    assert fake_anthropic.requests == []
