"""GitHub Copilot CLI: the MCP server in ``~/.copilot/mcp-config.json`` (MCP only).

The file and its shape are Copilot CLI's own documentation's ("Adding MCP servers for GitHub
Copilot CLI", https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers,
"Editing the configuration file"): ``{"mcpServers": {"<name>": {"type": "local", "command",
"args", "env", "tools": ["*"]}}}``, where ``type`` ``local`` (or ``stdio``) starts a process
and ``tools`` lists the tools Copilot may call (``*``: all). The folder is ``$COPILOT_HOME``
when set (github/copilot-cli ``changelog.md``: "--config-dir is deprecated in favor of
COPILOT_HOME"), else ``~/.copilot``. Since 0.0.340 an ``env`` value starting with ``$`` is a
reference to the user's environment (same changelog); ours is a plain path, taken literally.
Copilot CLI's hooks are not wired: it gets workbench's tools, not automatic capture.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.agents.mcp_only import McpOnly

NAME = "copilot"
LABEL = "GitHub Copilot CLI"


def config_dir() -> Path:
    home = os.environ.get("COPILOT_HOME", "").strip()
    return Path(home).expanduser() if home else Path.home() / ".copilot"


def mcp_path() -> Path:
    return config_dir() / "mcp-config.json"


AGENT = McpOnly(
    NAME,
    LABEL,
    config_dir,
    mcp_path,
    "with `/mcp delete workbench` in Copilot CLI, or by editing mcp-config.json",
    {"type": "local", "tools": ["*"]},
)
detected, check, check_uninstall, install, uninstall, checks = AGENT.module_functions()
