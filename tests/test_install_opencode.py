"""``workbench install|uninstall --agent opencode`` and ``doctor``, real CLI, real files.

The CLI runs as a subprocess with HOME in tmp_path (OpenCode's ``~/.config/opencode``). The
plugin it installs is then loaded by real node (``tests/opencode_harness.mjs``) with no
WORKBENCH_* variables: what install wrote into it must be enough to reach the hooks and the
pinned data dir.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent_home import agent_env, doctor_rows, read_json
from tests.conftest import ROOT, run_workbench

# The user's own OpenCode config, which every install and uninstall must keep exactly.
USER = {
    "$schema": "https://opencode.ai/config.json",
    "theme": "opencode",
    "plugin": ["opencode-wakatime"],
    "mcp": {"github": {"type": "remote", "url": "https://api.githubcopilot.com/mcp/"}},
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    (folder / ".config" / "opencode").mkdir(parents=True)
    return folder


def config_dir(home: Path) -> Path:
    return home / ".config" / "opencode"


def test_install_is_idempotent_keeps_the_users_config_and_uninstall_removes_ours(
    home: Path, data_dir: Path
) -> None:
    config = config_dir(home) / "opencode.json"
    config.write_text(json.dumps(USER), encoding="utf-8")
    env = agent_env(home)

    first = run_workbench(env, "install", "--agent", "opencode", "--data-dir", str(data_dir))
    assert first.returncode == 0, first.stderr
    plugin = config_dir(home) / "plugins" / "workbench.js"
    text = plugin.read_text("utf-8")
    assert f'"dataDir": "{data_dir}"' in text
    assert f'"hooksDir": "{ROOT / "hooks"}"' in text
    merged = read_json(config)
    assert {k: v for k, v in merged.items() if k != "mcp"} == {
        k: v for k, v in USER.items() if k != "mcp"
    }
    assert merged["mcp"]["github"] == USER["mcp"]["github"]
    entry = merged["mcp"]["workbench"]
    assert entry["type"] == "local"
    assert entry["command"][1:] == ["-P", "-m", "workbench", "mcp", "--platform", "opencode"]
    assert entry["environment"] == {"WORKBENCH_DATA_DIR": str(data_dir)}
    assert entry["enabled"] is True
    (backup,) = config_dir(home).glob("opencode.json.workbench-backup-*")
    assert read_json(backup) == USER

    again = run_workbench(env, "install", "--agent", "opencode", "--data-dir", str(data_dir))
    assert again.returncode == 0, again.stderr
    assert again.stdout.count("nothing changed") == 2
    assert read_json(config) == merged
    assert plugin.read_text("utf-8") == text
    assert len(list(config_dir(home).glob("opencode.json.workbench-backup-*"))) == 1

    gone = run_workbench(env, "uninstall", "--agent", "opencode")
    assert gone.returncode == 0, gone.stderr
    assert read_json(config) == USER
    assert not plugin.exists()


def test_a_new_config_is_created_and_removed_whole(home: Path) -> None:
    env = agent_env(home)
    assert run_workbench(env, "install", "--agent", "opencode").returncode == 0
    config = config_dir(home) / "opencode.json"
    assert list(read_json(config)) == ["mcp"]
    assert '"dataDir":' not in (config_dir(home) / "plugins" / "workbench.js").read_text("utf-8")
    assert run_workbench(env, "uninstall", "--agent", "opencode").returncode == 0
    assert read_json(config) == {}


def test_a_jsonc_config_with_comments_is_refused_untouched(home: Path) -> None:
    config = config_dir(home) / "opencode.jsonc"
    text = '{\n  // my theme\n  "theme": "opencode",\n}\n'
    config.write_text(text, encoding="utf-8")
    result = run_workbench(agent_env(home), "install", "--agent", "opencode")
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert str(config) in message
    assert "comments" in message
    assert '"workbench": {"type": "local"' in message  # the entry to add by hand
    assert config.read_text("utf-8") == text
    assert sorted(p.name for p in config_dir(home).iterdir()) == ["opencode.jsonc"]
    refused = run_workbench(agent_env(home), "uninstall", "--agent", "opencode")
    assert refused.returncode != 0
    assert '"mcp"."workbench" by hand' in refused.stdout + refused.stderr
    assert config.read_text("utf-8") == text


def test_someone_elses_workbench_entries_are_never_overwritten(home: Path) -> None:
    config = config_dir(home) / "opencode.json"
    foreign = {"mcp": {"workbench": {"type": "local", "command": ["npx", "workbench-mcp"]}}}
    config.write_text(json.dumps(foreign), encoding="utf-8")
    result = run_workbench(agent_env(home), "install", "--agent", "opencode")
    assert result.returncode != 0
    assert "not workbench's" in result.stdout + result.stderr
    assert read_json(config) == foreign
    assert not (config_dir(home) / "plugins").exists()

    config.unlink()
    plugin = config_dir(home) / "plugins" / "workbench.js"
    plugin.parent.mkdir()
    plugin.write_text("export default async () => ({})\n", encoding="utf-8")
    result = run_workbench(agent_env(home), "install", "--agent", "opencode")
    assert result.returncode != 0
    assert str(plugin) in result.stdout + result.stderr
    assert not config.exists()
    assert run_workbench(agent_env(home), "uninstall", "--agent", "opencode").returncode == 0
    assert plugin.read_text("utf-8") == "export default async () => ({})\n"


def test_doctor_reports_opencode_as_a_note_until_installed(home: Path, data_dir: Path) -> None:
    env = agent_env(home, data_dir)
    before = doctor_rows(env)["agent opencode"]
    assert before["status"] == "info"
    assert "workbench install --agent opencode" in before["detail"]
    assert run_workbench(env, "install", "--agent", "opencode").returncode == 0
    after = doctor_rows(env)["agent opencode"]
    assert after["status"] == "ok"
    assert after["detail"] == (
        f"plugin in {config_dir(home) / 'plugins' / 'workbench.js'}; "
        f"MCP server in {config_dir(home) / 'opencode.json'}"
    )
    (config_dir(home) / "opencode.json").write_text("{ // broken\n}", encoding="utf-8")
    broken = doctor_rows(env)["agent opencode"]
    assert broken["status"] == "PROBLEM"
    assert "comments" in broken["detail"]


def test_the_plugin_ships_in_the_package_data() -> None:
    """A non-editable install has only what package-data lists: the plugin must be in it."""
    import fnmatch
    import tomllib

    data = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    patterns = data["tool"]["setuptools"]["package-data"].get("hooks", [])
    assert any(fnmatch.fnmatch("opencode/workbench.js", p) for p in patterns), patterns
