"""The offline compressor on realistic Claude Code payloads: each rule, odd shapes, determinism."""

from __future__ import annotations

import json
import math
import time
from typing import Any

import pytest

from workbench.compress.base import Compressor, build_compressor
from workbench.compress.offline import OfflineCompressor
from workbench.models import (
    CompressionResult,
    Observation,
    ObservationDraft,
    SummaryRequest,
    ToolEvent,
)
from workbench.settings import load_settings

CWD = "/home/dev/proj"
ANTHROPIC_KEY = "sk-ant-api03-" + "Zx9" * 12

PYTEST_FAILING = """============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.6.0
rootdir: /home/dev/proj
collected 44 items

tests/test_queue.py ..F.......                                          [ 22%]
tests/test_store.py ....F...F.................                          [100%]

=================================== FAILURES ===================================
___________________________ test_claim_is_exclusive ____________________________

    def test_claim_is_exclusive(store):
>       assert store.claim() == 1
E       assert 2 == 1
E        +  where 2 = <bound method Queue.claim of <Queue>>()

tests/test_queue.py:31: AssertionError
=========================== short test summary info ============================
FAILED tests/test_queue.py::test_claim_is_exclusive - assert 2 == 1
FAILED tests/test_store.py::test_atomic - sqlite3.OperationalError: database is locked
FAILED tests/test_store.py::test_fts_sync - KeyError: 'title'
========================= 3 failed, 41 passed in 2.31s =========================
"""


def event(tool: str, tool_input: Any = None, tool_response: Any = None, **kw: Any) -> ToolEvent:
    fields: dict[str, Any] = {
        "content_session_id": "sess-1",
        "project": "proj",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": tool_response,
        "cwd": CWD,
        "prompt_number": 1,
    }
    fields.update(kw)
    return ToolEvent(**fields)


def bash(command: str, stdout: str = "", stderr: str = "", **extra: Any) -> ToolEvent:
    response = {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False}
    response.update(extra)
    return event("Bash", {"command": command, "description": "Run it"}, response)


def one(ev: ToolEvent, compressor: OfflineCompressor | None = None) -> ObservationDraft:
    result = (compressor or OfflineCompressor()).observe(ev)
    assert len(result.observations) == 1, result
    return result.observations[0]


def dumped(draft: ObservationDraft) -> str:
    return json.dumps(draft.model_dump())


# ----- protocol ------------------------------------------------------------------------------
def test_offline_compressor_satisfies_the_protocol(data_dir: Any) -> None:
    compressor = build_compressor(load_settings(data_dir), "offline")
    assert isinstance(compressor, Compressor)
    assert compressor.name == "offline"
    result = compressor.observe(event("Read", {"file_path": f"{CWD}/a.py"}, "x = 1"))
    assert isinstance(result, CompressionResult)
    assert result.generated_by == "offline"


# ----- edits ---------------------------------------------------------------------------------
def test_edit_is_a_change_naming_file_lines_and_replacement() -> None:
    obs = one(
        event(
            "Edit",
            {
                "file_path": f"{CWD}/workbench/store/queue.py",
                "old_string": "def claim(self):\n    return self._next()",
                "new_string": "def claim(self, limit: int = 1):\n    return self._next(limit)",
                "replace_all": False,
            },
            {
                "filePath": f"{CWD}/workbench/store/queue.py",
                "oldString": "def claim(self):\n    return self._next()",
                "newString": "def claim(self, limit: int = 1):\n    return self._next(limit)",
                "originalFile": "import sqlite3\n" * 500,
                "structuredPatch": [
                    {
                        "oldStart": 40,
                        "oldLines": 3,
                        "newStart": 40,
                        "newLines": 3,
                        "lines": [
                            " class Queue:",
                            "-    def claim(self):",
                            "-        return self._next()",
                            "+    def claim(self, limit: int = 1):",
                            "+        return self._next(limit)",
                        ],
                    }
                ],
                "userModified": False,
                "replaceAll": False,
            },
        )
    )
    assert obs.type == "change"
    assert obs.title == "Edited workbench/store/queue.py"
    assert obs.files_modified == ["workbench/store/queue.py"]
    assert obs.files_read == []
    assert "lines 40–42" in obs.facts
    assert "+2 −2 lines" in obs.facts
    assert any(f.startswith("replaced `def claim(self):`") for f in obs.facts)
    assert "touches: claim" in obs.facts
    assert {"python", "store"} <= set(obs.concepts)
    assert "import sqlite3" not in dumped(obs)  # originalFile is never copied


