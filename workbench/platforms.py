"""The agent platforms workbench captures from: the values ``platform_source`` may take.

Stdlib-only and tiny: the service validates hook bodies against it, and each hook adapter
(``hooks/adapters/``) names its own value, which a test checks is listed here. Claude Code's
value is ``claude-code`` because that is what every stored row, spooled event and export
already says; the migration that added the column used it as the default.
"""

from __future__ import annotations

# platform_source value -> the ``--platform``/``--agent`` name of its hook adapter.
HOOK_PLATFORM_SOURCES = {
    "claude-code": "claude",
    "gemini-cli": "gemini",
    "codex-cli": "codex",
    "cursor": "cursor",
    "windsurf": "windsurf",
    "opencode": "opencode",
}
# MCP-only agents (issue 22 item 4): no hooks, only what their save_memory calls store.
MCP_ONLY_PLATFORM_SOURCES = {
    "copilot-cli": "copilot",
    "goose": "goose",
    "roo-code": "roo",
    "warp": "warp",
}
PLATFORM_SOURCES = {**HOOK_PLATFORM_SOURCES, **MCP_ONLY_PLATFORM_SOURCES}
DEFAULT_PLATFORM_SOURCE = "claude-code"


def source_of_agent(name: str) -> str | None:
    """The ``platform_source`` of an agent named as ``--agent``/``--platform`` take it
    (``codex``) or by its own value (``codex-cli``); None for a name no adapter has."""
    if name in PLATFORM_SOURCES:
        return name
    return next((source for source, agent in PLATFORM_SOURCES.items() if agent == name), None)


def known_agents() -> str:
    """``claude, gemini, codex…``: what a message asking for an agent lists."""
    return ", ".join(PLATFORM_SOURCES.values())
