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
import os
import subprocess
import sys
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

from tests.conftest import ROOT
from tests.fuzz_strategies import json_objects, json_values, render
from workbench.agents import claude_settings, codex, codex_trust, gemini, mcp_json
from workbench.errors import WorkbenchError

pytestmark = pytest.mark.slow

FUZZ = settings(
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None
)

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
    return line_breaks(draw, "\n".join(lines) + "\n")


def line_breaks(draw: st.DrawFn, text: str) -> str:
    """``text`` as written on Linux and macOS (LF) or, as often, on Windows (CRLF)."""
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


def keeps_line_endings(before: str, after: str) -> None:
    """A file whose every line ended in CRLF still does after install or uninstall
    (``config_file.write_text``); an LF one gets no CR."""
    if "\n" in before and before.count("\n") == before.count("\r\n"):
        assert after.count("\n") == after.count("\r\n"), "a bare LF in a CRLF file"
    elif "\r" not in before:
        assert "\r" not in after, "a CR in an LF file"


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
    keeps_line_endings(text, path.read_bytes().decode())
    installed = tomllib.loads(path.read_bytes().decode())
    assert installed["mcp_servers"]["workbench"]["args"] == [
        "-P",
        *mcp_json.MODULE_ARGS,
        "--platform",
        "codex",
    ]
    (row,) = codex.checks()
    assert row.ok is not None, row  # installed: ok or a problem, never "not installed"
    codex.uninstall()
    after = path.read_bytes().decode()
    keeps_line_endings(text, after)
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
@given(user=gemini_settings(), crlf=st.booleans())
def test_gemini_settings_json_of_any_shape(
    user: dict[str, Any], crlf: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    with agent_home(monkeypatch) as home:
        path = home / ".gemini" / "settings.json"
        text = render(user)
        text = text.replace("\n", "\r\n") if crlf else text
        path.write_text(text, encoding="utf-8")
        if not installs(gemini.install):
            assert path.read_bytes() == text.encode()  # refused: untouched
            return
        keeps_line_endings(text, path.read_bytes().decode())
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


codex_groups = st.lists(
    st.fixed_dictionaries(
        {"hooks": st.lists(st.fixed_dictionaries({"type": st.just("command"),
                                                  "command": st.text(max_size=8)}),
                           min_size=1, max_size=2)},
        optional={"matcher": st.text(max_size=4)},
    ),
    max_size=3,
)  # fmt: skip


@FUZZ
@given(
    before=st.dictionaries(st.sampled_from(sorted(codex.SCRIPTS)), codex_groups, max_size=5),
    after=st.dictionaries(st.sampled_from(sorted(codex.SCRIPTS)), codex_groups, max_size=5),
)
def test_codex_hook_groups_never_move_on_reinstall(
    before: dict[str, list[Any]], after: dict[str, list[Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20 item 7: groups the user added before and after ours keep their indexes (the
    trust keys), through a reinstall with other commands."""
    with agent_home(monkeypatch) as home:
        path = home / ".codex" / "hooks.json"
        path.write_text(json.dumps({"hooks": before}), encoding="utf-8")
        codex.install("/usr/bin/python3", None)
        config = json.loads(path.read_text("utf-8"))
        for event, groups in after.items():
            config["hooks"][event].extend(groups)
        path.write_text(json.dumps(config), encoding="utf-8")
        codex.install("/usr/bin/python3", home / "elsewhere")
        moved = json.loads(path.read_text("utf-8"))["hooks"]
        for event, groups in config["hooks"].items():
            assert len(moved[event]) == len(groups)
            for was, now in zip(groups, moved[event], strict=True):
                if claude_settings.without_ours({"hooks": {event: [was]}}) == {
                    "hooks": {event: [was]}
                }:
                    assert now == was  # the user's group, in its place


codex_states = st.one_of(
    toml_values,
    st.dictionaries(
        st.one_of(toml_keys, st.sampled_from(["OURS"])),
        st.one_of(
            toml_values,
            st.fixed_dictionaries(
                {},
                optional={
                    "trusted_hash": st.one_of(toml_atoms, st.sampled_from(["CURRENT"])),
                    "enabled": st.one_of(st.booleans(), toml_atoms),
                },
            ),
        ),
        max_size=4,
    ),
)


@FUZZ
@given(state=codex_states, where=st.sampled_from(["state", "hooks", "top"]))
def test_codex_trust_state_of_any_shape(
    state: Any, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[hooks.state]`` as Codex or the user left it: doctor's row is ok only when every hook
    of ours is trusted as it is now, a problem naming the step otherwise, never a crash."""
    with agent_home(monkeypatch) as home:
        codex.install("/usr/bin/python3", None)
        config = home / ".codex" / "config.toml"
        ours = codex_trust.review(home / ".codex" / "hooks.json", config)
        if isinstance(state, dict):  # "OURS"/"CURRENT": one of our real keys and hashes
            state = {
                (ours[0].key if k == "OURS" else k): (
                    {**v, "trusted_hash": ours[0].current_hash}
                    if isinstance(v, dict) and v.get("trusted_hash") == "CURRENT"
                    else v
                )
                for k, v in state.items()
            }
        doc = tomlkit.parse(config.read_text("utf-8"))
        doc["hooks"] = {"state": state} if where == "state" else state
        if where == "top":
            doc["hooks"] = {"state": {"x": 1}, "other": state}
        config.write_text(tomlkit.dumps(doc), encoding="utf-8")
        (row,) = codex.checks()
        trusted = all(
            h.status == "trusted"
            for h in codex_trust.review(home / ".codex" / "hooks.json", config)
        )
        assert row.ok is trusted, row
        if not trusted:
            assert "Trust all and continue" in row.detail or "/hooks" in row.detail, row


# ----- hostile config files, through the real CLI (issue 19, item 10) -------------------------
# Every agent's config file in turn, each hostile shape, `workbench install | uninstall` run as
# a real subprocess with HOME in tmp_path. Each case ends one of two ways: the user's values
# (and the raw text of their numbers) outside our entries are as they were, or the command
# refused with a clear message, exit code != 0, and no file in HOME changed.

# agent -> its config folder under HOME (its presence is what ``detected()`` asks)
AGENT_DIRS = {
    "claude": ".claude",
    "codex": ".codex",
    "gemini": ".gemini",
    "cursor": ".cursor",
    "windsurf": ".codeium/windsurf",
    "opencode": ".config/opencode",
}
# (agent, file under HOME, what install writes there: "hooks", "flat" hooks, "mcp", "toml")
AGENT_FILES = [
    ("claude", ".claude/settings.json", "hooks"),
    ("claude", ".claude.json", "mcp"),
    ("codex", ".codex/hooks.json", "hooks"),
    ("codex", ".codex/config.toml", "toml"),
    ("gemini", ".gemini/settings.json", "hooks"),
    ("cursor", ".cursor/hooks.json", "flat"),
    ("cursor", ".cursor/mcp.json", "mcp"),
    ("windsurf", ".codeium/windsurf/hooks.json", "flat"),
    ("windsurf", ".codeium/windsurf/mcp_config.json", "mcp"),
    ("opencode", ".config/opencode/opencode.json", "opencode"),
]
FILE_IDS = [f"{agent}:{name}" for agent, name, _ in AGENT_FILES]
JSON_FILES = [f for f in AGENT_FILES if f[2] != "toml"]
HOOK_FILES = [f for f in AGENT_FILES if f[2] in ("hooks", "flat")]
MCP_FILES = [f for f in AGENT_FILES if f[2] in ("mcp", "toml", "opencode")] + [
    ("gemini", ".gemini/settings.json", "mcp")
]
# The event of each agent whose hook runs ``stop.py``.
STOP_EVENT = {
    "claude": "Stop",
    "codex": "Stop",
    "gemini": "AfterAgent",
    "cursor": "stop",
    "windsurf": "post_cascade_response",
}
# Number spellings Python's json would rewrite: 1e400 as Infinity (not JSON at all), the rest
# as another spelling of the same value; big ints past Python's 4300-digit str limit too.
NUMBERS = (
    "[1e400, -1e400, 1.0E+2, -0, -0.0, 1E-400, 0.1, 100, 1.5e3, "
    "123456789012345678901234567890123, " + "9" * 5000 + "]"
)


def cli(home: Path, *args: str) -> Any:
    from tests.agent_home import agent_env
    from tests.conftest import run_workbench

    return run_workbench(agent_env(home), *args, timeout=60)


def home_with(tmp_path: Path, agent: str) -> Path:
    from tests.agent_home import make_home

    home = make_home(tmp_path)
    (home / AGENT_DIRS[agent]).mkdir(parents=True)
    return home


def snapshot(home: Path) -> dict[str, Any]:
    """Every entry under HOME: bytes of a regular file, the kind (and target) of anything else."""
    seen: dict[str, Any] = {}
    for path in sorted(home.rglob("*")):
        key = str(path.relative_to(home))
        if path.is_symlink():
            seen[key] = ("link", os.readlink(path))
        elif path.is_fifo():
            seen[key] = "fifo"
        elif path.is_dir():
            seen[key] = "dir"
        else:
            seen[key] = path.read_bytes()
    return seen


def raw_json(text: str) -> Any:
    """JSON with every number (and NaN/Infinity) kept as its own text, to compare spellings."""
    return json.loads(
        text,
        parse_int=lambda s: ("number", s),
        parse_float=lambda s: ("number", s),
        parse_constant=lambda s: ("number", s),
    )


def strict_json(text: str) -> Any:
    """JSON as the agents read it: no NaN or Infinity (numbers as text, however long)."""

    def refuse(token: str) -> Any:
        raise AssertionError(f"{token} is not JSON")

    return json.loads(text, parse_int=str, parse_float=str, parse_constant=refuse)


def assert_refused(proc: Any, before: dict[str, Any], home: Path, *words: str) -> None:
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "Traceback" not in out, out
    for word in words:
        assert word in out, out
    assert snapshot(home) == before


def user_hook_file(shape: str, agent: str, command: str) -> dict[str, Any]:
    if shape == "flat":  # Cursor's "version" is written by install when absent: the user's here
        return {"version": 1, "hooks": {STOP_EVENT[agent]: [{"command": command}]}}
    hook = {"type": "command", "command": command, "timeout": 5}
    return {"hooks": {STOP_EVENT[agent]: [{"hooks": [hook]}]}}


@pytest.mark.parametrize("form", ["tilde", "absolute", "absolute-python"])
@pytest.mark.parametrize(
    ("agent", "name", "shape"), HOOK_FILES, ids=[f"{a}:{n}" for a, n, _ in HOOK_FILES]
)
def test_a_user_hook_named_like_ours_survives_install_and_uninstall(
    tmp_path: Path, agent: str, name: str, shape: str, form: str
) -> None:
    home = home_with(tmp_path, agent)
    (home / "hooks").mkdir()
    (home / "hooks" / "stop.py").write_text("print('{}')\n")
    script = "~/hooks/stop.py" if form == "tilde" else str(home / "hooks" / "stop.py")
    python = "/usr/bin/python3" if form == "absolute-python" else "python"
    command = f"{python} -S {script}"
    text = json.dumps(user_hook_file(shape, agent, command), indent=2) + "\n"
    path = home / name
    path.write_text(text)
    proc = cli(home, "install", "--agent", agent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert command in [
        h.get("command")
        for group in json.loads(path.read_text())["hooks"][STOP_EVENT[agent]]
        for h in (group.get("hooks", [group]))
    ]
    proc = cli(home, "uninstall", "--agent", agent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(path.read_text()) == json.loads(text)


@pytest.mark.parametrize(
    ("agent", "name", "shape"), JSON_FILES, ids=[f"{a}:{n}" for a, n, _ in JSON_FILES]
)
def test_numbers_are_kept_as_written(tmp_path: Path, agent: str, name: str, shape: str) -> None:
    home = home_with(tmp_path, agent)
    path = home / name
    # "version": Cursor's install writes it when absent, so the user's file has it already.
    text = '{\n  "version": 1,\n  "userNumbers": ' + NUMBERS + ',\n  "n": 1.0E+2\n}\n'
    path.write_text(text)
    proc = cli(home, "install", "--agent", agent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    after = path.read_text()
    strict_json(after)
    installed = raw_json(after)
    assert installed["userNumbers"] == raw_json(text)["userNumbers"]
    assert installed["n"] == ("number", "1.0E+2")
    proc = cli(home, "uninstall", "--agent", agent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert raw_json(path.read_text()) == raw_json(text)


def user_text(shape: str) -> str:
    if shape == "toml":
        return 'model = "o3"\n\n[mcp_servers.docs]\ncommand = "npx"\nargs = ["-y", "docs"]\n'
    user = {"version": 1, "theme": "dark", "mcpServers": {"docs": {"command": "npx"}}}
    return json.dumps(user) + "\n"


def parsed(shape: str, text: str) -> Any:
    return tomllib.loads(text) if shape == "toml" else strict_json(text)


@pytest.mark.parametrize(("agent", "name", "shape"), AGENT_FILES, ids=FILE_IDS)
def test_a_symlinked_config_stays_a_link_and_its_target_is_edited(
    tmp_path: Path, agent: str, name: str, shape: str
) -> None:
    home = home_with(tmp_path, agent)
    dotfiles = home / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / Path(name).name
    text = user_text(shape)
    target.write_text(text)
    path = home / name
    path.symlink_to(target)
    proc = cli(home, "install", "--agent", agent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert path.is_symlink()
    assert os.readlink(path) == str(target)
    assert parsed(shape, target.read_text()) != parsed(shape, text)  # ours went in, there
    proc = cli(home, "uninstall", "--agent", agent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert path.is_symlink()
    assert os.readlink(path) == str(target)
    assert parsed(shape, target.read_text()) == parsed(shape, text)


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "directory", "dangling-link"])
@pytest.mark.parametrize(("agent", "name", "shape"), AGENT_FILES, ids=FILE_IDS)
def test_a_config_path_that_is_not_a_file_is_refused(
    tmp_path: Path, agent: str, name: str, shape: str, kind: str
) -> None:
    home = home_with(tmp_path, agent)
    path = home / name
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to(home / "nowhere" / "settings.json")
    before = snapshot(home)
    for command in ("install", "uninstall"):
        proc = cli(home, command, "--agent", agent)
        assert_refused(proc, before, home, str(path))


FOREIGN_SERVERS = {
    "ssh": {"command": "ssh", "args": ["box", "python3", "-m", "workbench", "mcp"]},
    "docker": {
        "command": "docker",
        "args": ["run", "-i", "img", "/usr/bin/python3", "-P", "-m", "workbench", "mcp"],
    },
}


def foreign_text(shape: str, how: str) -> str:
    server = FOREIGN_SERVERS[how]
    if shape == "toml":
        return tomlkit.dumps({"mcp_servers": {"workbench": server}})
    if shape == "opencode":
        entry = {"type": "local", "command": [server["command"], *server["args"]]}
        return json.dumps({"mcp": {"workbench": entry}}, indent=2) + "\n"
    return json.dumps({"mcpServers": {"workbench": server}}, indent=2) + "\n"


@pytest.mark.parametrize("how", sorted(FOREIGN_SERVERS))
@pytest.mark.parametrize(
    ("agent", "name", "shape"), MCP_FILES, ids=[f"{a}:{n}" for a, n, _ in MCP_FILES]
)
def test_an_mcp_entry_named_workbench_that_runs_elsewhere_is_never_replaced(
    tmp_path: Path, agent: str, name: str, shape: str, how: str
) -> None:
    home = home_with(tmp_path, agent)
    path = home / name
    path.write_text(foreign_text(shape, how))
    before = snapshot(home)
    assert_refused(cli(home, "install", "--agent", agent), before, home, "not workbench's")
    proc = cli(home, "uninstall", "--agent", agent)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert snapshot(home)[name] == before[name]


DOTTED_TOML = [
    'model = "o3"\nmcp_servers.other.command = "npx"\nmcp_servers.other.args = ["-y", "srv"]\n',
    '[mcp_servers]\nother.command = "npx"\nother.args = ["-y", "srv"]\n',
    '[mcp_servers]\nother = { command = "npx", args = ["-y"] }\n\n[profile]\nx = 1\n',
    '[mcp_servers.other]\ncommand = "npx"\nargs = ["a"]\n\n[profile]\nx = 1\n\n'
    '[mcp_servers.more]\ncommand = "uvx"\nargs = ["b"]\n',
    'mcp_servers.other = { command = "npx", args = ["-y"] }\n[tui]\nx = 1\n',
]


@pytest.mark.parametrize("text", DOTTED_TOML)
def test_codex_config_toml_with_dotted_keys_keeps_every_other_server(
    tmp_path: Path, text: str
) -> None:
    home = home_with(tmp_path, "codex")
    path = home / ".codex" / "config.toml"
    path.write_text(text)
    before = snapshot(home)
    proc = cli(home, "install", "--agent", "codex")
    if proc.returncode != 0:  # refused: said why, changed nothing
        assert_refused(proc, before, home, str(path))
        return
    installed = tomllib.loads(path.read_text())
    expected = tomllib.loads(text)
    ours = installed["mcp_servers"].pop("workbench")
    assert ours["args"] == ["-P", *mcp_json.MODULE_ARGS, "--platform", "codex"]
    assert installed == expected
    proc = cli(home, "uninstall", "--agent", "codex")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert tomllib.loads(path.read_text()) == expected


def test_twelve_concurrent_installs_all_succeed_and_leave_one_entry_each(tmp_path: Path) -> None:
    from tests.agent_home import agent_env, make_home

    home = make_home(tmp_path)
    for folder in AGENT_DIRS.values():
        (home / folder).mkdir(parents=True)
    for _agent, name, shape in AGENT_FILES:
        if shape in ("hooks", "flat", "mcp", "opencode"):
            (home / name).write_text(json.dumps({"theme": "dark", "n": 1e300}) + "\n")
    (home / ".codex" / "config.toml").write_text('model = "o3"\n')
    env = agent_env(home)
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "workbench", "install", "--agent", "all"],
            env=env,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(12)
    ]
    results = [(p.wait(timeout=120), *p.communicate()) for p in procs]
    assert [rc for rc, _, _ in results] == [0] * 12, results
    again = cli(home, "install", "--agent", "all")
    assert again.returncode == 0, again.stderr
    # Every change line says "nothing changed"; Codex's note (trust the hooks) is no change.
    lines = [ln for ln in again.stdout.strip().splitlines() if "Hooks need review" not in ln]
    assert lines, again.stdout
    assert all("nothing changed" in line for line in lines), again.stdout
    for _agent, name, shape in AGENT_FILES:
        data = parsed(shape, (home / name).read_text())
        if shape != "toml":
            assert data["theme"] == "dark"
    leftovers = [p for p in home.rglob("*") if p.name.endswith((".tmp", ".workbench-lock"))]
    assert leftovers == []