def test_edit_that_renames_one_identifier_is_a_refactor() -> None:
    obs = one(
        event(
            "Edit",
            {
                "file_path": f"{CWD}/app/util.py",
                "old_string": "total = compute_sum(xs)\nreturn compute_sum(ys) + total",
                "new_string": "total = sum_values(xs)\nreturn sum_values(ys) + total",
                "replace_all": True,
            },
            {"filePath": f"{CWD}/app/util.py"},
        )
    )
    assert obs.type == "refactor"
    assert obs.title == "Renamed compute_sum → sum_values in app/util.py"
    assert "replaced every occurrence" in obs.facts


def test_multi_edit_that_moves_a_block_is_a_refactor() -> None:
    block = "def helper():\n    return 42\n"
    obs = one(
        event(
            "MultiEdit",
            {
                "file_path": f"{CWD}/app/main.py",
                "edits": [
                    {"old_string": block, "new_string": ""},
                    {"old_string": "# helpers\n", "new_string": "# helpers\n" + block},
                ],
            },
            {"filePath": f"{CWD}/app/main.py"},
        )
    )
    assert obs.type == "refactor"
    assert obs.title == "Moved code within app/main.py"
    assert "moved: `def helper():`" in obs.facts


def test_multi_edit_lists_its_edits() -> None:
    obs = one(
        event(
            "MultiEdit",
            {
                "file_path": f"{CWD}/README.md",
                "edits": [
                    {"old_string": "Install", "new_string": "Installation"},
                    {"old_string": "", "new_string": "## Usage"},
                    {"old_string": "old line", "new_string": ""},
                    "not an edit",
                ],
            },
            None,
        )
    )
    assert obs.type == "change"
    assert obs.title == "Edited README.md (3 edits)"
    assert "3 edits" in obs.facts
    assert "inserted `## Usage`" in obs.facts
    assert "deleted `old line`" in obs.facts
    assert "docs" in obs.concepts


def test_write_of_a_new_file_is_a_feature() -> None:
    content = "import re\n\n\ndef parse(text):\n    return []\n\n\nclass Parser:\n    pass\n"
    obs = one(
        event(
            "Write",
            {"file_path": f"{CWD}/workbench/compress/xml.py", "content": content},
            {
                "type": "create",
                "filePath": f"{CWD}/workbench/compress/xml.py",
                "content": content,
                "structuredPatch": [],
            },
        )
    )
    assert obs.type == "feature"
    assert obs.title == "Created workbench/compress/xml.py"
    assert "9 lines, 68 chars" in obs.facts
    assert "defines: parse, Parser" in obs.facts
    assert obs.files_modified == ["workbench/compress/xml.py"]


def test_write_over_an_existing_file_is_a_change() -> None:
    obs = one(
        event(
            "Write",
            {"file_path": f"{CWD}/config.toml", "content": "a = 1\n"},
            {"type": "update", "filePath": f"{CWD}/config.toml", "content": "a = 1\n"},
        )
    )
    assert obs.type == "change"
    assert obs.title == "Rewrote config.toml"
    assert "config" in obs.concepts


def test_write_with_an_old_string_response_still_sees_creation() -> None:
    response = f"File created successfully at: {CWD}/notes.md"
    obs = one(event("Write", {"file_path": f"{CWD}/notes.md", "content": "# Notes\n"}, response))
    assert obs.type == "feature"


def test_notebook_edit_is_a_change() -> None:
    obs = one(
        event(
            "NotebookEdit",
            {
                "notebook_path": f"{CWD}/notebooks/analysis.ipynb",
                "cell_id": "cell-3",
                "new_source": "df.groupby('day').sum()",
                "cell_type": "code",
                "edit_mode": "insert",
            },
            {"new_source": "df.groupby('day').sum()", "cell_id": "cell-3"},
        )
    )
    assert obs.type == "change"
    assert obs.title == "Edited notebook notebooks/analysis.ipynb"
    assert "insert code cell cell-3" in obs.facts
    assert "notebook" in obs.concepts


def test_write_of_a_private_key_is_a_security_alert_without_the_key() -> None:
    key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    obs = one(
        event("Write", {"file_path": f"{CWD}/deploy/key", "content": key}, {"type": "create"})
    )
    assert obs.type == "security_alert"
    assert "contains a private key (value not stored)" in obs.facts
    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in dumped(obs)


