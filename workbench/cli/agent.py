"""``workbench agent prime | ask | reprime``: talk to the knowledge agent of a corpus.

The conversation lives in the service (persisted under the data dir), so ``ask`` twice is a
follow-up, also across service restarts. With an Anthropic key the answers are synthesized
by Claude with the corpus prompt-cached; without one they come from the offline extractive
agent, which says so in every answer.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from workbench.cli.corpus import NameArg, checked_name, service_client
from workbench.cli.output import (
    DataDirOption,
    JsonOption,
    console,
    handle_errors,
    load_settings,
    print_json,
    table,
)

agent_app = typer.Typer(
    name="agent",
    help=(
        "The knowledge agent: a conversation primed with one corpus.\n\n"
        "  workbench agent prime hooks\n\n"
        '  workbench agent ask hooks "why does the Stop hook read the transcript?"\n\n'
        '  workbench agent ask hooks "and what if it is missing?"   # a follow-up\n\n'
        "  workbench agent reprime hooks                           # start over"
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)


def register(app: typer.Typer) -> None:
    app.add_typer(agent_app, name="agent")


@agent_app.command("prime")
@handle_errors
def prime(name: NameArg, data_dir: DataDirOption = None, as_json: JsonOption = False) -> None:
    """Start a conversation with the corpus loaded once (keeps an intact one).

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist.
    """
    settings = load_settings(data_dir)
    with service_client(settings) as client:
        result = client.post(f"/api/corpus/{checked_name(name)}/prime")
    _primed(result, as_json)


@agent_app.command("reprime")
@handle_errors
def reprime(name: NameArg, data_dir: DataDirOption = None, as_json: JsonOption = False) -> None:
    """Start a fresh conversation on the corpus (earlier questions are forgotten).

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist.
    """
    settings = load_settings(data_dir)
    with service_client(settings) as client:
        result = client.post(f"/api/corpus/{checked_name(name)}/reprime")
    _primed(result, as_json)


@agent_app.command("ask")
@handle_errors
def ask(
    name: NameArg,
    question: Annotated[str, typer.Argument(help="The question (quote it).")],
    data_dir: DataDirOption = None,
    as_json: JsonOption = False,
) -> None:
    """Ask the corpus's agent a question; follow-ups build on earlier answers.

    Needs the service: when none runs for this data dir, a temporary one is started for this
    command and stopped after it. The data dir must exist.
    """
    settings = load_settings(data_dir)
    with service_client(settings) as client:
        result = client.post(f"/api/corpus/{checked_name(name)}/query", {"question": question})
    if as_json:
        print_json(result)
        return
    from rich.markdown import Markdown

    out = console()
    out.print(Markdown(result["answer"]))
    out.print()
    if result.get("sources"):
        table(
            "cited observations",
            ["id", "type", "date", "title"],
            [(s["id"], s["type"], s["created_at"][:10], s["title"]) for s in result["sources"]],
        )
    notes = [f"agent {result.get('agent')}", f"session {result['session_id']}"]
    notes.append(f"turn {result.get('turn')}")
    if result.get("auto_primed"):
        notes.append("primed automatically")
    if result.get("reprimed"):
        notes.append(f"re-primed: {result.get('reprime_reason')}")
    typer.echo(" · ".join(notes) + "\n" + _usage_line(result.get("usage") or {}), err=True)


def _primed(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        print_json(result)
        return
    state = "already primed" if result.get("already_primed") else "primed"
    typer.echo(
        f"{result['name']}: {state} ({result.get('agent')}), session {result['session_id']}, "
        f"{result.get('turns', 0)} earlier turns"
    )
    if result.get("usage") and any(result["usage"].values()):
        typer.echo(_usage_line(result["usage"]), err=True)


def _usage_line(usage: dict[str, int]) -> str:
    return (
        f"tokens: input {usage.get('input_tokens', 0):,}, cache read "
        f"{usage.get('cache_read_input_tokens', 0):,}, cache write "
        f"{usage.get('cache_creation_input_tokens', 0):,}, output {usage.get('output_tokens', 0):,}"
    )
