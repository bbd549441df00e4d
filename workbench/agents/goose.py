"""Goose (block/goose): our MCP server as a ``stdio`` extension in ``config.yaml`` (MCP only).

The file is ``$XDG_CONFIG_HOME/goose/config.yaml``, else ``~/.config/goose/config.yaml`` on
Linux and macOS (Goose's "Configuration Files" guide,
https://block.github.io/goose/docs/guides/config-files/; Goose finds it with the ``etcetera``
crate's XDG strategy). The entry's shape and the textual edit that keeps the user's YAML
byte for byte are ``workbench.agents.goose_yaml``'s. Goose's key for an extension is its
name without whitespace, lower-cased (``name_to_key``): ``workbench``.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench import config_file
from workbench.agents import goose_yaml, health
from workbench.agents.base import Change, Check

NAME = "goose"
LABEL = "Goose"
WHAT = "workbench MCP server"


def config_dir() -> Path:
    xdg = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(xdg).expanduser() if xdg else Path.home() / ".config") / "goose"


def config_path() -> Path:
    return config_dir() / "config.yaml"


def detected() -> bool:
    return config_dir().is_dir()


def check() -> None:
    """Raise if ``install`` would refuse (not YAML, wrong shape, a foreign entry)."""
    path = config_path()
    _, data = goose_yaml.load(path)
    goose_yaml.refuse_foreign(data, path)


def check_uninstall() -> None:
    goose_yaml.load(config_path())


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    check()
    path = config_path()
    ours = goose_yaml.entry(python, data_dir, NAME)
    with config_file.locked(path):
        text, data = goose_yaml.load(path)
        goose_yaml.refuse_foreign(data, path)
        if goose_yaml.extensions(data).get(goose_yaml.NAME) == ours:
            return [Change(WHAT, path, False)]
        base = goose_yaml.without_ours(text)
        new = goose_yaml.with_ours(base, ours)
        goose_yaml.verified(new, goose_yaml.expected_with(data, ours), path, "add")
        return [Change(WHAT, path, True, config_file.write_text(path, new))]


def uninstall() -> list[Change]:
    path = config_path()
    with config_file.locked(path):
        text, data = goose_yaml.load(path)
        if not goose_yaml.is_ours(goose_yaml.extensions(data).get(goose_yaml.NAME)):
            return [Change(WHAT, path, False)]
        new = goose_yaml.without_ours(text)
        goose_yaml.verified(new, goose_yaml.expected_without(data), path, "remove")
        return [Change(WHAT, path, True, config_file.write_text(path, new))]


def entry(path: Path) -> dict[str, object] | None:
    """Our extension in ``path`` as ``doctor`` reads it (``command``: its interpreter)."""
    _, data = goose_yaml.load(path)
    found = goose_yaml.extensions(data).get(goose_yaml.NAME)
    if not isinstance(found, dict) or not goose_yaml.is_ours(found):
        return None
    return {"command": found.get("cmd")}


def checks() -> list[Check]:
    finding = health.mcp(config_path(), entry)
    return [health.agent_check(NAME, LABEL, detected(), [finding])]