# ----- reads and searches --------------------------------------------------------------------
def test_read_is_a_discovery_with_range_and_definitions() -> None:
    obs = one(
        event(
            "Read",
            {"file_path": f"{CWD}/tests/conftest.py", "offset": 1, "limit": 60},
            {
                "type": "text",
                "file": {
                    "filePath": f"{CWD}/tests/conftest.py",
                    "content": "import pytest\n\n\ndef free_port():\n    ...\n\n\nclass Service:\n",
                    "numLines": 60,
                    "startLine": 1,
                    "totalLines": 212,
                },
            },
        )
    )
    assert obs.type == "discovery"
    assert obs.title == "Read tests/conftest.py"
    assert obs.subtitle == "lines 1–60 of 212"
    assert "defines: free_port, Service" in obs.facts
    assert obs.files_read == ["tests/conftest.py"]
    assert obs.files_modified == []
    assert "testing" in obs.concepts


def test_read_with_a_numbered_string_response() -> None:
    response = "     1→import os\n     2→\n     3→def main():\n     4→    pass\n"
    obs = one(event("Read", {"file_path": "/elsewhere/tool.py"}, response))
    assert obs.title == "Read /elsewhere/tool.py"  # outside cwd: kept absolute
    assert "defines: main" in obs.facts


def test_read_of_a_dotenv_file_is_a_security_note() -> None:
    obs = one(
        event(
            "Read", {"file_path": f"{CWD}/.env"}, {"type": "text", "file": {"content": "DEBUG=1\n"}}
        )
    )
    assert obs.type == "security_note"
    assert "secrets" in obs.concepts


def test_read_of_env_example_is_a_plain_discovery() -> None:
    obs = one(event("Read", {"file_path": f"{CWD}/.env.example"}, "DEBUG=1\n"))
    assert obs.type == "discovery"


def test_read_showing_a_key_is_an_alert_and_the_key_is_not_stored() -> None:
    content = f"ANTHROPIC_API_KEY={ANTHROPIC_KEY}\n"
    obs = one(
        event(
            "Read",
            {"file_path": f"{CWD}/settings.local"},
            {"type": "text", "file": {"content": content}},
        )
    )
    assert obs.type == "security_alert"
    assert ANTHROPIC_KEY not in dumped(obs)


def test_grep_files_mode() -> None:
    obs = one(
        event(
            "Grep",
            {
                "pattern": "def claim",
                "path": f"{CWD}/workbench",
                "glob": "*.py",
                "output_mode": "files_with_matches",
            },
            {
                "mode": "files_with_matches",
                "numFiles": 7,
                "filenames": [f"{CWD}/workbench/store/queue.py"]
                + [f"{CWD}/service/w{i}.py" for i in range(6)],
            },
        )
    )
    assert obs.type == "discovery"
    assert obs.title == "Searched for `def claim`"
    assert obs.subtitle == "in workbench *.py"
    assert "7 matching files" in obs.facts
    assert (
        "matches: workbench/store/queue.py, service/w0.py, service/w1.py, service/w2.py, "
        "service/w3.py (+2 more)" in obs.facts
    )
    assert "search" in obs.concepts


def test_grep_content_mode_and_string_response() -> None:
    content = one(
        event(
            "Grep",
            {"pattern": "TODO", "output_mode": "content"},
            {
                "mode": "content",
                "numLines": 3,
                "content": "a.py:3:# TODO fix\nb.py:9:# TODO\nc.py:1:TODO",
                "numFiles": 0,
                "filenames": [],
            },
        )
    )
    assert "3 matching lines" in content.facts
    assert "first match: a.py:3:# TODO fix" in content.facts
    legacy = one(
        event("Grep", {"pattern": "x"}, "Found 2 files\n/home/dev/proj/a.py\n/home/dev/proj/b.py")
    )
    assert "2 matching files" in legacy.facts
    empty = one(
        event(
            "Grep",
            {"pattern": "nothing"},
            {"mode": "files_with_matches", "numFiles": 0, "filenames": []},
        )
    )
    assert "no matches" in empty.facts


def test_glob_and_ls() -> None:
    glob = one(
        event(
            "Glob",
            {"pattern": "**/*.py", "path": CWD},
            {
                "filenames": [f"{CWD}/src/m{i}.py" for i in range(100)],
                "durationMs": 12,
                "numFiles": 100,
                "truncated": True,
            },
        )
    )
    assert glob.title == "Listed files matching `**/*.py`"
    assert "100 files" in glob.facts
    assert "results truncated" in glob.facts
    listing = one(
        event("LS", {"path": f"{CWD}/src"}, "- /home/dev/proj/src/\n  - a.py\n  - b.py\n")
    )
    assert listing.title == "Listed src"
    assert "3 entries" in listing.facts


