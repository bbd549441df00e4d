"""OpenCode: our plugin in ``~/.config/opencode/plugins/``, the MCP server in ``opencode.json``.

OpenCode has no command hooks: it imports every ``*.js``/``*.ts`` file of its global plugins
folder at start-up (opencode.ai/docs/plugins, "From local files"; anomalyco/opencode
``packages/opencode/src/config/plugin.ts`` globs ``{plugin,plugins}/*.{ts,js}``). Install
copies ``hooks/opencode/workbench.js`` there as ``workbench.js`` with this machine's
interpreter, hooks folder and (when pinned) data dir written into its ``CONFIG`` line; the
file is recognised as ours by that marker, so a moved checkout is rewritten, not duplicated,
and a ``workbench.js`` that is not ours is never touched.

MCP: OpenCode's config (``opencode.json``, or ``opencode.jsonc`` when that is the one present,
in ``$XDG_CONFIG_HOME/opencode``, default ``~/.config/opencode``) keeps servers under
``"mcp"``: ``{"<name>": {"type": "local", "command": [...], "environment": {...},
"enabled": true}}`` (opencode.ai/docs/mcp-servers; ``McpLocalConfig`` in
``packages/sdk/js/src/gen/types.gen.ts``). That file may be JSONC: one with comments (or
trailing commas) is refused with the entry to add by hand, never rewritten without them.
Everything else in it is kept, numbers as written; each write is preceded by a backup and
done atomically under the file's lock (``workbench.config_file``). Ours is an entry whose
command is a Python interpreter running exactly ``-P -m workbench mcp``: one run in docker is
the user's, never replaced.

OpenCode V2's config (``mcp.servers``) is not handled: this targets the V1 plugin API.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from workbench import config_file, exact_json
from workbench.agents import health, mcp_json
from workbench.agents.base import Change, Check
from workbench.agents.claude_settings import HOOKS_DIR, write
from workbench.errors import WorkbenchError

NAME = "opencode"
LABEL = "OpenCode"
PLUGIN_SOURCE = HOOKS_DIR / "opencode" / "workbench.js"
PLUGIN_FILE = "workbench.js"
MARKER = "/* workbench:config */"
SERVER_NAME = "workbench"
MODULE_ARGS = ["-m", "workbench", "mcp"]


class OpenCodeConfigError(WorkbenchError):
    code = "OPENCODE_CONFIG_INVALID"


def config_dir() -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".config") / "opencode"


def plugin_path() -> Path:
    return config_dir() / "plugins" / PLUGIN_FILE


def config_path() -> Path:
    """``opencode.json``, unless only ``opencode.jsonc`` exists (then that one)."""
    plain, commented = config_dir() / "opencode.json", config_dir() / "opencode.jsonc"
    return commented if commented.exists() and not plain.exists() else plain


def detected() -> bool:
    return config_dir().is_dir()


# ----- the plugin file ---------------------------------------------------------------------


def render_plugin(python: str | None = None, data_dir: Path | None = None) -> str:
    """The plugin's text with this machine's settings on its ``CONFIG`` line."""
    config: dict[str, str] = {"python": python or sys.executable, "hooksDir": str(HOOKS_DIR)}
    if data_dir is not None:
        config["dataDir"] = str(data_dir)
    source = PLUGIN_SOURCE.read_text("utf-8")
    return source.replace(f"{MARKER} {{}}", f"{MARKER} {json.dumps(config)}", 1)


def plugin_is_ours(path: Path) -> bool:
    """A regular file at ``path`` that carries our marker (a FIFO there is never read)."""
    try:
        data = config_file.read_bytes(path)
    except (OSError, WorkbenchError):
        return False
    return data is not None and MARKER.encode() in data


def _check_plugin(path: Path) -> None:
    config_file.read_bytes(path)  # refuses a FIFO, a device, a folder
    if (path.exists() or path.is_symlink()) and not plugin_is_ours(path):
        raise OpenCodeConfigError(
            f"{path} exists and is not workbench's plugin; rename or remove it and run the "
            "command again; nothing was changed"
        )


def _install_plugin(path: Path, text: str) -> Change:
    with config_file.locked(path):
        if config_file.read_bytes(path) == text.encode("utf-8"):
            return Change("workbench plugin", path, False)
        # Atomic (OpenCode never imports half a file); our own file needs no backup.
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode("utf-8"))
            os.fchmod(handle.fileno(), 0o644)
        os.replace(tmp, path)
        return Change("workbench plugin", path, True)


# ----- the MCP entry in opencode.json ------------------------------------------------------


def server_entry(python: str | None = None, data_dir: Path | None = None) -> dict[str, Any]:
    """OpenCode's local MCP entry for this interpreter (``-P``: see agents/mcp_json.py)."""
    entry: dict[str, Any] = {
        "type": "local",
        "command": [python or sys.executable, "-P", *MODULE_ARGS, *mcp_json.platform_args(NAME)],
        "enabled": True,
    }
    if data_dir is not None:
        entry["environment"] = {"WORKBENCH_DATA_DIR": str(data_dir)}
    return entry


def is_ours(entry: Any) -> bool:
    """An entry that provably runs our server here: ``[<python>, -P, -m, workbench, mcp]``.

    ``docker run … python -m workbench mcp`` ends the same way but is the user's own.
    """
    command = entry.get("command") if isinstance(entry, dict) else None
    if not isinstance(command, list) or not command or not mcp_json.is_python(command[0]):
        return False
    return mcp_json.is_module_args(command[1:])


