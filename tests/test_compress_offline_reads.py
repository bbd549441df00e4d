"""The offline compressor's read rules (``compress/rules/reads.py``): Read, Grep, Glob, LS, web,
tasks and plans, MCP and unknown tools, calls without information, tools reporting failure.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.offline_events import ANTHROPIC_KEY, CWD, dumped, event, one
from workbench.compress.offline import OfflineCompressor


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
