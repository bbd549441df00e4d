"""The ``SearchQuery`` fields as CLI options, one ``--field-name`` per field, and the old ones.

``workbench search`` and ``workbench corpus build`` declare these options, so each field of
``workbench.recall.search_query`` has exactly one option spelled after it
(``platform_source`` → ``--platform-source``); ``tests/test_search_query_spellings.py``
checks the match both ways. The old options (``--obs-type``, ``--type``, ``--platform``)
still work for one release, hidden from ``--help``: each prints a note on stderr, and an
old and a new option with different values is refused naming both.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from workbench.platforms import PLATFORM_SOURCES

# The old option names -> the field each means (hidden from --help; removed next release).
# (The model module is imported only when a search runs: pydantic costs ``--help`` ~0.5 s.)
LEGACY_OPTIONS: dict[str, str] = {
    "--obs-type": "types",
    "--type": "kinds",
    "--platform": "platform_source",
}

ListOption = list[str] | None

Project = Annotated[str | None, typer.Option(help="Only this project.")]
Types = Annotated[
    ListOption, typer.Option("--types", help="Observation types (repeat or csv), e.g. bugfix.")
]
Concepts = Annotated[ListOption, typer.Option(help="Any of these concepts (repeat or csv).")]
Files = Annotated[
    ListOption, typer.Option(help="File path prefixes read or modified (repeat or csv).")
]
Since = Annotated[str | None, typer.Option(help="From this ISO date/time (UTC), inclusive.")]
Until = Annotated[str | None, typer.Option(help="Up to this ISO date (the whole day) or time.")]
PlatformSource = Annotated[
    str | None,
    typer.Option(
        "--platform-source", help=f"Only this agent platform: {' | '.join(PLATFORM_SOURCES)}."
    ),
]
# The old spellings, hidden from --help (removed in the next release).
OldObsType = Annotated[
    ListOption, typer.Option("--obs-type", hidden=True, help="Deprecated: use --types.")
]
OldType = Annotated[ListOption, typer.Option("--type", hidden=True, help="Deprecated: --kinds.")]
OldPlatform = Annotated[
    str | None,
    typer.Option("--platform", hidden=True, help="Deprecated: use --platform-source."),
]


def option_of(field: str) -> str:
    """The CLI option of a ``SearchQuery`` field: ``order_by`` → ``--order-by``."""
    return "--" + field.replace("_", "-")


def merge_old_options(fields: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """``fields`` (by field name) with the old options' values (by option) moved in.

    Prints one deprecation note on stderr per old option used; an old and a new option that
    both carry a value and disagree raise ``SpellingConflict`` naming both options.
    """
    from workbench.recall.search_query import SpellingConflict, deprecation_notice

    out = dict(fields)
    for option, value in old.items():
        if value in (None, []):
            continue
        field = LEGACY_OPTIONS[option]
        new = option_of(field)
        if out.get(field) not in (None, []) and _norm(out[field]) != _norm(value):
            raise SpellingConflict(
                f"{option} {_shown(value)} and {new} {_shown(out[field])} disagree; {option} is "
                f"the old spelling of {new}: give only {new}",
                fields=[option, new],
            )
        typer.echo(f"note: {deprecation_notice(option, new)}", err=True)
        out[field] = value
    return out


def _norm(value: Any) -> Any:
    if isinstance(value, list):
        return sorted({v.strip().lower() for item in value for v in item.split(",") if v.strip()})
    return str(value).strip()


def _shown(value: Any) -> str:
    return ",".join(value) if isinstance(value, list) else str(value)