def test_web_fetch_and_search() -> None:
    fetch = one(
        event(
            "WebFetch",
            {
                "url": "https://docs.python.org/3/library/sqlite3.html",
                "prompt": "How do I enable WAL?",
            },
            {
                "bytes": 123456,
                "code": 200,
                "codeText": "OK",
                "result": "Use PRAGMA journal_mode=WAL. It persists.",
                "durationMs": 800,
                "url": "https://docs.python.org/3/library/sqlite3.html",
            },
        )
    )
    assert fetch.type == "discovery"
    assert "HTTP 200 OK" in fetch.facts
    assert "answer: Use PRAGMA journal_mode=WAL. It persists." in fetch.facts
    assert "docs.python.org" in fetch.concepts
    search = one(
        event(
            "WebSearch",
            {"query": "sqlite wal mode busy timeout"},
            {
                "query": "sqlite wal mode busy timeout",
                "results": [
                    {
                        "tool_use_id": "x",
                        "content": [{"title": "WAL mode", "url": "https://sqlite.org/wal.html"}],
                    }
                ],
                "durationSeconds": 1.2,
            },
        )
    )
    assert search.title == "Searched the web: sqlite wal mode busy timeout"
    assert "WAL mode (https://sqlite.org/wal.html)" in search.facts


def test_task_todo_and_plan() -> None:
    task = one(
        event(
            "Task",
            {
                "description": "Find the queue code",
                "prompt": "Look for the queue",
                "subagent_type": "Explore",
            },
            {
                "content": [
                    {"type": "text", "text": "The queue lives in store/queue.py. It uses SQLite."}
                ],
                "totalToolUseCount": 4,
            },
        )
    )
    assert task.title == "Delegated to Explore: Find the queue code"
    assert "4 tool uses" in task.facts
    todo = one(
        event(
            "TodoWrite",
            {
                "todos": [
                    {"content": "Write parser", "status": "completed"},
                    {"content": "Test it", "status": "in_progress"},
                ]
            },
            {"oldTodos": [], "newTodos": []},
        )
    )
    assert todo.type == "decision"
    assert todo.title == "Task list: 1/2 done"
    plan = one(
        event(
            "ExitPlanMode",
            {"plan": "# Add retries\n- back off on 429\n- park on 401"},
            "User approved",
        )
    )
    assert plan.type == "decision"
    assert plan.title == "Plan: Add retries"
    assert "back off on 429" in plan.facts


def test_mcp_and_unknown_tools_are_generic_discoveries() -> None:
    obs = one(
        event(
            "mcp__github__get_issue",
            {"owner": "acme", "repo": "app", "issue_number": 7},
            [{"type": "text", "text": "Issue #7: crash on start\nbody"}],
        )
    )
    assert obs.type == "discovery"
    assert obs.title == "github: get_issue: acme"
    assert "result: Issue #7: crash on start" in obs.facts
    assert "github" in obs.concepts


@pytest.mark.parametrize(
    ("tool", "tool_input", "tool_response"),
    [
        ("SomeNewTool", {"query": "x"}, None),
        ("SomeNewTool", {"query": "x"}, ""),
        ("SomeNewTool", {}, {}),
        ("Read", {}, None),
        ("Bash", {"command": ""}, {"stdout": "", "stderr": ""}),
        ("Edit", None, None),
    ],
)
def test_calls_without_information_give_no_observation(
    tool: str, tool_input: Any, tool_response: Any
) -> None:
    result = OfflineCompressor().observe(event(tool, tool_input, tool_response))
    assert result.observations == []


def test_a_tool_reporting_its_own_failure() -> None:
    obs = one(
        event(
            "Edit",
            {"file_path": f"{CWD}/a.py", "old_string": "x", "new_string": "y"},
            "<tool_use_error>String to replace not found in file.</tool_use_error>",
        )
    )
    assert obs.type == "discovery"
    assert obs.title == "Edit failed on a.py"
    assert obs.facts == ["error: String to replace not found in file."]


# ----- Bash ----------------------------------------------------------------------------------
def test_failing_pytest_run_is_a_bugfix_with_counts_failures_and_first_error() -> None:
    obs = one(
        bash("cd /home/dev/proj && uv run pytest -q tests/", PYTEST_FAILING, "Error: Exit code 1")
    )
    assert obs.type == "bugfix"
    assert obs.title == "Tests failing: `cd /home/dev/proj && uv run pytest -q tests/`"
    assert obs.subtitle == "Run it"
    assert obs.facts[0] == "pytest: 3 failed, 41 passed"
    assert "failed: tests/test_queue.py::test_claim_is_exclusive" in obs.facts
    assert "first error: assert 2 == 1" in obs.facts
    assert "exit code 1" in obs.facts
    assert "testing" in obs.concepts
    assert "First failure: tests/test_queue.py::test_claim_is_exclusive" in obs.narrative


