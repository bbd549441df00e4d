"""One classification of model-provider errors, whichever SDK raised them.

Why one place: the worker's choice (back off and retry, or move the event on to the next
provider in the chain) must not depend on which SDK or which status code a provider uses for
the same problem. OpenAI says "no credit" with a 429 ``insufficient_quota``, OpenRouter with a
402, Anthropic with a 400 whose message mentions the credit balance; Anthropic says
"overloaded" with a 529, others with a 503.

``classify`` works on exceptions of both ``anthropic`` and ``openai`` without importing either
(their class trees have the same names: ``APITimeoutError`` ⊂ ``APIConnectionError`` ⊂
``APIError``, ``APIStatusError`` with ``status_code``, ``body`` and ``response``), so the
offline path never pays for their import. It returns a neutral ``ApiProblem``;
``to_compression_error`` words it for the worker, with the fix in the provider's own terms
(``ProviderText``).

The five kinds: ``rate_limit`` and ``transient`` are retried by the worker with backoff;
``auth``, ``quota`` and ``bad_request`` are terminal for this provider, so a fallback chain
moves the event on to the next one. A provider whose settings are incomplete fails with
``auth`` (no key) or ``not_configured`` (no base URL or model), terminal too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from workbench.errors import CompressionError

Kind = Literal["rate_limit", "transient", "auth", "quota", "bad_request"]
KINDS: tuple[str, ...] = ("rate_limit", "transient", "auth", "quota", "bad_request")
RETRYABLE_KINDS = frozenset({"rate_limit", "transient"})

Reason = Literal[
    "timeout",  # no answer within the client's timeout
    "connection",  # could not reach the API at all
    "quota",  # billing: no credit, spend limit (402, 429 insufficient_quota, a 4xx that says so)
    "auth",  # 401: the key is wrong
    "forbidden",  # 403: the key may not use this model
    "rate_limit",  # 429
    "overloaded",  # 529 (Anthropic)
    "server",  # 408, 409, other 5xx
    "malformed",  # a reply the SDK could not read (a proxy's HTML page, truncated JSON)
    "not_found",  # 404: usually an unknown model name
    "bad_request",  # any other 4xx: the API refused this request as written
    "client",  # the SDK failed without an HTTP status
]
_QUOTA_WORDS = ("credit", "billing", "quota", "spend limit", "usage limit", "payment")
_QUOTA_CODES = ("insufficient_quota", "billing_error", "payment_required", "insufficient_credits")
_RETRYABLE: frozenset[str] = frozenset(
    {"timeout", "connection", "rate_limit", "overloaded", "server", "malformed"}
)
_KIND_OF_REASON: dict[str, Kind] = {
    "timeout": "transient",
    "connection": "transient",
    "overloaded": "transient",
    "server": "transient",
    "malformed": "transient",
    "rate_limit": "rate_limit",
    "quota": "quota",
    "auth": "auth",
    "forbidden": "auth",
    "not_found": "bad_request",
    "bad_request": "bad_request",
}


@dataclass(frozen=True)
class ApiProblem:
    """What an SDK exception means, independent of who is asking."""

    reason: Reason
    status: int = 0
    error_type: str = ""
    detail: str = ""
    retry_after_s: float | None = None
    sdk_error: bool = True  # False: not an SDK ``APIError`` (a bug, not the API)

    @property
    def retryable(self) -> bool:
        """Can trying the same request again later help?"""
        if self.reason == "client":
            return self.sdk_error
        return self.reason in _RETRYABLE

    @property
    def kind(self) -> Kind:
        """One of the five kinds the worker and the chain act on."""
        if self.reason == "client":
            return "transient" if self.sdk_error else "bad_request"
        return _KIND_OF_REASON[self.reason]

    @property
    def said(self) -> str:
        """What the API said, e.g. ``(400 invalid_request_error: messages: …)``."""
        return f"({self.status} {self.error_type or 'error'}: {self.detail})"


def classify(exc: BaseException) -> ApiProblem:
    """The ``ApiProblem`` for an exception raised by the ``anthropic`` or ``openai`` client."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    sdk = type(exc).__module__.split(".", 1)[0] in ("anthropic", "openai")
    if sdk and "APITimeoutError" in names:  # a subclass of APIConnectionError
        return ApiProblem("timeout", detail=str(exc))
    if sdk and "APIConnectionError" in names:
        return ApiProblem("connection", detail=str(exc))
    if sdk and "APIResponseValidationError" in names:
        return ApiProblem("malformed", status=_status(exc), detail=str(exc))
    if sdk and "APIStatusError" in names:
        return _status_problem(exc)
    return ApiProblem("client", detail=str(exc), sdk_error=sdk and "APIError" in names)


