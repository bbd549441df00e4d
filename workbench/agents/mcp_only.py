"""An agent that gets only our MCP server, in a JSON ``mcpServers`` file: one shape, four uses.

GitHub Copilot CLI, Roo Code and Warp have no hook system workbench can use (or none that
reaches its memory), so ``install --agent`` registers the MCP server and nothing else: the
agent can search, read the timeline and save memories, and its saves carry its own
``--platform``. Each agent module (``copilot``, ``roo``, ``warp``) names its file and the
extra keys its format wants (Copilot's ``type``/``tools``), and says where that format comes
from; the merge itself is ``workbench.agents.mcp_json``'s (other keys kept exactly, idempotent,
a backup before each write, a foreign ``workbench`` entry refused untouched).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from workbench.agents import health, mcp_json
from workbench.agents.base import Change, Check

WHAT = "workbench MCP server"


class Install(Protocol):
    """``install``'s signature with its defaults, so ``module.install()`` still type-checks."""

    def __call__(self, python: str | None = None, data_dir: Path | None = None) -> list[Change]: ...


ModuleFunctions = tuple[
    Callable[[], bool],  # detected
    Callable[[], None],  # check
    Callable[[], None],  # check_uninstall
    Install,  # install
    Callable[[], list[Change]],  # uninstall
    Callable[[], list[Check]],  # checks
]


@dataclass(frozen=True)
class McpOnly:
    """One agent's MCP-only registration: where its file is and what our entry holds."""

    name: str  # the --agent name, also the --platform the server is started with
    label: str
    config_dir: Callable[[], Path]  # its presence says the agent is on this machine
    path: Callable[[], Path]  # the JSON file with ``mcpServers``
    remove_hint: str  # how to remove a foreign ``workbench`` entry, in the agent's words
    extra: dict[str, Any] = field(default_factory=dict)  # keys the agent's format wants

    def detected(self) -> bool:
        return self.config_dir().is_dir()

    def entry(self, python: str | None, data_dir: Path | None) -> dict[str, Any]:
        return mcp_json.server_entry(python, data_dir, self.name, **self.extra)

    def check(self) -> None:
        """Raise if ``install`` would refuse (not JSON, a foreign server); writes nothing."""
        mcp_json.check(self.path(), self.remove_hint)

    def check_uninstall(self) -> None:
        mcp_json.check_uninstall(self.path())

    def install(self, python: str | None = None, data_dir: Path | None = None) -> list[Change]:
        self.check()
        path = self.path()
        changed, backup = mcp_json.install(path, self.entry(python, data_dir), self.remove_hint)
        return [Change(WHAT, path, changed, backup)]

    def uninstall(self) -> list[Change]:
        self.check_uninstall()
        path = self.path()
        changed, backup = mcp_json.uninstall(path)
        return [Change(WHAT, path, changed, backup)]

    def checks(self) -> list[Check]:
        """``doctor``'s row: a note unless the file is broken or our server's interpreter
        is gone (the agent is opt-in, as every agent but Claude Code)."""
        finding = health.mcp(self.path(), mcp_json.entry)
        return [health.agent_check(self.name, self.label, self.detected(), [finding])]

    def module_functions(self) -> ModuleFunctions:
        """The six functions every agent module has (``workbench.agents``' shape), bound to
        this agent: each MCP-only module binds them in one line instead of six."""
        return (
            self.detected,
            self.check,
            self.check_uninstall,
            self.install,
            self.uninstall,
            self.checks,
        )
