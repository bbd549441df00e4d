"""Property-based fuzzing of the flat hooks files ``install`` edits (Cursor's and Windsurf's).

Users write ``~/.cursor/hooks.json`` and ``~/.codeium/windsurf/hooks.json`` by hand, so they
hold anything: any JSON object, ``hooks`` and its event lists of any shape, entries that are
not objects, commands that are not strings or that look like ours, or bytes that are not
JSON or not UTF-8. Through the agent modules (``workbench.agents.cursor``/``windsurf``, both
on ``workbench.agents.flat_hooks``), on real files in a temporary HOME:

- ``install`` either succeeds or raises a ``WorkbenchError`` (whose message the CLI prints)
  and leaves the hooks file byte for byte as it was and the MCP file unwritten;
- after a successful install every event has our scripts, after the user's own entries, and
  ``doctor``'s row for the agent is not a crash;
- ``uninstall`` then gives back the user's values, computed here from the rules, not from
  the code under test: entries whose command has our command's shape go (install replaces
  them; ``OURS_ELSEWHERE``), and so do our events and a ``hooks`` that are left empty; a
  user's own script in a ``hooks/`` folder stays; Cursor keeps the ``"version": 1`` install
  wrote.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import hypothesis
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_strategies import json_objects, json_values, render
from workbench.agents import cursor, windsurf
from workbench.errors import WorkbenchError

pytestmark = pytest.mark.slow

FUZZ = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None
)
AGENTS = {"cursor": cursor, "windsurf": windsurf}
PYTHON = "/usr/bin/python3"

# Ours as another checkout or venv wrote them (``hook_command``'s shape): install replaces them.
OURS_ELSEWHERE = (
    "/old/venv/bin/python -S /old/checkout/hooks/stop.py --platform cursor",
    "WORKBENCH_DATA_DIR='/my data' /usr/bin/python3 -S '/opt/my wb/hooks/post_tool_use.py'",
    "/v/bin/python -S /wb/hooks/context_file.py --platform windsurf",
)
commands = st.one_of(
    st.text(max_size=12),
    st.sampled_from(
        [
            *OURS_ELSEWHERE,
            # A user's own scripts, in a hooks/ folder and even named like ours: never ours.
            "./hooks/format.sh",
            "/old/checkout/hooks/stop.py --platform cursor",
            "python3 /opt/wb/hooks/post_tool_use.py",
            "python3 ~/.cursor/hooks/stop.py",
            "./hooks/post_tool_use.py --lint",
            "/usr/bin/python3 -S /opt/wb/hooks/stop.py --verbose",
            "hooks/context_file.pyc",
        ]
    ),
    json_values,
)
entries = st.one_of(
    st.fixed_dictionaries({"command": commands}, optional={"show_output": st.booleans()}),
    json_values,
)
events = st.one_of(
    st.sampled_from(sorted({*cursor.SCRIPTS, *windsurf.SCRIPTS})), st.text(max_size=8)
)


def hooks_files() -> st.SearchStrategy[Any]:
    shaped = st.fixed_dictionaries(
        {},
        optional={
            "hooks": st.one_of(
                json_values,
                st.dictionaries(events, st.one_of(st.lists(entries, max_size=4), json_values)),
            ),
            "version": json_values,
        },
    )
    objects = st.builds(lambda a, b: {**a, **b}, json_objects, shaped)
    return st.one_of(objects, objects, json_values)


raw_bytes = st.one_of(
    st.binary(max_size=40),
    st.sampled_from([b"", b"{", b'{"hooks": {"stop": [}}', b'{"hooks": {"stop": ["caf\xe9"]}}']),
)


@contextmanager
def agent_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        monkeypatch.setenv("HOME", folder)
        yield Path(folder)


def ours(entry: Any) -> bool:
    """The rule, not the code under test: exactly the commands in ``OURS_ELSEWHERE``."""
    return isinstance(entry, dict) and entry.get("command") in OURS_ELSEWHERE


def after_uninstall(agent: ModuleType, user: dict[str, Any]) -> dict[str, Any]:
    """What install then uninstall leaves of the user's (valid) file, by the rules above."""
    expected = json.loads(json.dumps(user))
    hooks = expected.setdefault("hooks", {})
    for event in list(hooks):
        kept = [entry for entry in hooks[event] if not ours(entry)]
        if event in agent.SCRIPTS or len(kept) != len(hooks[event]):
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del expected["hooks"]
    if agent is cursor and "version" not in expected:
        expected = {"version": cursor.VERSION, **expected}
    return expected


def round_trip(agent: ModuleType, home: Path, data: bytes) -> None:
    path, mcp = agent.hooks_path(), agent.mcp_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    try:
        agent.install(PYTHON, None)
    except WorkbenchError as exc:
        refusal = exc.message
    else:
        refusal = None
    if refusal is not None:
        assert str(path) in refusal  # names the file to fix
        assert path.read_bytes() == data  # refused: untouched
        assert not mcp.exists()
        hypothesis.event("refused")
        (row,) = agent.checks()
        assert row.ok is False  # doctor names the broken file
        return
    hypothesis.event("installed")
    user = json.loads(data.decode("utf-8") or "{}")
    installed = json.loads(path.read_text("utf-8"))
    for event, scripts in agent.SCRIPTS.items():
        tail = installed["hooks"][event][-len(scripts) :]
        assert [e["command"].split("/hooks/")[1].split()[0] for e in tail] == list(scripts)
    (row,) = agent.checks()
    assert row.ok is not None, row  # installed: ok or a problem, never "not installed"
    agent.uninstall()
    after = json.loads(path.read_text("utf-8"))
    expected = after_uninstall(agent, user)
    assert json.dumps(after, sort_keys=True) == json.dumps(expected, sort_keys=True)


@FUZZ
@given(user=hooks_files())
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_hooks_file_of_any_shape(name: str, user: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    with agent_home(monkeypatch) as home:
        round_trip(AGENTS[name], home, render(user).encode("utf-8"))


@FUZZ
@given(data=raw_bytes)
@pytest.mark.parametrize("name", sorted(AGENTS))
def test_a_hooks_file_of_any_bytes(name: str, data: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    with agent_home(monkeypatch) as home:
        round_trip(AGENTS[name], home, data)
