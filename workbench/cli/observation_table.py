"""One full observation as a person reads it (``workbench show``): a two-column table.

Shared by the full ``workbench show`` (``cli.recall``) and its fast path (``cli.fast_show``),
so both print the same; it imports neither Typer nor pydantic.
"""

from __future__ import annotations

from typing import Any

from workbench.cli.tables import table

LIST_FIELDS = ("facts", "concepts", "files_read", "files_modified")  # one line per entry


def print_observation(obs: dict[str, Any]) -> None:
    """``obs`` as the API answers it (``ObservationView`` or a colleague's, by alias)."""
    rows: list[tuple[str, Any]] = [
        ("type", obs["type"]),
        ("project", obs["project"]),
        ("created", obs["created_at"]),
    ]
    if obs.get("subtitle"):
        rows.append(("subtitle", obs["subtitle"]))
    if obs.get("narrative"):
        rows.append(("narrative", obs["narrative"]))
    for name in LIST_FIELDS:
        if obs.get(name):
            rows.append((name.replace("_", " "), "\n".join(obs[name])))
    if obs.get("stale"):
        rows.append(("stale", ", ".join(obs.get("stale_files") or []) + " changed since"))
    if obs.get("ref"):
        rows.insert(0, ("author", obs["author"]))
    label = obs.get("ref") or f"#{obs['id']}"
    table(f"{label}  {obs['title']}", ["", ""], rows)