def test_a_pass_after_a_failure_is_noted_as_fixed() -> None:
    compressor = OfflineCompressor()
    one(bash("pytest -q", PYTEST_FAILING), compressor)
    fixed = one(bash("pytest -q", "44 passed in 2.02s\n"), compressor)
    assert fixed.type == "bugfix"
    assert fixed.title == "Tests pass again: `pytest -q`"
    assert "previously failing: tests/test_store.py::test_atomic" in fixed.facts
    again = one(bash("pytest -q", "44 passed in 2.02s\n"), compressor)
    assert again.type == "discovery"  # the memory is cleared by the pass
    assert again.title == "Tests pass: `pytest -q`"


def test_a_passing_run_without_history_is_a_discovery() -> None:
    obs = one(
        bash("python -m pytest tests/test_a.py", "===== 12 passed, 1 skipped in 0.50s =====\n")
    )
    assert obs.type == "discovery"
    assert obs.facts[0] == "pytest: 12 passed, 1 skipped"


@pytest.mark.parametrize(
    ("command", "stdout", "stderr", "counts"),
    [
        (
            "npx jest",
            "FAIL src/a.test.ts\n  ● Sum › adds\n\nTests:       1 failed, 12 passed, 13 total\n",
            "",
            "jest: 1 failed, 12 passed",
        ),
        (
            "cargo test",
            "test parse::tests::empty ... FAILED\n\n"
            "test result: FAILED. 3 passed; 1 failed; 0 ignored\n",
            "",
            "cargo test: 1 failed, 3 passed, 0 ignored",
        ),
        (
            "go test ./...",
            "--- FAIL: TestClaim (0.00s)\n    queue_test.go:12: got 2\n"
            "FAIL\tgithub.com/acme/q\t0.01s\n",
            "",
            "go test: 1 failed",
        ),
        ("npm test", "", "Error: Exit code 1\nnpm ERR! Test failed.", "npm test: failing"),
        (
            "python -m unittest",
            "",
            "F.\n======\nFAIL: test_x\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n",
            "unittest: 1 failed, 1 passed",
        ),
    ],
)
def test_other_test_runners_failing(command: str, stdout: str, stderr: str, counts: str) -> None:
    obs = one(bash(command, stdout, stderr))
    assert obs.type == "bugfix"
    assert obs.facts[0] == counts


def test_no_tests_collected_is_not_a_failure() -> None:
    obs = one(
        bash(
            "pytest -k nothing",
            "collected 10 items / 10 deselected\n\n===== 10 deselected in 0.01s =====",
            "Error: Exit code 5",
        )
    )
    assert obs.type == "discovery"
    assert obs.title.startswith("Test run empty")


def test_git_commit_with_heredoc_message() -> None:
    command = (
        "git add -A && git commit -m \"$(cat <<'EOF'\nFix queue claim race\n\n"
        'Claims now take a row lock.\nEOF\n)"'
    )
    obs = one(
        bash(
            command,
            "[main 3f2a9c1] Fix queue claim race\n"
            " 2 files changed, 14 insertions(+), 3 deletions(-)\n"
            " create mode 100644 workbench/store/lock.py\n",
        )
    )
    assert obs.type == "change"
    assert obs.title == "Committed: Fix queue claim race"
    assert "commit 3f2a9c1 on main" in obs.facts
    assert "2 files changed, 14 insertions(+), 3 deletions(-)" in obs.facts
    assert obs.files_modified == ["workbench/store/lock.py"]
    assert "git" in obs.concepts


def test_git_commit_with_m_flag_and_nothing_to_commit() -> None:
    committed = one(
        bash(
            'git commit -m "Add parser tests"',
            "[feat/xml 0a1b2c3] Add parser tests\n 1 file changed, 40 insertions(+)\n",
        )
    )
    assert committed.title == "Committed: Add parser tests"
    assert "commit 0a1b2c3 on feat/xml" in committed.facts
    nothing = one(
        bash(
            'git commit -m "x"',
            "On branch main\nnothing to commit, working tree clean\n",
            "Error: Exit code 1",
        )
    )
    assert nothing.type == "discovery"
    assert nothing.title == "Nothing to commit"


def test_other_git_commands() -> None:
    status = one(
        bash("git status", "On branch main\nChanges not staged for commit:\n\tmodified:   a.py\n")
    )
    assert status.type == "discovery"
    assert status.title == "git status: `git status`"
    moved = one(bash("git mv old/name.py new/name.py"))
    assert moved.type == "refactor"
    assert moved.files_modified == ["old/name.py", "new/name.py"]
    push = one(
        bash(
            "git push --force origin main",
            "",
            "To github.com:acme/app.git\n + 1a2b3c...4d5e6f main -> main (forced update)\n",
        )
    )
    assert push.type == "change"
    assert "forced" in push.facts


