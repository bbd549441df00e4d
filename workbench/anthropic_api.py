"""The one place that builds an ``anthropic`` client and says what its errors mean.

Shared by the Claude compressor (``compress/claude.py``) and the knowledge agent
(``knowledge/agent_claude.py``). Both need the same answer to "what went wrong?" (a bad key, no
credit, a rate limit, an overload, a request the API refused…), but they give different
advice: the compressor's worker retries later and keeps the queued event, while the agent
answers a person who is waiting. So ``classify`` returns a neutral ``ApiProblem`` and each
caller words its own message from it.

``anthropic`` is imported inside the functions: it costs about a second to import, and hooks,
``workbench --help`` and the offline paths must not pay for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from workbench.settings import Settings

Reason = Literal[
    "timeout",  # no answer within the client's timeout
    "connection",  # could not reach the API at all
    "quota",  # billing: no credit, spend limit (402, or a 4xx that says so)
    "auth",  # 401: the key is wrong
    "forbidden",  # 403: the key may not use this model
    "rate_limit",  # 429
    "overloaded",  # 529
    "server",  # 408, 409, other 5xx
    "not_found",  # 404: usually an unknown model name
    "bad_request",  # any other 4xx: the API refused this request as written
    "client",  # the SDK failed without an HTTP status
]
_QUOTA_WORDS = ("credit balance", "billing", "quota", "spend limit", "usage limit", "payment")
_RETRYABLE: frozenset[str] = frozenset(
    {"timeout", "connection", "rate_limit", "overloaded", "server"}
)


@dataclass(frozen=True)
class ApiProblem:
    """What an SDK exception means, independent of who is asking."""

    reason: Reason
    status: int = 0
    error_type: str = ""
    detail: str = ""
    retry_after_s: float | None = None
    sdk_error: bool = True  # False: not an ``anthropic.APIError`` (a bug, not the API)

    @property
    def retryable(self) -> bool:
        """Can trying the same request again later help?"""
        if self.reason == "client":
            return self.sdk_error
        return self.reason in _RETRYABLE

    @property
    def said(self) -> str:
        """What the API said, e.g. ``(400 invalid_request_error: messages: …)``."""
        return f"({self.status} {self.error_type or 'error'}: {self.detail})"


def classify(exc: Exception) -> ApiProblem:
    """The ``ApiProblem`` for an exception raised by the ``anthropic`` client."""
    import anthropic

    if isinstance(exc, anthropic.APITimeoutError):  # a subclass of APIConnectionError
        return ApiProblem("timeout", detail=str(exc))
    if isinstance(exc, anthropic.APIConnectionError):
        return ApiProblem("connection", detail=str(exc))
    if isinstance(exc, anthropic.APIStatusError):
        return _status_problem(exc)
    return ApiProblem("client", detail=str(exc), sdk_error=isinstance(exc, anthropic.APIError))


def build_client(settings: Settings, *, max_retries: int) -> Any:
    """An ``anthropic.Anthropic`` for ``settings`` (key, base URL, timeout).

    ``max_retries`` is the caller's choice: the compressor's worker owns its retries (0), the
    interactive agent lets the SDK retry a rate limit or an overload a few times.
    Call only when ``settings.api_key()`` is set.
    """
    import anthropic

    return anthropic.Anthropic(
        api_key=settings.api_key(),
        base_url=settings.anthropic_base_url or None,
        max_retries=max_retries,
        timeout=settings.llm_timeout_s,
    )


def _status_problem(exc: Any) -> ApiProblem:
    status = int(getattr(exc, "status_code", 0) or 0)
    error_type = getattr(exc, "type", None) or _body_field(exc, "type") or "error"
    detail = getattr(exc, "api_message", None) or _body_field(exc, "message") or str(exc)
    found = {"status": status, "error_type": error_type, "detail": detail}
    if status == 402 or (400 <= status < 500 and any(w in detail.lower() for w in _QUOTA_WORDS)):
        return ApiProblem("quota", **found)
    if status == 401:
        return ApiProblem("auth", **found)
    if status == 403:
        return ApiProblem("forbidden", **found)
    if status == 429:
        return ApiProblem("rate_limit", retry_after_s=_retry_after(exc), **found)
    if status == 529:
        return ApiProblem("overloaded", **found)
    if status in (408, 409) or status >= 500:
        return ApiProblem("server", **found)
    if status == 404:
        return ApiProblem("not_found", **found)
    return ApiProblem("bad_request", **found)


def _body_field(exc: Any, name: str) -> str | None:
    body = getattr(exc, "body", None)
    error = body.get("error") if isinstance(body, dict) else None
    value = error.get(name) if isinstance(error, dict) else None
    return value if isinstance(value, str) else None


def _retry_after(exc: Any) -> float | None:
    response = getattr(exc, "response", None)
    raw = response.headers.get("retry-after") if response is not None else None
    try:
        return float(raw) if raw is not None else None
    except ValueError:
        return None
