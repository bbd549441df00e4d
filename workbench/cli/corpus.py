"""``workbench corpus build | list | show | rm | rebuild``: knowledge corpora from a terminal.

``build``, ``rebuild`` and ``rm`` go through the service (it holds the embedding model for a
``--query`` corpus and serialises writes to corpus files); a command that needs it starts it
and says so. ``list`` and ``show`` only read the corpus files, so they work with the service
down. Names are checked here too, before anything is sent, with the same rule and message
as the service (``^[A-Za-z0-9._-]+$``, never trimmed or fixed).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from workbench.cli import query_options as opt
from workbench.cli.output import (
    DataDirOption,
    JsonOption,
    handle_errors,
    key_values,
    load_settings,
    print_json,
    table,
)

if TYPE_CHECKING:
    from workbench.settings import Settings

corpus_app = typer.Typer(
    name="corpus",
    help=(
        "Knowledge corpora: named, filtered, frozen slices of the memory for the knowledge "
        "agent.\n\n"
        "  workbench corpus build hooks --project workbench --concepts hooks\n\n"
        "  workbench corpus build fixes --types bugfix --since 2026-11-01\n\n"
        '  workbench agent ask hooks "how does the Stop hook find the last message?"'
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)

NameArg = Annotated[str, typer.Argument(help="Corpus name: ASCII letters, digits, . _ -")]


def register(app: typer.Typer) -> None:
    app.add_typer(corpus_app, name="corpus")


def service_client(settings: Settings) -> Any:
    """A client for the service; a temporary one when it is down (said on stderr)."""
    from workbench.client import writer

    client, _ = writer(settings, say=lambda message: typer.echo(message, err=True))
    return client


def parse_filter(options: dict[str, Any]) -> Any:
    """The corpus filter these options mean, checked here with the service's rules."""
    from workbench.knowledge.corpus_filter import parse_filter as parse

    return parse(options)


def checked_name(name: str) -> str:
    """The name, validated locally so a bad one fails before any service call."""
    from workbench.knowledge.corpus import validate_name

    return validate_name(name)


