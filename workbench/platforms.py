"""The agent platforms workbench captures from: the values ``platform_source`` may take.

Stdlib-only and tiny: the service validates hook bodies against it, and each hook adapter
(``hooks/adapters/``) names its own value, which a test checks is listed here. Claude Code's
value is ``claude-code`` because that is what every stored row, spooled event and export
already says; the migration that added the column used it as the default.
"""

from __future__ import annotations

# platform_source value -> the ``--platform``/``--agent`` name of its adapter.
PLATFORM_SOURCES = {
    "claude-code": "claude",
    "gemini-cli": "gemini",
    "codex-cli": "codex",
    "cursor": "cursor",
    "windsurf": "windsurf",
    "opencode": "opencode",
}
DEFAULT_PLATFORM_SOURCE = "claude-code"
