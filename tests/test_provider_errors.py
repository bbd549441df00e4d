"""One error classification for both SDKs: real clients against fake servers, real error shapes.

Each row is what a provider really sends (status, body, headers) and the kind the worker acts
on: ``rate_limit`` / ``transient`` are retried with backoff, ``auth`` / ``quota`` /
``bad_request`` move the event to the next provider in the chain.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import free_port
from tests.fake_anthropic import FakeAnthropic, error_body
from tests.fake_openai import FakeOpenAI
from tests.test_compress_claude import tool_event
from workbench.compress.claude import ClaudeCompressor
from workbench.compress.openai_compat import OpenAICompatCompressor
from workbench.errors import CompressionError
from workbench.provider_errors import classify


def openai_error(message: str, type_: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


OPENAI_CASES = [
    # (id, status, body, headers, kind, retry_after_s)
    (
        "openai-429-rate-limit",
        429,
        openai_error("Rate limit reached for requests", "requests", "rate_limit_exceeded"),
        {"retry-after": "7"},
        "rate_limit",
        7.0,
    ),
    (
        "openai-429-insufficient-quota",
        429,
        openai_error(
            "You exceeded your current quota, please check your plan and billing details.",
            "insufficient_quota",
            "insufficient_quota",
        ),
        {},
        "quota",
        None,
    ),
    (
        "openrouter-402-credits",
        402,
        {"error": {"code": 402, "message": "Insufficient credits. Add more using /credits"}},
        {},
        "quota",
        None,
    ),
    (
        "gemini-429-resource-exhausted",
        429,
        [
            {
                "error": {
                    "code": 429,
                    "message": "Resource exhausted.",
                    "status": "RESOURCE_EXHAUSTED",
                }
            }
        ],
        {"retry-after-ms": "1500"},
        "rate_limit",
        1.5,
    ),
    (
        "openai-401",
        401,
        openai_error("Incorrect API key provided", "invalid_request_error", "invalid_api_key"),
        {},
        "auth",
        None,
    ),
    (
        "openrouter-401",
        401,
        {"error": {"code": 401, "message": "No auth credentials found"}},
        {},
        "auth",
        None,
    ),
    ("openai-403", 403, openai_error("Country not supported", "forbidden"), {}, "auth", None),
    (
        "openai-400",
        400,
        openai_error("max_tokens is too large", "invalid_request_error"),
        {},
        "bad_request",
        None,
    ),
    (
        "ollama-404-model",
        404,
        {"error": {"message": 'model "qwen9" not found, try pulling it first'}},
        {},
        "bad_request",
        None,
    ),
    (
        "openai-500",
        500,
        openai_error("The server had an error", "server_error"),
        {},
        "transient",
        None,
    ),
    (
        "openrouter-502",
        502,
        {"error": {"code": 502, "message": "Provider down"}},
        {},
        "transient",
        None,
    ),
    ("vllm-503-html", 503, "<html>Service Unavailable</html>", {}, "transient", None),
]

ANTHROPIC_CASES = [
    (
        "anthropic-429",
        429,
        error_body("rate_limit_error", "Number of request tokens has exceeded your rate limit"),
        {"retry-after": "12"},
        "rate_limit",
        12.0,
    ),
    ("anthropic-529", 529, error_body("overloaded_error", "Overloaded"), {}, "transient", None),
    ("anthropic-500", 500, error_body("api_error", "Internal server error"), {}, "transient", None),
    (
        "anthropic-400-credit",
        400,
        error_body(
            "invalid_request_error", "Your credit balance is too low to access the Anthropic API."
        ),
        {},
        "quota",
        None,
    ),
    (
        "anthropic-401",
        401,
        error_body("authentication_error", "invalid x-api-key"),
        {},
        "auth",
        None,
    ),
    (
        "anthropic-400",
        400,
        error_body("invalid_request_error", "messages: roles must alternate"),
        {},
        "bad_request",
        None,
    ),
]


def _expect(call: Any, kind: str, retry_after_s: float | None) -> CompressionError:
    with pytest.raises(CompressionError) as caught:
        call()
    error = caught.value
    assert error.kind == kind
    assert error.retryable is (kind in ("rate_limit", "transient"))
    assert error.details.get("retry_after_s") == retry_after_s
    return error


def _observe_fails(compressor: Any, kind: str, retry_after_s: float | None) -> CompressionError:
    """``compressor.observe`` raises ``kind``; the compressor is closed either way."""
    try:
        return _expect(lambda: compressor.observe(tool_event()), kind, retry_after_s)
    finally:
        compressor.close()


def _cases(cases: list[tuple[Any, ...]]) -> pytest.MarkDecorator:
    """Parametrize a test over rows of (id, status, body, headers, kind, retry_after_s)."""
    return pytest.mark.parametrize(
        ("status", "body", "headers", "kind", "retry_after_s"),
        [case[1:] for case in cases],
        ids=[case[0] for case in cases],
    )


@_cases(OPENAI_CASES)
def test_openai_client_errors_are_classified(
    fake_openai: FakeOpenAI,
    status: int,
    body: Any,
    headers: dict[str, str],
    kind: str,
    retry_after_s: float | None,
) -> None:
    fake_openai.queue_error(status, body, headers=headers)
    compressor = OpenAICompatCompressor(fake_openai.client(), "m")
    error = _observe_fails(compressor, kind, retry_after_s)
    assert str(status) in error.message
    assert len(fake_openai.requests) == 1  # max_retries=0: the worker owns retries


@_cases(ANTHROPIC_CASES)
def test_anthropic_client_errors_are_classified_the_same_way(
    fake_anthropic: FakeAnthropic,
    status: int,
    body: Any,
    headers: dict[str, str],
    kind: str,
    retry_after_s: float | None,
) -> None:
    fake_anthropic.queue_raw(status, body, headers=headers)
    _observe_fails(
        ClaudeCompressor(fake_anthropic.client(), "claude-haiku-4-5"), kind, retry_after_s
    )


def test_timeouts_and_unreachable_servers_are_transient_for_both_clients(
    fake_openai: FakeOpenAI, fake_anthropic: FakeAnthropic
) -> None:
    fake_openai.queue_text("late", delay=2.0)
    fake_anthropic.queue_text("late", delay=2.0)
    dead = f"http://127.0.0.1:{free_port()}"
    compressors = [
        OpenAICompatCompressor(fake_openai.client(timeout=0.2), "m"),
        ClaudeCompressor(fake_anthropic.client(timeout=0.2), "c"),
        OpenAICompatCompressor(fake_openai.client(base_url=f"{dead}/v1"), "m"),
        ClaudeCompressor(fake_anthropic.client(base_url=dead), "c"),
    ]
    try:
        for compressor in compressors:
            _expect(lambda c=compressor: c.observe(tool_event()), "transient", None)
    finally:
        for compressor in compressors:
            compressor.close()


def test_a_malformed_body_is_transient_for_both_clients(
    fake_openai: FakeOpenAI, fake_anthropic: FakeAnthropic
) -> None:
    fake_openai.queue_raw(200, '{"choices": [')
    fake_anthropic.queue_raw(200, '{"content": [')
    _observe_fails(OpenAICompatCompressor(fake_openai.client(), "m"), "transient", None)
    _observe_fails(ClaudeCompressor(fake_anthropic.client(), "c"), "transient", None)


def test_an_exception_that_is_not_from_an_sdk_is_not_called_transient() -> None:
    problem = classify(ValueError("a bug of ours"))
    assert problem.sdk_error is False
    assert problem.kind == "bad_request"
    assert problem.retryable is False
