"""The Claude compressor: one Messages API call per tool call or summary, XML replies parsed.

Why these choices:
- ``anthropic`` is imported lazily (inside functions): it costs about a second to import, and
  hooks, the CLI's ``--help`` and the offline path must not pay for it.
- The client is built with ``max_retries=0``: the worker owns retries and backs off between
  them, so the SDK retrying too would multiply waits and hide failures from the queue.
- Errors become ``CompressionError`` with ``retryable`` and ``kind`` set once, here
  (``classify_error``, worded over ``workbench.anthropic_api.classify``): rate limits,
  overload, 5xx and network problems are retryable; a bad key, missing permission, no credit
  and other 4xx are not, and their message says how to fix it. The worker keeps the queued
  event either way.
- A reply with no parseable ``<observation>`` is a valid "nothing worth keeping" (zero
  observations), not an error. A reply with no parseable ``<summary>`` falls back to the
  offline digest, marked ``generated_by="offline"``, with the tokens the call cost.
- Files the model leaves out are filled in from the tool input (the offline rules' paths), so
  file history works whichever compressor wrote an observation.
- ``discovery_tokens`` is what the call cost: input + output + cache write + cache read tokens.
"""

from __future__ import annotations

from typing import Any

from workbench.anthropic_api import build_client, classify
from workbench.compress.digest import summarize_offline
from workbench.compress.prompts import (
    OBSERVATION_SYSTEM,
    SUMMARY_SYSTEM,
    PromptLimits,
    observation_prompt,
    summary_prompt,
)
from workbench.compress.rules.call import ToolCall
from workbench.compress.rules.edits import EDIT_RULES
from workbench.compress.rules.reads import READ_RULES
from workbench.compress.xml import parse_observations, parse_summary
from workbench.errors import CompressionError
from workbench.models import (
    CompressionResult,
    ObservationDraft,
    SummaryDraft,
    SummaryRequest,
    ToolEvent,
)
from workbench.settings import Settings

OBSERVATION_MAX_TOKENS = 1_500
SUMMARY_MAX_TOKENS = 1_000
_KEY_FIX = (
    "Set a valid key in ANTHROPIC_API_KEY (or WORKBENCH_ANTHROPIC_API_KEY) and restart the "
    "service, or set WORKBENCH_COMPRESSOR=offline; queued events are kept and will be "
    "compressed once the key works."
)


class ClaudeCompressor:
    """Observations and summaries written by Claude through the Messages API."""

    name = "claude"

    def __init__(
        self,
        client: Any,
        model: str,
        *,
        limits: PromptLimits | None = None,
        observation_max_tokens: int = OBSERVATION_MAX_TOKENS,
        summary_max_tokens: int = SUMMARY_MAX_TOKENS,
    ) -> None:
        self.client = client
        self.model = model
        self.limits = limits or PromptLimits()
        self.observation_max_tokens = observation_max_tokens
        self.summary_max_tokens = summary_max_tokens

    @classmethod
    def from_settings(cls, settings: Settings) -> ClaudeCompressor:
        """A compressor for ``settings``; raises ``CompressionError`` when no key is set."""
        key = settings.api_key()
        if not key:
            raise CompressionError(
                f"the claude compressor needs an Anthropic API key and none is set. {_KEY_FIX}",
                retryable=False,
                kind="auth",
            )
        return cls(build_client(settings, max_retries=0), settings.model)

    @property
    def generated_by(self) -> str:
        return f"claude:{self.model}"

    def observe(self, event: ToolEvent) -> CompressionResult:
        """Zero or more observations for one tool call, with what the call cost."""
        text, tokens = self._ask(
            OBSERVATION_SYSTEM, observation_prompt(event, self.limits), self.observation_max_tokens
        )
        drafts = parse_observations(text)
        if drafts:
            drafts = _with_files(drafts, event)
        return CompressionResult(
            observations=drafts, discovery_tokens=tokens, generated_by=self.generated_by
        )

    def summarize(self, request: SummaryRequest) -> CompressionResult:
        """A summary for one prompt; the offline digest when the reply has no usable one."""
        text, tokens = self._ask(
            SUMMARY_SYSTEM, summary_prompt(request, self.limits), self.summary_max_tokens
        )
        summary = parse_summary(text)
        if summary is None:
            return CompressionResult(
                summary=summarize_offline(request), discovery_tokens=tokens, generated_by="offline"
            )
        return CompressionResult(
            summary=_with_summary_files(summary, request),
            discovery_tokens=tokens,
            generated_by=self.generated_by,
        )

    def close(self) -> None:
        """Close the HTTP client's connections."""
        close = getattr(self.client, "close", None)
        if callable(close):
            close()

    def _ask(self, system: str, user: str, max_tokens: int) -> tuple[str, int]:
        """(reply text, tokens used) for one request; API errors become ``CompressionError``."""
        import anthropic

        try:
            message = self.client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=system,
                messages=[{"role": "user", "content": user}],
            )
        except anthropic.AnthropicError as exc:
            raise classify_error(exc, self.model) from exc
        text = "".join(
            getattr(block, "text", "") or ""
            for block in getattr(message, "content", None) or []
            if getattr(block, "type", "") == "text"
        )
        return text, usage_tokens(getattr(message, "usage", None))


