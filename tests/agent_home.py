"""A user's HOME in tmp_path for the real ``workbench`` CLI, and what tests read back from it.

The install and doctor tests run the CLI as a subprocess with HOME in tmp_path, so every
agent's config lands there. ``agent_env`` drops the caller's ``WORKBENCH_*``, agent (``CODEX_``,
``GEMINI_``, ``CLAUDE_``) and ``XDG_`` variables, which would otherwise point the CLI at the
real machine's files, and gives a free port where nothing listens: the service is down.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from tests.conftest import free_port, run_workbench

FOREIGN = ("WORKBENCH_", "CODEX_", "GEMINI_", "CLAUDE_", "COPILOT_", "XDG_")


def make_home(tmp_path: Path) -> Path:
    """An empty HOME folder: no agent on this machine until a test creates its folder."""
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def agent_env(home: Path, data_dir: Path | None = None, **extra: str) -> dict[str, str]:
    """The environment for a CLI run in ``home`` (``extra``: e.g. ``CODEX_HOME``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN)}
    env.update(HOME=str(home), WORKBENCH_PORT=str(free_port()), **extra)
    if data_dir is not None:
        env["WORKBENCH_DATA_DIR"] = str(data_dir)
    return env


def read_json(path: Path) -> Any:
    return json.loads(path.read_text("utf-8"))


def backups(path: Path) -> list[Path]:
    """The backups install/uninstall made of ``path``, oldest first."""
    return sorted(path.parent.glob(f"{path.name}.workbench-backup-*"))


def doctor_rows(env: dict[str, str]) -> dict[str, dict[str, str]]:
    """``workbench doctor --json`` as check name -> row (exit 0, or 1 on a problem)."""
    proc = run_workbench(env, "doctor", "--json")
    assert proc.returncode in (0, 1), proc.stderr
    return {row["check"]: row for row in json.loads(proc.stdout)}


def trust_codex_hooks(codex_home: Path) -> None:
    """Record in ``config.toml`` what Codex records when the user picks "Trust all and
    continue": ``[hooks.state."<key>"] trusted_hash`` for each of our hooks (the real TUI
    doing it is ``tests/test_real_codex.py``)."""
    import tomlkit

    from workbench.agents import codex_trust

    config = codex_home / "config.toml"
    doc = tomlkit.parse(config.read_text("utf-8") if config.exists() else "")
    hooks = doc.setdefault("hooks", tomlkit.table())
    state = hooks.setdefault("state", tomlkit.table())
    for hook in codex_trust.review(codex_home / "hooks.json", config):
        state[hook.key] = {"trusted_hash": hook.current_hash}
    config.write_text(tomlkit.dumps(doc), "utf-8")