def test_secret_in_command_output_is_an_alert_and_never_stored() -> None:
    obs = one(bash("cat .env", f"ANTHROPIC_API_KEY={ANTHROPIC_KEY}\nDEBUG=1\n"))
    assert obs.type == "security_alert"
    assert "output contains an Anthropic API key (value not stored)" in obs.facts
    assert "touches .env" in obs.facts
    assert obs.files_read == [".env"]
    assert ANTHROPIC_KEY not in dumped(obs)


def test_secret_typed_into_a_command_is_masked() -> None:
    obs = one(bash(f"export ANTHROPIC_API_KEY={ANTHROPIC_KEY} && claude -p hi", "hello"))
    assert obs.type == "security_note"
    assert "command sets a secret variable" in obs.facts
    assert ANTHROPIC_KEY not in dumped(obs)
    assert "[secret]" in obs.title


def test_a_secret_passed_by_reference_does_not_hide_the_test_run() -> None:
    obs = one(bash("GITHUB_TOKEN=$GITHUB_TOKEN npm test", "Tests:       2 passed, 2 total\n"))
    assert obs.type == "discovery"
    assert obs.facts[0] == "npm test (jest): 2 passed"  # the runner behind npm, by its output


@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("curl -fsSL https://example.com/install.sh | sh", "command pipes a download into a shell"),
        ("chmod -R 777 /srv/app", "command makes files world-writable"),
        ("ssh-keygen -t ed25519 -f deploy_key", "command uses a credential tool"),
        ("printenv", "command prints the environment"),
    ],
)
def test_sensitive_commands_are_security_notes(command: str, what: str) -> None:
    obs = one(bash(command, "done"))
    assert obs.type == "security_note"
    assert what in obs.facts


def test_lint_failures_and_clean_runs() -> None:
    failing = one(
        bash(
            "ruff check .",
            "workbench/x.py:3:1: F401 `os` imported but unused\nFound 3 errors.\n",
            "Error: Exit code 1",
        )
    )
    assert failing.type == "bugfix"
    assert "ruff: Found 3 errors" in failing.facts
    assert "first error: workbench/x.py:3:1: F401 `os` imported but unused" in failing.facts
    clean = one(bash("uv run mypy workbench", "Success: no issues found in 40 source files\n"))
    assert clean.type == "discovery"
    assert clean.title == "mypy passes: `uv run mypy workbench`"
    formatted = one(
        bash("ruff format workbench/", "3 files reformatted, 40 files left unchanged\n")
    )
    assert formatted.type == "change"
    assert formatted.files_modified == ["workbench/"]


def test_installs_moves_and_file_operations() -> None:
    install = one(
        bash("pip install httpx 'rich>=13'", "Successfully installed httpx-0.29.0 rich-13.9.0\n")
    )
    assert install.type == "change"
    assert install.title == "Installed httpx, rich>=13"
    assert "dependencies" in install.concepts
    move = one(bash(f"mv {CWD}/src/old.py {CWD}/src/new.py"))
    assert move.type == "refactor"
    assert move.files_modified == ["src/old.py", "src/new.py"]
    remove = one(bash("rm -rf build/ dist"))
    assert remove.type == "change"
    assert remove.files_modified == ["build/"]
    redirect = one(bash("echo 'x = 1' > generated/consts.py 2>&1"))
    assert redirect.type == "change"
    assert redirect.files_modified == ["generated/consts.py"]
    heredoc = one(bash("cat > notes/plan.md <<'EOF'\nif a > b: go\nEOF", ""))
    assert heredoc.files_modified == ["notes/plan.md"]
    arrow = one(bash("python -c 'print(2 > 1)'", "True"))
    assert arrow.type == "discovery"


def test_plain_commands_are_discoveries_with_output() -> None:
    cat = one(bash(f"cat {CWD}/pyproject.toml", "[project]\nname = 'x'\n"))
    assert cat.type == "discovery"
    assert cat.files_read == ["pyproject.toml"]
    assert "output: [project]" in cat.facts
    failed = one(
        event(
            "Bash",
            {"command": "make deploy"},
            "Error: Exit code 2\nmake: *** No rule to make target 'deploy'.",
        )
    )
    assert "exit code 2" in failed.facts
    background = one(
        event(
            "Bash",
            {"command": "python -m http.server", "run_in_background": True},
            {"stdout": "", "stderr": "", "backgroundTaskId": "b1"},
        )
    )
    assert "started in the background" in background.facts


