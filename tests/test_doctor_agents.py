"""``workbench doctor``: one row per agent, from each agent module's ``checks()``.

The real CLI runs with HOME in tmp_path, holding real-shaped config folders (``~/.claude``,
``~/.gemini``, ``~/.codex``) made by hand or by ``workbench install``. An agent that is not on
the machine, or never had workbench installed, is a note; a file that cannot be read, half an
install, or commands that run an interpreter or hook scripts that are gone (a deleted venv, a
moved checkout) are problems that say how to fix them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_home import agent_env, doctor_rows, make_home, trust_codex_hooks
from tests.conftest import run_workbench

pytestmark = pytest.mark.slow

AGENTS = ("claude", "gemini", "codex")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


@pytest.fixture
def env(home: Path, data_dir: Path) -> dict[str, str]:
    return agent_env(home, data_dir)


def agent_rows(env: dict[str, str]) -> dict[str, dict[str, str]]:
    rows = doctor_rows(env)
    return {name: rows[f"agent {name}"] for name in AGENTS}


def make_agents(home: Path, *names: str) -> None:
    folders = {"claude": ".claude", "gemini": ".gemini", "codex": ".codex"}
    for name in names:
        (home / folders[name]).mkdir()


def test_no_agent_on_the_machine_is_one_note_per_agent_and_a_problem_overall(
    env: dict[str, str],
) -> None:
    rows = doctor_rows(env)
    for name in AGENTS:
        assert rows[f"agent {name}"]["status"] == "info"
        assert "not found on this machine" in rows[f"agent {name}"]["detail"]
    assert rows["agents"]["status"] == "PROBLEM"
    assert "workbench install --agent" in rows["agents"]["detail"]
    assert not list(Path(env["HOME"]).iterdir())  # doctor only looks


def test_found_but_not_installed_is_a_note_except_for_claude_code(
    home: Path, env: dict[str, str]
) -> None:
    make_agents(home, "gemini", "codex")
    rows = agent_rows(env)
    assert rows["claude"]["status"] == "info"
    for name, label in (("gemini", "Gemini CLI"), ("codex", "Codex CLI")):
        assert rows[name]["status"] == "info"
        assert f"{label} found, workbench not installed" in rows[name]["detail"]
        assert f"workbench install --agent {name}" in rows[name]["detail"]
    make_agents(home, "claude")
    claude = agent_rows(env)["claude"]
    assert claude["status"] == "PROBLEM"  # the default agent, found without workbench
    assert "workbench install --agent claude" in claude["detail"]


def test_every_installed_agent_is_one_ok_row_naming_its_hooks_and_mcp_files(
    home: Path, env: dict[str, str]
) -> None:
    make_agents(home, *AGENTS)
    assert run_workbench(env, "install", "--agent", "all").returncode == 0
    trust_codex_hooks(home / ".codex")  # the user's one step in Codex (codex_trust)
    rows = doctor_rows(env)
    assert "agents" not in rows
    expected = {
        "claude": (home / ".claude" / "settings.json", home / ".claude.json"),
        "gemini": (home / ".gemini" / "settings.json", home / ".gemini" / "settings.json"),
        "codex": (home / ".codex" / "hooks.json", home / ".codex" / "config.toml"),
    }
    for name, (hooks, mcp) in expected.items():
        row = rows[f"agent {name}"]
        assert row["status"] == "ok", row
        assert row["detail"] == f"hooks in {hooks}; MCP server in {mcp}"
    table = run_workbench(env, "doctor").stdout
    for name in AGENTS:
        assert table.count(f"agent {name}") == 1


@pytest.mark.parametrize(
    ("agent", "relative", "says"),
    [
        ("gemini", ".gemini/settings.json", "not valid JSON"),
        ("codex", ".codex/hooks.json", "not valid JSON"),
        ("codex", ".codex/config.toml", "not valid TOML"),
        ("claude", ".claude.json", "not valid JSON"),
    ],
)
def test_a_broken_config_file_is_a_problem_that_names_it(
    agent: str, relative: str, says: str, home: Path, env: dict[str, str]
) -> None:
    make_agents(home, agent)
    (home / relative).write_text("{oops = [", encoding="utf-8")
    row = agent_rows(env)[agent]
    assert row["status"] == "PROBLEM"
    assert str(home / relative) in row["detail"]
    assert says in row["detail"]
    assert "fix it by hand" in row["detail"]
    assert (home / relative).read_text("utf-8") == "{oops = ["  # doctor only reads


@pytest.mark.parametrize("agent", ["gemini", "codex", "claude"])
def test_a_deleted_interpreter_is_a_problem_fixed_by_installing_again(
    agent: str, home: Path, env: dict[str, str], tmp_path: Path
) -> None:
    """A venv's python is a link to a base interpreter; deleting the venv leaves it dangling."""
    make_agents(home, agent)
    venv_python = tmp_path / "old-venv" / "bin" / "python"
    venv_python.parent.mkdir(parents=True)
    venv_python.symlink_to(sys.executable)
    install = run_workbench(env, "install", "--agent", agent, "--python", str(venv_python))
    assert install.returncode == 0, install.stderr
    if agent == "codex":
        trust_codex_hooks(home / ".codex")  # the user's one step in Codex (codex_trust)
    assert agent_rows(env)[agent]["status"] == "ok"

    venv_python.unlink()
    row = agent_rows(env)[agent]
    assert row["status"] == "PROBLEM"
    assert str(venv_python) in row["detail"]
    assert "hooks and MCP server" in row["detail"]
    assert f"run `workbench install --agent {agent}` again" in row["detail"]

    assert run_workbench(env, "install", "--agent", agent).returncode == 0
    if agent == "codex":  # new commands: Codex asks for trust again, and doctor says so
        assert "changed since you trusted them" in agent_rows(env)[agent]["detail"]
        trust_codex_hooks(home / ".codex")
    assert agent_rows(env)[agent]["status"] == "ok"


