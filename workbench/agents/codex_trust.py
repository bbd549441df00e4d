"""Whether Codex CLI trusts workbench's hooks: Codex runs a user's hook only once trusted.

Codex 0.171 reviews every hook in ``$CODEX_HOME/hooks.json`` before running it (its TUI asks
"Hooks need review" at start: "Trust all and continue"; ``codex exec`` skips an untrusted
hook silently). Trusting writes, to ``$CODEX_HOME/config.toml``::

    [hooks.state."<abs path of hooks.json>:<event>:<group index>:<hook index>"]
    trusted_hash = "sha256:<hex>"

(openai/codex ``codex-rs/hooks/src/engine/discovery.rs``: ``hook_key``, ``command_hook_hash``;
``codex-rs/config/src/fingerprint.rs``: ``version_for_toml``). The key is positional, which
is why install never moves a group (``claude_settings.with_ours``). The hash is SHA-256 of
the canonical JSON (keys sorted, no spaces) of ``{"event_name": <snake_case event>,
"matcher"?: …, "hooks": [<the one hook, normalised>]}``, the hook normalised to ``type``,
``command``, ``timeout`` (600 when absent; for SessionEnd 1 when absent and 3 at most),
``async`` and ``statusMessage`` when set; fields that are absent are left out, as TOML has
no null. Checked against the hashes the real
``codex app-server`` reports (``hooks/list`` ``currentHash``) in ``tests/test_install_codex.py``
and, for every installed hook, by the real TUI's trust in ``tests/test_real_codex.py``.

Install does not write the trust itself: it is Codex's review of a program that runs outside
its sandbox, the user's decision in Codex's own screen (a tool that trusted its own hooks would
make the review meaningless). Install and ``doctor`` tell the user the one step instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Any, NamedTuple

from workbench import config_file
from workbench.agents import claude_settings

DEFAULT_TIMEOUT = 600  # seconds: Codex's own default for a hook without ``timeout``
# SessionEnd runs as Codex exits: 1 s when unset, at most 3 s (what 0.171's hooks/list shows).
SESSION_END_TIMEOUT = (1, 3)
# Codex drops a group's matcher for these events (they have nothing to match on).
NO_MATCHER = frozenset({"UserPromptSubmit", "Stop"})
# What the user does, in Codex's own words; ``doctor`` and install print it.
STEP = (
    'start `codex` in a terminal and answer "Hooks need review" with "Trust all and continue" '
    "(or open /hooks and press t); until then Codex runs none of them, and `codex exec` "
    "skips them without a word"
)


class Hook(NamedTuple):
    """One of our hooks as Codex sees it."""

    event: str
    key: str  # the ``hooks.state`` key Codex looks up
    current_hash: str  # what Codex computes for it now
    status: str  # "trusted", "untrusted", "modified" (trusted once, changed since), "disabled"


def event_label(event: str) -> str:
    """``SessionStart`` -> ``session_start``: the event's name in keys and hashes."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


def hook_key(hooks_file: Path, event: str, group: int, handler: int) -> str:
    return f"{hooks_file}:{event_label(event)}:{group}:{handler}"


def hook_hash(event: str, group: dict[str, Any], handler: dict[str, Any]) -> str:
    """The hash Codex compares with ``trusted_hash`` for ``handler`` of ``group``."""
    given = handler.get("timeout")
    timeout = max(given, 1) if isinstance(given, int) else None
    if event == "SessionEnd":
        default, most = SESSION_END_TIMEOUT
        timeout = min(timeout or default, most)
    normalised: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": timeout or DEFAULT_TIMEOUT,
        "async": handler.get("async") is True,
    }
    if isinstance(handler.get("statusMessage"), str):
        normalised["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": event_label(event), "hooks": [normalised]}
    if isinstance(group.get("matcher"), str) and event not in NO_MATCHER:
        identity["matcher"] = group["matcher"]
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def states(config_path: Path) -> dict[str, Any]:
    """``hooks.state`` of Codex's config.toml ({} when absent or not the expected shape).

    A config.toml that is not TOML is reported by ``doctor``'s MCP check already.
    """
    try:
        data = tomllib.loads(config_file.read_text(config_path) or "")
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError):
        return {}
    hooks = data.get("hooks")
    found = hooks.get("state") if isinstance(hooks, dict) else None
    return found if isinstance(found, dict) else {}


def _status(state: Any, current: str) -> str:
    if not isinstance(state, dict):
        return "untrusted"
    if state.get("enabled") is False:
        return "disabled"
    trusted = state.get("trusted_hash")
    if not isinstance(trusted, str):
        return "untrusted"
    return "trusted" if trusted == current else "modified"


def review(hooks_path: Path, config_path: Path) -> list[Hook]:
    """Each of our hooks in ``hooks_path`` with Codex's trust in it, in file order."""
    absolute = Path(os.path.abspath(hooks_path))
    real = Path(os.path.realpath(hooks_path))
    found = states(config_path)
    hooks = claude_settings.read(hooks_path).get("hooks")
    out: list[Hook] = []
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for g, group in enumerate(groups if isinstance(groups, list) else ()):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for h, handler in enumerate(handlers if isinstance(handlers, list) else ()):
                if not (
                    isinstance(handler, dict)
                    and claude_settings.is_our_command(handler.get("command"))
                ):
                    continue
                current = hook_hash(event, group, handler)
                # Codex keys by its CODEX_HOME as given; a symlinked home may be resolved.
                keys = [hook_key(real, event, g, h), hook_key(absolute, event, g, h)]
                state = next((found[k] for k in keys if k in found), None)
                out.append(Hook(event, keys[0], current, _status(state, current)))
    return out


def problem(hooks: list[Hook]) -> str | None:
    """What ``doctor`` and install say when some of ours will not run (None: all trusted)."""
    untrusted = [h.event for h in hooks if h.status == "untrusted"]
    modified = [h.event for h in hooks if h.status == "modified"]
    disabled = [h.event for h in hooks if h.status == "disabled"]
    parts = []
    if untrusted:
        parts.append(f"not trusted by Codex yet ({', '.join(untrusted)})")
    if modified:
        parts.append(
            f"changed since you trusted them ({', '.join(modified)}: a reinstall with another "
            "interpreter, checkout or data dir)"
        )
    if not parts and not disabled:
        return None
    said = f"workbench's Codex hooks are {' and '.join(parts)}: {STEP}" if parts else ""
    if disabled:
        off = (
            f"turned off in Codex ({', '.join(disabled)}): turn them on in /hooks, or delete "
            "their `enabled = false` under [hooks.state] in config.toml"
        )
        said = f"{said}; workbench's hooks {off}" if said else f"workbench's Codex hooks are {off}"
    return said
