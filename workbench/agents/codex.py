"""Codex CLI: hooks in ``$CODEX_HOME/hooks.json``, the MCP server in ``$CODEX_HOME/config.toml``.

``CODEX_HOME`` defaults to ``~/.codex``. Codex reads Claude Code's hook shape
(``workbench.agents.hook_json``) and event names (SessionStart, UserPromptSubmit, PostToolUse,
Stop, and since 0.171 SessionEnd: its ``hooks/list`` lists a ``session_end`` hook) with
``timeout`` in seconds (openai/codex ``codex-rs/config/src/hook_config.rs``,
``engine/discovery.rs``). Each command ends in ``--platform codex``, which picks
``hooks/adapters/codex.py``. The MCP server is the table ``[mcp_servers.workbench]``
(``workbench.agents.mcp_toml``); config.toml is checked before either file is written, so a
refusal leaves both untouched.

Codex runs a hook only once the user trusted it (``workbench.agents.codex_trust``): ``notes``
tells the user at install, and ``checks`` makes ``doctor`` report untrusted or changed hooks.
"""

from __future__ import annotations

import os
from pathlib import Path

from workbench.agents import claude_settings, codex_trust, health, hook_json, mcp_json, mcp_toml
from workbench.agents.base import Change, Check

NAME = "codex"
LABEL = "Codex CLI"
SCRIPTS: hook_json.Scripts = {
    "SessionStart": ("session_start.py", None, 30),
    "UserPromptSubmit": ("user_prompt_submit.py", None, 10),
    "PostToolUse": ("post_tool_use.py", None, 10),
    "Stop": ("stop.py", None, 10),
    "SessionEnd": ("session_end.py", None, 3),  # Codex allows SessionEnd 3 s at most
}
REMOVE_HINT = f"`codex mcp remove {mcp_json.SERVER_NAME}`"


def config_dir() -> Path:
    home = os.environ.get("CODEX_HOME", "").strip()
    return Path(home).expanduser() if home else Path.home() / ".codex"


def hooks_path() -> Path:
    return config_dir() / "hooks.json"


def config_path() -> Path:
    return config_dir() / "config.toml"


def detected() -> bool:
    return config_dir().is_dir()


def check() -> None:
    """Raise if ``install`` would refuse (hooks.json not JSON, config.toml not TOML, a foreign
    ``workbench`` server); writes nothing."""
    hook_json.check_file(hooks_path(), SCRIPTS)
    mcp_toml.check(config_path(), REMOVE_HINT)


def install(python: str | None = None, data_dir: Path | None = None) -> list[Change]:
    check()  # refuse before writing anything
    hooks = hook_json.install(hooks_path(), SCRIPTS, python, data_dir, NAME)
    entry = mcp_json.server_entry(python, data_dir, NAME)
    changed, backup = mcp_toml.install(config_path(), entry, REMOVE_HINT)
    return [hooks, Change("workbench MCP server", config_path(), changed, backup)]


def check_uninstall() -> None:
    """Raise if ``uninstall`` would refuse either file; writes nothing."""
    claude_settings.read(hooks_path())
    mcp_toml.check_uninstall(config_path())


def uninstall() -> list[Change]:
    check_uninstall()  # refuse before writing anything
    hooks = hook_json.uninstall(hooks_path())
    changed, backup = mcp_toml.uninstall(config_path())
    return [hooks, Change("workbench MCP server", config_path(), changed, backup)]


def notes() -> list[str]:
    """What the user must still do after ``install``: trust our hooks in Codex, if not yet."""
    said = codex_trust.problem(codex_trust.review(hooks_path(), config_path()))
    return [f"{LABEL}: {said}"] if said else []


def checks() -> list[Check]:
    row = health.agent_check(
        NAME,
        LABEL,
        detected(),
        [health.hooks(hooks_path()), health.mcp(config_path(), mcp_toml.entry)],
    )
    if row.ok is not True:
        return [row]
    # Trigger: our hooks are installed and runnable, but Codex has not trusted them (or they
    # changed since). Why: Codex then runs none of them and says nothing ("agent codex ok"
    # was the report while no hook ran, issue 20 item 6). Outcome: a problem, with the step.
    said = codex_trust.problem(codex_trust.review(hooks_path(), config_path()))
    return [row if said is None else Check(row.name, False, said)]
