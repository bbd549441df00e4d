"""Property-based fuzzing of the agents' config files that ``install`` edits.

Users write these files by hand, so they hold anything: for Codex CLI's ``config.toml`` any
TOML with comments, an ``mcp_servers`` of any shape, or text that is not TOML at all; for
Gemini CLI's ``settings.json`` any JSON object, ``hooks`` and ``mcpServers`` of any shape.
For each, through the agent modules (``workbench.agents.codex``/``gemini``) on real files:

- ``install`` either succeeds or raises a ``WorkbenchError`` (whose message the CLI prints)
  and leaves the file byte for byte as it was; no other exception, ever;
- after a successful install the agent's file still reads (TOML/JSON) and registers ours,
  and ``doctor``'s row for the agent is not a crash;
- ``uninstall`` then gives back the user's values (for TOML, every comment line too).
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_strategies import json_objects, json_values, render
from workbench import claude_settings
from workbench.agents import codex, gemini, mcp_json
from workbench.errors import WorkbenchError

FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture], deadline=None)

# TOML's own values: no None, no NaN (NaN != NaN would fail the comparison, not the code).
toml_keys = st.one_of(
    st.sampled_from(["mcp_servers", "workbench", "model", "a.b", "", " ", "é", "\U0001f511"]),
    st.text(st.characters(exclude_categories=["Cs", "Cc"]), max_size=12),
)
toml_atoms = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=20),
)
toml_values = st.recursive(
    toml_atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(toml_keys, inner, max_size=3)
    ),
    max_leaves=10,
)
mcp_server_tables = st.dictionaries(
    toml_keys,
    st.one_of(
        st.fixed_dictionaries(
            {"command": st.text(max_size=10)},
            optional={"args": st.lists(st.text(max_size=6), max_size=3)},
        ),
        toml_values,
    ),
    max_size=3,
)


@st.composite
def toml_documents(draw: st.DrawFn) -> str:
    """A user's config.toml: random tables and values, comment lines between any two lines."""
    data = draw(st.dictionaries(toml_keys, toml_values, max_size=5))
    if draw(st.booleans()):
        data["mcp_servers"] = draw(mcp_server_tables)
    lines = tomlkit.dumps(data).splitlines()
    for n in sorted(draw(st.lists(st.integers(0, len(lines)), max_size=4)), reverse=True):
        lines.insert(n, f"# user comment {n}")
    return "\n".join(lines) + "\n"


raw_texts = st.one_of(
    st.text(max_size=80),
    st.sampled_from(['model = "o3', "[broken", "mcp_servers = 3\n", "[[mcp_servers]]\na = 1\n"]),
)


@contextmanager
def agent_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
        monkeypatch.setenv("GEMINI_CLI_HOME", str(home))
        (home / ".codex").mkdir()
        (home / ".gemini").mkdir()
        yield home


def installs(install: Any) -> bool:
    """Run an agent's ``install``: True if it did, False if it refused with a message."""
    try:
        install("/usr/bin/python3", None)
    except WorkbenchError as exc:
        refusal = exc.message
    else:
        return True
    assert refusal.strip()
    return False


def comment_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("# user comment")]


def codex_round_trip(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    if not installs(codex.install):
        assert path.read_bytes() == text.encode()  # refused: untouched
        return
    installed = tomllib.loads(path.read_bytes().decode())
    assert installed["mcp_servers"]["workbench"]["args"] == ["-P", *mcp_json.MODULE_ARGS]
    (row,) = codex.checks()
    assert row.ok is not None, row  # installed: ok or a problem, never "not installed"
    codex.uninstall()
    after = path.read_bytes().decode()
    assert tomllib.loads(after) == tomllib.loads(text)
    assert comment_lines(after) == comment_lines(text)


@FUZZ
@given(text=toml_documents())
def test_codex_config_toml_round_trips_through_install_and_uninstall(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with agent_home(monkeypatch) as home:
        codex_round_trip(home / ".codex" / "config.toml", text)


@FUZZ
@given(text=raw_texts)
def test_codex_config_toml_that_is_anything_at_all(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with agent_home(monkeypatch) as home:
        path = home / ".codex" / "config.toml"
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            path.write_text(text, encoding="utf-8")
            with pytest.raises(WorkbenchError, match="fix it by hand"):
                codex.install("/usr/bin/python3", None)
            assert path.read_bytes() == text.encode()
            assert not (home / ".codex" / "hooks.json").exists()
            (row,) = codex.checks()
            assert row.ok is False
            return
        codex_round_trip(path, text)


def gemini_settings() -> st.SearchStrategy[dict[str, Any]]:
    shaped = st.fixed_dictionaries(
        {},
        optional={
            "hooks": st.one_of(json_values, st.dictionaries(st.text(max_size=8), json_values)),
            "mcpServers": st.one_of(
                json_values, st.dictionaries(st.sampled_from(["workbench", "docs"]), json_values)
            ),
        },
    )
    return st.builds(lambda a, b: {**a, **b}, json_objects, shaped)


@FUZZ
@given(user=gemini_settings())
def test_gemini_settings_json_of_any_shape(
    user: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    with agent_home(monkeypatch) as home:
        path = home / ".gemini" / "settings.json"
        text = render(user)
        path.write_text(text, encoding="utf-8")
        if not installs(gemini.install):
            assert path.read_bytes() == text.encode()  # refused: untouched
            return
        installed = json.loads(path.read_text("utf-8"))
        assert mcp_json.is_ours(installed["mcpServers"]["workbench"])
        (row,) = gemini.checks()
        assert row.ok is not None, row
        gemini.uninstall()
        after = json.loads(path.read_text("utf-8"))
        # Our hooks and server gone; the user's values as they were (json.dumps compares NaN).
        # Known limits of the JSON merge: an "mcpServers" left empty is dropped (install may
        # have added it), and so are an event list of ours and a "hooks" object that install
        # filled and uninstall emptied again (a user's own empty group stays).
        expected = claude_settings.without_ours(json.loads(text))
        if expected.get("mcpServers") == {}:
            del expected["mcpServers"]
        hooks = expected.get("hooks", {})
        for event in gemini.SCRIPTS:
            if hooks.get(event) == []:
                del hooks[event]
        if hooks == {}:
            expected.pop("hooks", None)
        assert json.dumps(after, sort_keys=True) == json.dumps(expected, sort_keys=True)
