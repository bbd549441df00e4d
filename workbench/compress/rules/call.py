"""``ToolCall``: one event with the views every rule needs, computed once, and the draft builder.

Why one builder: every rule's output goes through ``ToolCall.draft``, so paths are always made
relative to the session's cwd and concepts always come from the files touched plus the rule's
own tags, whichever tool produced the observation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from workbench.compress.rules.secrets import is_secret_path, secret_kinds
from workbench.compress.rules.tags import concepts_for
from workbench.compress.rules.text import as_dict, dedupe, response_text, short
from workbench.models import ObservationDraft, ToolEvent

_TOOL_ERROR_TAG = re.compile(r"</?tool_use_error>")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the rules see it."""

    tool: str
    input: dict[str, Any]
    response: Any
    resp: dict[str, Any]  # the response as a dict ({} when it is not one)
    text: str  # the response's readable text, windowed
    cwd: str
    session: str

    @classmethod
    def from_event(cls, event: ToolEvent) -> ToolCall:
        return cls(
            tool=event.tool_name or "",
            input=as_dict(event.tool_input),
            response=event.tool_response,
            resp=as_dict(event.tool_response),
            text=response_text(event.tool_response),
            cwd=event.cwd or "",
            session=event.content_session_id,
        )

    def rel(self, path: Any) -> str:
        return rel(path, self.cwd)

    def has_information(self) -> bool:
        """False for a call with no non-empty input value and no response text."""
        return bool(self.text) or any(v not in (None, "", [], {}) for v in self.input.values())

    def failure(self) -> str:
        """The error text when the tool call itself failed (Claude Code's error strings)."""
        raw = self.response if isinstance(self.response, str) else self.resp.get("error")
        if not isinstance(raw, str):
            return ""
        head = raw.lstrip()[:200].lower()
        if head.startswith(("error", "<tool_use_error>")) or "tool_use_error" in head:
            return short(_TOOL_ERROR_TAG.sub("", raw), 160)
        return ""

    def path(self, *keys: str) -> str:
        """The first string path among input keys, then the response's ``filePath``."""
        for key in keys:
            value = self.input.get(key)
            if isinstance(value, str) and value:
                return value
        value = self.resp.get("filePath")
        inner = self.resp.get("file")
        if not value and isinstance(inner, dict):
            value = inner.get("filePath") or inner.get("notebookPath")
        return value if isinstance(value, str) else ""

    def draft(
        self,
        kind: str,
        title: str,
        facts: list[str],
        narrative: str,
        *,
        subtitle: str = "",
        read: list[str] | None = None,
        modified: list[str] | None = None,
        tags: list[str] | None = None,
    ) -> ObservationDraft:
        """An observation with cwd-relative files and concepts from tags + files."""
        files_read = dedupe(self.rel(p) for p in read or [])
        files_modified = dedupe(self.rel(p) for p in modified or [])
        return ObservationDraft(
            type=kind,
            title=title,
            subtitle=subtitle,
            narrative=narrative,
            facts=dedupe(facts),
            concepts=concepts_for(files_read + files_modified, tags or []),
            files_read=files_read,
            files_modified=files_modified,
        )


def rel(path: Any, cwd: str) -> str:
    """A path relative to ``cwd`` when it is inside it, else unchanged."""
    text = str(path or "").strip()
    root = cwd.rstrip("/")
    if root and text.startswith(root):
        rest = text[len(root) :]
        if not rest:
            return "."
        if rest[0] == "/":
            return rest.lstrip("/") or "."
    return text


def text_of(value: Any) -> str:
    """A string value, or ``""`` for anything else."""
    return value if isinstance(value, str) else ""


def secured(draft: ObservationDraft, path: str, content: str) -> ObservationDraft:
    """Raise a file observation to security_alert/_note when its content or path calls for it."""
    kinds = secret_kinds(content)
    if kinds:
        facts = [f"contains {kind} (value not stored)" for kind in kinds]
        return draft.model_copy(
            update={
                "type": "security_alert",
                "facts": dedupe([*facts, *draft.facts]),
                "concepts": dedupe(["security", *draft.concepts]),
                "narrative": f"{draft.narrative} The content holds {', '.join(kinds)}: rotate "
                "it if it is real and keep it out of the repository.",
            }
        )
    if is_secret_path(path):
        return draft.model_copy(
            update={"type": "security_note", "concepts": dedupe(["security", *draft.concepts])}
        )
    return draft
