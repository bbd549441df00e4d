"""Property-based fuzzing of every agent's config files (JSON, Goose's YAML) with any bytes,
through install, doctor and uninstall.

Users edit these files by hand and editors save them in other encodings, so a file may be
anything: not UTF-8, not JSON, JSON of the wrong shape. For every file each agent module
(``workbench.agents``) reads, on real files in a temporary HOME:

- ``install`` either succeeds or raises a ``WorkbenchError`` naming the file, and then no
  file of that agent changed (``check()`` first);
- ``checks()`` (``doctor``'s row) never raises: a broken file is a problem row;
- ``uninstall`` of the installed agent either succeeds or raises a ``WorkbenchError`` naming
  the file, and then no file changed (``check_uninstall()`` first).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_strategies import json_values, render
from workbench.agents import NAMES, load
from workbench.errors import WorkbenchError

pytestmark = pytest.mark.slow

FUZZ = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    deadline=None,
    max_examples=40,
)
PYTHON = "/usr/bin/python3"

# agent -> the JSON files it reads, relative to HOME
FILES: dict[str, tuple[str, ...]] = {
    "claude": (".claude/settings.json", ".claude.json"),
    "gemini": (".gemini/settings.json",),
    "codex": (".codex/hooks.json",),
    "cursor": (".cursor/hooks.json", ".cursor/mcp.json"),
    "windsurf": (".codeium/windsurf/hooks.json", ".codeium/windsurf/mcp_config.json"),
    "opencode": (".config/opencode/opencode.json",),
    "copilot": (".copilot/mcp-config.json",),
    "goose": (".config/goose/config.yaml",),  # YAML: any bytes all the same
    "roo": (
        ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
    ),
    "warp": (".warp/.mcp.json",),
}
CASES = [(agent, file) for agent in NAMES for file in FILES[agent]]

contents = st.one_of(
    st.binary(max_size=40),
    st.sampled_from(
        [
            b'{"mcpServers": {"x": {"command": "caf\xe9"}}}',
            b"\xff\xfe{\x00}\x00",
            b'{"mcpServers": []}',
            b'{"hooks": []}',
            b'{"mcp": 5}',
            b"[]",
            b"[" * 5000,  # nested too deeply for the parser
        ]
    ),
    st.builds(lambda v: render({"hooks": v, "mcpServers": v, "mcp": v}).encode(), json_values),
)


@contextmanager
def agent_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        monkeypatch.setenv("HOME", folder)
        for name in (
            "CLAUDE_CONFIG_DIR",
            "GEMINI_CLI_HOME",
            "CODEX_HOME",
            "XDG_CONFIG_HOME",
            "COPILOT_HOME",
        ):
            monkeypatch.delenv(name, raising=False)
        yield Path(folder)


def snapshot(home: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}


def refused_untouched(home: Path, action: Callable[[], object]) -> bool:
    """Run ``action``; on a WorkbenchError, check it named a file and changed none."""
    before = snapshot(home)
    try:
        action()
    except WorkbenchError as exc:
        message = exc.message
    else:
        return False
    assert str(home) in message, message  # names the file to fix
    assert snapshot(home) == before
    return True


@FUZZ
@given(data=contents)
@pytest.mark.parametrize(("agent", "file"), CASES)
def test_any_bytes_in_an_agent_file(
    agent: str, file: str, data: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    with agent_home(monkeypatch) as home:
        module = load(agent)
        path = home / file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if refused_untouched(home, lambda: module.install(PYTHON, None)):
            (row,) = module.checks()  # never raises
            assert row.ok is not True, row
            return
        module.checks()  # never raises
        refused_untouched(home, module.uninstall)
