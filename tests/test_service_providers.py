"""End to end: hook events through the real service, compressed down the provider chain.

The real hook scripts post to a real service whose chain is ``claude → openai_compat →
offline``; Claude is the fake Anthropic server (answering 401), the OpenAI-compatible provider
is the fake chat-completions server standing in for a local Ollama (no key). Each observation
records which provider wrote it; health, ``workbench status`` and ``doctor`` show the chain.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service, run_workbench
from tests.fake_anthropic import FakeAnthropic
from tests.fake_openai import FakeOpenAI
from tests.hook_harness import load_payload, run_hook
from tests.test_compress_claude import GOOD_REPLY

LOCAL_MODEL = "qwen2.5:7b"


def chain_env(fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI) -> dict[str, str]:
    return {
        "WORKBENCH_COMPRESSOR_CHAIN": "claude,openai_compat,offline",
        "ANTHROPIC_API_KEY": "sk-ant-revoked",
        "WORKBENCH_ANTHROPIC_BASE_URL": fake_anthropic.base_url,
        "WORKBENCH_OPENAI_COMPAT_PROVIDER": "ollama",
        "WORKBENCH_OPENAI_COMPAT_BASE_URL": fake_openai.base_url,
        "WORKBENCH_OPENAI_COMPAT_MODEL": LOCAL_MODEL,
        "WORKBENCH_RETRY_BASE_S": "0.05",
    }


def stored(data_dir: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT title, generated_by FROM observations ORDER BY id").fetchall()


def post_tool_use(service: Service, name: str) -> None:
    assert run_hook("post_tool_use", load_payload(name), service.env).output() == {}


def test_a_hook_event_becomes_an_observation_written_by_the_openai_compatible_provider(
    make_service: Any, data_dir: Path, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    fake_anthropic.queue_error(401, "authentication_error", "invalid x-api-key")
    fake_anthropic.queue_error(401, "authentication_error", "invalid x-api-key")
    fake_openai.queue_text(GOOD_REPLY, prompt_tokens=700, completion_tokens=90)
    fake_openai.queue_error(
        402, {"error": {"code": 402, "message": "Insufficient credits. Add more using /credits"}}
    )
    service = make_service(**chain_env(fake_anthropic, fake_openai))
    post_tool_use(service, "post_tool_use_bash_pytest_fail")
    service.wait_idle()
    post_tool_use(service, "post_tool_use_read")
    health = service.wait_idle()

    rows = stored(data_dir)
    assert rows[0] == ("Queue claim test fails: 2 == 1", f"openai_compat:{LOCAL_MODEL}")
    assert [by for _, by in rows[1:]] == ["offline"] * len(rows[1:])
    assert len(rows) >= 2  # the Read became an offline observation after the 402
    assert len(fake_anthropic.requests) == 2
    request = fake_openai.requests[0]
    assert request.body["model"] == LOCAL_MODEL
    assert request.headers["authorization"] == "Bearer no-key"  # a local model needs no key
    assert "1 failed, 13 passed" in request.text_of("user")

    claude, openai_compat, offline = health["compressors"]
    assert (claude["name"], claude["configured"]) == ("claude", True)
    assert claude["lastError"]["kind"] == "auth"
    assert openai_compat["lastError"]["kind"] == "quota"
    assert openai_compat["lastOkAt"] is not None
    assert offline["lastError"] is None
    assert health["compressor"] == "claude"

    status = run_workbench(service.env, "status")
    assert "compressor chain: claude (last error: auth) → openai_compat (last error: quota)" in (
        status.stdout.replace("\n", " ")
    )


@pytest.mark.slow
def test_a_rate_limit_is_retried_by_the_worker_not_handed_down_the_chain(
    make_service: Any, data_dir: Path, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    fake_anthropic.queue_error(429, "rate_limit_error", "slow down", headers={"retry-after": "0"})
    fake_anthropic.queue_text(GOOD_REPLY)
    service = make_service(**chain_env(fake_anthropic, fake_openai))
    post_tool_use(service, "post_tool_use_bash_pytest_fail")
    service.wait_idle()
    assert stored(data_dir) == [("Queue claim test fails: 2 == 1", "claude:claude-haiku-4-5")]
    assert len(fake_anthropic.requests) == 2
    assert fake_openai.requests == []


def test_doctor_reports_each_provider_of_the_chain(data_dir: Path, make_service: Any) -> None:
    service = make_service(
        start=False,
        WORKBENCH_COMPRESSOR_CHAIN="claude,openai_compat,offline",
        WORKBENCH_OPENAI_COMPAT_PROVIDER="openrouter",
        WORKBENCH_OPENAI_COMPAT_MODEL="meta-llama/llama-3.1-8b-instruct",
    )
    out = run_workbench(service.env, "doctor", "--json")
    [check] = [c for c in json.loads(out.stdout) if c["check"] == "compressor"]
    assert check["status"] == "ok"  # offline ends the chain
    assert "claude (not configured: no Anthropic API key" in check["detail"]
    assert "openai_compat (not configured: no API key: export OPENROUTER_API_KEY" in check["detail"]
    assert "→ offline; by the settings (no service running): claude: settings " in check["detail"]


@pytest.mark.parametrize(
    ("chain", "says_key"),
    [(None, True), ("offline", False), ("claude", False), ("openai_compat", False)],
)
def test_doctor_blames_a_missing_anthropic_key_only_when_it_is_why_offline_runs(
    data_dir: Path, make_service: Any, chain: str | None, says_key: bool
) -> None:
    service = make_service(
        start=False,
        **({"WORKBENCH_COMPRESSOR_CHAIN": chain} if chain else {}),
        WORKBENCH_OPENAI_COMPAT_BASE_URL="http://127.0.0.1:9/v1",
        WORKBENCH_OPENAI_COMPAT_MODEL="llama3.2",
    )
    out = run_workbench(service.env, "doctor", "--json")
    [check] = [c for c in json.loads(out.stdout) if c["check"] == "compressor"]
    blames = "no compressor configured (compressor=auto and no WORKBENCH_ANTHROPIC_API_KEY"
    assert (blames in check["detail"]) is says_key, check["detail"]
    assert "by the settings (no service running)" in check["detail"]


def test_recompress_with_a_provider_that_is_not_configured_is_a_400_that_says_what_to_set(
    service: Service,
) -> None:
    status, body = service.post("/api/recompress", {"compressor": "openai_compat"})
    assert status == 400
    text = json.dumps(body)
    assert "openai_compat compressor is not configured" in text
    assert "WORKBENCH_OPENAI_COMPAT_PROVIDER" in text
