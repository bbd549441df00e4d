"""The MCP server registered with Gemini CLI and Codex CLI by ``workbench install --agent``.

Gemini CLI keeps stdio servers under ``mcpServers`` in ``~/.gemini/settings.json``, the file
that also holds its hooks; Codex CLI under ``[mcp_servers.<name>]`` in
``$CODEX_HOME/config.toml``. Real CLI runs against a temporary HOME and CODEX_HOME: the user's
own file survives byte for byte (TOML comments and order included), install is idempotent with
one backup, uninstall takes out only ours, a foreign ``workbench`` entry is refused untouched.
Finally a real MCP client starts the server from the command the config file holds.
"""

from __future__ import annotations

import json
import sys
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.agent_home import agent_env, backups
from tests.conftest import run_workbench
from tests.mcp_stdio import tool_names

GEMINI_USER = {
    "theme": "GitHub",
    "mcpServers": {
        "github": {
            "command": "npx",
            "args": ["-y", "@github/github-mcp-server"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "$GITHUB_PERSONAL_ACCESS_TOKEN"},
        }
    },
    "hooks": {
        "AfterTool": [
            {"matcher": "write_file", "hooks": [{"type": "command", "command": "prettier"}]}
        ]
    },
}
# A user's config.toml as people write it: comments, a root key after a comment, tables in
# their own order, an MCP server of their own.
CODEX_USER = """\
# Codex settings — mine, edited by hand
model = "gpt-5.1"  # the default is fine too
approval_policy = "on-request"

[mcp_servers.docs]
command = "docs-server"
args = ["--port", "4000"]

[profiles.fast]
model = "gpt-5.1-codex-mini"   # quick answers
"""
ENTRY = ["-P", "-m", "workbench", "mcp", "--platform"]  # + the agent (issue 20 item 14)


def gemini_file(home: Path) -> Path:
    return home / ".gemini" / "settings.json"


def codex_file(home: Path) -> Path:
    return home / "codex" / "config.toml"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".gemini").mkdir(parents=True)
    (folder / "codex").mkdir()
    gemini_file(folder).write_text(json.dumps(GEMINI_USER, indent=2), encoding="utf-8")
    codex_file(folder).write_text(CODEX_USER, encoding="utf-8")
    return folder


@pytest.fixture
def env(home: Path, data_dir: Path) -> dict[str, str]:
    return agent_env(home, data_dir, CODEX_HOME=str(home / "codex"))


def gemini_servers(home: Path) -> dict[str, Any]:
    return json.loads(gemini_file(home).read_text("utf-8"))["mcpServers"]


def codex_servers(home: Path) -> dict[str, Any]:
    return tomllib.loads(codex_file(home).read_text("utf-8")).get("mcp_servers", {})


def test_gemini_install_registers_the_server_beside_the_hooks_in_one_write(
    home: Path, env: dict[str, str], data_dir: Path
) -> None:
    proc = run_workbench(env, "install", "--agent", "gemini")
    assert proc.returncode == 0, proc.stderr
    assert "Gemini CLI: installed workbench MCP server in" in proc.stdout
    config = json.loads(gemini_file(home).read_text("utf-8"))
    ours = config["mcpServers"].pop("workbench")
    assert ours == {
        "command": sys.executable,
        "args": [*ENTRY, "gemini"],
        "env": {"WORKBENCH_DATA_DIR": str(data_dir)},
    }
    assert config["mcpServers"] == GEMINI_USER["mcpServers"]
    assert config["theme"] == "GitHub"
    assert "SessionStart" in config["hooks"]  # the hooks went into the same file
    # Hooks and server in one write: one backup, and it is the user's own file.
    (backup,) = backups(gemini_file(home))
    assert json.loads(backup.read_text("utf-8")) == GEMINI_USER

    again = run_workbench(env, "install", "--agent", "gemini")
    assert again.returncode == 0, again.stderr
    assert "workbench MCP server already in" in again.stdout
    assert json.loads(gemini_file(home).read_text("utf-8"))["mcpServers"]["workbench"] == ours
    assert len(backups(gemini_file(home))) == 1

    gone = run_workbench(env, "uninstall", "--agent", "gemini")
    assert gone.returncode == 0, gone.stderr
    assert "removed workbench MCP server from" in gone.stdout
    assert json.loads(gemini_file(home).read_text("utf-8")) == GEMINI_USER


