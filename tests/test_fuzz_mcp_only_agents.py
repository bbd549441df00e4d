"""Property-based fuzzing of the config files of the MCP-only agents (issue 22 item 4).

Goose's ``config.yaml`` is edited as text (``workbench.agents.goose_yaml``), so it gets the
hardest cases: any YAML mapping Goose or a user could write, with comments between any two
lines and a ``workbench`` key of any shape, and text that is not YAML at all. Copilot CLI's
``mcp-config.json`` stands for the three JSON files (Roo Code and Warp share its code path):
any JSON object, ``mcpServers`` of any shape. For each, on real files:

- ``install`` succeeds or raises a ``WorkbenchError`` and leaves the file byte for byte;
- after an install the file still parses, holds ours, and ``doctor``'s row is not a crash;
- ``uninstall`` then gives back the user's data, and for Goose every comment line.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.fuzz_strategies import json_objects, json_values, render
from tests.test_fuzz_agent_configs import (  # the other agents' checks
    comment_lines,
    installs,
    keeps_line_endings,
    line_breaks,
)
from workbench.agents import claude_auto_memory, copilot, goose, goose_yaml, mcp_json
from workbench.errors import WorkbenchError

pytestmark = pytest.mark.slow

FUZZ = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None
)

yaml_keys = st.one_of(
    st.sampled_from(["extensions", "workbench", "GOOSE_MODEL", "a: b", "", "#", "é", "- x"]),
    st.text(st.characters(exclude_categories=["Cs", "Cc"]), max_size=10),
)
yaml_atoms = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(st.characters(exclude_categories=["Cs"]), max_size=16),
)
yaml_values = st.recursive(
    yaml_atoms,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(yaml_keys, inner, max_size=3)
    ),
    max_leaves=10,
)
extension_maps = st.dictionaries(
    st.one_of(yaml_keys, st.just("workbench")),
    st.one_of(
        yaml_values,
        st.fixed_dictionaries(
            {"enabled": st.booleans(), "type": st.just("stdio"), "cmd": st.text(max_size=8)},
            optional={"args": st.lists(st.text(max_size=6), max_size=3)},
        ),
    ),
    max_size=3,
)


@st.composite
def yaml_documents(draw: st.DrawFn) -> str:
    """A user's config.yaml: random keys and values, block or flow, comment lines anywhere."""
    data = draw(st.dictionaries(yaml_keys, yaml_values, max_size=4))
    if draw(st.booleans()):
        data["extensions"] = draw(extension_maps)
    flow = draw(st.sampled_from([False, None]))
    indent = draw(st.sampled_from([2, 4]))
    lines = yaml.safe_dump(data, sort_keys=False, default_flow_style=flow, indent=indent)
    out = lines.splitlines()
    for n in sorted(draw(st.lists(st.integers(0, len(out)), max_size=3)), reverse=True):
        out.insert(n, f"# user comment {n}")
    return line_breaks(draw, "\n".join(out) + "\n")


raw_texts = st.one_of(
    st.text(max_size=60),
    st.sampled_from(
        [
            "extensions: [1, 2]\n",
            "extensions: 3\n",
            "- a\n- b\n",
            "extensions:\n  workbench: null\n",
            "key: [unclosed\n",
            "extensions:\n\tworkbench:\n",
            "&a x: *a\n",
            "!!python/object:os.system {}\n",
        ]
    ),
)


@contextmanager
def agent_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        home = Path(folder)
        monkeypatch.setenv("HOME", str(home))
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
        monkeypatch.delenv("COPILOT_HOME", raising=False)
        goose.config_dir().mkdir(parents=True)
        copilot.config_dir().mkdir(parents=True)
        yield home


def goose_round_trip(text: str) -> None:
    path = goose.config_path()
    path.write_text(text, encoding="utf-8")
    if not installs(goose.install):
        assert path.read_bytes() == text.encode()  # refused: untouched
        return
    keeps_line_endings(text, path.read_bytes().decode())
    installed = yaml.safe_load(path.read_text("utf-8"))
    assert goose_yaml.is_ours(installed["extensions"]["workbench"])
    (row,) = goose.checks()
    assert row.ok is not None, row
    goose.uninstall()
    after = path.read_bytes().decode()  # read_text would turn CRLF into LF
    keeps_line_endings(text, after)
    before = yaml.safe_load(text) or {}
    expected = goose_yaml.expected_without(
        {**before, "extensions": {**(before.get("extensions") or {}), "workbench": {}}}
    )
    assert (yaml.safe_load(after) or {}) == expected
    assert comment_lines(after) == comment_lines(text)


