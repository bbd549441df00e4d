"""The code tools over MCP: ``smart_search``, ``smart_outline``, ``smart_unfold`` (issue 22).

A real ``workbench mcp`` over stdio, driven by the SDK's client, with ``CLAUDE_PROJECT_DIR``
naming a git work tree of every language's sample (``tests/code_samples.py``). No service
runs and ``--no-start`` forbids starting one: the code tools read files, not the memory, so
they must answer anyway. One session runs the script; the tests assert on its parts.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import ClientSession, StdioServerParameters

from tests.code_samples import write_repo
from tests.conftest import ROOT, base_env, free_port
from tests.test_mcp import run_session, text_of
from workbench.code import navigate

CODE_TOOLS = {"smart_search", "smart_outline", "smart_unfold"}


@pytest.fixture(scope="module")
def session_log(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("code-mcp")
    repo = write_repo(base / "repo").resolve()
    (repo / "src" / "blob.py").write_bytes(b"def a():\0\0binary")
    (base / "outside.py").write_text("def secret():\n    pass\n")
    data_dir = base / "data"
    data_dir.mkdir()
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workbench", "mcp", "--no-start"],
        env=base_env(data_dir, free_port(), CLAUDE_PROJECT_DIR=str(repo)),
        cwd=str(ROOT),
    )

    async def script(session: ClientSession) -> dict[str, Any]:
        call = session.call_tool
        return {
            "repo": repo,
            "tools": (await session.list_tools()).tools,
            "outline": await call("smart_outline", {"file_path": "src/accounts.py"}),
            "outline_abs": await call("smart_outline", {"file_path": str(repo / "web/users.ts")}),
            "search": await call("smart_search", {"query": "store"}),
            "search_scoped": await call(
                "smart_search", {"query": "add", "path": "native", "max_results": 1}
            ),
            "unfold": await call(
                "smart_unfold", {"file_path": "src/accounts.py", "symbol_name": "balance"}
            ),
            "unfold_missing": await call(
                "smart_unfold", {"file_path": "src/accounts.py", "symbol_name": "withdraw"}
            ),
            "escape": await call("smart_outline", {"file_path": "../outside.py"}),
            "search_escape": await call("smart_search", {"query": "secret", "path": ".."}),
            "binary": await call("smart_outline", {"file_path": "src/blob.py"}),
            "missing": await call("smart_outline", {"file_path": "src/none.py"}),
            "bad_limit": await call("smart_search", {"query": "x", "max_results": 0}),
        }

    return run_session(server, script, base / "mcp-stderr.log")


def test_lists_the_code_tools_read_only_with_valid_schemas(session_log: dict[str, Any]) -> None:
    tools = {tool.name: tool for tool in session_log["tools"]}
    assert CODE_TOOLS <= set(tools)
    for name in CODE_TOOLS:
        tool = tools[name]
        jsonschema.validators.validator_for(tool.input_schema).check_schema(tool.input_schema)
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
    assert tools["smart_search"].input_schema["required"] == ["query"]
    assert set(tools["smart_search"].input_schema["properties"]) == {
        "query",
        "path",
        "max_results",
        "file_pattern",
    }
    assert tools["smart_unfold"].input_schema["required"] == ["file_path", "symbol_name"]
    assert tools["smart_outline"].input_schema["required"] == ["file_path"]


def test_outline_is_the_folded_view_of_the_file(session_log: dict[str, Any]) -> None:
    repo = session_log["repo"]
    result = session_log["outline"]
    assert not result.is_error
    expected = navigate.outline_text(navigate.outline(repo, "src/accounts.py"))
    assert text_of(result) == expected
    assert "  ◆ Account [exported] (L7-18)" in expected
    absolute = text_of(session_log["outline_abs"])
    assert absolute.startswith("📁 web/users.ts (typescript, 27 lines, ~")


def test_search_answers_with_symbols_and_folded_views(session_log: dict[str, Any]) -> None:
    text = text_of(session_log["search"])
    assert text == navigate.search_text(navigate.search(session_log["repo"], "store"))
    assert text.startswith('🔍 Smart Search: "store"\n   Scanned 13 files, found ')
    assert "   Skipped 1 files: src/blob.py: a binary file (NUL bytes)" in text
    assert "── Folded File Views ──" in text
    scoped = text_of(session_log["search_scoped"])
    assert "1 matches across 1 files" in scoped
    assert "function add (native/ledger.c:14-16)" in scoped


def test_unfold_answers_the_source_or_the_available_symbols(session_log: dict[str, Any]) -> None:
    assert text_of(session_log["unfold"]).startswith(
        "// 📍 src/accounts.py L12-14\n    @property\n    def balance(self) -> int:"
    )
    missing = session_log["unfold_missing"]
    assert not missing.is_error
    assert text_of(missing).startswith(
        'Symbol "withdraw" not found in src/accounts.py.\n\nAvailable symbols:\n'
        "  - Account (class, L7-18)"
    )


@pytest.mark.parametrize(
    ("key", "message"),
    [
        ("escape", "outside the project root"),
        ("search_escape", "outside the project root"),
        ("binary", "src/blob.py: a binary file"),
        ("missing", "'src/none.py' does not exist"),
        ("bad_limit", "max_results"),
    ],
)
def test_bad_input_is_a_tool_error_naming_the_fix(
    session_log: dict[str, Any], key: str, message: str
) -> None:
    result = session_log[key]
    assert result.is_error
    assert message in text_of(result)
    assert "Traceback" not in text_of(result)


def test_the_stderr_log_has_no_traceback(session_log: dict[str, Any]) -> None:
    log = Path(session_log["repo"]).parent / "mcp-stderr.log"
    assert "Traceback" not in log.read_text(encoding="utf-8")
