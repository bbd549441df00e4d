"""Roo Code (VS Code extension): the MCP server in its global ``mcp_settings.json`` (MCP only).

Where the file is, from Roo Code's source (RooCodeInc/Roo-Code at commit cb83656, see
``src/shared/globalFileNames.ts`` ``mcpSettings: "mcp_settings.json"`` and
``src/utils/storage.ts`` ``getSettingsDirectoryPath``: ``<globalStorage>/settings``): VS
Code's global storage for the extension ``RooVeterinaryInc.roo-cline`` (``src/package.json``
publisher and name), i.e. ``~/.config/Code/User/globalStorage/rooveterinaryinc.roo-cline/
settings/mcp_settings.json`` on Linux (``$XDG_CONFIG_HOME`` when set) and ``~/Library/
Application Support/Code/...`` on macOS. The shape is ``src/services/mcp/McpHub.ts``'s
schema: ``{"mcpServers": {"<name>": {"command", "args", "env", "type"?: "stdio",
"alwaysAllow"?, "disabled"?, "timeout"?}}}``; ours is ``command``/``args``/``env``, so Roo
asks before each tool call as it does for any server the user has not allowed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from workbench.agents.mcp_only import McpOnly

NAME = "roo"
LABEL = "Roo Code"
EXTENSION = "rooveterinaryinc.roo-cline"  # VS Code lower-cases publisher.name for the folder


def vscode_user_dir() -> Path:
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "Code" / "User"
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
    base = Path(xdg).expanduser() if xdg else Path.home() / ".config"
    return base / "Code" / "User"


def config_dir() -> Path:
    return vscode_user_dir() / "globalStorage" / EXTENSION


def mcp_path() -> Path:
    return config_dir() / "settings" / "mcp_settings.json"


AGENT = McpOnly(
    NAME,
    LABEL,
    config_dir,
    mcp_path,
    "in Roo Code's MCP panel (Edit Global MCP), or by editing mcp_settings.json",
)
detected, check, check_uninstall, install, uninstall, checks = AGENT.module_functions()
