"""``workbench code search | outline | unfold`` (issue 22): the code tools from a terminal.

In-process with Typer's runner for the tables, JSON and errors, and once as a real
subprocess from inside the repo, where the root is the cwd's git work tree and paths are
taken from the cwd. No service and no data dir are involved.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from tests.code_samples import write_repo
from workbench.cli.main import app
from workbench.code import navigate


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo").resolve()


def run(repo: Path, *args: str) -> Result:
    return CliRunner().invoke(
        app, ["code", *args, "--root", str(repo)], catch_exceptions=False, env={"COLUMNS": "200"}
    )


def test_outline_prints_a_table_and_the_agents_text(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    table = run(repo, "outline", "src/cache.rs")
    assert table.exit_code == 0, table.output
    assert "src/cache.rs (rust, 23 lines, ~" in table.output
    rows = [line for line in table.output.splitlines() if line.startswith("│")]
    assert [row.split("│")[1].strip() for row in rows] == [
        "struct",
        "impl",
        "method",
        "trait",
        "enum",
        "function",
    ]
    assert "pub fn get(&self, key: &str) -> Option<&T>" in table.output
    text = run(repo, "outline", "src/cache.rs", "--text")
    assert text.output == navigate.outline_text(navigate.outline(repo, "src/cache.rs")) + "\n"


def test_brackets_in_signatures_survive_the_table(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo)
    (repo / "src" / "typed.py").write_text(
        "def pick(f: Callable[[int], str], xs: list[int]) -> dict[str, int]:\n    pass\n"
    )
    out = run(repo, "outline", "src/typed.py").output
    assert "def pick(f: Callable[[int], str], xs: list[int]) -> dict[str, int]" in out


def test_search_json_and_table(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    body = json.loads(run(repo, "search", "store", "--json").output)
    assert body["files_scanned"] == 12
    first = body["matches"][0]
    assert first == {
        "path": "src/cache.rs",
        "name": "Store",
        "qualified_name": "Store",
        "kind": "trait",
        "signature": "pub trait Store",
        "doc": None,
        "line_start": 14,
        "line_end": 16,
        "exported": True,
        "match": "name + signature match",
    }
    assert body["folded_tokens"] == sum(f["folded_tokens"] for f in body["files"]) > 0
    table = run(repo, "search", "deposit", "src", "-n", "5")
    assert table.exit_code == 0
    assert "Account.deposit" in table.output
    assert "src/accounts.py:16-18" in table.output


def test_unfold_prints_the_source_or_lists_symbols_and_exits_1(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "src")  # paths are the cwd's
    found = run(repo, "unfold", "accounts.py", "Account.deposit")
    assert found.exit_code == 0
    assert found.output.splitlines()[:2] == [
        "// 📍 src/accounts.py L16-18",
        "    def deposit(self, amount: int = 0, meta: dict[str, Any] = {}) -> None:",
    ]
    missing = run(repo, "unfold", "accounts.py", "withdraw")
    assert missing.exit_code == 1
    assert "Available symbols:\n  - Account (class, L7-18)" in missing.output
    as_json = json.loads(run(repo, "unfold", "accounts.py", "_helper", "--json").output)
    assert as_json["found"] is True
    assert (as_json["line_start"], as_json["line_end"], as_json["kind"]) == (21, 23, "function")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["outline", "../../etc/passwd"], "outside the project root"),
        (["outline", "nothing.py"], "does not exist"),
        (["unfold", "src", "x"], "is a folder"),
        (["search", "  "], "the query is empty"),
        (["search", "x", "-n", "500"], "max_results must be 1 to 200"),
    ],
)
def test_bad_input_is_one_error_line(
    repo: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], message: str
) -> None:
    monkeypatch.chdir(repo)
    result = run(repo, *args)
    assert result.exit_code == 1
    assert result.output.startswith("error: ")
    assert message in result.output
    assert "Traceback" not in result.output


def test_the_command_finds_the_git_root_of_the_cwd(repo: Path) -> None:
    """A real process in a sub-folder: the root is the work tree, so ../ inside it is fine."""
    done = subprocess.run(
        [sys.executable, "-m", "workbench", "code", "outline", "../web/users.ts", "--json"],
        cwd=repo / "src",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["path"] == "web/users.ts"
    assert body["language"] == "typescript"
    assert [s["qualified_name"] for s in body["symbols"]][:4] == [
        "User",
        "UserId",
        "Role",
        "UserStore",
    ]
    refused = subprocess.run(
        [sys.executable, "-m", "workbench", "code", "outline", "../../outside.py"],
        cwd=repo / "src",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 1
    assert "outside the project root" in refused.stderr
