"""What every model-backed compressor shares: prompts, strict parsing, file filling.

A provider module (``claude``, ``openai_compat``) only says how to send one request and read
its reply (``_ask``); the prompts (memory text fenced as untrusted data), the parsing and
validation of the reply, and what happens when the reply has nothing usable live here once,
so every provider writes the same kind of observation.

- A reply with no parseable ``<observation>`` is a valid "nothing worth keeping" (zero
  observations), not an error. A reply with no parseable ``<summary>`` falls back to the
  offline digest, marked ``generated_by="offline"``, with the tokens the call cost.
- Files the model leaves out are filled in from the tool input (the offline rules' paths), so
  file history works whichever compressor wrote an observation.
"""

from __future__ import annotations

from typing import Any

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
from workbench.models import (
    CompressionResult,
    ObservationDraft,
    SummaryDraft,
    SummaryRequest,
    ToolEvent,
)

OBSERVATION_MAX_TOKENS = 1_500
SUMMARY_MAX_TOKENS = 1_000


class LlmCompressor:
    """Observations and summaries from a chat model; subclasses implement ``_ask``."""

    name = "llm"

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

    @property
    def generated_by(self) -> str:
        """What ``generated_by`` records, e.g. ``claude:claude-haiku-4-5``."""
        return f"{self.name}:{self.model}"

    def observe(self, event: ToolEvent) -> CompressionResult:
        """Zero or more observations for one tool call, with what the call cost."""
        text, tokens = self._ask(
            OBSERVATION_SYSTEM, observation_prompt(event, self.limits), self.observation_max_tokens
        )
        drafts = parse_observations(text)
        if drafts:
            drafts = with_files(drafts, event)
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
            summary=with_summary_files(summary, request),
            discovery_tokens=tokens,
            generated_by=self.generated_by,
        )

    def close(self) -> None:
        """Close the HTTP client's connections."""
        close = getattr(self.client, "close", None)
        if callable(close):
            close()

    def _ask(self, system: str, user: str, max_tokens: int) -> tuple[str, int]:
        """(reply text, tokens used) for one request; errors become ``CompressionError``."""
        raise NotImplementedError


def with_files(drafts: list[ObservationDraft], event: ToolEvent) -> list[ObservationDraft]:
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


def with_summary_files(summary: SummaryDraft, request: SummaryRequest) -> SummaryDraft:
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
