"""``workbench timeline <anchor>`` (or ``-q <words>``) through the standard library, or not at all.

The full command (``cli.recall.timeline``) imports Typer, pydantic-settings, pydantic (the
reply models) and httpx before its one request: ~1.2 s as a process on a loaded 2-core box,
~0.5 s of it CPU (issue 21). This module answers the common form and **declines** (returns
None, so ``cli.main.run`` runs the full command) everything else, so what the command prints
and how it fails never changes:

- arguments (``cli.fast_wire.read_args``): at most one anchor, and only ``--query``/``-q``,
  ``--before``, ``--after`` (0-50, as Typer bounds them), ``--project``,
  ``--data-dir``/``-d`` and ``--json``; ``--team`` or anything else declines;
- one ``GET /api/timeline`` with the parameters the full command sends
  (``cli.fast_wire.ask``: this data dir's service, a 200, or decline): a missing anchor,
  neither anchor nor query, or a refusal is the full command's to explain. A reply not of
  the expected shape declines too.

It prints what the full command prints: the reply as JSON, or ``cli.timeline_table``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs start-up
if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 50  # Typer's bound on --before and --after (cli.recall.timeline)
DEFAULT_DEPTH = 5
FLAGS = {"--json": "json"}
VALUED = {
    "--query": "query",
    "--before": "depth_before",
    "--after": "depth_after",
    "--project": "project",
    "--data-dir": "data_dir",
}
SHORT = {"-q": "--query", "-d": "--data-dir"}
KINDS = ("observation", "summary", "prompt")  # the items a local timeline holds


def parse(argv: list[str]) -> dict[str, Any] | None:
    """The options of ``argv`` (after ``timeline``), or None when the fast path does not apply."""
    from workbench.cli.fast_wire import bounded_int, read_args

    read = read_args(argv, FLAGS, VALUED, SHORT)
    if read is None:
        return None
    found, words = read
    if len(words) > 1:
        return None  # Typer's "unexpected extra argument"
    found.setdefault("json", False)
    found["anchor"] = words[0] if words else None
    for key in ("depth_before", "depth_after"):
        depth = bounded_int(found.get(key, str(DEFAULT_DEPTH)), 0, MAX_DEPTH)
        if depth is None:
            return None
        found[key] = depth
    return found


def main(argv: list[str]) -> int | None:
    """Print the timeline (exit code 0), or None to let the full command run."""
    from workbench.cli.fast_wire import answer

    return None if answer(argv, parse, _request, _checked, _print_table) is None else 0


def _request(options: dict[str, Any]) -> tuple[str, str, dict[str, Any], None]:
    """``GET /api/timeline`` with the options the full command sends (those given)."""
    names = ("anchor", "query", "depth_before", "depth_after", "project")
    params = {name: options[name] for name in names if options.get(name) is not None}
    return "GET", "/api/timeline", params, None


def _print_table(data: dict[str, Any], options: dict[str, Any]) -> None:
    from workbench.cli.timeline_table import print_timeline

    print_timeline(data, options.get("query"))


def _checked(data: Any) -> dict[str, Any] | None:
    """The reply when it is a local timeline with the fields the table prints, else None."""
    if not isinstance(data, dict) or "teamSnapshot" in data:
        return None
    anchor, items = data.get("anchor"), data.get("items")
    if not isinstance(anchor, dict) or not isinstance(items, list):
        return None
    if not isinstance(anchor.get("kind"), str) or not isinstance(anchor.get("created_at"), str):
        return None
    if not all(isinstance(item, dict) and _item_ok(item) for item in items):
        return None
    return data


def _item_ok(item: dict[str, Any]) -> bool:
    return (
        item.get("kind") in KINDS
        and isinstance(item.get("is_anchor"), bool)
        and isinstance(item.get("id"), int)
        and isinstance(item.get("created_at_epoch"), int)
        and isinstance(item.get("type"), str)
        and isinstance(item.get("title"), str)
        and isinstance(item.get("tokens"), int)
    )