@FUZZ
@given(text=yaml_documents())
# Found by the long profile (`make fuzz`): a user's key that starts with a dash, right below
# ours, was taken for a sequence item of our entry, so uninstall refused to remove it.
@example(text="extensions:\n  -;: null\n")
@example(text="extensions:\n  -foo: 1\n  bar: 2\n")
def test_goose_config_yaml_round_trips_through_install_and_uninstall(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with agent_home(monkeypatch):
        goose_round_trip(text)


@FUZZ
@given(text=raw_texts)
def test_goose_config_yaml_that_is_anything_at_all(
    text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with agent_home(monkeypatch):
        path = goose.config_path()
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError:
            path.write_text(text, encoding="utf-8")
            with pytest.raises(WorkbenchError, match="fix it by hand"):
                goose.install("/usr/bin/python3", None)
            assert path.read_bytes() == text.encode()
            (row,) = goose.checks()
            assert row.ok is False
            return
        if data is not None and not isinstance(data, dict):
            path.write_text(text, encoding="utf-8")
            with pytest.raises(WorkbenchError):
                goose.install("/usr/bin/python3", None)
            assert path.read_bytes() == text.encode()
            return
        goose_round_trip(text)


def copilot_configs() -> st.SearchStrategy[dict[str, Any]]:
    shaped = st.fixed_dictionaries(
        {},
        optional={
            "mcpServers": st.one_of(
                json_values, st.dictionaries(st.sampled_from(["workbench", "docs"]), json_values)
            )
        },
    )
    return st.builds(lambda a, b: {**a, **b}, json_objects, shaped)


@FUZZ
@given(user=copilot_configs())
def test_copilot_mcp_config_json_of_any_shape(
    user: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    with agent_home(monkeypatch):
        path = copilot.mcp_path()
        text = render(user)
        path.write_text(text, encoding="utf-8")
        if not installs(copilot.install):
            assert path.read_bytes() == text.encode()
            return
        installed = json.loads(path.read_text("utf-8"))
        assert mcp_json.is_ours(installed["mcpServers"]["workbench"])
        (row,) = copilot.checks()
        assert row.ok is not None, row
        copilot.uninstall()
        after = json.loads(path.read_text("utf-8"))
        expected = json.loads(text)
        if expected.get("mcpServers") in ({}, None) and "mcpServers" not in after:
            expected.pop("mcpServers", None)
        assert json.dumps(after, sort_keys=True) == json.dumps(expected, sort_keys=True)


def claude_settings_with_env() -> st.SearchStrategy[dict[str, Any]]:
    shaped = st.fixed_dictionaries(
        {},
        optional={
            "env": st.one_of(
                json_values,
                st.dictionaries(
                    st.sampled_from([claude_auto_memory.KEY, "OTHER"]),
                    st.one_of(st.sampled_from(["1", "0", ""]), json_values),
                ),
            )
        },
    )
    return st.builds(lambda a, b: {**a, **b}, json_objects, shaped)


@FUZZ
@given(user=claude_settings_with_env())
def test_claude_auto_memory_switch_on_a_settings_json_of_any_shape(
    user: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused untouched, or switched off and given back as the user had it (issue 22 item 4)."""
    with agent_home(monkeypatch) as home:
        monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
        path = home / ".claude" / "settings.json"
        path.parent.mkdir()
        text = render(user)
        path.write_text(text, encoding="utf-8")
        try:
            claude_auto_memory.check()
        except WorkbenchError:
            assert path.read_bytes() == text.encode()
            return
        claude_auto_memory.disable()
        assert json.loads(path.read_text("utf-8"))["env"][claude_auto_memory.KEY] == "1"
        assert claude_auto_memory.checks()
        claude_auto_memory.restore()
        after = json.loads(path.read_text("utf-8"))
        assert json.dumps(after, sort_keys=True) == json.dumps(json.loads(text), sort_keys=True)
