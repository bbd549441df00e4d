"""``workbench show <ids>`` through the standard library, or not at all.

The full command (``cli.recall.show``) imports Typer, pydantic-settings, pydantic (the
observation models), httpx and the team package before its one request: ~1.3 s as a process
on a loaded 2-core box (issue 21). This module answers the common form and **declines**
(returns None, so ``cli.main.run`` runs the full command) everything else, so what the
command prints and how it fails never changes:

- arguments (``cli.fast_wire.read_args``): observation ids (``12``, ``#12``, ``12,13``) and
  only ``--json`` and ``--data-dir``/``-d``; a team ref (``team:AUTHOR:ID``), a word that is
  not an id, no id at all, or any other option declines;
- one ``POST /api/observations/batch`` with the body the full command sends
  (``cli.fast_wire.ask``: this data dir's service, a 200, or decline). A reply not of the
  expected shape declines too.

It prints what the full command prints: the observations as JSON or one
``cli.observation_table`` each, then ``not found: …`` on stderr for ids the store lacks (exit
code 1 when it found none).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing costs start-up
if TYPE_CHECKING:
    from typing import Any

FLAGS = {"--json": "json"}
VALUED = {"--data-dir": "data_dir"}
SHORT = {"-d": "--data-dir"}
ORDER_BY = "date_desc"  # ``sources.source.GetAsk``'s, which the full command sends
TEXT_FIELDS = ("type", "project", "created_at", "title")
LIST_FIELDS = ("facts", "concepts", "files_read", "files_modified")


def parse(argv: list[str]) -> dict[str, Any] | None:
    """The options and ids of ``argv`` (after ``show``), or None when the fast path declines."""
    from workbench.cli.fast_wire import read_args

    read = read_args(argv, FLAGS, VALUED, SHORT)
    if read is None:
        return None
    found, words = read
    ids: list[int] = []
    for word in words:
        for part in word.split(","):
            text = part.strip().lstrip("#")
            if not text:
                continue
            if not (text.isascii() and text.isdigit()):
                return None  # a team ref, or not an id: the full command reads or refuses it
            ids.append(int(text))
    if not ids:
        return None
    found.setdefault("json", False)
    found["ids"] = ids
    return found


def main(argv: list[str]) -> int | None:
    """Print the observations (exit code 0, or 1 when none was found), or None to decline."""
    from workbench.cli.fast_wire import answer

    answered = answer(argv, parse, _request, _checked, _print_table)
    if answered is None:
        return None
    options, found = answered
    missing = sorted(set(options["ids"]) - {obs["id"] for obs in found})
    if missing:
        sys.stdout.flush()
        sys.stderr.write(f"not found: {', '.join(str(i) for i in missing)}\n")
        if not found:
            return 1
    return 0


def _request(options: dict[str, Any]) -> tuple[str, str, None, dict[str, Any]]:
    """The batch request the full command sends for these ids."""
    return "POST", "/api/observations/batch", None, {"ids": options["ids"], "orderBy": ORDER_BY}


def _print_table(found: list[dict[str, Any]], _options: dict[str, Any]) -> None:
    from workbench.cli.observation_table import print_observation

    for obs in found:
        print_observation(obs)


def _checked(data: Any) -> list[dict[str, Any]] | None:
    """The reply when it is a list of local observations the table can print, else None."""
    if not isinstance(data, list):
        return None
    if not all(isinstance(obs, dict) and _observation_ok(obs) for obs in data):
        return None
    return data


def _observation_ok(obs: dict[str, Any]) -> bool:
    if "ref" in obs or not isinstance(obs.get("id"), int):
        return False  # a colleague's observation is never the batch route's
    if not all(isinstance(obs.get(name), str) for name in TEXT_FIELDS):
        return False
    lists = [obs.get(name) or [] for name in (*LIST_FIELDS, "stale_files")]
    return all(isinstance(v, list) and all(isinstance(s, str) for s in v) for v in lists)
