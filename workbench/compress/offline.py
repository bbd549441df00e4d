"""The offline compressor: deterministic rules, no network, no model, no heavy imports.

Why rules and not "store the raw call": a raw tool call is thousands of tokens of file
content; an observation is a title, a few facts and the files it touched. The rules pick the
facts a person would write down (which file, which lines, what was replaced; which tests fail
and the first error; which commit; how many matches), so recall and the context builder work
the same with or without an API key.

Rules by tool (the modules of ``workbench.compress.rules``):
- Edit / MultiEdit → ``change``; ``refactor`` when the edit only renames one identifier or
  moves a block; NotebookEdit → ``change``; Write → ``feature`` for a new file (Claude Code's
  ``type: "create"``), ``change`` for an overwrite.
- Bash → ``rules.bash``: failing tests/builds → ``bugfix``, commits and edits → ``change``,
  moves → ``refactor``, secrets → ``security_*``, everything else → ``discovery``.
- Read, Grep, Glob, LS, WebFetch, WebSearch, Task/Agent → ``discovery``.
- TodoWrite, ExitPlanMode → ``decision`` (the plan the agent chose).
- File tools whose content holds a secret-looking value → ``security_alert`` (the kind is
  named, never the value); touching ``.env``/keys/credentials → ``security_note``.
- A tool that reports its own failure (``Error: …``, ``<tool_use_error>``) → ``discovery``
  saying what failed.
- Unknown and MCP tools → a generic ``discovery`` naming the tool, its main inputs and the
  first line of its result.

Zero observations only for a call that carries no information at all: no non-empty input
value and no response text, or an unknown tool whose response is empty.

Every title, fact and narrative passes ``mask_secrets`` last, so a key typed into a command
never reaches the store through an observation.

``discovery_tokens`` is ``ceil(chars / 4)`` of the raw tool input and response: what reading
the call cost the agent, which is what the economics footer compares with the few tokens an
observation costs to re-read. The offline summary counts the prompt and the last assistant
message only (its observations were already counted). No model is called, so there is no
other cost to record.
"""

from __future__ import annotations

from workbench.compress.digest import summarize_offline
from workbench.compress.rules.bash import observe_bash
from workbench.compress.rules.call import ToolCall
from workbench.compress.rules.edits import EDIT_RULES
from workbench.compress.rules.reads import READ_RULES, observe_generic
from workbench.compress.rules.secrets import mask_secrets, secret_kinds
from workbench.compress.rules.shell import FailureMemory
from workbench.compress.rules.text import dedupe, short
from workbench.models import CompressionResult, ObservationDraft, SummaryRequest, ToolEvent
from workbench.tokens import estimate_tokens

MAX_FACTS = 12
MAX_NARRATIVE = 600
RULES = {**EDIT_RULES, **READ_RULES}


class OfflineCompressor:
    """Deterministic rules; the default when no API key is set."""

    name = "offline"

    def __init__(self) -> None:
        self._failures = FailureMemory()

    def observe(self, event: ToolEvent) -> CompressionResult:
        """One observation for a tool call, or none when the call carries no information."""
        draft = observe_call(ToolCall.from_event(event), self._failures)
        return CompressionResult(
            observations=[finish(draft)] if draft is not None else [],
            discovery_tokens=estimate_tokens(event.tool_input, event.tool_response),
            generated_by=self.name,
        )

    def summarize(self, request: SummaryRequest) -> CompressionResult:
        """A digest built from the prompt, its observations and the last assistant message."""
        return CompressionResult(
            summary=summarize_offline(request),
            discovery_tokens=estimate_tokens(request.user_prompt, request.last_assistant_message),
            generated_by=self.name,
        )


def observe_call(call: ToolCall, failures: FailureMemory) -> ObservationDraft | None:
    """The rule for ``call.tool`` (unknown tools get the generic rule)."""
    if not call.has_information():
        return None
    if call.tool == "Bash":
        return observe_bash(call, failures)
    error = call.failure()
    if error:
        return _failed(call, error)
    return RULES.get(call.tool, observe_generic)(call)


def finish(draft: ObservationDraft) -> ObservationDraft:
    """Mask secrets, drop empty facts, bound sizes: the last step of every observation."""
    facts = dedupe(f for f in draft.facts if f and not f.isspace())[:MAX_FACTS]
    fields = [draft.title, draft.subtitle, draft.narrative, *facts]
    if secret_kinds("\n".join(fields)):  # rare: mask field by field only then
        fields = [mask_secrets(field) for field in fields]
    title, subtitle, narrative, *facts = fields
    return draft.model_copy(
        update={
            "title": title or "Tool call",
            "subtitle": subtitle,
            "narrative": short(narrative, MAX_NARRATIVE),
            "facts": facts,
        }
    )


def _failed(call: ToolCall, error: str) -> ObservationDraft:
    """A tool that reported its own failure: say what failed, on which file."""
    path = call.path("file_path", "notebook_path", "path")
    target = f" on {call.rel(path)}" if path else ""
    return call.draft(
        "discovery",
        f"{call.tool} failed{target}",
        [f"error: {error}"],
        f"{call.tool}{target} failed: {error}",
        read=[path] if path else [],
    )