@pytest.mark.parametrize(
    ("agent", "relative"),
    [("gemini", ".gemini/settings.json"), ("codex", ".codex/hooks.json")],
)
def test_hooks_from_a_moved_checkout_are_a_problem_that_names_the_missing_scripts(
    agent: str, relative: str, home: Path, env: dict[str, str]
) -> None:
    make_agents(home, agent)
    assert run_workbench(env, "install", "--agent", agent).returncode == 0
    path = home / relative
    hooks_dir = str(Path(__file__).resolve().parent.parent / "hooks")
    moved = "/srv/old-checkout/workbench/hooks"
    path.write_text(path.read_text("utf-8").replace(hooks_dir, moved), encoding="utf-8")
    row = agent_rows(env)[agent]
    assert row["status"] == "PROBLEM"
    assert f"{moved}/session_start.py" in row["detail"]
    assert f"run `workbench install --agent {agent}` again" in row["detail"]
    assert run_workbench(env, "install", "--agent", agent).returncode == 0
    if agent == "codex":
        trust_codex_hooks(home / ".codex")  # the user's one step in Codex (codex_trust)
    assert agent_rows(env)[agent]["status"] == "ok"


def test_half_an_install_is_a_problem(home: Path, env: dict[str, str]) -> None:
    """The server taken out by hand (``codex mcp remove workbench``), the hooks left."""
    make_agents(home, "codex")
    assert run_workbench(env, "install", "--agent", "codex").returncode == 0
    config = home / ".codex" / "config.toml"
    text = config.read_text("utf-8")
    config.write_text(text[: text.index("[mcp_servers.workbench]")], encoding="utf-8")
    row = agent_rows(env)["codex"]
    assert row["status"] == "PROBLEM"
    assert f"MCP server missing from {config}" in row["detail"]
    assert "run `workbench install --agent codex` again" in row["detail"]


def test_doctor_exits_1_on_an_agent_problem_and_prints_the_fix(
    home: Path, env: dict[str, str]
) -> None:
    make_agents(home, "gemini")
    (home / ".gemini" / "settings.json").write_text("[]", encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "doctor", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 1
    (row,) = [r for r in json.loads(proc.stdout) if r["check"] == "agent gemini"]
    assert row["status"] == "PROBLEM"
    assert "must hold a JSON object" in row["detail"]


# ----- issue 19, item 13 -------------------------------------------------------------------


def test_right_after_uninstall_doctor_says_not_installed_not_a_problem(
    home: Path, env: dict[str, str]
) -> None:
    make_agents(home, "claude", "gemini")
    assert run_workbench(env, "install", "--agent", "all").returncode == 0
    assert run_workbench(env, "uninstall", "--agent", "all").returncode == 0
    rows = doctor_rows(env)
    for name in ("claude", "gemini"):
        row = rows[f"agent {name}"]
        assert row["status"] == "info", row
        assert "not installed" in row["detail"]
        assert f"workbench install --agent {name}" in row["detail"]
    assert rows.get("agents", {}).get("status") != "PROBLEM", rows.get("agents")


@pytest.mark.parametrize(
    ("agent", "folder"),
    [
        ("gemini", ".gemini"),
        ("codex", ".codex"),
        ("cursor", ".cursor"),
        ("windsurf", ".codeium/windsurf"),
        ("opencode", ".config/opencode"),
    ],
)
def test_install_for_an_agent_that_is_not_there_is_refused_unless_forced(
    home: Path, env: dict[str, str], agent: str, folder: str
) -> None:
    proc = run_workbench(env, "install", "--agent", agent)
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "not on this machine" in out
    assert "--force" in out
    assert "Traceback" not in out
    assert not list(home.iterdir())  # nothing created
    forced = run_workbench(env, "install", "--agent", agent, "--force")
    assert forced.returncode == 0, forced.stderr
    assert (home / folder).is_dir()
