"""``workbench search | timeline | show``: the 3-layer recall workflow from a terminal.

1. ``search`` finds hits (a compact index: id, time, type, title, ~tokens);
2. ``timeline`` shows what happened around one of them;
3. ``show`` prints the full observations for the ids you picked.

They ask the running service (which also has the embedding model, for hybrid search). When
it is down they do not start it just to read: they open the database read-only and run the
same search engine here, full text only, and say so on stderr.
"""

from __future__ import annotations

from typing import Annotated

import typer

from workbench.cli import query_options as opt
from workbench.cli.output import (
    DataDirOption,
    JsonOption,
    handle_errors,
    load_settings,
    print_json,
)
from workbench.cli.recall_sources import source_for
from workbench.cli.search_table import print_hits
from workbench.sources.source import GetAsk, TimelineAsk


def register(app: typer.Typer) -> None:
    app.command("search")(search)
    app.command("timeline")(timeline)
    app.command("show")(show)


@handle_errors
def search(
    query: Annotated[
        str | None, typer.Argument(help="Words to search (optional with filters).")
    ] = None,
    project: opt.Project = None,
    projects: Annotated[
        list[str] | None, typer.Option(help="Any of these projects (repeat or csv).")
    ] = None,
    kinds: Annotated[
        list[str] | None,
        typer.Option(help="observations | sessions | prompts (repeat or csv); all if omitted."),
    ] = None,
    types: opt.Types = None,
    concepts: opt.Concepts = None,
    files: opt.Files = None,
    since: opt.Since = None,
    until: opt.Until = None,
    platform_source: opt.PlatformSource = None,
    mode: Annotated[str, typer.Option(help="hybrid | fts | vector.")] = "hybrid",
    order_by: Annotated[
        str, typer.Option("--order-by", help="relevance | date_desc | date_asc.")
    ] = "relevance",
    limit: Annotated[int, typer.Option(min=1, max=100, help="Hits per kind.")] = 20,
    offset: Annotated[int, typer.Option(min=0, help="Hits to skip.")] = 0,
    team: Annotated[
        bool,
        typer.Option(
            "--team",
            help="Also search the team lake (workbench team init); local hits win on duplicates.",
        ),
    ] = False,
    obs_type: opt.OldObsType = None,
    old_type: opt.OldType = None,
    platform: opt.OldPlatform = None,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Search your memory: observations, session summaries and prompts (layer 1)."""
    from workbench.recall.search_query import SearchQuery

    fields = opt.merge_old_options(
        {
            "query": query,
            "project": project,
            "projects": projects,
            "kinds": kinds,
            "types": types,
            "concepts": concepts,
            "files": files,
            "since": since,
            "until": until,
            "platform_source": platform_source,
            "mode": mode,
            "order_by": order_by,
            "limit": limit,
            "offset": offset,
            "team": team,
        },
        {"--obs-type": obs_type, "--type": old_type, "--platform": platform},
    )
    wanted = SearchQuery.parse({k: v for k, v in fields.items() if v is not None})
    data = source_for(load_settings(data_dir), wanted.team).search(wanted).wire()
    if as_json:
        print_json(data)
        return
    print_hits(data)


@handle_errors
def timeline(
    anchor: Annotated[
        str | None, typer.Argument(help="Observation id, S<summary id> or ISO timestamp.")
    ] = None,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Anchor on the best match instead.")
    ] = None,
    before: Annotated[int, typer.Option(min=0, max=50, help="Observations before.")] = 5,
    after: Annotated[int, typer.Option(min=0, max=50, help="Observations after.")] = 5,
    project: Annotated[str | None, typer.Option(help="Only this project.")] = None,
    team: Annotated[
        bool,
        typer.Option(
            "--team",
            help="Add the team lake's observations of the same window (workbench team init).",
        ),
    ] = False,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show what happened around an observation, a summary or a moment (layer 2)."""
    ask = TimelineAsk(
        anchor=anchor, query=query, depth_before=before, depth_after=after, project=project
    )
    reply = source_for(load_settings(data_dir), team).timeline(ask)
    data = reply.wire()
    if as_json:
        print_json(data)
        return
    from workbench.cli.timeline_table import print_timeline

    print_timeline(data, query)


@handle_errors
def show(
    ids: Annotated[
        list[str],
        typer.Argument(
            help="Observation ids (12, #12 or 12,13) or a colleague's team:AUTHOR:ID refs."
        ),
    ],
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print full observations by id or team ref (layer 3: fetch only what you need)."""
    from workbench.errors import InvalidInput
    from workbench.team import refs

    wanted: list[int] = []
    team_refs: list[str] = []
    for raw in ids:
        for part in raw.split(","):
            text = part.strip().lstrip("#")
            if not text:
                continue
            if refs.is_ref(text):
                refs.parse(text)  # a malformed ref is refused before anything is read
                team_refs.append(text)
                continue
            if not (text.isascii() and text.isdigit()):  # "¹" passes isdigit(), not int()
                raise InvalidInput(
                    f"{part.strip()!r} is not an observation id; give numbers like 12 or #12, "
                    "or a colleague's team:AUTHOR:ID from `workbench search --team`"
                )
            wanted.append(int(text))
    ask = GetAsk(ids=tuple(wanted), refs=tuple(team_refs))
    if not ask.ids and not ask.refs:
        raise InvalidInput("give at least one observation id, e.g. `workbench show 12 14`")
    # Team refs are read with the team lake (source_for checks it is configured first).
    fetched = source_for(load_settings(data_dir), bool(ask.refs)).get(ask)
    if as_json:
        print_json(fetched.wire())
    else:
        from workbench.cli.observation_table import print_observation

        for obs in fetched.observations:
            print_observation(obs.model_dump(by_alias=True))
    if fetched.missing:
        typer.echo(f"not found: {', '.join(fetched.missing)}", err=True)
        if not fetched.observations:
            raise typer.Exit(1)
