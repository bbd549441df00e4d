"""A search reply as a person reads it: a line of totals, then a table per kind of record.

Shared by the full ``workbench search`` (``cli.recall``) and its fast path
(``cli.fast_search``), so both print the same; it imports neither Typer nor pydantic.
"""

from __future__ import annotations

import sys
from typing import Any

from workbench.cli.plain_text import line as plain_line
from workbench.cli.tables import console, print_line, table
from workbench.clock import minute_from_ms as when
from workbench.recall.tier_note import vectors_note

NEXT_STEPS = "next: `workbench timeline ID` for context, `workbench show ID…` for full observations"


def stale_label(record: dict[str, Any]) -> str:
    """`` (stale: a.py changed since)`` for a record a later change outdated; else empty."""
    if record.get("stale") is not True:
        return ""
    files = [str(f) for f in record.get("stale_files") or []]
    shown = ", ".join(files[:3]) + (f" +{len(files) - 3}" if len(files) > 3 else "")
    return f" (stale: {shown} changed since)" if shown else " (stale)"


def print_hits(data: dict[str, Any]) -> None:
    team = "teamSnapshot" in data
    label = f'"{data["query"]}"' if data.get("query") else "(filters only)"
    # The query and the notes are text, never markup (a query may hold ``[bold]``).
    print_line(
        f"{data['totalResults']} results for {label} ", (f"(mode {data.get('mode')})", "dim")
    )
    for warning in (data.get("degraded"), data.get("teamStale")):
        if warning:
            print_line(str(warning), style="yellow")
    note = vectors_note(data.get("vectorsBehind"), data.get("vectorsStatic"))
    if note:
        print_line(note, style="yellow")
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
        drawn = plain_line(NEXT_STEPS)
        if drawn is not None:  # the same bytes, without importing rich (cli.plain_text)
            sys.stdout.write(drawn)
        else:
            console().print(f"[dim]{NEXT_STEPS}[/]")