@dataclass(frozen=True)
class ProviderText:
    """How to word a provider's errors: its name and where each fix lives."""

    label: str  # "the Anthropic API"
    key_fix: str  # how to set a working key
    model_setting: str  # the env var naming the model
    billing_fix: str  # where to add credit
    endpoint_setting: str  # the env var with the base URL


def to_compression_error(
    exc: BaseException, provider: ProviderText, model: str
) -> CompressionError:
    """The ``CompressionError`` for an SDK exception: a kind, retryable or not, and a fix."""
    problem = classify(exc)
    message = _message(problem, exc, provider, model)
    error = CompressionError(message, retryable=problem.retryable, kind=problem.kind)
    if problem.retry_after_s is not None:
        error.details["retry_after_s"] = problem.retry_after_s
    return error


def _message(problem: ApiProblem, exc: BaseException, p: ProviderText, model: str) -> str:
    reason, said = problem.reason, problem.said
    if reason == "timeout":
        return (
            f"{p.label} did not answer in time; will retry later (raise "
            "WORKBENCH_LLM_TIMEOUT_S if this keeps happening)."
        )
    if reason == "connection":
        return (
            f"could not reach {p.label} ({exc}); will retry later. Check the network or "
            f"{p.endpoint_setting}."
        )
    if reason == "malformed":
        return f"{p.label} sent a reply that could not be read ({exc}); will retry later."
    if reason == "client":
        return f"the client for {p.label} failed: {exc}"
    if reason == "quota":
        return (
            f"{p.label} refused the request for billing reasons {said}. {p.billing_fix}; queued "
            "events are kept and will be compressed once it is fixed (or by the next provider "
            "in WORKBENCH_COMPRESSOR_CHAIN)."
        )
    if reason == "auth":
        return f"{p.label} rejected the API key {said}. {p.key_fix}"
    if reason == "forbidden":
        return (
            f"the API key may not use model {model!r} {said}. Use a key with access, or set "
            f"{p.model_setting} to a model it can use; queued events are kept."
        )
    if reason == "rate_limit":
        return f"{p.label} rate limit reached {said}; will retry later."
    if reason in ("overloaded", "server"):
        what = "is overloaded" if reason == "overloaded" else "had a server error"
        return f"{p.label} {what} {said}; will retry later."
    if reason == "not_found":
        return (
            f"{p.label} does not know model {model!r} {said}. Set {p.model_setting} to a "
            "valid model name."
        )
    return (
        f"{p.label} rejected the request {said}. This event will not be retried with this "
        f"provider; if every event fails this way, check {p.model_setting} (now {model!r})."
    )


class _Found(TypedDict):
    """The fields every status-based ``ApiProblem`` carries (passed on with ``**``)."""

    status: int
    error_type: str
    detail: str


def _status_problem(exc: Any) -> ApiProblem:
    status = _status(exc)
    error = _error_object(getattr(exc, "body", None))
    code = str(error.get("code") or "")
    error_type = str(error.get("type") or error.get("status") or code or "error")
    detail = str(error.get("message") or getattr(exc, "message", None) or exc)
    found: _Found = {"status": status, "error_type": error_type, "detail": detail}
    lowered = detail.lower()
    if status == 402 or code in _QUOTA_CODES or error_type in _QUOTA_CODES:
        return ApiProblem("quota", **found)
    if status == 429:
        # "exceeded your current quota" also names a per-minute limit (Gemini): only a code
        # or a word about money makes a 429 a quota problem.
        if "credit" in lowered:
            return ApiProblem("quota", **found)
        return ApiProblem("rate_limit", retry_after_s=_retry_after(exc), **found)
    if 400 <= status < 500 and any(w in lowered for w in _QUOTA_WORDS):
        return ApiProblem("quota", **found)
    if status == 401:
        return ApiProblem("auth", **found)
    if status == 403:
        return ApiProblem("forbidden", **found)
    if status == 529:
        return ApiProblem("overloaded", **found)
    if status in (408, 409) or status >= 500:
        return ApiProblem("server", **found)
    if status == 404:
        return ApiProblem("not_found", **found)
    return ApiProblem("bad_request", **found)


def _status(exc: Any) -> int:
    status = getattr(exc, "status_code", None)
    if status is None:
        response = getattr(exc, "response", None)
        status = getattr(response, "status_code", 0)
    try:
        return int(status or 0)
    except (TypeError, ValueError):
        return 0


def _error_object(body: Any) -> dict[str, Any]:
    """The error object in any of the shapes providers send.

    anthropic keeps the whole envelope (``{"type": "error", "error": {…}}``); openai keeps what
    is inside ``"error"``; Gemini's OpenAI endpoint wraps it in a list (``[{"error": {…}}]``).
    """
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    return body if isinstance(body, dict) else {}


def _retry_after(exc: Any) -> float | None:
    """Seconds from ``retry-after`` (or ``retry-after-ms``), else None."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return float(raw) * scale
        except ValueError:
            continue
    return None
