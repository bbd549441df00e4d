"""Cursor's and Windsurf's flat hooks files go through one merge (``workbench.agents.flat_hooks``).

Both agents get the same guarantees through the real CLI with HOME in tmp_path: a hooks file
that is not UTF-8 is refused with a message naming it, written nothing; a file with none of
ours, even with an empty ``hooks`` or an empty event list of the user's, is left byte for byte
by ``uninstall`` (no rewrite, no backup).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent_home import agent_env, backups, make_home
from tests.conftest import run_workbench

HOOKS_FILES = {"cursor": ".cursor/hooks.json", "windsurf": ".codeium/windsurf/hooks.json"}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


def hooks_file(home: Path, agent: str) -> Path:
    path = home / HOOKS_FILES[agent]
    path.parent.mkdir(parents=True)
    return path


@pytest.mark.parametrize("agent", sorted(HOOKS_FILES))
def test_a_hooks_file_that_is_not_utf8_is_refused_and_nothing_is_written(
    agent: str, home: Path, data_dir: Path
) -> None:
    path = hooks_file(home, agent)
    path.write_bytes(b'{"hooks": {"stop": [{"command": "caf\xe9"}]}}')
    result = run_workbench(agent_env(home, data_dir), "install", "--agent", agent)
    assert result.returncode != 0
    message = result.stdout + result.stderr
    assert "Traceback" not in message
    assert str(path) in message
    assert "not UTF-8" in message
    assert "nothing was changed" in message
    assert path.read_bytes() == b'{"hooks": {"stop": [{"command": "caf\xe9"}]}}'
    assert sorted(p.name for p in path.parent.iterdir()) == ["hooks.json"]


@pytest.mark.parametrize("agent", sorted(HOOKS_FILES))
@pytest.mark.parametrize("text", ['{"hooks": {}}', '{"hooks": {"stop": []}, "x": 1}'])
def test_uninstall_leaves_a_file_without_ours_byte_for_byte(
    agent: str, text: str, home: Path, data_dir: Path
) -> None:
    path = hooks_file(home, agent)
    path.write_text(text, "utf-8")
    result = run_workbench(agent_env(home, data_dir), "uninstall", "--agent", agent)
    assert result.returncode == 0, result.stderr
    assert path.read_text("utf-8") == text
    assert backups(path) == []
