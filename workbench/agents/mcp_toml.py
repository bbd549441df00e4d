"""Our MCP server in Codex CLI's ``config.toml``: the table ``[mcp_servers.workbench]``.

Codex reads stdio servers from ``$CODEX_HOME/config.toml`` as ``[mcp_servers.<name>]`` with
``command``, ``args`` and ``env`` (openai/codex ``docs/config.md``, "MCP integration" →
"mcp_servers" → "STDIO", commit 0195ef0570cd92efd577bd32573ef3bf5e0da10b). The entry is
``workbench.agents.mcp_json.server_entry``'s, so the same ``-P -m workbench mcp`` runs.

The file is the user's, written by hand: it is edited with ``tomlkit``, which keeps comments,
order and formatting of everything we do not touch, so uninstall gives back the same bytes.
As for the JSON files: idempotent, a backup before each write and an atomic write keeping the
file's mode, under the file's lock (``workbench.config_file``; a new file is owner-only), ours
found by its interpreter and ``-m workbench mcp`` arguments (``mcp_json.is_ours``), a foreign
``workbench`` entry never overwritten. Every edit is checked by parsing the result with
``tomllib``: it must hold the user's values exactly, or nothing is written.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import InlineTable, Table

from workbench import config_file
from workbench.agents.claude_settings import write_text
from workbench.agents.mcp_json import SERVER_NAME, is_ours
from workbench.config_file import NOTHING_CHANGED
from workbench.errors import WorkbenchError

KEY = "mcp_servers"
# A ``[mcp_servers]`` header line of the user's: the table stays, even emptied.
OWN_HEADER = re.compile(r"(?m)^[ \t]*\[[ \t]*mcp_servers[ \t]*\][ \t]*(#.*)?\r?$")
NEW_MODE = 0o600  # a config.toml install creates: servers' env tables often hold tokens


class AgentConfigError(WorkbenchError):
    """An agent's TOML config that workbench will not edit (not TOML, wrong shape)."""

    code = "AGENT_CONFIG_INVALID"


def read(path: Path) -> tomlkit.TOMLDocument:
    """The parsed file (an empty document when it does not exist)."""
    return _parse(config_file.read_text(path) or "", path)


def _parse(text: str, path: Path) -> tomlkit.TOMLDocument:
    # ``config_file.read_text`` decodes bytes, no universal newlines: that would turn a CRLF
    # file into LF and a stray CR (which Codex rejects) into a line break that parses.
    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
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
    """Add or update our entry; return (changed, backup path).

    Whatever the edit, the result is parsed again with the standard library's ``tomllib``
    (what Codex's parser also follows: TOML 1.0) and must hold exactly the user's values plus
    ours; otherwise nothing is written and the entry to add by hand is shown. Dotted keys
    (``mcp_servers.other.args = …``) are where tomlkit's in-place edit goes wrong, so a new
    entry is first tried as a table appended at the end: the user's bytes stay a prefix.
    """
    with config_file.locked(path):
        text = config_file.read_text(path) or ""
        doc = _parse(text, path)
        _refuse_foreign(doc, path, remove_hint)
        current = _current(doc, path)
        if current == values:
            return False, None
        expected = _plain(text)
        expected.setdefault(KEY, {})[SERVER_NAME] = values
        for candidate in _candidates(text, doc, path, values, appendable=current is None):
            if _parses_to(candidate, expected):
                return True, write_text(path, candidate, NEW_MODE)
        raise AgentConfigError(
            f"{path} is laid out in a way workbench cannot edit without changing other "
            f"entries; add this table by hand and run the command again ({NOTHING_CHANGED}):"
            f"\n\n{_table_text(values)}"
        )


def _candidates(
    text: str, doc: tomlkit.TOMLDocument, path: Path, values: dict[str, Any], appendable: bool
) -> Iterator[str]:
    """The edits to try, least invasive first (each is checked by ``_parses_to``)."""
    if appendable:
        head = text if not text or text.endswith("\n") else text + "\n"
        yield head + ("\n" if head.strip() else "") + _table_text(values)
    found = servers(doc, path)
    if found is None:
        found = tomlkit.table(is_super_table=True)  # written as [mcp_servers.workbench] only
        doc[KEY] = found
    try:
        found[SERVER_NAME] = _item(values, inline=isinstance(found, InlineTable))
        yield tomlkit.dumps(doc)
    except TOMLKitError:
        return


def _table_text(values: dict[str, Any]) -> str:
    """``[mcp_servers.workbench]`` and its keys, as install appends it."""
    lines = [f"[{KEY}.{SERVER_NAME}]"]
    for key, value in values.items():
        item = tomlkit.inline_table() if isinstance(value, dict) else None
        if item is not None:
            item.update(value)
        lines.append(f"{key} = {(item if item is not None else tomlkit.item(value)).as_string()}")
    return "\n".join(lines) + "\n"


def _plain(text: str) -> dict[str, Any]:
    """``text`` as the standard library reads it (``{}`` when it does not parse)."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _parses_to(text: str, expected: dict[str, Any]) -> bool:
    try:
        return tomllib.loads(text) == expected
    except tomllib.TOMLDecodeError:
        return False


def uninstall(path: Path) -> tuple[bool, Path | None]:
    """Remove our entry only (a foreign ``workbench`` entry is left alone).

    The result must parse (``tomllib``) to the user's values without ours; otherwise nothing
    is written and the table to delete by hand is named.
    """
    with config_file.locked(path):
        text = config_file.read_text(path)
        if text is None:
            return False, None
        doc = _parse(text, path)
        found = servers(doc, path)
        if found is None or not is_ours(_current(doc, path)):
            return False, None
        expected = _plain(text)
        del expected[KEY][SERVER_NAME]
        del found[SERVER_NAME]
        if not found and _headless(found) and not OWN_HEADER.search(text):
            # ours was the only one, and the user never wrote [mcp_servers]: as before install
            del doc[KEY]
            if not expected[KEY]:
                del expected[KEY]
        out = tomlkit.dumps(doc)
        # The blank line install put before our table stays behind at the end of the file
        # (CRLF in a CRLF file: ``config_file.write_text`` writes the ending back as CRLF).
        out = out.rstrip("\r\n") + "\n" if out.strip() else ""
        if not _parses_to(out, expected):
            raise AgentConfigError(
                f"{path} is laid out in a way workbench cannot edit without changing other "
                f"entries; delete the [{KEY}.{SERVER_NAME}] entry by hand ({NOTHING_CHANGED})"
            )
        return True, write_text(path, out, NEW_MODE)


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