def read_config(path: Path, entry: dict[str, Any] | None = None) -> dict[str, Any]:
    """The config as a dict ({} when absent); refuses JSONC it would have to strip.

    Numbers are kept as written (``workbench.exact_json``); a FIFO, a device or a folder at
    the path is refused (``workbench.config_file``).
    """
    text = config_file.read_text(path)
    if text is None:
        return {}
    try:
        data = exact_json.loads(text or "{}")
    except RecursionError:
        raise OpenCodeConfigError(
            f"{path} is nested too deeply to read as JSON; fix it by hand (nothing was "
            "changed) and run the command again"
        ) from None
    except json.JSONDecodeError as exc:
        hint = (
            f' add "mcp": {{"{SERVER_NAME}": {json.dumps(entry)}}} by hand,'
            if entry is not None
            else f' remove "mcp"."{SERVER_NAME}" by hand,'
        )
        raise OpenCodeConfigError(
            f"{path} is not plain JSON ({exc.msg}, line {exc.lineno}): OpenCode allows comments "
            "and trailing commas there, and rewriting the file would lose them. Either"
            f"{hint} or remove the comments and run the command again; nothing was changed"
        ) from None
    if not isinstance(data, dict):
        raise OpenCodeConfigError(f"{path} must hold a JSON object; nothing was changed")
    servers = data.get("mcp", {})
    if not isinstance(servers, dict):
        raise OpenCodeConfigError(
            f'"mcp" in {path} is not a JSON object; fix it by hand (nothing was changed)'
        )
    return data


def _check_config(path: Path, entry: dict[str, Any]) -> dict[str, Any]:
    current = read_config(path, entry)
    existing = current.get("mcp", {}).get(SERVER_NAME)
    if existing is not None and not is_ours(existing):
        raise OpenCodeConfigError(
            f'{path} already has an MCP server named "{SERVER_NAME}" that is not workbench\'s; '
            f'rename or remove "mcp"."{SERVER_NAME}" and run the command again; '
            "nothing was changed"
        )
    return current


# ----- the agent module shape --------------------------------------------------------------


def check() -> None:
    """Raise if ``install`` would refuse the plugin file or the config; writes nothing."""
    _check_plugin(plugin_path())
    _check_config(config_path(), server_entry())


def check_uninstall() -> None:
    """Raise if ``uninstall`` would refuse the config; writes nothing."""
    read_config(config_path())


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    plugin, config = plugin_path(), config_path()
    entry = server_entry(python, data_dir)
    _check_plugin(plugin)  # refuse before writing anything
    _check_config(config, entry)
    changes = [_install_plugin(plugin, render_plugin(python, data_dir))]
    with config_file.locked(config):
        current = _check_config(config, entry)
        servers = current.get("mcp", {})
        if servers.get(SERVER_NAME) == entry:
            changes.append(Change("workbench MCP server", config, False))
        else:
            merged = {**current, "mcp": {**servers, SERVER_NAME: entry}}
            changes.append(Change("workbench MCP server", config, True, write(config, merged)))
    return changes


def uninstall() -> list[Change]:
    plugin, config = plugin_path(), config_path()
    read_config(config)  # refuse before removing anything
    changes = []
    if plugin_is_ours(plugin):
        plugin.unlink()
        changes.append(Change("workbench plugin", plugin, True))
    else:
        changes.append(Change("workbench plugin", plugin, False))
    with config_file.locked(config):
        current = read_config(config)
        servers = current.get("mcp", {})
        if not is_ours(servers.get(SERVER_NAME)):
            changes.append(Change("workbench MCP server", config, False))
            return changes
        rest = {k: v for k, v in servers.items() if k != SERVER_NAME}
        # Ours was the only server: drop the key too, so the file is as it was before install.
        cleaned = (
            {**current, "mcp": rest} if rest else {k: v for k, v in current.items() if k != "mcp"}
        )
        changes.append(Change("workbench MCP server", config, True, write(config, cleaned)))
    return changes


def _plugin_finding() -> health.Finding:
    """Our plugin file, and whether the interpreter and hooks folder on its CONFIG line exist."""
    path = plugin_path()
    if not plugin_is_ours(path):
        return health.Finding("plugin", path, False)
    line = next(ln for ln in path.read_text("utf-8", errors="replace").splitlines() if MARKER in ln)
    try:
        config = json.loads(line.split(MARKER, 1)[1].strip().rstrip(";"))
    except ValueError:
        config = {}
    if not isinstance(config, dict):
        return health.Finding(
            "plugin",
            path,
            False,
            f"the CONFIG line of {path} is not a JSON object; run `workbench install --agent "
            f"{NAME}` again to rewrite it",
        )
    python, hooks_dir = str(config.get("python", "")), str(config.get("hooksDir", ""))
    missing = [] if python and health.runnable(python) else [python or "(no interpreter)"]
    if not Path(hooks_dir).is_dir():
        missing.append(hooks_dir or "(no hooks folder)")
    return health.Finding("plugin", path, True, None, tuple(missing))


def _mcp_finding() -> health.Finding:
    path = config_path()
    try:
        entry = read_config(path).get("mcp", {}).get(SERVER_NAME)
    except (WorkbenchError, OSError) as exc:
        message = exc.message if isinstance(exc, WorkbenchError) else str(exc)
        return health.Finding("MCP server", path, False, message)
    if not is_ours(entry):
        return health.Finding("MCP server", path, False)
    program = str(entry["command"][0])
    return health.Finding(
        "MCP server", path, True, None, () if health.runnable(program) else (program,)
    )


def checks() -> list[Check]:
    """``doctor``'s row: a note unless a file is broken or ours is stale (OpenCode is opt-in)."""
    return [health.agent_check(NAME, LABEL, detected(), [_plugin_finding(), _mcp_finding()])]