def test_codex_install_adds_one_table_and_keeps_the_users_toml_byte_for_byte(
    home: Path, env: dict[str, str], data_dir: Path
) -> None:
    proc = run_workbench(env, "install", "--agent", "codex")
    assert proc.returncode == 0, proc.stderr
    assert "Codex CLI: installed workbench MCP server in" in proc.stdout
    text = codex_file(home).read_text("utf-8")
    assert "# Codex settings — mine, edited by hand" in text
    assert 'model = "gpt-5.1-codex-mini"   # quick answers' in text
    assert text.index("[mcp_servers.docs]") < text.index("[profiles.fast]")
    servers = codex_servers(home)
    assert servers["workbench"] == {
        "command": sys.executable,
        "args": [*ENTRY, "codex"],
        "env": {"WORKBENCH_DATA_DIR": str(data_dir)},
    }
    assert servers["docs"] == {"command": "docs-server", "args": ["--port", "4000"]}
    (backup,) = backups(codex_file(home))
    assert backup.read_text("utf-8") == CODEX_USER

    again = run_workbench(env, "install", "--agent", "codex")
    assert again.returncode == 0, again.stderr
    assert "workbench MCP server already in" in again.stdout
    assert codex_file(home).read_text("utf-8") == text
    assert len(backups(codex_file(home))) == 1

    gone = run_workbench(env, "uninstall", "--agent", "codex")
    assert gone.returncode == 0, gone.stderr
    assert "removed workbench MCP server from" in gone.stdout
    assert codex_file(home).read_text("utf-8") == CODEX_USER
    assert "nothing changed" in run_workbench(env, "uninstall", "--agent", "codex").stdout


def test_codex_install_without_a_config_toml_creates_one_owner_only(
    home: Path, env: dict[str, str]
) -> None:
    codex_file(home).unlink()
    assert run_workbench(env, "install", "--agent", "codex").returncode == 0
    assert codex_servers(home)["workbench"]["args"] == [*ENTRY, "codex"]
    assert codex_file(home).stat().st_mode & 0o077 == 0
    assert run_workbench(env, "uninstall", "--agent", "codex").returncode == 0
    assert codex_file(home).read_text("utf-8").strip() == ""


def test_codex_servers_written_inline_stay_inline(home: Path, env: dict[str, str]) -> None:
    inline = 'model = "o3"\nmcp_servers = { docs = { command = "docs-server" } }\n'
    codex_file(home).write_text(inline, encoding="utf-8")
    assert run_workbench(env, "install", "--agent", "codex").returncode == 0
    assert set(codex_servers(home)) == {"docs", "workbench"}
    assert run_workbench(env, "uninstall", "--agent", "codex").returncode == 0
    assert tomllib.loads(codex_file(home).read_text("utf-8")) == tomllib.loads(inline)


@pytest.mark.parametrize("agent", ["gemini", "codex"])
def test_a_foreign_server_named_workbench_is_never_overwritten(
    agent: str, home: Path, env: dict[str, str]
) -> None:
    if agent == "gemini":
        foreign = {**GEMINI_USER, "mcpServers": {"workbench": {"command": "other-tool"}}}
        gemini_file(home).write_text(json.dumps(foreign), encoding="utf-8")
    else:
        codex_file(home).write_text(
            CODEX_USER + '\n[mcp_servers.workbench]\ncommand = "other-tool"\n', encoding="utf-8"
        )
    before = {p: p.read_bytes() for p in (gemini_file(home), codex_file(home))}
    proc = run_workbench(env, "install", "--agent", agent)
    assert proc.returncode == 1
    assert "not workbench's" in proc.stderr
    assert "other-tool" in proc.stderr
    assert "nothing was changed" in proc.stderr
    remove = "gemini mcp remove" if agent == "gemini" else "codex mcp remove workbench"
    assert remove in proc.stderr
    # Refused before any file was written: no half-done install (Codex's hooks.json too).
    assert {p: p.read_bytes() for p in before} == before
    assert not (home / "codex" / "hooks.json").exists()
    assert run_workbench(env, "uninstall", "--agent", agent).returncode == 0
    assert {p: p.read_bytes() for p in before} == before


