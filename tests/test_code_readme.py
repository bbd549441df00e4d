"""The README's "Code navigation" section is true (issue 22 item 1).

Its console block is run command by command from the repo root as real processes and each
output compared whole; its tool table names the tools the MCP server lists (from the
handshake snapshot the server answers with); its language list is the grammars installed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import ROOT
from workbench.code.languages import SUPPORTED

README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README.split("## Code navigation", 1)[1].split("\n## ", 1)[0]
NAMES = {"tsx": "TSX", "cpp": "C++", "javascript": "JavaScript", "typescript": "TypeScript"}


def console_steps() -> list[tuple[list[str], str]]:
    block = SECTION.split("```console\n", 1)[1].split("```", 1)[0]
    steps: list[tuple[list[str], str]] = []
    for line in block.splitlines(keepends=True):
        if line.startswith("$ "):
            steps.append((line[2:].split(), ""))
        else:
            argv, out = steps[-1]
            steps[-1] = (argv, out + line)
    return steps


def test_the_console_block_is_what_the_commands_print() -> None:
    steps = console_steps()
    assert len(steps) == 2
    for argv, expected in steps:
        assert argv[0] == "workbench"
        done = subprocess.run(
            [sys.executable, "-m", "workbench", *argv[1:]],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "COLUMNS": "100"},
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == expected, " ".join(argv)


def test_the_tool_table_names_the_servers_tools() -> None:
    snapshot = json.loads((ROOT / "workbench/mcp_server/handshake.json").read_text())
    listed = {tool["name"]: tool for tool in snapshot["lists"]["tools/list"]["tools"]}
    for name in ("smart_search", "smart_outline", "smart_unfold"):
        row = next(line for line in SECTION.splitlines() if line.startswith(f"| `{name}("))
        arguments = row.split("(", 1)[1].split(")", 1)[0].replace("?", "").split(", ")
        assert set(arguments) == set(listed[name]["inputSchema"]["properties"]), name


def test_the_language_list_is_the_installed_grammars() -> None:
    line = SECTION.split("Languages: ", 1)[1].split("\n(", 1)[0].replace("\n", " ")
    named = {part.strip() for part in line.split(",")}
    assert named == {NAMES.get(lang, lang.capitalize()) for lang in SUPPORTED}
