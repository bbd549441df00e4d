"""``workbench install | uninstall --agent all``: exactly the agents found on this machine.

An agent is found when its config folder exists (``~/.claude`` or ``$CLAUDE_CONFIG_DIR``,
``~/.gemini``, ``~/.codex`` or ``$CODEX_HOME``). Real CLI runs against a temporary HOME holding
the user's own files: ``all`` writes into the found agents only, a second run changes nothing,
uninstall gives every file back as it was, and a refusal by one agent stops the run before any
file is written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent_home import agent_env, make_home
from tests.conftest import run_workbench

GEMINI_USER = {"theme": "GitHub", "mcpServers": {"docs": {"command": "docs-server"}}}
CODEX_TOML = '# mine\nmodel = "gpt-5.1"\n\n[mcp_servers.docs]\ncommand = "docs-server"\n'
CODEX_HOOKS = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
CLAUDE_SETTINGS = {"model": "opus"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


@pytest.fixture
def env(home: Path, data_dir: Path) -> dict[str, str]:
    return agent_env(home, data_dir)


def dumps(value: object) -> str:
    """JSON as the agents write it (two-space indent), which is how install writes it back."""
    return json.dumps(value, indent=2) + "\n"


def user_files(home: Path, *agents: str) -> dict[Path, bytes]:
    """Write each agent's own files as a user has them; return their bytes."""
    files: dict[Path, str] = {}
    if "claude" in agents:
        files[home / ".claude" / "settings.json"] = dumps(CLAUDE_SETTINGS)
    if "gemini" in agents:
        files[home / ".gemini" / "settings.json"] = dumps(GEMINI_USER)
    if "codex" in agents:
        files[home / ".codex" / "config.toml"] = CODEX_TOML
        files[home / ".codex" / "hooks.json"] = dumps(CODEX_HOOKS)
    for path, text in files.items():
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return {path: path.read_bytes() for path in files}


def tree(home: Path) -> dict[str, bytes]:
    """Every file under ``home`` (backups aside) with its bytes."""
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and ".workbench-backup-" not in p.name
    }


def test_all_installs_into_exactly_the_found_agents_then_uninstalls_only_ours(
    home: Path, env: dict[str, str]
) -> None:
    before = user_files(home, "gemini", "codex")
    proc = run_workbench(env, "install", "--agent", "all")
    assert proc.returncode == 0, proc.stderr
    assert "Gemini CLI: installed workbench hooks" in proc.stdout
    assert "Codex CLI: installed workbench hooks" in proc.stdout
    assert "Claude Code" not in proc.stdout
    assert not (home / ".claude").exists()  # not found, not created
    assert not (home / ".claude.json").exists()
    gemini = json.loads((home / ".gemini" / "settings.json").read_text("utf-8"))
    assert {"docs", "workbench"} == set(gemini["mcpServers"])
    assert "[mcp_servers.workbench]" in (home / ".codex" / "config.toml").read_text("utf-8")
    installed = tree(home)

    again = run_workbench(env, "install", "--agent", "all")
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("nothing changed") == 4  # hooks and server, two agents
    assert tree(home) == installed

    gone = run_workbench(env, "uninstall", "--agent", "all")
    assert gone.returncode == 0, gone.stderr
    assert {path: path.read_bytes() for path in before} == before
    assert set(tree(home)) == {str(p.relative_to(home)) for p in before}


def test_all_includes_claude_code_when_its_folder_exists(home: Path, env: dict[str, str]) -> None:
    before = user_files(home, "claude", "codex")
    proc = run_workbench(env, "install", "--agent", "all")
    assert proc.returncode == 0, proc.stderr
    assert "Claude Code: installed workbench hooks" in proc.stdout
    assert "Codex CLI: installed" in proc.stdout
    assert "Gemini CLI" not in proc.stdout
    assert not (home / ".gemini").exists()
    assert "workbench" in json.loads((home / ".claude.json").read_text("utf-8"))["mcpServers"]
    assert run_workbench(env, "uninstall", "--agent", "all").returncode == 0
    assert {path: path.read_bytes() for path in before} == before


@pytest.mark.parametrize("command", ["install", "uninstall"])
def test_all_with_no_agent_found_is_a_clear_error_that_writes_nothing(
    command: str, home: Path, env: dict[str, str]
) -> None:
    proc = run_workbench(env, command, "--agent", "all")
    assert proc.returncode == 1
    assert "--agent all found no agent on this machine" in proc.stderr
    assert "--agent claude | gemini | codex" in proc.stderr
    assert list(home.iterdir()) == []


def test_one_agent_refusing_stops_all_before_any_file_is_written(
    home: Path, env: dict[str, str]
) -> None:
    user_files(home, "claude", "gemini", "codex")
    config = home / ".codex" / "config.toml"
    config.write_text(CODEX_TOML + '\n[mcp_servers.workbench]\ncommand = "other"\n', "utf-8")
    before = tree(home)
    proc = run_workbench(env, "install", "--agent", "all")
    assert proc.returncode == 1
    assert "not workbench's" in proc.stderr
    assert "codex mcp remove workbench" in proc.stderr
    assert tree(home) == before  # Claude Code and Gemini CLI, listed first, untouched too