# ----- odd shapes, size, determinism, cost ---------------------------------------------------
ODD_VALUES: list[Any] = [
    None,
    "",
    "plain text",
    42,
    3.5,
    True,
    [],
    {},
    [1, "two", None, {"text": 5}],
    {"stdout": None, "stderr": 7},
    {"file": "not a dict"},
    {"file": {"content": 12}},
    {"structuredPatch": [{"newStart": "x", "lines": [1, None]}, "junk"]},
    {"filenames": "a.py"},
    {"numFiles": "3"},
    {"content": [{"type": "image"}, {"text": None}]},
    "{not json",
    '{"a": [1, 2]}',
    {"edits": "nope"},
    {"todos": [1, {"status": None}]},
    {"\u0000": "\udcff"},
    [[[[[[["deep"]]]]]]],
]
TOOLS = [
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "Read",
    "Grep",
    "Glob",
    "LS",
    "WebFetch",
    "WebSearch",
    "Task",
    "Agent",
    "TodoWrite",
    "ExitPlanMode",
    "Bash",
    "mcp__x__y",
    "Unknown",
]


@pytest.mark.parametrize("tool", TOOLS)
def test_odd_shapes_never_raise(tool: str) -> None:
    compressor = OfflineCompressor()
    for tool_input in ODD_VALUES:
        for tool_response in ODD_VALUES:
            result = compressor.observe(event(tool, tool_input, tool_response))
            assert len(result.observations) <= 1
            for obs in result.observations:
                assert obs.title


def test_huge_responses_stay_bounded_and_fast() -> None:
    stdout = "collecting ...\n" + ("x" * 120 + "\n") * 40_000 + PYTEST_FAILING
    huge = bash("pytest", stdout)
    read = event(
        "Read",
        {"file_path": f"{CWD}/big.log"},
        {"type": "text", "file": {"content": "line\n" * 1_000_000}},
    )
    compressor = OfflineCompressor()
    started = time.perf_counter()
    test_obs = one(huge, compressor)
    read_obs = one(read, compressor)
    assert time.perf_counter() - started < 1.0
    assert test_obs.facts[0] == "pytest: 3 failed, 41 passed"  # the summary at the tail is seen
    for obs in (test_obs, read_obs):
        assert len(dumped(obs)) < 5_000


def test_same_input_gives_the_same_output() -> None:
    events = [
        bash("pytest -q", PYTEST_FAILING),
        bash("pytest -q", "44 passed in 1s"),
        event("Edit", {"file_path": f"{CWD}/a.py", "old_string": "a", "new_string": "b"}, None),
        event("Grep", {"pattern": "x"}, {"filenames": ["b.py", "a.py"], "numFiles": 2}),
        bash("git commit -m 'x'", "[main abc1234] x\n"),
    ]
    first = [OfflineCompressor().observe(e).model_dump() for e in events]
    second = [OfflineCompressor().observe(e).model_dump() for e in events]
    assert first == second
    run_one = OfflineCompressor()
    run_two = OfflineCompressor()
    assert [run_one.observe(e).model_dump() for e in events] == [
        run_two.observe(e).model_dump() for e in events
    ]


def test_discovery_tokens_estimate_the_raw_call() -> None:
    tool_input = {"file_path": "/a/b.py"}
    tool_response = {"type": "text", "file": {"content": "x" * 4000}}
    result = OfflineCompressor().observe(event("Read", tool_input, tool_response))
    chars = (
        len("file_path")
        + len("/a/b.py")
        + len("type")
        + len("text")
        + len("file")
        + len("content")
        + 4000
    )
    assert result.discovery_tokens == math.ceil(chars / 4)


# ----- summarize -----------------------------------------------------------------------------
def stored(draft: ObservationDraft, ident: int, prompt_number: int = 1) -> Observation:
    fields = {k: v for k, v in draft.model_dump().items() if k in ObservationDraft.model_fields}
    return Observation(
        **fields,
        id=ident,
        content_session_id="sess-1",
        project="proj",
        prompt_number=prompt_number,
        created_at="2026-01-01T00:00:00Z",
        created_at_epoch=1_767_225_600 + ident,
        content_hash=f"h{ident}",
    )


