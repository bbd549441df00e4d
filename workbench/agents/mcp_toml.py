"""Our MCP server in Codex CLI's ``config.toml``: the table ``[mcp_servers.workbench]``.

Codex reads stdio servers from ``$CODEX_HOME/config.toml`` as ``[mcp_servers.<name>]`` with
``command``, ``args`` and ``env`` (openai/codex ``docs/config.md``, "MCP integration" →
"mcp_servers" → "STDIO", commit 0195ef0570cd92efd577bd32573ef3bf5e0da10b). The entry is
``workbench.agents.mcp_json.server_entry``'s, so the same ``-P -m workbench mcp`` runs.

The file is the user's, written by hand: it is edited with ``tomlkit``, which keeps comments,
order and formatting of everything we do not touch, so uninstall gives back the same bytes.
As for the JSON files: idempotent, a backup before each write and an atomic write keeping the
file's mode (``claude_settings.write_text``; a new file is owner-only), ours found by its
``-m workbench mcp`` arguments, a foreign ``workbench`` entry never overwritten.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable, Table

from workbench.agents.mcp_json import SERVER_NAME, is_ours
from workbench.claude_settings import write_text
from workbench.errors import WorkbenchError

KEY = "mcp_servers"
NEW_MODE = 0o600  # a config.toml install creates: servers' env tables often hold tokens


class AgentConfigError(WorkbenchError):
    """An agent's TOML config that workbench will not edit (not TOML, wrong shape)."""

    code = "AGENT_CONFIG_INVALID"


def read(path: Path) -> tomlkit.TOMLDocument:
    """The parsed file (an empty document when it does not exist)."""
    if not path.exists():
        return tomlkit.document()
    try:
        # Bytes decoded, not read_text: universal newlines would turn a CRLF file into LF
        # and a stray CR (which Codex rejects) into a line break that parses.
        return tomlkit.parse(path.read_bytes().decode("utf-8"))
    except (TOMLKitError, UnicodeDecodeError) as exc:
        raise AgentConfigError(
            f"{path} is not valid TOML ({exc}); fix it by hand (nothing was changed) and run "
            "the command again"
        ) from None


def servers(doc: tomlkit.TOMLDocument, path: Path) -> MutableMapping[str, Any] | None:
    """The ``mcp_servers`` table of ``doc`` (None when absent).

    A table, an inline table, or (its sub-tables split by others in the file) tomlkit's proxy
    over the parts: all edit in place.
    """
    found = doc.get(KEY)
    if found is None or isinstance(found, MutableMapping):
        return found
    raise AgentConfigError(
        f'"{KEY}" in {path} is not a table; fix it by hand (nothing was changed) and run the '
        "command again"
    )


def _current(doc: tomlkit.TOMLDocument, path: Path) -> Any:
    """The ``workbench`` entry as plain Python values (None when absent)."""
    found = servers(doc, path)
    if found is None:
        return None
    value: Any = found.get(SERVER_NAME)  # a tomlkit item or a plain value
    return value.unwrap() if hasattr(value, "unwrap") else value


def entry(path: Path) -> dict[str, Any] | None:
    """Our server's entry as plain values, or None (``doctor`` checks its command)."""
    plain = _current(read(path), path)
    return plain if is_ours(plain) else None


def installed(path: Path) -> bool:
    """True when ``path`` registers our MCP server."""
    return entry(path) is not None


def _refuse_foreign(doc: tomlkit.TOMLDocument, path: Path, remove_hint: str) -> None:
    plain = _current(doc, path)
    if plain is not None and not is_ours(plain):
        command = plain.get("command") if isinstance(plain, dict) else plain
        raise AgentConfigError(
            f"{path} already has an MCP server named {SERVER_NAME!r} that is not workbench's "
            f"(command {command!r}); rename or remove it ({remove_hint}) and run the command "
            "again; nothing was changed"
        )


def check(path: Path, remove_hint: str) -> None:
    """Raise ``AgentConfigError`` if ``install`` would refuse; writes nothing."""
    _refuse_foreign(read(path), path, remove_hint)


def check_uninstall(path: Path) -> None:
    """Raise ``AgentConfigError`` if ``uninstall`` would refuse (not TOML, wrong shape)."""
    servers(read(path), path)


def _item(values: dict[str, Any], inline: bool) -> Table | InlineTable:
    """``values`` as a table (``env`` inline, so the entry is one block) or an inline table."""
    item = tomlkit.inline_table() if inline else tomlkit.table()
    for key, value in values.items():
        if isinstance(value, dict):
            sub = tomlkit.inline_table()
            sub.update(value)
            value = sub
        item[key] = value
    if not inline:
        item.add(tomlkit.nl())  # a blank line before whatever table follows
    return item


def install(path: Path, values: dict[str, Any], remove_hint: str) -> tuple[bool, Path | None]:
    """Add or update our entry; return (changed, backup path)."""
    doc = read(path)
    _refuse_foreign(doc, path, remove_hint)
    if _current(doc, path) == values:
        return False, None
    found = servers(doc, path)
    if found is None:
        found = tomlkit.table(is_super_table=True)  # written as [mcp_servers.workbench] only
        doc[KEY] = found
    found[SERVER_NAME] = _item(values, inline=isinstance(found, InlineTable))
    return True, write_text(path, tomlkit.dumps(doc), NEW_MODE)


def uninstall(path: Path) -> tuple[bool, Path | None]:
    """Remove our entry only (a foreign ``workbench`` entry is left alone)."""
    if not path.exists():
        return False, None
    doc = read(path)
    found = servers(doc, path)
    if found is None or not is_ours(_current(doc, path)):
        return False, None
    del found[SERVER_NAME]
    if not found and _headless(found):  # ours was the only one: as before install
        del doc[KEY]
    text = tomlkit.dumps(doc)
    # The blank line install put before our table stays behind at the end of the file.
    text = text.rstrip("\n") + "\n" if text.strip() else ""
    return True, write_text(path, text, NEW_MODE)


def _headless(found: MutableMapping[str, Any]) -> bool:
    """True when ``mcp_servers`` has no line of its own (``[mcp_servers]``, ``= {…}``).

    Then it only existed through its sub-tables, as install writes it; a table the user
    wrote out, even empty, is the user's and stays.
    """
    if isinstance(found, InlineTable):
        return False
    if isinstance(found, Table):
        return found.is_super_table()
    return True  # tomlkit's proxy over [mcp_servers.<name>] tables split across the file
