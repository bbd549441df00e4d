"""Changing settings from the outside (the viewer's settings view, ``PUT /api/settings``).

Only the keys in ``EDITABLE`` can be changed this way: what a person tunes while working
(context-injection counts, exclusions) and the two engine choices (``compressor``,
``embedder``) that take effect at the next start. Paths, the port and secrets are never
editable here: the page is a convenience, not a way to reconfigure where data lives.

Validation is strict and says what to send. JSON numbers must be integers (``true`` is not
``1``), lists are lists of non-empty strings (a comma-separated string is accepted, as in
env vars), and the bounds are the ``Settings`` fields' own (``ge``/``le``), checked by
assigning to a copy of the live settings, so the page and the service can never disagree
about what is valid. An update with any bad value changes nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Literal, get_args, get_origin

from annotated_types import Ge, Le
from pydantic import ValidationError

from workbench.settings import Settings, read_settings_file

Apply = Literal["live", "restart"]

# name -> (group, label, when it takes effect, help)
EDITABLE: dict[str, tuple[str, str, Apply, str]] = {
    "context_observations": (
        "Context injection",
        "Observations listed",
        "live",
        "How many recent observations SessionStart lists as one-line rows.",
    ),
    "context_full": (
        "Context injection",
        "Observations shown in full",
        "live",
        "How many of the newest observations are shown with their narrative or facts.",
    ),
    "context_full_field": (
        "Context injection",
        "Full field",
        "live",
        "What a full observation shows: its narrative or its facts.",
    ),
    "context_summaries": (
        "Context injection",
        "Session summaries",
        "live",
        "How many recent session summaries SessionStart includes.",
    ),
    "prompt_injection": (
        "Prompt injection",
        "Inject related memories on each prompt",
        "live",
        "Add semantically related past observations to prompts (needs embeddings).",
    ),
    "prompt_injection_min_chars": (
        "Prompt injection",
        "Minimum prompt length",
        "live",
        "Shorter prompts get nothing injected.",
    ),
    "prompt_injection_count": (
        "Prompt injection",
        "Memories per prompt",
        "live",
        "How many related observations a prompt gets.",
    ),
    "file_context_min_bytes": (
        "File history",
        "Minimum file size (bytes)",
        "live",
        "Smaller files are read without their history.",
    ),
    "file_context_max": (
        "File history",
        "Observations per file",
        "live",
        "At most this many observations in a file's history before a Read.",
    ),
    "excluded_projects": (
        "Capture",
        "Excluded projects",
        "live",
        "Glob patterns (one per line) matched on the project name or the full cwd; "
        "nothing from a match is stored.",
    ),
    "skipped_tools": (
        "Capture",
        "Skipped tools",
        "live",
        "Tool names (one per line) whose calls are never stored.",
    ),
    "compressor": (
        "Engines",
        "Compressor",
        "restart",
        "auto = Claude when an API key is set, else the offline rules; openai_compat = "
        "OpenRouter, Gemini or a local model (see compressor_chain for fallbacks).",
    ),
    "embedder": (
        "Engines",
        "Embedder",
        "restart",
        "The local embedding model for semantic search; none = full text only.",
    ),
}
MAX_LIST_ITEMS = 200
MAX_ITEM_CHARS = 500


class SettingsRefused(ValueError):
    """An update that cannot be applied; ``problems`` lists ``{field, message}``."""

    def __init__(self, problems: list[dict[str, str]], *, unknown: bool = False) -> None:
        self.problems = problems
        self.unknown = unknown
        super().__init__("; ".join(f"{p['field']}: {p['message']}" for p in problems))


@dataclass
class Outcome:
    """What an accepted update did: written to the file, and where it applies."""

    saved: dict[str, Any]
    applied: list[str] = field(default_factory=list)
    restart_required: list[str] = field(default_factory=list)
    overridden: dict[str, str] = field(default_factory=dict)  # key -> env var that wins

    def message(self) -> str:
        parts = [f"saved {', '.join(sorted(self.saved))}"]
        if self.applied:
            parts.append("applied now")
        if self.restart_required:
            parts.append(
                f"restart the service for {', '.join(self.restart_required)} to take effect "
                "(`workbench stop`, then `workbench serve`)"
            )
        for key, env in sorted(self.overridden.items()):
            parts.append(f"{key} stays as {env} sets it (environment beats settings.json)")
        return "; ".join(parts)


def env_var(name: str) -> str | None:
    """The ``WORKBENCH_*`` variable that overrides ``name`` in this process, if one is set."""
    wanted = f"WORKBENCH_{name.upper()}"
    for key, value in os.environ.items():
        if key.upper() == wanted and value != "":
            return key
    return None


def describe(settings: Settings) -> list[dict[str, Any]]:
    """One entry per editable key: type, bounds, options, default, value and who sets it.

    ``value`` is what the running service uses; ``saved`` is what settings.json holds (they
    differ for a restart-only key until the restart, and when an env var overrides the file).
    """
    in_file, _ = read_settings_file(settings.settings_path)
    out = []
    for name, (group, label, apply, help_text) in EDITABLE.items():
        info = Settings.model_fields[name]
        entry: dict[str, Any] = {
            "name": name,
            "group": group,
            "label": label,
            "help": help_text,
            "apply": apply,
            "type": _kind(info.annotation),
            "value": _plain(getattr(settings, name)),
            "default": _plain(info.get_default(call_default_factory=True)),
            "saved": _plain(in_file[name]) if name in in_file else None,
            "env": env_var(name),
        }
        for meta in info.metadata:
            if isinstance(meta, Ge):
                entry["minimum"] = meta.ge
            if isinstance(meta, Le):
                entry["maximum"] = meta.le
        if entry["type"] == "choice":
            entry["options"] = list(get_args(info.annotation))
        out.append(entry)
    return out


def validate(settings: Settings, updates: Any) -> dict[str, Any]:
    """``updates`` checked and coerced (lists as lists); raises ``SettingsRefused``."""
    if not isinstance(updates, dict) or not updates:
        raise SettingsRefused(
            [{"field": "body", "message": 'send a JSON object, e.g. {"context_observations": 30}'}],
            unknown=True,
        )
    unknown = sorted(k for k in updates if k not in EDITABLE)
    if unknown:
        raise SettingsRefused(
            [
                {
                    "field": key,
                    "message": "not a setting that can be changed here; editable: "
                    + ", ".join(EDITABLE),
                }
                for key in unknown
            ],
            unknown=True,
        )
    candidate = settings.model_copy()
    problems: list[dict[str, str]] = []
    coerced: dict[str, Any] = {}
    for key, raw in updates.items():
        kind = _kind(Settings.model_fields[key].annotation)
        try:
            value = _shape(kind, raw)
            setattr(candidate, key, value)  # the field's own bounds and choices
        except ValueError as exc:  # ValidationError is a ValueError
            problems.append({"field": key, "message": _reason(exc)})
            continue
        coerced[key] = _plain(getattr(candidate, key))
    if problems:
        raise SettingsRefused(problems)
    return coerced


def apply(settings: Settings, saved: dict[str, Any]) -> Outcome:
    """Apply already-written values to the running ``settings`` where that is possible."""
    outcome = Outcome(saved=saved)
    for key, value in saved.items():
        env = env_var(key)
        if env is not None:
            outcome.overridden[key] = env
        elif EDITABLE[key][2] == "restart":
            outcome.restart_required.append(key)
        else:
            setattr(settings, key, value)
            outcome.applied.append(key)
    return outcome


# ----- helpers --------------------------------------------------------------------------------
def _kind(annotation: Any) -> str:
    if annotation is bool:
        return "boolean"
    if annotation is int:
        return "integer"
    if get_origin(annotation) is Literal:
        return "choice"
    if get_origin(annotation) is list or "list" in str(annotation):
        return "list"
    return "text"


def _shape(kind: str, raw: Any) -> Any:
    """Refuse values pydantic's lax mode would quietly convert (``true`` → 1, 2.5 → error)."""
    if kind == "integer":
        if isinstance(raw, bool) or not isinstance(raw, int):
            if isinstance(raw, float) and raw.is_integer():
                return int(raw)
            raise ValueError(f"must be a whole number, got {raw!r}")
        return raw
    if kind == "boolean":
        if not isinstance(raw, bool):
            raise ValueError(f"must be true or false, got {raw!r}")
        return raw
    if kind == "choice":
        if not isinstance(raw, str):
            raise ValueError(f"must be one of the listed options, got {raw!r}")
        return raw
    if kind == "list":
        items = raw.split(",") if isinstance(raw, str) else raw
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise ValueError("must be a list of names (or one comma-separated string)")
        cleaned = [i.strip() for i in items if i.strip()]
        if len(cleaned) > MAX_LIST_ITEMS:
            raise ValueError(f"at most {MAX_LIST_ITEMS} entries, got {len(cleaned)}")
        long = [i for i in cleaned if len(i) > MAX_ITEM_CHARS]
        if long:
            raise ValueError(f"an entry is longer than {MAX_ITEM_CHARS} characters")
        return list(dict.fromkeys(cleaned))
    return raw


def _reason(exc: ValueError) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(err["msg"].removeprefix("Value error, ") for err in exc.errors())
    return str(exc)


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, list | tuple) else value
