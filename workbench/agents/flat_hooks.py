"""Merge workbench's entries into an agent's *flat* hooks file, and take them out again.

Cursor (``~/.cursor/hooks.json``) and Windsurf (``~/.codeium/windsurf/hooks.json``) share one
shape, unlike Claude Code's matcher groups: ``{"hooks": {event: [{"command": ...}, ...]}}``,
one flat list of commands per event, each run in turn (the sources are cited in
``workbench/agents/cursor.py`` and ``windsurf.py``). What differs between them is a
``FlatHooks`` value: the events and scripts, the fields beside ``command`` in our entries
(Windsurf's ``show_output``), a schema ``version`` written when the file has none (Cursor's),
and the error class and messages the user sees.

The merge rules are ``workbench.agents.claude_settings``'s, for this shape: the user's entries kept
exactly and first, ours recognised by the shape of our command
(``claude_settings.is_our_command``: a moved checkout is replaced, not doubled; a user's own
``hooks/stop.py`` is never touched),
nothing written when nothing changes, numbers kept as spelled, a timestamped backup before
each write, an atomic write under the file's lock (``workbench.config_file``). The hooks
file and the MCP file are both checked before either is written, so a refusal changes
nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench import config_file, exact_json
from workbench.agents import claude_settings, mcp_json
from workbench.agents.base import Change
from workbench.errors import WorkbenchError


@dataclass(frozen=True)
class FlatHooks:
    """One agent's flat hooks file: what ours are and how a broken file is reported.

    The four messages are format strings: ``not_json`` gets ``{path}`` and ``{exc}``, the
    others ``{path}``, and ``event_not_list`` also ``{event}``.
    """

    platform: str  # ``--platform NAME`` in each command (``hooks/adapters/<name>.py``)
    scripts: dict[str, tuple[str, ...]]  # event -> our scripts, in the order they run
    error: type[WorkbenchError]
    not_json: str
    not_object: str
    hooks_not_object: str
    event_not_list: str
    entry_fields: dict[str, Any] = field(default_factory=dict)  # beside "command" in ours
    version: int | None = None  # the file's schema version, written when it has none

    def read(self, path: Path) -> dict[str, Any]:
        """The hooks file (``{}`` when absent); raises ``self.error`` naming what is wrong."""
        text = config_file.read_text(path)  # a FIFO, a device, a folder: refused
        if text is None:
            return {}
        try:
            data = exact_json.loads(text or "{}")
        except (json.JSONDecodeError, RecursionError) as exc:
            raise self.error(self.not_json.format(path=path, exc=exc)) from None
        if not isinstance(data, dict):
            raise self.error(self.not_object.format(path=path))
        hooks = data.get("hooks", {})
        if not isinstance(hooks, dict):
            raise self.error(self.hooks_not_object.format(path=path))
        for event, entries in hooks.items():
            if not isinstance(entries, list):
                raise self.error(self.event_not_list.format(path=path, event=event))
        return data

    def with_ours(
        self, config: dict[str, Any], python: str | None = None, data_dir: Path | None = None
    ) -> dict[str, Any]:
        """``config`` (as ``read`` returns it) with exactly our current entries, per event."""
        result = without_ours(config)
        if self.version is not None and "version" not in result:
            result = {"version": self.version, **result}
        hooks = result.setdefault("hooks", {})
        for event, scripts in self.scripts.items():
            hooks.setdefault(event, []).extend(
                {
                    "command": claude_settings.hook_command(
                        script, python, data_dir, self.platform
                    ),
                    **self.entry_fields,
                }
                for script in scripts
            )
        return result

    def our_commands(self, path: Path) -> list[str]:
        """The commands of our entries in the hooks file (``doctor`` checks what they run)."""
        hooks = self.read(path).get("hooks", {})
        return [str(e["command"]) for entries in hooks.values() for e in entries if is_ours(e)]

    def check(self, hooks_path: Path, mcp_path: Path, remove_hint: str) -> None:
        """Raise what ``install`` would refuse with, for both files; writes nothing."""
        self.read(hooks_path)
        mcp_json.check(mcp_path, remove_hint)

    def check_uninstall(self, hooks_path: Path, mcp_path: Path) -> None:
        """Raise what ``uninstall`` would refuse with, for both files; writes nothing."""
        self.read(hooks_path)
        mcp_json.check_uninstall(mcp_path)

    def install(
        self,
        hooks_path: Path,
        mcp_path: Path,
        remove_hint: str,
        python: str | None = None,
        data_dir: Path | None = None,
    ) -> list[Change]:
        """Merge our hooks and MCP server in; both files are checked before either is written."""
        self.check(hooks_path, mcp_path, remove_hint)  # refuse before writing anything
        with config_file.locked(hooks_path):
            current = self.read(hooks_path)
            merged = self.with_ours(current, python, data_dir)
            hooks = Change("workbench hooks", hooks_path, False)
            if merged != current:
                hooks = Change(
                    "workbench hooks", hooks_path, True, claude_settings.write(hooks_path, merged)
                )
        entry = mcp_json.server_entry(python, data_dir, self.platform)
        changed, backup = mcp_json.install(mcp_path, entry, remove_hint)
        return [hooks, Change("workbench MCP server", mcp_path, changed, backup)]

    def uninstall(self, hooks_path: Path, mcp_path: Path) -> list[Change]:
        """Take only our hooks and our MCP entry out; both files are checked first."""
        self.check_uninstall(hooks_path, mcp_path)  # refuse before writing anything
        with config_file.locked(hooks_path):
            current = self.read(hooks_path)
            cleaned = without_ours(current)
            hooks = Change("workbench hooks", hooks_path, False)
            if cleaned != current:
                hooks = Change(
                    "workbench hooks", hooks_path, True, claude_settings.write(hooks_path, cleaned)
                )
        changed, backup = mcp_json.uninstall(mcp_path)
        return [hooks, Change("workbench MCP server", mcp_path, changed, backup)]


def is_ours(entry: Any) -> bool:
    """An entry whose command runs one of workbench's hook scripts."""
    command = entry.get("command") if isinstance(entry, dict) else None
    return claude_settings.is_our_command(command)


def without_ours(config: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``config`` without our entries; a list (or ``hooks``) we emptied is dropped.

    Only what we emptied goes: a user's own empty list or empty ``hooks`` stays, so a file
    without ours compares equal to itself and is never rewritten.
    """
    return claude_settings.without_hook_entries(config, _without_ours_in_list)


def _without_ours_in_list(entries: list[Any]) -> tuple[list[Any], bool]:
    kept = [entry for entry in entries if not is_ours(entry)]
    return kept, len(kept) < len(entries)
