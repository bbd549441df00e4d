"""The demo memory's sessions, written as stories, and the machinery that replays them.

Modules:
- ``kit``        projects, tool calls in Claude Code's payload shapes, realistic tool output
- ``schedule``   when each session happened (six working weeks, seeded)
- ``replay``     hook payloads → the hooks' bodies → the service's models → Ingestor → worker
- ``payments``, ``webshop``, ``mlpipeline``, ``infra``, ``inventory``: one project each
"""

from __future__ import annotations

from typing import Any


def all_stories() -> dict[str, list[dict[str, Any]]]:
    """Every project's sessions, in story order (the schedule keeps that order)."""
    from scenarios import infra, inventory, mlpipeline, payments, webshop

    return {
        module.P.name: module.stories()
        for module in (payments, webshop, mlpipeline, infra, inventory)
    }
