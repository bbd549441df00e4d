"""``install --disable-auto-memory``: Claude Code's own memory off, and back exactly as it was.

Through the real CLI in a temporary HOME with a ``~/.claude/settings.json`` of the user's
(their permissions, their env): the key ``CLAUDE_CODE_DISABLE_AUTO_MEMORY`` is set to ``"1"``
in ``env`` only when asked (flag, or yes at the prompt on a terminal; never silently), doctor
notes it, and uninstall gives the file back byte for byte whatever was there before: no
``env``, an ``env`` without the key, the key set to something else, or already ``"1"``. A
value the user changes after install is theirs and stays.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agent_home import agent_env, doctor_rows, read_json
from tests.conftest import ROOT, run_workbench

KEY = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
USER: dict[str, Any] = {
    "permissions": {"allow": ["Bash(git status)"]},
    "model": "opus",
}


def settings_file(home: Path) -> Path:
    return home / ".claude" / "settings.json"


def write_user(home: Path, settings: dict[str, Any]) -> bytes:
    path = settings_file(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    return path.read_bytes()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.mark.parametrize(
    "env",
    [None, {"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}, {KEY: "0", "OTHER": "x"}, {}],
    ids=["no-env", "env-without-key", "key-set-to-0", "empty-env"],
)
def test_disable_then_uninstall_gives_the_file_back_byte_for_byte(
    env: dict[str, str] | None, home: Path, data_dir: Path
) -> None:
    before = write_user(home, USER if env is None else {**USER, "env": env})
    cli = agent_env(home, data_dir)
    proc = run_workbench(cli, "install", "--disable-auto-memory")
    assert proc.returncode == 0, proc.stderr
    assert f"installed Claude Code auto-memory switched off ({KEY}=1)" in proc.stdout
    settings = read_json(settings_file(home))
    assert settings["env"] == {**(env or {}), KEY: "1"}
    assert settings["permissions"] == USER["permissions"]
    row = doctor_rows(cli)["claude auto-memory"]
    assert row["status"] == "info"
    assert "by workbench install" in row["detail"]

    again = run_workbench(cli, "install", "--disable-auto-memory")
    assert again.returncode == 0, again.stderr
    assert "auto-memory switched off (CLAUDE_CODE_DISABLE_AUTO_MEMORY=1) already in" in again.stdout

    gone = run_workbench(cli, "uninstall")
    assert gone.returncode == 0, gone.stderr
    assert f"removed Claude Code auto-memory setting ({KEY}) as before install" in gone.stdout
    assert settings_file(home).read_bytes() == before
    assert not (home / ".claude" / "workbench-auto-memory.json").exists()
    assert "claude auto-memory" not in doctor_rows(cli)


def test_a_key_already_1_is_the_users_and_stays(home: Path, data_dir: Path) -> None:
    before = write_user(home, {**USER, "env": {KEY: "1"}})
    cli = agent_env(home, data_dir)
    assert run_workbench(cli, "install", "--disable-auto-memory").returncode == 0
    assert not (home / ".claude" / "workbench-auto-memory.json").exists()
    assert "by you" in doctor_rows(cli)["claude auto-memory"]["detail"]
    assert run_workbench(cli, "uninstall").returncode == 0
    assert settings_file(home).read_bytes() == before


def test_a_value_the_user_changed_after_install_is_kept(home: Path, data_dir: Path) -> None:
    write_user(home, USER)
    cli = agent_env(home, data_dir)
    assert run_workbench(cli, "install", "--disable-auto-memory").returncode == 0
    settings = read_json(settings_file(home))
    settings["env"][KEY] = "0"  # the user turns it back on by hand
    write_user(home, settings)
    assert run_workbench(cli, "uninstall").returncode == 0
    assert read_json(settings_file(home)) == {**USER, "env": {KEY: "0"}}


def test_without_the_flag_and_without_a_terminal_nothing_is_switched(
    home: Path, data_dir: Path
) -> None:
    write_user(home, USER)
    cli = agent_env(home, data_dir)
    for flags in ([], ["--keep-auto-memory"]):
        proc = run_workbench(cli, "install", *flags)
        assert proc.returncode == 0, proc.stderr
        assert "env" not in read_json(settings_file(home))
        assert "auto-memory" not in proc.stdout


@pytest.mark.parametrize("env", [["a"], "1", 3])
def test_an_env_that_is_not_an_object_is_refused_before_any_write(
    env: Any, home: Path, data_dir: Path
) -> None:
    before = write_user(home, {**USER, "env": env})
    cli = agent_env(home, data_dir)
    proc = run_workbench(cli, "install", "--disable-auto-memory")
    assert proc.returncode == 1
    assert '"env" in' in proc.stderr
    assert "nothing was changed" in proc.stderr
    assert settings_file(home).read_bytes() == before
    assert not (home / ".claude.json").exists()  # no half-done install


@pytest.mark.parametrize(("answer", "off"), [("y", True), ("n", False), ("", False)])
def test_on_a_terminal_install_asks(answer: str, off: bool, home: Path, data_dir: Path) -> None:
    write_user(home, USER)
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench", "install"],
        env=agent_env(home, data_dir),
        cwd=ROOT,
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(follower)
    os.write(leader, f"{answer}\n".encode())
    out, err = proc.communicate(timeout=90)
    os.close(leader)
    assert proc.returncode == 0, err
    assert b"Switch off Claude Code's built-in auto-memory" in out
    env = read_json(settings_file(home)).get("env", {})
    assert (env.get(KEY) == "1") is off