def usage_tokens(usage: Any) -> int:
    """input + output + cache creation + cache read tokens (missing counts are 0)."""
    if usage is None:
        return 0
    fields = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    return sum(value for name in fields if isinstance(value := getattr(usage, name, 0), int))


def classify_error(exc: Exception, model: str) -> CompressionError:
    """The ``CompressionError`` for an SDK exception: retryable or not, a kind, a fix.

    What the exception means is decided once, in ``workbench.anthropic_api.classify`` (shared
    with the knowledge agent); the wording here is the worker's: it retries later and keeps
    the queued event.
    """
    problem = classify(exc)
    reason, said = problem.reason, problem.said
    if reason == "timeout":
        return CompressionError(
            "the Anthropic API did not answer in time; will retry later (raise "
            "WORKBENCH_LLM_TIMEOUT_S if this keeps happening).",
            retryable=True,
            kind="transient",
        )
    if reason == "connection":
        return CompressionError(
            f"could not reach the Anthropic API ({exc}); will retry later. Check the network "
            "or WORKBENCH_ANTHROPIC_BASE_URL.",
            retryable=True,
            kind="transient",
        )
    if reason == "client":
        return CompressionError(
            f"the Anthropic client failed: {exc}",
            retryable=problem.retryable,
            kind="transient" if problem.retryable else "error",
        )
    if reason == "quota":
        return CompressionError(
            f"Anthropic refused the request for billing reasons {said}. Add credit or raise "
            "the spend limit at https://console.anthropic.com/settings/billing, or set "
            "WORKBENCH_COMPRESSOR=offline; queued events are kept and will be compressed "
            "once it is fixed.",
            retryable=False,
            kind="quota",
        )
    if reason == "auth":
        return CompressionError(
            f"Anthropic rejected the API key {said}. {_KEY_FIX}", retryable=False, kind="auth"
        )
    if reason == "forbidden":
        return CompressionError(
            f"the API key may not use model {model!r} {said}. Use a key with access, or set "
            "WORKBENCH_MODEL to a model it can use; queued events are kept.",
            retryable=False,
            kind="auth",
        )
    if reason == "rate_limit":
        error = CompressionError(
            f"Anthropic rate limit reached {said}; will retry later.",
            retryable=True,
            kind="rate_limit",
        )
        if problem.retry_after_s is not None:
            error.details["retry_after_s"] = problem.retry_after_s
        return error
    if reason in ("overloaded", "server"):
        what = "is overloaded" if reason == "overloaded" else "had a server error"
        return CompressionError(
            f"the Anthropic API {what} {said}; will retry later.",
            retryable=True,
            kind="transient",
        )
    if reason == "not_found":
        return CompressionError(
            f"Anthropic does not know model {model!r} {said}. Set WORKBENCH_MODEL to a valid "
            "model name (e.g. claude-haiku-4-5).",
            retryable=False,
            kind="bad_request",
        )
    return CompressionError(
        f"Anthropic rejected the request {said}. This event will not be retried; if every "
        f"event fails this way, check WORKBENCH_MODEL (now {model!r}).",
        retryable=False,
        kind="bad_request",
    )


def _with_files(drafts: list[ObservationDraft], event: ToolEvent) -> list[ObservationDraft]:
    """Fill files the model left out from the tool input (Read → read; Edit/Write → modified)."""
    call = ToolCall.from_event(event)
    path = call.path("file_path", "notebook_path")
    if not path:
        return drafts
    relative = call.rel(path)
    key = "files_modified" if call.tool in EDIT_RULES else "files_read"
    if call.tool not in EDIT_RULES and call.tool not in READ_RULES:
        return drafts
    return [
        d if (d.files_read or d.files_modified) else d.model_copy(update={key: [relative]})
        for d in drafts
    ]


def _with_summary_files(summary: SummaryDraft, request: SummaryRequest) -> SummaryDraft:
    """Files read/edited come from the stored observations when the model gave none."""
    update: dict[str, list[str]] = {}
    if not summary.files_read:
        update["files_read"] = list(
            dict.fromkeys(f for o in request.observations for f in o.files_read)
        )
    if not summary.files_edited:
        update["files_edited"] = list(
            dict.fromkeys(f for o in request.observations for f in o.files_modified)
        )
    return summary.model_copy(update=update) if update else summary
