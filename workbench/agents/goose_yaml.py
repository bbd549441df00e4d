"""Our extension in Goose's ``config.yaml``, added and taken out as text.

Goose keeps its extensions under ``extensions:`` in ``config.yaml``, one entry per key
(block/goose ``crates/goose/src/config/extensions.rs``: ``ExtensionEntry {enabled,
#[serde(flatten)] config}``; ``crates/goose/src/agents/extension.rs``: the ``stdio`` variant's
fields ``name``, ``description``, ``cmd``, ``args``, ``envs``, ``env_keys``, ``timeout``,
``bundled``, ``available_tools``). The rest of the file is the user's (provider, model, their
own extensions, comments): a YAML dump would reorder it and drop every comment, so the edit
is textual. Ours is inserted as the first child of a block-style ``extensions:`` (or a new
``extensions:`` block at the end), and removed line for line; after each edit the new text is
parsed and must equal the old data plus (or minus) our entry, else nothing is written and the
user is told how to add it by hand. Install then uninstall gives the file back byte for byte.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from workbench import config_file
from workbench.agents import mcp_json
from workbench.errors import WorkbenchError

KEY = "extensions"
NAME = mcp_json.SERVER_NAME
TOP = re.compile(r"^extensions:[ \t]*(#.*)?$")
EMPTY = re.compile(r"^extensions:[ \t]*(\{\}|null|~)?[ \t]*(#.*)?$")
_ITEM = re.compile(r"-(\s|$)")  # a block sequence's entry indicator


class GooseConfigError(WorkbenchError):
    code = "GOOSE_CONFIG_INVALID"


def entry(python: str | None, data_dir: Path | None, platform: str) -> dict[str, Any]:
    """Our ``stdio`` extension, in the key order Goose itself writes."""
    server = mcp_json.server_entry(python, data_dir, platform)
    return {
        "enabled": True,
        "type": "stdio",
        "name": NAME,
        "description": "workbench: search, timeline and saving of this machine's agent memory",
        "cmd": server["command"],
        "args": server["args"],
        "envs": server["env"],
        "env_keys": [],
        "timeout": 300,
        "bundled": None,
        "available_tools": [],
    }


def is_ours(found: Any) -> bool:
    """A ``stdio`` extension running our server with a Python interpreter (as ``entry``)."""
    return (
        isinstance(found, dict)
        and mcp_json.is_python(found.get("cmd"))
        and mcp_json.is_module_args(found.get("args"))
    )


def load(path: Path) -> tuple[str, dict[str, Any]]:
    """The file's text and data (``""``/``{}`` when absent); refuses what Goose could not read."""
    text = config_file.read_text(path) or ""
    try:
        data = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as exc:
        raise GooseConfigError(
            f"{path} is not valid YAML ({str(exc).splitlines()[0]}); fix it by hand (nothing "
            "was changed) and run the command again"
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise GooseConfigError(f"{path} must hold a YAML mapping; nothing was changed")
    found = data.get(KEY)
    if found is not None and not isinstance(found, dict):
        raise GooseConfigError(
            f'"{KEY}" in {path} is not a mapping; fix it by hand (nothing was changed)'
        )
    return text, data


def extensions(data: dict[str, Any]) -> dict[str, Any]:
    found = data.get(KEY)
    return found if isinstance(found, dict) else {}


def refuse_foreign(data: dict[str, Any], path: Path) -> None:
    exts = extensions(data)
    if NAME in exts and not is_ours(exts[NAME]):
        raise GooseConfigError(
            f"{path} already has an extension named {NAME!r} that is not workbench's; remove "
            f"it (`goose configure` > Remove Extension, or edit the file) and run the command "
            "again; nothing was changed"
        )


def _block(ours: dict[str, Any], indent: str) -> list[str]:
    dumped = yaml.safe_dump({NAME: ours}, sort_keys=False, default_flow_style=False, width=1 << 16)
    return [indent + line for line in dumped.splitlines()]


def _top_line(lines: list[str]) -> int | None:
    return next((i for i, line in enumerate(lines) if TOP.match(line) or EMPTY.match(line)), None)


def _child_indent(lines: list[str], start: int) -> str:
    """The indentation of the first child under ``extensions:`` (two spaces if none)."""
    for line in lines[start + 1 :]:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        width = len(line) - len(line.lstrip(" "))
        return " " * width if width else "  "
    return "  "


def with_ours(text: str, ours: dict[str, Any]) -> str:
    """``text`` with our entry as the first child of ``extensions:`` (text without ours)."""
    lines = text.splitlines()
    at = _top_line(lines)
    if at is None:
        return (
            (text if not text or text.endswith("\n") else text + "\n")
            + "\n".join([f"{KEY}:", *_block(ours, "  ")])
            + "\n"
        )
    if not TOP.match(lines[at]):  # ``extensions: {}`` / null: becomes a block
        lines[at] = f"{KEY}:"
    lines[at + 1 : at + 1] = _block(ours, _child_indent(lines, at))
    return "\n".join(lines) + "\n"


def without_ours(text: str) -> str:
    """``text`` without our entry's lines (and without ``extensions:`` if it is left empty)."""
    lines = text.splitlines()
    at = _top_line(lines)
    if at is None:
        return text
    start = end = None
    indent = _child_indent(lines, at)
    for i in range(at + 1, len(lines)):
        line = lines[i]
        if line and not line[0].isspace() and not line.startswith("#"):
            break  # the next top-level key
        if start is None and line.rstrip() == f"{indent}{NAME}:":
            start, end = i, i + 1
        elif start is not None:
            # Ours, deeper down, or a sequence item at its key's indent ("- x" or "-"). A
            # line at that indent that merely starts with a dash is a sibling key ("-foo:").
            deeper = line.startswith(indent + " ") or (
                line.startswith(indent) and bool(_ITEM.match(line, len(indent)))
            )
            if line.strip() and not deeper:
                break
            if line.strip():
                end = i + 1
    if start is None or end is None:
        return text
    del lines[start:end]
    rest = [line for line in lines[at + 1 :] if line.strip() and line.lstrip()[0] != "#"]
    children = [] if not rest or not rest[0][:1].isspace() else rest
    if not children:
        del lines[at]
    out = "\n".join(lines)
    return out + "\n" if out and text.endswith("\n") else out


def verified(text: str, expected: dict[str, Any], path: Path, verb: str) -> str:
    """``text`` if it parses to ``expected``; else a refusal that says how to do it by hand."""
    try:
        got = yaml.safe_load(text)
    except yaml.YAMLError:
        got = object()
    if (got or {}) != expected:
        raise GooseConfigError(
            f"could not {verb} workbench's extension in {path} without rewriting the user's "
            f"text (flow-style or unusual YAML); {verb} it by hand (`goose configure` > "
            "Add Extension > Command-line Extension); nothing was changed"
        )
    return text


def expected_with(data: dict[str, Any], ours: dict[str, Any]) -> dict[str, Any]:
    rest = {k: v for k, v in extensions(data).items() if k != NAME}
    return {**data, KEY: {NAME: ours, **rest}}


def expected_without(data: dict[str, Any]) -> dict[str, Any]:
    rest = {k: v for k, v in extensions(data).items() if k != NAME}
    if rest:
        return {**data, KEY: rest}
    return {k: v for k, v in data.items() if k != KEY}  # ours was its only entry
