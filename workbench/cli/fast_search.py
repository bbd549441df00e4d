"""``workbench search <words>`` through the standard library only, or not at all.

The full command (``cli.recall.search``) imports Typer, pydantic (the ``SearchQuery`` model),
pydantic-settings and httpx before it sends a byte: ~1 s as a process on a loaded 2-core
machine, where the service answered in ~30 ms (issue 21). This module handles the form
people and agents type, and **declines** (returns None, so ``cli.main.run`` runs the full
command) everything else, so what the command prints and how it fails never changes:

- arguments: one query, and only ``--json``, ``--project``, ``--mode``, ``--limit`` and
  ``--data-dir``/``-d`` (``cli.fast_wire.read_args``); any other word, option or form
  declines, and so does a limit Typer would refuse or a blank query;
- one ``GET /api/search`` with ``format=json`` (``cli.fast_wire.ask``: this data dir's
  service, a 200, or decline); a reply not of the expected shape declines too.

The reply is printed as the full command prints it (``cli.tables.print_json``,
``cli.search_table.print_hits``): rich is imported for a table, never for ``--json``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing costs start-up
if TYPE_CHECKING:
    from typing import Any

MAX_LIMIT = 100  # Typer's bound on --limit (cli.recall.search)
FLAGS = {"--json": "json"}
VALUED = {"--project": "project", "--mode": "mode", "--limit": "limit", "--data-dir": "data_dir"}
SHORT = {"-d": "--data-dir"}
REPLY_LISTS = ("observations", "sessions", "prompts")


def parse(argv: list[str]) -> dict[str, Any] | None:
    """The options of ``argv`` (after ``search``), or None when the fast path does not apply."""
    from workbench.cli.fast_wire import bounded_int, read_args

    read = read_args(argv, FLAGS, VALUED, SHORT)
    if read is None:
        return None
    found, words = read
    found.setdefault("json", False)
    if len(words) != 1 or not words[0].strip():
        return None
    found["query"] = words[0]
    if "limit" in found:
        limit = bounded_int(found["limit"], 1, MAX_LIMIT)
        if limit is None:
            return None
        found["limit"] = limit
    return found


def main(argv: list[str]) -> int | None:
    """Run the search and print it (exit code 0), or None to let the full command run."""
    from workbench.cli.fast_wire import answer

    return None if answer(argv, parse, _request, _checked, _print_table) is None else 0


def _request(options: dict[str, Any]) -> tuple[str, str, dict[str, Any], None]:
    """``GET /api/search`` with the query and the options given."""
    params: dict[str, Any] = {"query": options["query"], "format": "json"}
    for name in ("project", "mode", "limit"):
        if name in options:
            params[name] = options[name]
    return "GET", "/api/search", params, None


def _print_table(data: dict[str, Any], _options: dict[str, Any]) -> None:
    from workbench.cli.search_table import print_hits

    print_hits(data)


def _checked(data: Any) -> dict[str, Any] | None:
    """The reply when it has the expected shape (``SearchReply`` checks all), else None."""
    if not isinstance(data, dict) or not isinstance(data.get("totalResults"), int):
        return None
    if not all(isinstance(data.get(key), list) for key in REPLY_LISTS):
        return None
    hits = [hit for key in REPLY_LISTS for hit in data[key]]
    if not all(isinstance(hit, dict) and _hit_ok(hit) for hit in hits):
        return None
    return data


def _hit_ok(hit: dict[str, Any]) -> bool:
    """The fields the table prints are there, with their types (``SearchReply`` checks all)."""
    return (
        isinstance(hit.get("id"), int)
        and isinstance(hit.get("created_at_epoch"), int)
        and isinstance(hit.get("title"), str)
        and isinstance(hit.get("type"), str)
    )
