"""Tool calls that are never memories: workbench's own MCP tools and the agent's tool discovery.

An observation of ``mcp__workbench__search`` is the memory reading itself: stored, it comes
back in the next SessionStart as if it were work done in the project, and a ``save_memory``
call would be stored twice (the memory, and an observation of the call). The agent's own
tool discovery (Claude Code 2.1's ``ToolSearch``, Codex's ``tool_search``), which runs before
any MCP use, says nothing about the project either (issue 20, item 3).

Each agent spells an MCP tool its own way: Claude Code and Codex ``mcp__workbench__search``,
a Claude Code plugin ``mcp__plugin_workbench_workbench__search``, Gemini CLI
``mcp_workbench_search`` or ``workbench__search``, OpenCode ``workbench_search``, Windsurf
(through its adapter) ``mcp__workbench__search``. So names are compared by their letters and
digits only, case folded: every spelling of one name is the same key.

Stdlib only: the PostToolUse hook imports this to skip the post entirely, and the service's
ingest drops the same calls for older hooks and spooled events. ``OWN_TOOLS`` and
``PROJECT_TOOLS`` together must list what ``workbench mcp`` serves (a test compares them with
the server's ``tools/list``).
"""

from __future__ import annotations

SERVER_NAME = "workbench"  # the name install registers our MCP server under, every agent
OWN_TOOLS = frozenset(
    {
        "search",
        "timeline",
        "get_observations",
        "save_memory",
        "workflow",
        "build_corpus",
        "list_corpora",
        "prime_corpus",
        "query_corpus",
        "rebuild_corpus",
        "reprime_corpus",
    }
)
# Served by ``workbench mcp`` too, but their calls ARE memories: the code navigation tools
# (issue 22) read the project's source as ``Read`` does, so what the agent looked at is
# work in the project, kept like a Read (claude-mem keeps its smart_* calls as well).
PROJECT_TOOLS = frozenset({"smart_search", "smart_outline", "smart_unfold"})
DISCOVERY_TOOLS = frozenset({"ToolSearch", "tool_search"})

# The prefixes an agent puts before "<server><sep><tool>": none (OpenCode, Gemini's
# ``workbench__x``), ``mcp`` (Claude Code, Codex, Gemini's ``mcp_workbench_x``), and a Claude
# Code plugin's ``mcp__plugin_<plugin>_<server>__x``.
_PREFIXES = ("", "mcp", f"mcpplugin{SERVER_NAME}")


def key(name: str) -> str:
    """``name`` as its letters and digits only, lower case: one key for every spelling."""
    return "".join(ch for ch in name.casefold() if ch.isascii() and ch.isalnum())


_OWN_KEYS = frozenset(p + SERVER_NAME + key(tool) for p in _PREFIXES for tool in OWN_TOOLS)
_DISCOVERY_KEYS = frozenset(key(tool) for tool in DISCOVERY_TOOLS)


def skip_reason(tool_name: object) -> str | None:
    """Why a call of ``tool_name`` is not a memory, or ``None`` when it may be one."""
    if not isinstance(tool_name, str):
        return None
    found = key(tool_name)
    if found in _OWN_KEYS:
        return f"tool {tool_name!r} is workbench's own MCP tool: its calls are not memories"
    if found in _DISCOVERY_KEYS:
        return f"tool {tool_name!r} is the agent's tool discovery: its calls are not memories"
    return None
