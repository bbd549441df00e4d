"""``workbench install|uninstall --agent windsurf`` against real config files, the real CLI.

The CLI runs as a subprocess with HOME in tmp_path, so Windsurf's files are
``<home>/.codeium/windsurf/hooks.json`` and ``mcp_config.json``. The user's own entries must
survive every install and uninstall exactly; the command written for the prompt event is then
run as Windsurf runs it (``sh -c`` in the workspace root), with the service down.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.agent_home import agent_env, backups, make_home, read_json
from tests.conftest import FIXTURES, run_workbench
from workbench import spool

USER_HOOKS = {
    "hooks": {
        "pre_run_command": [
            {"command": "python3 /opt/guard/block_rm.py", "show_output": True},
        ],
        "post_write_code": [
            {"command": "bash /opt/fmt/format_code.sh", "show_output": False},
        ],
    }
}
USER_MCP = {"mcpServers": {"github": {"command": "npx", "args": ["-y", "github-mcp"], "env": {}}}}
EVENTS = {
    "pre_user_prompt": ["user_prompt_submit.py"],
    "post_read_code": ["post_tool_use.py"],
    "post_write_code": ["post_tool_use.py"],
    "post_run_command": ["post_tool_use.py"],
    "post_mcp_tool_use": ["post_tool_use.py"],
    "post_cascade_response": ["stop.py", "context_file.py"],
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


def windsurf_dir(home: Path) -> Path:
    return home / ".codeium" / "windsurf"


def ours(config: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    return {
        event: [e for e in entries if "/hooks/" in e["command"]]
        for event, entries in config["hooks"].items()
        if any("/hooks/" in e["command"] for e in entries)
    }


def seed(home: Path) -> tuple[Path, Path]:
    folder = windsurf_dir(home)
    folder.mkdir(parents=True)
    hooks, mcp = folder / "hooks.json", folder / "mcp_config.json"
    hooks.write_text(json.dumps(USER_HOOKS), "utf-8")
    mcp.write_text(json.dumps(USER_MCP), "utf-8")
    return hooks, mcp


def test_install_merges_idempotently_keeps_the_users_entries_and_uninstall_removes_ours(
    home: Path, data_dir: Path
) -> None:
    hooks_file, mcp_file = seed(home)
    env = agent_env(home, data_dir)

    first = run_workbench(env, "install", "--agent", "windsurf")
    assert first.returncode == 0, first.stderr
    config = read_json(hooks_file)
    mine = ours(config)
    assert {
        event: [e["command"].split(" --platform")[0].rsplit("/", 1)[1] for e in entries]
        for event, entries in mine.items()
    } == EVENTS
    for entries in mine.values():
        for entry in entries:
            assert entry["command"].endswith("--platform windsurf"), entry
            assert entry["show_output"] is False
            assert "working_directory" not in entry  # hooks run in the workspace root
    # The user's entries are kept, first, exactly.
    assert config["hooks"]["pre_run_command"] == USER_HOOKS["hooks"]["pre_run_command"]
    assert config["hooks"]["post_write_code"][0] == USER_HOOKS["hooks"]["post_write_code"][0]
    servers = read_json(mcp_file)["mcpServers"]
    assert servers["github"] == USER_MCP["mcpServers"]["github"]
    assert servers["workbench"]["args"] == [
        "-P",
        "-m",
        "workbench",
        "mcp",
        "--platform",
        "windsurf",
    ]
    assert servers["workbench"]["env"] == {"WORKBENCH_DATA_DIR": str(data_dir)}
    assert [read_json(b) for b in backups(hooks_file)] == [USER_HOOKS]
    assert [read_json(b) for b in backups(mcp_file)] == [USER_MCP]

    again = run_workbench(env, "install", "--agent", "windsurf")
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("nothing changed") == 2
    assert read_json(hooks_file) == config
    assert len(backups(hooks_file)) == len(backups(mcp_file)) == 1

    gone = run_workbench(env, "uninstall", "--agent", "windsurf")
    assert gone.returncode == 0, gone.stderr
    assert read_json(hooks_file) == USER_HOOKS
    assert read_json(mcp_file) == USER_MCP
    twice = run_workbench(env, "uninstall", "--agent", "windsurf")
    assert twice.returncode == 0, twice.stderr
    assert read_json(hooks_file) == USER_HOOKS


def test_install_into_a_fresh_windsurf_then_uninstall_leaves_no_hooks(
    home: Path, data_dir: Path
) -> None:
    windsurf_dir(home).mkdir(parents=True)
    env = agent_env(home, data_dir)
    assert run_workbench(env, "install", "--agent", "all").returncode == 0
    hooks_file = windsurf_dir(home) / "hooks.json"
    assert set(ours(read_json(hooks_file))) == set(EVENTS)
    assert run_workbench(env, "uninstall", "--agent", "windsurf").returncode == 0
    assert read_json(hooks_file) == {}
    assert read_json(windsurf_dir(home) / "mcp_config.json") == {}


def test_the_installed_prompt_command_runs_the_windsurf_adapter(
    home: Path, data_dir: Path, tmp_path: Path
) -> None:
    windsurf_dir(home).mkdir(parents=True)
    env = agent_env(home, data_dir)
    assert run_workbench(env, "install", "--agent", "windsurf").returncode == 0
    ((entry,),) = [ours(read_json(windsurf_dir(home) / "hooks.json"))["pre_user_prompt"]]
    workspace = tmp_path / "acme-api"
    workspace.mkdir()
    payload = (FIXTURES / "hooks" / "windsurf" / "pre_user_prompt.json").read_bytes()
    proc = subprocess.run(
        ["sh", "-c", entry["command"]],
        input=payload,
        env=env,
        cwd=workspace,
        capture_output=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {}
    (path,) = spool.pending(data_dir / "spool")
    envelope = spool.Envelope.from_json(path.read_text("utf-8"))
    assert envelope.path == "/api/sessions/init"
    assert envelope.body["platformSource"] == "windsurf"
    assert envelope.body["project"] == "acme-api"


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("{not json", "not valid JSON"),
        ('{"hooks": ["pre_user_prompt"]}', '"hooks"'),
        ('{"hooks": {"post_run_command": {"command": "x"}}}', '"hooks.post_run_command"'),
    ],
)
def test_a_hooks_file_we_cannot_merge_is_refused_and_nothing_is_written(
    text: str, names: str, home: Path, data_dir: Path
) -> None:
    folder = windsurf_dir(home)
    folder.mkdir(parents=True)
    (folder / "hooks.json").write_text(text, "utf-8")
    result = run_workbench(agent_env(home, data_dir), "install", "--agent", "windsurf")
    assert result.returncode != 0
    assert names in result.stdout + result.stderr
    assert (folder / "hooks.json").read_text("utf-8") == text
    assert sorted(p.name for p in folder.iterdir()) == ["hooks.json"]  # no MCP file, no backup


def test_a_foreign_mcp_server_named_workbench_refuses_before_any_write(
    home: Path, data_dir: Path
) -> None:
    folder = windsurf_dir(home)
    folder.mkdir(parents=True)
    foreign = {"mcpServers": {"workbench": {"command": "/usr/bin/other-workbench", "args": []}}}
    (folder / "mcp_config.json").write_text(json.dumps(foreign), "utf-8")
    result = run_workbench(agent_env(home, data_dir), "install", "--agent", "windsurf")
    assert result.returncode != 0
    assert "not workbench's" in result.stdout + result.stderr
    assert read_json(folder / "mcp_config.json") == foreign
    assert sorted(p.name for p in folder.iterdir()) == ["mcp_config.json"]


@pytest.mark.slow
def test_doctor_notes_windsurf_until_installed_then_reports_both_files(
    home: Path, data_dir: Path
) -> None:
    env = agent_env(home, data_dir)

    def windsurf_row() -> tuple[str, str]:
        out = run_workbench(env, "doctor", "--json").stdout
        (row,) = [c for c in json.loads(out) if c["check"] == "agent windsurf"]
        return row["status"], row["detail"]

    assert windsurf_row() == ("info", "Windsurf not found on this machine")
    windsurf_dir(home).mkdir(parents=True)
    status, detail = windsurf_row()
    assert status == "info"
    assert "run `workbench install --agent windsurf`" in detail
    assert run_workbench(env, "install", "--agent", "windsurf").returncode == 0
    assert windsurf_row() == (
        "ok",
        f"hooks in {windsurf_dir(home) / 'hooks.json'}; "
        f"MCP server in {windsurf_dir(home) / 'mcp_config.json'}",
    )
    (windsurf_dir(home) / "hooks.json").write_text('{"hooks": []}', "utf-8")
    status, detail = windsurf_row()
    assert status == "PROBLEM"
    assert "fix it by hand" in detail