@corpus_app.command("build")
@handle_errors
def build(
    name: NameArg,
    project: opt.Project = None,
    types: opt.Types = None,
    concepts: opt.Concepts = None,
    files: opt.Files = None,
    query: Annotated[str | None, typer.Option(help="Hybrid search words.")] = None,
    since: opt.Since = None,
    until: opt.Until = None,
    platform_source: opt.PlatformSource = None,
    limit: Annotated[int | None, typer.Option(help="At most this many (default 500).")] = None,
    description: Annotated[str, typer.Option(help="What this corpus is about.")] = "",
    team: Annotated[
        bool,
        typer.Option(
            "--team", help="Also colleagues' observations from the team lake (workbench team init)."
        ),
    ] = False,
    platform: opt.OldPlatform = None,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Build (or replace) a corpus from a filter; observations are kept oldest first.

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist.
    """
    settings = load_settings(data_dir)
    body: dict[str, Any] = {"name": checked_name(name), "description": description}
    options = opt.merge_old_options(
        {
            "project": project,
            "types": types,
            "concepts": concepts,
            "files": files,
            "query": query,
            "since": since,
            "until": until,
            "platform_source": platform_source,
            "limit": limit,
            "team": team or None,
        },
        {"--platform": platform},
    )
    parse_filter({k: v for k, v in options.items() if v is not None})  # fail before the call
    body.update({k: v for k, v in options.items() if v is not None})
    with service_client(settings) as client:
        if project is not None and not team:
            _known_project(client, project)
        built = client.post("/api/corpus", body)
    if as_json:
        print_json(built)
        return
    _summary(built, "replaced" if built.get("replaced") else "built")
    for warning in built.get("warnings", []):
        typer.secho(f"warning: {warning}", fg=typer.colors.YELLOW, err=True)


def _known_project(client: Any, project: str) -> None:
    """Refuse a ``--project`` this memory has never seen: the corpus would be silently empty.

    Trigger: a typo, or the folder name of a repo never used with an agent. / Why: an empty
    corpus looks like a successful build. / Outcome: an error naming the known projects;
    nothing is built or replaced. (With ``--team`` the lake may know it: not checked.)
    """
    from workbench.errors import InvalidInput

    known = client.get("/api/projects")["projects"]
    if project not in known:
        listed = ", ".join(sorted(known)) if known else "none yet"
        raise InvalidInput(
            f"no project named {project!r} in {client.settings.data_dir}; known projects: "
            f"{listed}. Nothing was built: pass one of them to --project (see `workbench "
            "stats`), or leave --project out for every project"
        )


@corpus_app.command("list")
@handle_errors
def list_(data_dir: DataDirOption = None, as_json: JsonOption = False) -> None:
    """List corpora with their size, date range and whether an agent is primed."""
    from workbench.knowledge.corpus import list_all

    settings = load_settings(data_dir)
    listed = list_all(settings)
    items = [item.model_dump() for item in listed.corpora]
    if as_json:
        print_json({"corpora": items, "count": listed.count})
        return
    if not items:
        typer.echo(f"no corpora in {settings.corpora_dir}; build one with `workbench corpus build`")
        return
    table(
        f"corpora in {settings.corpora_dir}",
        ["name", "observations", "~tokens", "from", "to", "types", "primed", "updated"],
        [_row(item) for item in items],
    )


@corpus_app.command("show")
@handle_errors
def show(
    name: NameArg,
    markdown: Annotated[
        bool, typer.Option("--markdown", help="Print the whole corpus as markdown.")
    ] = False,
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show a corpus's metadata, or with --markdown the rendered corpus itself."""
    from workbench.knowledge.corpus import load
    from workbench.knowledge.render import render_markdown

    settings = load_settings(data_dir)
    found = load(settings, checked_name(name))
    if markdown:
        typer.echo(render_markdown(found), nl=False)
        return
    meta = found.metadata().model_dump()
    if as_json:
        print_json(meta)
        return
    _summary(meta, "corpus")


@corpus_app.command("rm")
@handle_errors
def rm(name: NameArg, data_dir: DataDirOption = None, as_json: JsonOption = False) -> None:
    """Delete a corpus and its agent conversation (the memory itself is untouched).

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist.
    """
    settings = load_settings(data_dir)
    with service_client(settings) as client:
        result = client.delete(f"/api/corpus/{checked_name(name)}")
    if as_json:
        print_json(result)
        return
    typer.echo(f"deleted corpus {name}")


@corpus_app.command("rebuild")
@handle_errors
def rebuild(name: NameArg, data_dir: DataDirOption = None, as_json: JsonOption = False) -> None:
    """Re-run a corpus's stored filter to pull in new observations (clears the agent session).

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist.
    """
    settings = load_settings(data_dir)
    with service_client(settings) as client:
        result = client.post(f"/api/corpus/{checked_name(name)}/rebuild")
    if as_json:
        print_json(result)
        return
    _summary(result, f"rebuilt (+{result.get('added', 0)} / -{result.get('removed', 0)})")


def _row(item: dict[str, Any]) -> list[Any]:
    if "error" in item:
        return [item["name"], "unreadable", "", "", "", item["error"], "", ""]
    stats = item["stats"]
    dates = stats["date_range"]
    return [
        item["name"],
        stats["observation_count"],
        f"{stats['token_estimate']:,}",
        (dates["earliest"] or "")[:10],
        (dates["latest"] or "")[:10],
        ", ".join(f"{k} {v}" for k, v in stats["type_breakdown"].items()),
        "yes" if item.get("primed") else "no",
        (item.get("updated_at") or "")[:19],
    ]


def _summary(meta: dict[str, Any], verb: str) -> None:
    stats = meta["stats"]
    dates = stats["date_range"]
    types = ", ".join(f"{k} {v}" for k, v in stats["type_breakdown"].items())
    key_values(
        f"{verb}: {meta['name']}",
        [
            ("description", meta.get("description") or ""),
            ("observations", stats["observation_count"]),
            ("types", types or "(none)"),
            (
                "date range",
                f"{dates['earliest']} → {dates['latest']}" if dates["earliest"] else "-",
            ),
            ("~tokens", f"{stats['token_estimate']:,}"),
            ("filter", _filter_line(meta.get("filter") or {})),
            ("session", meta.get("session_id") or "not primed"),
            ("updated", meta.get("updated_at", "")),
        ],
    )


def _filter_line(flt: dict[str, Any]) -> str:
    parts = [
        f"{k}={','.join(v) if isinstance(v, list) else v}"
        for k, v in flt.items()
        if v not in (None, [], "")
    ]
    return "; ".join(parts)
