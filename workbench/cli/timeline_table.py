"""A timeline reply as a person reads it: one table around its anchor.

Shared by the full ``workbench timeline`` (``cli.recall``) and its fast path
(``cli.fast_timeline``), so both print the same; it imports neither Typer nor pydantic.
"""

from __future__ import annotations

from typing import Any

from workbench.cli.search_table import stale_label
from workbench.cli.tables import table
from workbench.clock import minute_from_ms as when

PREFIXES = {"observation": "", "summary": "S", "prompt": "P"}  # an item's id, as printed


def print_timeline(data: dict[str, Any], query: str | None) -> None:
    """The table of ``data`` (``/api/timeline``'s reply); ``query`` is the one anchored on."""
    authored = "teamSnapshot" in data  # a merged timeline: each item names its author
    where = data["anchor"]
    prefix = {"observation": "#", "summary": "#S"}.get(where["kind"], "")
    label = f"{prefix}{where['id']}" if where.get("id") else where["created_at"]
    table(
        f"timeline around {label}" + (f" (best match for {query!r})" if query else ""),
        ["", "id", "time (UTC)", "type", "title", "~tokens"] + (["author"] if authored else []),
        [
            (
                ">" if item["is_anchor"] else "",
                f"{PREFIXES[item['kind']]}{item['id']}",
                when(item["created_at_epoch"]),
                item["type"],
                item["title"] + stale_label(item),
                item["tokens"],
            )
            + ((item.get("author"),) if authored else ())
            for item in data["items"]
        ],
    )