def test_a_config_toml_that_is_not_toml_is_refused_untouched(
    home: Path, env: dict[str, str]
) -> None:
    codex_file(home).write_text('model = "o3\n[broken', encoding="utf-8")
    proc = run_workbench(env, "install", "--agent", "codex")
    assert proc.returncode == 1
    assert "config.toml is not valid TOML" in proc.stderr
    assert "fix it by hand" in proc.stderr
    assert codex_file(home).read_text("utf-8") == 'model = "o3\n[broken'
    assert not (home / "codex" / "hooks.json").exists()


def test_mcp_servers_that_is_not_a_table_is_refused(home: Path, env: dict[str, str]) -> None:
    codex_file(home).write_text('mcp_servers = "none"\n', encoding="utf-8")
    proc = run_workbench(env, "install", "--agent", "codex")
    assert proc.returncode == 1
    assert '"mcp_servers"' in proc.stderr
    assert "not a table" in proc.stderr
    assert codex_file(home).read_text("utf-8") == 'mcp_servers = "none"\n'


@pytest.mark.parametrize("agent", ["gemini", "codex"])
def test_the_registered_command_starts_the_server_from_a_users_project(
    agent: str, home: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """Run exactly what the agent would run, in a project holding a ``workbench`` folder."""
    assert run_workbench(env, "install", "--agent", agent).returncode == 0
    entry = (gemini_servers if agent == "gemini" else codex_servers)(home)["workbench"]
    assert {"search", "get_observations", "workflow"} <= tool_names(entry, tmp_path)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        # Gemini CLI strips comments before parsing; workbench cannot keep them, so it refuses.
        ('{\n  // my theme\n  "theme": "GitHub"\n}\n', "is not valid JSON"),
        ('{"hooks": null}', '"hooks" in'),
        ('{"hooks": {"AfterTool": {"matcher": "x"}}}', '"hooks.AfterTool" in'),
        ('{"mcpServers": []}', '"mcpServers" in'),
    ],
)
def test_a_gemini_settings_file_workbench_cannot_merge_is_refused_untouched(
    text: str, says: str, home: Path, env: dict[str, str]
) -> None:
    gemini_file(home).write_text(text, encoding="utf-8")
    proc = run_workbench(env, "install", "--agent", "gemini")
    assert proc.returncode == 1
    assert says in proc.stderr
    assert "fix it by hand" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert gemini_file(home).read_text("utf-8") == text
    assert backups(gemini_file(home)) == []


def test_gemini_cli_home_moves_the_gemini_folder(
    home: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """Gemini CLI reads ``$GEMINI_CLI_HOME/.gemini`` when set (packages/core/src/utils/paths.ts)."""
    other = tmp_path / "gemini-home"
    (other / ".gemini").mkdir(parents=True)
    moved = {**env, "GEMINI_CLI_HOME": str(other)}
    assert run_workbench(moved, "install", "--agent", "gemini").returncode == 0
    assert "workbench" in gemini_servers(other)
    assert json.loads(gemini_file(home).read_text("utf-8")) == GEMINI_USER  # ~/.gemini untouched
    doctor = json.loads(run_workbench(moved, "doctor", "--json").stdout)
    (row,) = [r for r in doctor if r["check"] == "agent gemini"]
    assert row["status"] == "ok"
    assert str(other / ".gemini" / "settings.json") in row["detail"]


@pytest.mark.parametrize("agent", ["gemini", "codex"])
def test_an_install_never_replaces_an_earlier_backup_of_the_same_second(
    agent: str, home: Path, env: dict[str, str]
) -> None:
    """Backups are named by the second: install, then install with another data dir, can
    land on the same name. Backups of every second this test can run in already exist."""
    path = gemini_file(home) if agent == "gemini" else codex_file(home)
    original = path.read_bytes()
    now = time.time()
    earlier = {}
    for second in range(-2, 120):
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(now + second))
        backup = path.with_name(f"{path.name}.workbench-backup-{stamp}")
        earlier[backup] = f"earlier backup {stamp}".encode()
        backup.write_bytes(earlier[backup])
    assert run_workbench(env, "install", "--agent", agent).returncode == 0
    assert {b: b.read_bytes() for b in earlier} == earlier
    new = [b for b in backups(path) if b not in earlier]
    assert [b.read_bytes() for b in new] == [original]
