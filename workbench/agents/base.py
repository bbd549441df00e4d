"""What an agent module reports: the files it changed, and what ``doctor`` should say."""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple


class Change(NamedTuple):
    """One file ``install``/``uninstall`` looked at; ``backup`` is set when it was rewritten."""

    what: str  # "workbench hooks", "workbench MCP server", "workbench context rule"…
    path: Path
    changed: bool
    backup: Path | None = None


class Check(NamedTuple):
    """One line of ``workbench doctor``: ``ok`` False fails the run; None is a note.

    A note is for what is fine either way: an agent that is not on this machine, or one that
    is but was never asked to use workbench (``install --agent`` is opt-in per agent).
    """

    name: str
    ok: bool | None
    detail: str
