"""The fallback chain: terminal errors move an event on, retryable ones go back to the worker.

Real clients against the fake Anthropic and OpenAI-compatible servers; the chain is built from
settings exactly as the service builds it (``build_compressor(settings)``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.fake_anthropic import FakeAnthropic
from tests.fake_openai import FakeOpenAI
from tests.test_compress_claude import GOOD_REPLY, summary_request, tool_event
from workbench.compress.base import build_compressor
from workbench.compress.chain import ChainCompressor
from workbench.errors import CompressionError
from workbench.settings import Settings, load_settings

LOCAL_MODEL = "qwen2.5:7b"
CHAIN = ["claude", "openai_compat", "offline"]


def chain_settings(
    data_dir: Path, anthropic: FakeAnthropic, openai: FakeOpenAI, **extra: Any
) -> Settings:
    options: dict[str, Any] = {
        "compressor_chain": CHAIN,
        "anthropic_api_key": "sk-ant-test",
        "anthropic_base_url": anthropic.base_url,
        "openai_compat_base_url": openai.base_url,
        "openai_compat_model": LOCAL_MODEL,
        "llm_timeout_s": 5.0,
    }
    options.update(extra)
    return load_settings(data_dir, **options)


def chain_of(settings: Settings) -> ChainCompressor:
    chain = build_compressor(settings)
    assert isinstance(chain, ChainCompressor)
    return chain


@pytest.mark.parametrize(
    ("status", "error_type", "message", "kind"),
    [
        (401, "authentication_error", "invalid x-api-key", "auth"),
        (400, "invalid_request_error", "Your credit balance is too low", "quota"),
        (400, "invalid_request_error", "messages: roles must alternate", "bad_request"),
    ],
)
def test_a_terminal_error_moves_the_event_to_the_next_provider(
    data_dir: Path,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
    status: int,
    error_type: str,
    message: str,
    kind: str,
) -> None:
    fake_anthropic.queue_error(status, error_type, message)
    fake_openai.queue_text(GOOD_REPLY)
    chain = chain_of(chain_settings(data_dir, fake_anthropic, fake_openai))
    try:
        result = chain.observe(tool_event())
    finally:
        chain.close()
    assert result.generated_by == f"openai_compat:{LOCAL_MODEL}"
    assert [o.type for o in result.observations] == ["bugfix"]
    assert len(fake_anthropic.requests) == 1
    assert len(fake_openai.requests) == 1
    claude, openai_compat, offline = chain.status()
    assert claude["lastError"]["kind"] == kind
    assert openai_compat["lastError"] is None
    assert openai_compat["lastOkAt"] is not None
    assert offline["lastOkAt"] is None


@pytest.mark.parametrize(
    ("status", "error_type", "kind"),
    [(429, "rate_limit_error", "rate_limit"), (529, "overloaded_error", "transient")],
)
def test_a_retryable_error_goes_back_to_the_worker_and_not_down_the_chain(
    data_dir: Path,
    fake_anthropic: FakeAnthropic,
    fake_openai: FakeOpenAI,
    status: int,
    error_type: str,
    kind: str,
) -> None:
    fake_anthropic.queue_error(status, error_type, "try later", headers={"retry-after": "3"})
    chain = chain_of(chain_settings(data_dir, fake_anthropic, fake_openai))
    try:
        with pytest.raises(CompressionError) as caught:
            chain.observe(tool_event())
    finally:
        chain.close()
    assert caught.value.retryable is True
    assert caught.value.kind == kind
    assert fake_openai.requests == []
    assert chain.status()[0]["lastError"]["kind"] == kind


def test_an_unconfigured_provider_is_skipped_and_offline_ends_the_chain(
    data_dir: Path, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    fake_openai.queue_error(
        402, {"error": {"code": 402, "message": "Insufficient credits. Add more using /credits"}}
    )
    settings = chain_settings(data_dir, fake_anthropic, fake_openai, anthropic_api_key=None)
    assert settings.provider_problem("claude") is not None
    chain = chain_of(settings)
    try:
        first = chain.observe(tool_event("Read", {"file_path": "/home/dev/proj/a.py"}, "x = 1"))
        second = chain.observe(tool_event())
    finally:
        chain.close()
    assert first.generated_by == "offline"
    assert fake_anthropic.requests == []  # never built: no key
    claude, openai_compat, _ = chain.status()
    assert claude["lastError"]["kind"] == "auth"
    assert openai_compat["lastError"]["kind"] == "quota"
    # The second event goes to openai_compat again (a quota can be topped up at any time).
    assert len(fake_openai.requests) == 2
    assert second.generated_by == f"openai_compat:{LOCAL_MODEL}"


def test_when_every_provider_fails_terminally_the_error_names_each(
    data_dir: Path, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    fake_anthropic.queue_error(401, "authentication_error", "invalid x-api-key")
    fake_openai.queue_error(400, {"error": {"message": "bad model", "type": "invalid_request"}})
    settings = chain_settings(
        data_dir, fake_anthropic, fake_openai, compressor_chain=["claude", "openai_compat"]
    )
    chain = chain_of(settings)
    try:
        with pytest.raises(CompressionError) as caught:
            chain.observe(tool_event())
    finally:
        chain.close()
    error = caught.value
    assert error.retryable is False
    assert error.kind == "bad_request"
    assert "claude: auth:" in error.message
    assert "openai_compat: bad_request:" in error.message
    assert "offline" in error.message  # the fix


def test_without_a_chain_the_default_is_unchanged(data_dir: Path) -> None:
    assert load_settings(data_dir).compressor_names() == ["offline"]
    with_key = load_settings(data_dir, anthropic_api_key="sk-ant-test")
    assert with_key.compressor_names() == ["claude"]
    assert with_key.active_compressor() == "claude"
    assert build_compressor(load_settings(data_dir)).name == "offline"  # the worker batches it


@pytest.mark.parametrize(
    ("env", "fix"),
    [
        ({"WORKBENCH_COMPRESSOR_CHAIN": "claude,gpt"}, "use only claude, openai_compat, offline"),
        ({"WORKBENCH_COMPRESSOR_CHAIN": "[]"}, "list at least one compressor"),
        ({"WORKBENCH_COMPRESSOR_CHAIN": "claude,claude"}, "list each once"),
        ({"WORKBENCH_COMPRESSOR_CHAIN": "offline,claude"}, "put offline last"),
        ({"WORKBENCH_OPENAI_COMPAT_API_KEY_ENV": "sk-or-v1-abc"}, "not the key itself"),
        ({"WORKBENCH_OPENAI_COMPAT_BASE_URL": "127.0.0.1:11434"}, "http://127.0.0.1:11434/v1"),
    ],
)
def test_bad_provider_settings_say_how_to_fix_them(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, env: dict[str, str], fix: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ValueError, match="compressor_chain|openai_compat") as caught:
        load_settings(data_dir)
    assert fix in str(caught.value)


def test_a_chain_from_the_env_accepts_commas_and_json(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_COMPRESSOR_CHAIN", " claude , offline ")
    assert load_settings(data_dir).compressor_names() == ["claude", "offline"]
    monkeypatch.setenv("WORKBENCH_COMPRESSOR_CHAIN", '["openai_compat", "offline"]')
    assert load_settings(data_dir).active_compressor() == "openai_compat"


def test_a_summary_goes_down_the_chain_too(
    data_dir: Path, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    fake_anthropic.queue_error(403, "permission_error", "Your API key does not have permission")
    fake_openai.queue_text("<summary><request>Fix the race</request></summary>")
    chain = chain_of(chain_settings(data_dir, fake_anthropic, fake_openai))
    try:
        result = chain.summarize(summary_request())
    finally:
        chain.close()
    assert result.summary is not None
    assert result.summary.request == "Fix the race"
    assert result.generated_by == f"openai_compat:{LOCAL_MODEL}"
    assert chain.status()[0]["lastError"]["kind"] == "auth"


def test_an_unbuildable_provider_raises_a_fresh_error_each_time(
    data_dir: Path, fake_anthropic: FakeAnthropic, fake_openai: FakeOpenAI
) -> None:
    """Re-raising one cached error grows its traceback by every call's frames (and keeps
    the events those frames hold) for as long as the service runs."""
    import traceback

    settings = chain_settings(data_dir, fake_anthropic, fake_openai, anthropic_api_key=None)
    chain = chain_of(settings)
    caught = []
    try:
        for _ in range(3):
            try:
                chain._provider("claude")
            except CompressionError as exc:
                caught.append(exc)
    finally:
        chain.close()
    assert len(caught) == 3
    assert caught[0] is not caught[2]
    depths = {len(traceback.extract_tb(exc.__traceback__)) for exc in caught}
    assert len(depths) == 1, depths
    assert caught[2].kind == caught[0].kind
    assert caught[2].message == caught[0].message
