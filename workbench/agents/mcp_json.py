"""Our MCP server in an agent's JSON config: an ``mcpServers`` object, entry ``workbench``.

Claude Code (``~/.claude.json``), Cursor (``~/.cursor/mcp.json``), Windsurf
(``~/.codeium/windsurf/mcp_config.json``) and Gemini CLI (``~/.gemini/settings.json``) all
keep stdio servers this way: ``{"mcpServers": {"<name>": {"command", "args", "env"}}}``. The
rules, for files that also hold the agent's own state: every other key is kept exactly,
install is idempotent, each write is preceded by a backup and done atomically with the file's
mode kept, under the file's lock (``workbench.config_file``), and an existing ``workbench``
entry that is not ours (``is_ours``: one that runs the server over ssh or in docker is not)
is never overwritten.

``--platform <agent>`` tells the server which agent runs it, so what ``save_memory`` stores is
that agent's (Claude Code's entry, and those written before, have none: Claude Code's).
``-P`` (Python 3.11+) keeps the agent's cwd off ``sys.path``: agents start the server in the
user's project, where a folder named ``workbench`` would otherwise shadow the package. ``env``
pins ``WORKBENCH_DATA_DIR`` when install was given one (as the hooks do).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from workbench import config_file
from workbench.agents.claude_settings import ClaudeSettingsError, read, write
from workbench.platforms import PLATFORM_SOURCES

SERVER_NAME = "workbench"
MODULE_ARGS = ["-m", "workbench", "mcp"]
KEY = "mcpServers"
# The basename of a Python interpreter: python, python3, python3.11, pypy3…
PYTHON = re.compile(r"^(python|pypy)(\d+(\.\d+)*)?$")


def server_entry(
    python: str | None = None,
    data_dir: Path | None = None,
    platform: str | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """A stdio entry for this interpreter (and pinned data dir); ``extra`` adds agent keys.
    ``platform``: the agent it is registered with (``--platform``: its saves are its own)."""
    env = {"WORKBENCH_DATA_DIR": str(data_dir)} if data_dir is not None else {}
    args = ["-P", *MODULE_ARGS, *platform_args(platform)]
    return {**extra, "command": python or sys.executable, "args": args, "env": env}


def platform_args(platform: str | None) -> list[str]:
    """``["--platform", <agent>]``, or nothing (Claude Code's entry, and older ones)."""
    return ["--platform", platform] if platform else []


def is_module_args(args: Any) -> bool:
    """``[-P] -m workbench mcp``, with or without ``--platform <a known agent>``."""
    if not isinstance(args, list):
        return False
    base = args[1:] if args[:1] == ["-P"] else args
    if base[: len(MODULE_ARGS)] != MODULE_ARGS:
        return False
    rest = base[len(MODULE_ARGS) :]
    return rest == [] or (
        len(rest) == 2 and rest[0] == "--platform" and rest[1] in PLATFORM_SOURCES.values()
    )


def is_python(program: Any) -> bool:
    """``program`` names a Python interpreter (``/venv/bin/python``, ``python3.11``)."""
    return isinstance(program, str) and PYTHON.match(Path(program).name) is not None


def is_ours(entry: Any) -> bool:
    """An entry that provably runs our server here: a Python interpreter with exactly
    ``[-P] -m workbench mcp``, as ``server_entry`` writes it (from any checkout or venv).

    ``ssh box python -m workbench mcp`` or ``docker run … python -m workbench mcp`` also
    end in our module's arguments, but run it elsewhere: the user's, never replaced.
    """
    if not isinstance(entry, dict) or not is_python(entry.get("command")):
        return False
    return is_module_args(entry.get("args"))


def servers(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """The ``mcpServers`` object of ``config`` (empty when absent)."""
    found = config.get(KEY, {})
    if not isinstance(found, dict):
        raise ClaudeSettingsError(
            f'"{KEY}" in {path} is not a JSON object; fix it by hand (nothing was changed)'
        )
    return found


def entry(path: Path) -> dict[str, Any] | None:
    """Our server's entry in ``path``, or None (``doctor`` checks its command)."""
    found = servers(read(path), path).get(SERVER_NAME)
    return found if is_ours(found) else None


def installed(path: Path) -> bool:
    """True when ``path`` registers our MCP server (``doctor`` asks this)."""
    return entry(path) is not None


def refuse_foreign(config: dict[str, Any], path: Path, remove_hint: str) -> None:
    """Raise ``ClaudeSettingsError`` if ``config`` has a ``workbench`` server that is not ours.

    ``remove_hint`` says how to remove the foreign entry.
    """
    found = servers(config, path)
    existing = found.get(SERVER_NAME)
    if SERVER_NAME in found and not is_ours(existing):  # even null: it is not ours to replace
        command = existing.get("command") if isinstance(existing, dict) else existing
        raise ClaudeSettingsError(
            f"{path} already has an MCP server named {SERVER_NAME!r} that is not workbench's "
            f"(command {command!r}); rename or remove it ({remove_hint}) and run the command "
            "again; nothing was changed"
        )


def with_server(config: dict[str, Any], entry: dict[str, Any], path: Path) -> dict[str, Any]:
    """``config`` with our entry set (call ``refuse_foreign`` first); other keys as they were."""
    return {**config, KEY: {**servers(config, path), SERVER_NAME: entry}}


def without_server(config: dict[str, Any], path: Path) -> dict[str, Any]:
    """``config`` without our entry (a foreign ``workbench`` entry is left alone).

    When ours was the only server the key goes too, so the file is as it was before install.
    """
    found = servers(config, path)
    if not is_ours(found.get(SERVER_NAME)):
        return config
    rest = {k: v for k, v in found.items() if k != SERVER_NAME}
    if rest:
        return {**config, KEY: rest}
    return {k: v for k, v in config.items() if k != KEY}


def check(path: Path, remove_hint: str) -> None:
    """Raise ``ClaudeSettingsError`` if ``install`` would refuse; writes nothing.

    Lets an install validate this file before it touches any other, so a refusal never
    leaves a half-done install.
    """
    refuse_foreign(read(path), path, remove_hint)


def check_uninstall(path: Path) -> None:
    """Raise ``ClaudeSettingsError`` if ``uninstall`` would refuse (not JSON, wrong shape)."""
    servers(read(path), path)


def install(
    path: Path, entry: dict[str, Any], remove_hint: str, new_mode: int = 0o644
) -> tuple[bool, Path | None]:
    """Add or update our entry; return (changed, backup path)."""
    with config_file.locked(path):
        current = read(path)
        refuse_foreign(current, path, remove_hint)
        if servers(current, path).get(SERVER_NAME) == entry:
            return False, None
        return True, write(path, with_server(current, entry, path), new_mode=new_mode)


def uninstall(path: Path) -> tuple[bool, Path | None]:
    """Remove our entry only (a foreign ``workbench`` entry is left alone)."""
    with config_file.locked(path):
        current = read(path)
        cleaned = without_server(current, path)
        if cleaned == current:
            return False, None
        return True, write(path, cleaned)
