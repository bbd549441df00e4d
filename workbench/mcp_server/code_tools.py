"""The code navigation tools (issue 22): smart_search, smart_outline, smart_unfold.

claude-mem's three tools with its names, arguments and text answers (``mcp-server.ts``):
``smart_search(query, path?, max_results?, file_pattern?)``, ``smart_outline(file_path)``,
``smart_unfold(file_path, symbol_name)``. They read the project's files in this process
(``workbench.code``) and never call the service, so they work with it down.

Paths stay inside the project root: the agent's project dir (``CLAUDE_PROJECT_DIR``), else
the git work tree of the server's cwd, else the cwd. A relative path is taken from the
root; one that resolves outside it (``..``, an absolute path elsewhere, a symlink out) is
a tool error saying so, as are a missing file, a binary or over-large file and an empty
query. A symbol that is not there is an answer, not an error: the symbols there are.

No ``from __future__ import annotations``: the SDK evaluates these signatures to build the
tool schemas (see ``recall_tools``).
"""

from collections.abc import Callable
from typing import Annotated, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from workbench.errors import WorkbenchError
from workbench.mcp_server.backend import ServiceBackend

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
FilePath = Annotated[
    str,
    Field(
        description="Path to the source file, relative to the project root (or absolute "
        "inside it).",
        min_length=1,
        max_length=4096,
    ),
]
T = TypeVar("T")


def tool_call(work: Callable[[], T]) -> T:
    """Run ``work``; a ``WorkbenchError`` becomes a ``ToolError`` carrying its message."""
    try:
        return work()
    except WorkbenchError as exc:
        raise ToolError(exc.message) from None


def register(server: MCPServer, client: ServiceBackend) -> None:
    """Add the three code tools; ``client`` is unused: they read files, not the memory."""
    del client

    def smart_search(
        query: Annotated[
            str,
            Field(
                description="Search term: matched against symbol names, signatures and "
                "doc comments (split on spaces, _ - . /).",
                min_length=1,
                max_length=500,
            ),
        ],
        path: Annotated[
            str | None,
            Field(
                description="Folder (or file) to search, inside the project (default: the "
                "project root).",
                max_length=4096,
            ),
        ] = None,
        max_results: Annotated[
            int, Field(ge=1, le=200, description="Maximum results to return (default: 20).")
        ] = 20,
        file_pattern: Annotated[
            str | None,
            Field(
                description='Substring filter for file paths (e.g. ".ts", "src/services").',
                max_length=500,
            ),
        ] = None,
    ) -> str:
        from workbench.code import navigate, paths

        def work() -> str:
            result = navigate.search(
                paths.project_root(),
                query,
                path,
                max_results=max_results,
                file_pattern=file_pattern,
            )
            return navigate.search_text(result)

        return tool_call(work)

    def smart_outline(file_path: FilePath) -> str:
        from workbench.code import navigate, paths

        return tool_call(
            lambda: navigate.outline_text(navigate.outline(paths.project_root(), file_path))
        )

    def smart_unfold(
        file_path: FilePath,
        symbol_name: Annotated[
            str,
            Field(
                description="Name of the symbol to unfold (function, class, method, "
                "heading...); Class.method works too.",
                min_length=1,
                max_length=500,
            ),
        ],
    ) -> str:
        from workbench.code import navigate, paths

        return tool_call(lambda: navigate.unfold(paths.project_root(), file_path, symbol_name).text)

    tools: list[tuple[Callable[..., str], str]] = [
        (
            smart_search,
            "Search the codebase for symbols, functions, classes using tree-sitter AST "
            "parsing. Returns matching symbols (kind, name, file:lines, signature) and "
            "folded structural views of their files with token counts. Use path to scope "
            "the search. Languages: Python, TypeScript/TSX, JavaScript, Go, Rust, Java, C, "
            "C++, Ruby, Bash, Markdown (headings).",
        ),
        (
            smart_outline,
            "Get the structural outline of a file: all symbols (functions, classes, "
            "methods, types; Markdown headings) with signatures and line ranges, bodies "
            "folded. Much cheaper than reading the full file.",
        ),
        (
            smart_unfold,
            "Expand one symbol (function, class, method, heading) of a file: returns the "
            "full source of just that symbol with its line range. Use after smart_search "
            "or smart_outline to read specific code; lists the available symbols when the "
            "name is not found.",
        ),
    ]
    for fn, description in tools:
        server.add_tool(fn, description=description, annotations=READ_ONLY, structured_output=False)