def session_observations() -> list[Observation]:
    compressor = OfflineCompressor()
    events = [
        event("Read", {"file_path": f"{CWD}/workbench/store/queue.py"}, "def claim():\n    pass\n"),
        bash("pytest -q", PYTEST_FAILING),
        event(
            "Edit",
            {
                "file_path": f"{CWD}/workbench/store/queue.py",
                "old_string": "return 1",
                "new_string": "return limit",
            },
            None,
        ),
        bash("pytest -q", "44 passed in 2s"),
        bash(
            'git commit -m "Fix claim"',
            "[main 1234567] Fix claim\n 1 file changed, 1 insertion(+)\n",
        ),
    ]
    drafts = [compressor.observe(e).observations[0] for e in events]
    return [stored(d, i + 1) for i, d in enumerate(drafts)]


LAST_MESSAGE = """Fixed the claim race in the queue. Claims now lock the row before reading it.
All 44 tests pass.

Next steps:
- add a stress test with two workers
- document the lock in ARCHITECTURE.md

TODO: benchmark claim latency."""


def test_summarize_builds_a_digest_from_the_prompts_observations() -> None:
    observations = session_observations()
    other_prompt = stored(
        observations[0].model_copy(update={"title": "Read other.py"}), 99, prompt_number=2
    )
    request = SummaryRequest(
        content_session_id="sess-1",
        project="proj",
        prompt_number=1,
        user_prompt="  Fix the race in queue.claim   \n",
        last_assistant_message=LAST_MESSAGE,
        observations=[*reversed(observations), other_prompt],
    )
    result = OfflineCompressor().summarize(request)
    summary = result.summary
    assert summary is not None
    assert result.generated_by == "offline"
    assert summary.request == "Fix the race in queue.claim"
    assert summary.investigated == "Read workbench/store/queue.py"
    assert "Read other.py" not in summary.investigated  # another prompt's observation
    assert "Edited workbench/store/queue.py" in summary.completed
    assert "Committed: Fix claim" in summary.completed
    assert "Tests pass again: `pytest -q`" in summary.completed
    assert "Tests failing" not in summary.completed
    assert summary.learned.startswith("Fixed the claim race in the queue. Claims now lock the row")
    assert "first error: assert 2 == 1" in summary.learned
    assert summary.next_steps == (
        "add a stress test with two workers; document the lock in ARCHITECTURE.md; "
        "TODO: benchmark claim latency."
    )
    assert summary.files_read == ["workbench/store/queue.py"]
    assert summary.files_edited == ["workbench/store/queue.py"]
    assert result.discovery_tokens == math.ceil((len(request.user_prompt) + len(LAST_MESSAGE)) / 4)


def test_summarize_is_deterministic_and_handles_an_empty_prompt() -> None:
    request = SummaryRequest(
        content_session_id="s",
        project="p",
        prompt_number=1,
        user_prompt="hi",
        observations=session_observations(),
    )
    assert OfflineCompressor().summarize(request) == OfflineCompressor().summarize(request)
    empty = OfflineCompressor().summarize(
        SummaryRequest(content_session_id="s", project="p", prompt_number=3)
    )
    assert empty.summary is not None
    assert empty.summary.next_steps == ""
    assert empty.summary.completed == ""
    assert empty.discovery_tokens == 0


def test_summarize_puts_security_observations_in_notes() -> None:
    alert = one(bash("cat .env", f"KEY={ANTHROPIC_KEY}"))
    request = SummaryRequest(
        content_session_id="s", project="p", prompt_number=1, observations=[stored(alert, 1)]
    )
    summary = OfflineCompressor().summarize(request).summary
    assert summary is not None
    assert summary.notes == "Secret-looking value in output of `cat .env`"


# ----- secret detection ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (f"export ANTHROPIC_API_KEY={ANTHROPIC_KEY}", "export ANTHROPIC_API_KEY=[secret]"),
        ('TOKEN="abc123def456ghi789jk" ok', 'TOKEN="[secret]" ok'),
        ("password: hunter2hunter2hunter2", "password: [secret]"),
        ("aws AKIAABCDEFGHIJKLMNOP here", "aws [secret] here"),
        ("İİ TOKEN=abc123def456ghi789jk!", "İİ TOKEN=[secret]!"),  # "İ" grows when lowercased
        ("api_key = settings.anthropic_api_key", "api_key = settings.anthropic_api_key"),
        ("max_tokens=12345678901234567890", "max_tokens=12345678901234567890"),
        ("xAKIAABCDEFGHIJKLMNOP", "xAKIAABCDEFGHIJKLMNOP"),  # not a word of its own
    ],
)
def test_secret_values_are_masked_and_code_is_not(text: str, masked: str) -> None:
    from workbench.compress.rules.secrets import mask_secrets, secret_kinds

    assert mask_secrets(text) == masked
    assert bool(secret_kinds(text)) is (text != masked)
