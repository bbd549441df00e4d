"""``workbench install --agent codex`` as Codex CLI 0.171 needs it: positions, events, trust.

Codex keys each hook's trust by its position (``<hooks.json>:<event>:<group>:<hook>``,
openai/codex ``codex-rs/hooks/src/engine/discovery.rs``), so install must never move a
group: a reinstall that moved ours to the end silently untrusted ours and the user's hooks
(issue 20 item 7). Codex 0.171 sends SessionEnd (item 8). Codex runs no hook until the user
trusts it (item 6): install says so and ``doctor`` reports untrusted or changed hooks with
the fix. The real Codex computing the same keys and hashes is ``tests/test_real_codex.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent_home import doctor_rows, trust_codex_hooks
from tests.conftest import run_workbench
from tests.test_install_agents import env_for
from workbench.agents import codex_trust

USERS_FIRST = {"type": "command", "command": "say hello", "timeout": 5}
USERS_LATER = {"type": "command", "command": "notify-send stopped", "timeout": 5}


def hooks_file(home: Path) -> Path:
    return home / "codex" / "hooks.json"


def read(home: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(hooks_file(home).read_text("utf-8"))
    return data


def is_ours(group: dict[str, Any]) -> bool:
    return any("/hooks/" in h["command"] for h in group["hooks"])


@pytest.fixture
def codex_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / "codex").mkdir(parents=True)
    return home


def test_reinstall_never_moves_a_group_so_trust_keys_keep_matching(
    codex_home: Path, tmp_path: Path
) -> None:
    """Issue 20 item 7: a user's group added after ours stays after ours, ours stays put."""
    hooks_file(codex_home).write_text(
        json.dumps({"hooks": {"SessionStart": [{"hooks": [USERS_FIRST]}]}}), "utf-8"
    )
    env = env_for(codex_home, tmp_path / "data")
    assert run_workbench(env, "install", "--agent", "codex").returncode == 0
    config = read(codex_home)
    # The user adds hooks of their own after installing workbench: appended, as Codex's
    # /hooks and every editor do.
    config["hooks"]["SessionStart"].append({"hooks": [USERS_LATER]})
    config["hooks"]["Stop"].append({"hooks": [USERS_LATER]})
    hooks_file(codex_home).write_text(json.dumps(config, indent=2), "utf-8")
    positions = {event: [is_ours(g) for g in groups] for event, groups in config["hooks"].items()}
    assert positions["SessionStart"] == [False, True, False]

    again = run_workbench(env, "install", "--agent", "codex")
    assert again.returncode == 0, again.stderr
    assert read(codex_home) == config, "an unchanged install rewrote hooks.json"

    # Installing from elsewhere (another data dir) changes our commands, never positions.
    moved = run_workbench(env, "install", "--agent", "codex", "--data-dir", str(tmp_path / "d2"))
    assert moved.returncode == 0, moved.stderr
    after = read(codex_home)
    assert {e: [is_ours(g) for g in gs] for e, gs in after["hooks"].items()} == positions
    assert after["hooks"]["SessionStart"][0] == {"hooks": [USERS_FIRST]}
    assert after["hooks"]["SessionStart"][2] == {"hooks": [USERS_LATER]}
    assert after["hooks"]["Stop"][1] == {"hooks": [USERS_LATER]}
    assert str(tmp_path / "d2") in after["hooks"]["SessionStart"][1]["hooks"][0]["command"]


def test_session_end_is_registered_for_codex(codex_home: Path, tmp_path: Path) -> None:
    """Issue 20 item 8: Codex 0.171 sends SessionEnd; without it every session stays active."""
    env = env_for(codex_home, tmp_path / "data")
    assert run_workbench(env, "install", "--agent", "codex").returncode == 0
    (group,) = read(codex_home)["hooks"]["SessionEnd"]
    (hook,) = group["hooks"]
    assert "/hooks/session_end.py" in hook["command"]
    assert hook["command"].endswith("--platform codex")


def test_hook_hash_is_the_one_codex_computes() -> None:
    """The trust hash of one hook, as Codex 0.171's ``hooks/list`` reported it (``currentHash``).

    Recorded from the real ``codex app-server`` for this exact command; the suite checks
    every installed hook against the live program too (``tests/test_real_codex.py``).
    """
    command = (
        "WORKBENCH_DATA_DIR=/tmp/cx/d /work/wt/i20-codex/.venv/bin/python -S "
        "/work/wt/i20-codex/hooks/post_tool_use.py --platform codex"
    )
    hook = {"type": "command", "command": command, "timeout": 10}
    assert (
        codex_trust.hook_hash("PostToolUse", {"hooks": [hook]}, hook)
        == "sha256:088a99f4e75556ff1a2659e5e27d797a5c469e26bd68d04dc21d6421816c47fe"
    )
    # SessionEnd: 1 s when unset, 3 s at most, in the hash too.
    for end, expected in [
        ({"type": "command", "command": "echo b", "timeout": 600}, "7fdcfde7cebf533caec0e61dd"),
        ({"type": "command", "command": "echo c"}, "9d8a250cbaa9446cb09a0fd532edfa87"),
    ]:
        assert codex_trust.hook_hash("SessionEnd", {"hooks": [end]}, end).startswith(
            f"sha256:{expected}"
        )
    stop = {**hook, "command": command.replace("post_tool_use", "stop")}
    assert (
        codex_trust.hook_hash("Stop", {"hooks": [stop]}, stop)
        == "sha256:f2f823cb502f5ae824a975bbbab0cf0e54b908d5750d87149a5deaed278a6c49"
    )


@pytest.mark.slow
def test_install_and_doctor_say_codex_must_trust_the_hooks(
    codex_home: Path, tmp_path: Path
) -> None:
    """Issue 20 item 6: untrusted, trusted, then changed by a reinstall from elsewhere."""
    env = env_for(codex_home, tmp_path / "data")
    installed = run_workbench(env, "install", "--agent", "codex")
    assert installed.returncode == 0, installed.stderr
    assert "Hooks need review" in installed.stdout
    assert "Trust all and continue" in installed.stdout

    row = doctor_rows(env)["agent codex"]
    assert row["status"] == "PROBLEM", row
    assert "not trusted" in row["detail"], row
    assert "Trust all and continue" in row["detail"], row

    trust_codex_hooks(codex_home / "codex")
    assert doctor_rows(env)["agent codex"]["status"] == "ok"
    quiet = run_workbench(env, "install", "--agent", "codex")
    assert "Hooks need review" not in quiet.stdout, "trusted and unchanged: nothing to do"

    moved = run_workbench(env, "install", "--agent", "codex", "--data-dir", str(tmp_path / "d2"))
    assert "Hooks need review" in moved.stdout
    row = doctor_rows(env)["agent codex"]
    assert row["status"] == "PROBLEM", row
    assert "changed since you trusted them" in row["detail"], row
