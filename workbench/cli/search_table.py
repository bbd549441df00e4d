"""A search reply as a person reads it: a line of totals, then a table per kind of record.

Shared by the full ``workbench search`` (``cli.recall``) and its fast path
(``cli.fast_search``), so both print the same; it imports neither Typer nor pydantic.
"""

from __future__ import annotations

from typing import Any

from workbench.cli.tables import console, table
from workbench.clock import minute_from_ms as when
from workbench.recall.tier_note import vectors_note


def stale_label(record: dict[str, Any]) -> str:
    """`` (stale: a.py changed since)`` for a record a later change outdated; else empty."""
    if record.get("stale") is not True:
        return ""
    files = [str(f) for f in record.get("stale_files") or []]
    shown = ", ".join(files[:3]) + (f" +{len(files) - 3}" if len(files) > 3 else "")
    return f" (stale: {shown} changed since)" if shown else " (stale)"


def print_hits(data: dict[str, Any]) -> None:
    from rich.text import Text

    team = "teamSnapshot" in data
    out = console()
    label = f'"{data["query"]}"' if data.get("query") else "(filters only)"
    # The query and the notes are text, never markup (a query may hold ``[bold]``).
    out.print(
        Text.assemble(
            f"{data['totalResults']} results for {label} ", (f"(mode {data.get('mode')})", "dim")
        )
    )
    for warning in (data.get("degraded"), data.get("teamStale")):
        if warning:
            out.print(Text(str(warning), style="yellow"))
    note = vectors_note(data.get("vectorsBehind"), data.get("vectorsStatic"))
    if note:
        out.print(Text(note, style="yellow"))
    groups = (("observations", "observations", ""), ("sessions", "session summaries", "S"))
    for key, title, prefix in (*groups, ("prompts", "prompts", "P")):
        hits = data.get(key) or []
        if hits:
            table(
                title,
                ["id", "time (UTC)", "type", "title", "project", "~tokens"]
                + (["author"] if team else []),
                [
                    (
                        h.get("ref") or f"{prefix}{h['id']}",
                        when(h["created_at_epoch"]),
                        h["type"],
                        h["title"] + stale_label(h),
                        h.get("project"),
                        h.get("tokens"),
                    )
                    + ((h.get("author"),) if team else ())
                    for h in hits
                ],
            )
    if data["totalResults"]:
        out.print(
            "[dim]next: `workbench timeline ID` for context, `workbench show ID…` for full "
            "observations[/]"
        )
