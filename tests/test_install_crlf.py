"""A config file with Windows line endings (CRLF) keeps them through install and uninstall.

A user who edits ``settings.json`` or ``config.yaml`` in a Windows editor, or copies it from a
Windows machine, has CRLF line endings. Every agent writer re-serialises (JSON, TOML) or
re-joins (Goose's YAML) with ``\\n``, so install turned the whole file to LF and uninstall did
not give it back: each agent's own file is written here with CRLF, then the real CLI installs
and uninstalls in a temporary HOME. After install the file still has CRLF line endings only
(no bare LF mixed in) and parses; after uninstall it is byte for byte what the user had. A
file with LF stays LF, and one that mixes both is written as install makes it (LF), as before.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.agent_home import agent_env, make_home
from tests.conftest import run_workbench
from workbench import config_file

pytestmark = pytest.mark.slow

# JSON as the agents write it (two-space indent), which is how install writes it back.
JSON_USER = (
    json.dumps({"theme": "dark", "mcpServers": {"docs": {"command": "docs"}}}, indent=2) + "\n"
)
CLAUDE_JSON = '{\n  "numStartups": 3\n}\n'
CODEX_TOML = '# mine\nmodel = "gpt-5.1"\n\n[mcp_servers.docs]\ncommand = "docs"\n'
CODEX_HOOKS = (
    json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say"}]}]}}, indent=2)
    + "\n"
)
GOOSE_YAML = "# my goose\nGOOSE_MODEL: gpt-4o\nextensions:\n  dev:\n    enabled: true\n"
ROO = ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json"
# Each agent's files that the user already has (relative to HOME), with their LF text.
FILES: dict[str, dict[str, str]] = {
    "claude": {".claude/settings.json": '{\n  "model": "opus"\n}\n', ".claude.json": CLAUDE_JSON},
    "gemini": {".gemini/settings.json": JSON_USER},
    "codex": {".codex/config.toml": CODEX_TOML, ".codex/hooks.json": CODEX_HOOKS},
    "cursor": {".cursor/mcp.json": JSON_USER},
    "windsurf": {".codeium/windsurf/mcp_config.json": JSON_USER},
    "copilot": {".copilot/mcp-config.json": JSON_USER},
    "warp": {".warp/.mcp.json": JSON_USER},
    "roo": {ROO: JSON_USER},
    "goose": {".config/goose/config.yaml": GOOSE_YAML},
}


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def parses(path: Path, text: str) -> None:
    if path.suffix == ".toml":
        tomllib.loads(text)
    elif path.suffix == ".yaml":
        assert isinstance(yaml.safe_load(text), dict)
    else:
        assert isinstance(json.loads(text), dict)


@pytest.mark.parametrize("agent", sorted(FILES))
def test_a_crlf_config_keeps_its_line_endings_and_comes_back_byte_for_byte(
    agent: str, tmp_path: Path, data_dir: Path
) -> None:
    home = make_home(tmp_path)
    paths = {home / name: crlf(text) for name, text in FILES[agent].items()}
    for path, text in paths.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    env = agent_env(home, data_dir)
    extra = ["--keep-auto-memory"] if agent == "claude" else []
    proc = run_workbench(env, "install", "--agent", agent, *extra)
    assert proc.returncode == 0, proc.stderr
    for path, before in paths.items():
        after = path.read_bytes().decode()
        assert after != before, f"{path} was not written"  # ours is in it
        assert after.count("\n") == after.count("\r\n"), f"{path}: bare LF after install"
        parses(path, after)
    proc = run_workbench(env, "uninstall", "--agent", agent)
    assert proc.returncode == 0, proc.stderr
    for path, before in paths.items():
        assert path.read_bytes() == before.encode(), path


def test_write_text_keeps_a_crlf_file_crlf_and_nothing_else_changes(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_bytes(b'{\r\n  "a": 1\r\n}\r\n')
    backup = config_file.write_text(path, '{\n  "a": 1,\n  "b": "x\\ny"\n}\n')
    assert path.read_bytes() == b'{\r\n  "a": 1,\r\n  "b": "x\\ny"\r\n}\r\n'
    assert backup is not None
    assert backup.read_bytes() == b'{\r\n  "a": 1\r\n}\r\n'
    # Text that already has CRLF (an editor of the text kept them) is not doubled.
    config_file.write_text(path, "x: 1\r\ny: 2\n")
    assert path.read_bytes() == b"x: 1\r\ny: 2\r\n"

    lf = tmp_path / "lf.json"
    lf.write_bytes(b'{\n  "a": 1\n}\n')
    config_file.write_text(lf, '{\n  "b": 2\n}\n')
    assert lf.read_bytes() == b'{\n  "b": 2\n}\n'
    mixed = tmp_path / "mixed.yaml"
    mixed.write_bytes(b"a: 1\r\nb: 2\n")
    config_file.write_text(mixed, "a: 1\nb: 3\n")
    assert mixed.read_bytes() == b"a: 1\nb: 3\n"
    new = tmp_path / "new.json"
    config_file.write_text(new, "{}\n")
    assert new.read_bytes() == b"{}\n"
