"""``workbench code search | outline | unfold``: the agent's code navigation tools in a terminal.

The same functions as the MCP tools ``smart_search``, ``smart_outline`` and ``smart_unfold``
(``workbench.code.navigate``), shown as rich tables for people, ``--json`` for machines and
``--text`` for exactly what the agent reads. Paths are taken from the shell's cwd, as any
command's are, and must lie inside the project root: ``--root``, else the git work tree
of the cwd, else the cwd. Nothing here needs the service or the data dir.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from workbench.cli.output import JsonOption, console, handle_errors, print_json, table

if TYPE_CHECKING:
    from workbench.code.navigate import Outline

code_app = typer.Typer(
    name="code",
    help=(
        "Code navigation: find symbols, outline a file, read one symbol (tree-sitter; the "
        "MCP tools smart_search, smart_outline, smart_unfold).\n\n"
        "  workbench code search fence\n\n"
        "  workbench code outline workbench/recall/render.py\n\n"
        "  workbench code unfold workbench/recall/render.py fence"
    ),
    no_args_is_help=True,
    rich_markup_mode=None,
)

RootOption = Annotated[
    str | None,
    typer.Option(
        "--root", help="Project root the paths must stay inside (default: the cwd's git root)."
    ),
]
TextOption = Annotated[
    bool, typer.Option("--text", help="Print the text the MCP tool gives the agent.")
]


def register(app: typer.Typer) -> None:
    app.add_typer(code_app, name="code")


def _root(root: str | None) -> Path:
    from workbench.code import paths

    if root:
        return paths.checked_root(root)
    cwd = Path.cwd().resolve()
    return paths.git_root(cwd) or cwd


@code_app.command("search")
@handle_errors
def search(
    query: Annotated[str, typer.Argument(help="Symbol name or words of one.")],
    path: Annotated[
        str | None, typer.Argument(help="Folder or file to search (default: the root).")
    ] = None,
    max_results: Annotated[int, typer.Option("--max-results", "-n", help="1 to 200.")] = 20,
    file_pattern: Annotated[
        str | None, typer.Option("--file-pattern", help='Path substring, e.g. ".ts" or "src/".')
    ] = None,
    root: RootOption = None,
    text: TextOption = False,
    as_json: JsonOption = False,
) -> None:
    """Symbols matching QUERY (name, signature, doc), best first, with their files' outlines."""
    from workbench.code import navigate

    result = navigate.search(
        _root(root),
        query,
        path,
        max_results=max_results,
        file_pattern=file_pattern,
        base=Path.cwd(),
    )
    if as_json:
        print_json(result.as_dict())
        return
    if text:
        typer.echo(navigate.search_text(result))
        return
    table(
        f'Symbols matching "{query}": {len(result.matches)} of {result.symbols_found} '
        f"symbols in {result.files_scanned} files",
        ["kind", "symbol", "where", "signature", "match"],
        (
            (
                m.symbol.kind,
                m.qualified_name,
                f"{m.path}:{m.symbol.line_start}-{m.symbol.line_end}",
                m.symbol.signature,
                m.reason,
            )
            for m in result.matches
        ),
    )
    if result.files:
        table(
            "Folded views (workbench code outline FILE shows one)",
            ["file", "language", "lines", "folded tokens"],
            ((p.path, p.language, p.total_lines, f"~{t}") for p, t, _ in result.files),
        )
    for note in result.skipped[:10]:
        typer.secho(f"skipped {note}", fg=typer.colors.YELLOW, err=True)
    if result.truncated:
        typer.secho("stopped after 20,000 files: pass a PATH to narrow", err=True)


@code_app.command("outline")
@handle_errors
def outline(
    file: Annotated[str, typer.Argument(help="Source file.")],
    root: RootOption = None,
    text: TextOption = False,
    as_json: JsonOption = False,
) -> None:
    """FILE's symbols with signatures and line ranges, bodies folded."""
    from workbench.code import navigate

    result = navigate.outline(_root(root), file, Path.cwd())
    if as_json:
        print_json(result.as_dict())
        return
    if text:
        typer.echo(navigate.outline_text(result))
        return
    _outline_table(result)


def _outline_table(result: Outline) -> None:
    parsed = result.parsed
    title = (
        f"{result.path} ({parsed.language}, {parsed.total_lines} lines, "
        f"~{result.tokens} tokens folded)"
    )
    if not parsed.symbols:
        typer.echo(f"{title}: no symbols")
        if not parsed.has_grammar:
            from workbench.code.unfold import no_grammar

            typer.echo(no_grammar(parsed.language))
        return
    table(
        title,
        ["kind", "symbol", "lines", "signature"],
        (
            (
                s.kind,
                "  " * min(depth, 12) + s.name + (" *" if s.exported else ""),
                f"{s.line_start}-{s.line_end}",
                s.signature,
            )
            for s, _, depth in parsed.walk()
        ),
    )


@code_app.command("unfold")
@handle_errors
def unfold(
    file: Annotated[str, typer.Argument(help="Source file.")],
    symbol: Annotated[str, typer.Argument(help="Symbol name (Class.method works too).")],
    root: RootOption = None,
    as_json: JsonOption = False,
) -> None:
    """The full source of SYMBOL in FILE; the available symbols (exit 1) when it is not there."""
    from workbench.code import navigate

    result = navigate.unfold(_root(root), file, symbol, Path.cwd())
    if as_json:
        print_json(result.as_dict())
    elif result.found:
        console().print(result.text, markup=False, highlight=False, soft_wrap=True)
    else:
        typer.echo(result.text, err=True)
    if not result.found:
        raise typer.Exit(1)
