"""Claude Code's packaged form: workbench as a plugin folder Claude Code's plugin system loads.

Besides the settings-file install (``workbench install``), Claude Code loads plugins: a folder
with ``.claude-plugin/plugin.json`` (the manifest; only ``name`` is required), ``hooks/
hooks.json`` (``{"description"?, "hooks": {...}}``, the same hook shape as settings.json) and
``.mcp.json`` (``{"mcpServers": {...}}``) at its root (Claude Code docs, "Plugins reference",
https://docs.claude.com/en/docs/claude-code/plugins-reference, "Plugin directory structure";
claude-mem ships itself the same way: ``plugin/.claude-plugin/plugin.json``,
``plugin/hooks/hooks.json``, ``plugin/.mcp.json`` at commit e2d1df56). ``build`` writes such a
folder, ``<out>/workbench``, plus a one-plugin marketplace at ``<out>/.claude-plugin/
marketplace.json`` (``{"name", "owner": {"name"}, "plugins": [{"name", "source"}]}``), so
either ``claude --plugin-dir <out>/workbench`` (one session) or ``claude plugin marketplace add
<out>`` then ``claude plugin install workbench@workbench-local`` (for good) loads it. The real
CLI's ``claude plugin validate`` accepts both (``tests/test_claude_plugin.py``).

The commands are the ones ``install`` writes (this venv's interpreter by absolute path, this
checkout's hook scripts, ``WORKBENCH_DATA_DIR`` when pinned): the plugin points at this
installation rather than copying it, so build it again after moving the checkout or venv.
Use the plugin *or* the settings-file install, not both: each would run every hook.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from workbench.agents import claude_mcp, claude_settings

NAME = "workbench"
MARKETPLACE = "workbench-local"
DESCRIPTION = (
    "Local-first memory for Claude Code: captures what each session did, brings it back at "
    "the next one, and lets Claude search it (workbench's hooks and MCP server)"
)


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("workbench")
    except PackageNotFoundError:
        return "0.0.0"


def manifest() -> dict[str, Any]:
    return {
        "name": NAME,
        "version": version(),
        "description": DESCRIPTION,
        "author": {"name": "workbench"},
        "license": "MIT",
        "keywords": ["memory", "mcp", "hooks", "local-first"],
    }


def hooks(python: str | None, data_dir: Path | None) -> dict[str, Any]:
    """``hooks/hooks.json``: exactly the hooks ``install`` merges into settings.json."""
    ours = claude_settings.with_ours({}, python, data_dir)["hooks"]
    return {"description": "workbench memory capture and context", "hooks": ours}


def mcp(python: str | None, data_dir: Path | None) -> dict[str, Any]:
    return {"mcpServers": {claude_mcp.SERVER_NAME: claude_mcp.server_entry(python, data_dir)}}


def marketplace() -> dict[str, Any]:
    return {
        "name": MARKETPLACE,
        "description": "workbench, from this machine's installation",
        "owner": {"name": "workbench"},
        "plugins": [{"name": NAME, "source": f"./{NAME}", "description": DESCRIPTION}],
    }


def files(python: str | None, data_dir: Path | None) -> dict[str, dict[str, Any]]:
    """Relative path -> JSON, for everything ``build`` writes under ``out``."""
    return {
        ".claude-plugin/marketplace.json": marketplace(),
        f"{NAME}/.claude-plugin/plugin.json": manifest(),
        f"{NAME}/hooks/hooks.json": hooks(python, data_dir),
        f"{NAME}/.mcp.json": mcp(python, data_dir),
    }


def build(out: Path, python: str | None = None, data_dir: Path | None = None) -> list[Path]:
    """Write the marketplace and plugin under ``out``; return the files written.

    Only these files are touched (each replaced atomically), so building again over an
    earlier build refreshes it and leaves anything else in ``out`` alone.
    """
    written = []
    for relative, data in files(python, data_dir).items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.tmp")
        temp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        temp.replace(path)
        written.append(path)
    return written
