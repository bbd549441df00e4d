"""A user's machine for one real agent CLI: a HOME, a project, a data dir and its service.

The real-agent tests (``tests/test_real_*.py``) each run an npm CLI (``tests/real_agents.py``)
the way a user does: ``workbench install --agent X`` into an empty HOME, then the agent in a
project folder, its model API answered by a fake server on 127.0.0.1. ``World`` holds the
places and the environment they share, starts and stops the service of that data dir, and
reads back what was stored (read-only, with the stdlib ``sqlite3``: the test process is no
writer of the store).

Whatever service a hook spawned on a cold start is stopped with ``workbench stop`` at the end.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.agent_home import agent_env
from tests.conftest import Service, run_workbench


@dataclass
class World:
    """One user's places: ``home`` (the agent's config), ``project`` (the cwd), ``data_dir``."""

    home: Path
    project: Path
    data_dir: Path
    env: dict[str, str]
    service: Service
    runs: list[subprocess.CompletedProcess[str]] = field(default_factory=list)

    def workbench(self, *args: str) -> subprocess.CompletedProcess[str]:
        """``workbench ARGS`` as the user runs it, in this world's environment."""
        return run_workbench(self.env, *args)

    def install(self, agent: str, *extra: str) -> str:
        """``workbench install --agent AGENT``; asserts it succeeded and returns its output."""
        proc = self.workbench("install", "--agent", agent, *extra)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc.stdout

    def run(
        self, argv: list[str], *, timeout: float = 120, stdin: str | None = None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """Run an agent's program in the project folder; the result is kept in ``runs``."""
        proc = subprocess.run(
            argv,
            cwd=self.project,
            env={**self.env, **env},
            input=stdin,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        self.runs.append(proc)
        return proc

    def rows(self, sql: str, *args: Any) -> list[dict[str, Any]]:
        """``sql`` on the store, opened read-only; [] while there is no store yet."""
        db = self.data_dir / "workbench.db"
        if not db.exists():
            return []
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        conn.row_factory = sqlite3.Row
        try:
            return [dict(r) for r in conn.execute(sql, args)]
        finally:
            conn.close()

    def events(self) -> list[dict[str, Any]]:
        """The event log, oldest first, each payload parsed."""
        rows = self.rows("SELECT * FROM events ORDER BY id")
        for row in rows:
            row["payload"] = json.loads(row["payload"])
        return rows


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    """An empty HOME, a project folder (a git repository), a data dir and its (stopped) service."""
    with open_world(tmp_path) as found:
        yield found


def is_ci(key: str) -> bool:
    """A variable that tells a program it runs in CI. The agents run as a user at a terminal:
    under ``CI`` Gemini's interactive UI (ink, through is-in-ci) renders nothing but a final
    frame, so a test driving its screen never sees the prompt box."""
    return key in ("CI", "CONTINUOUS_INTEGRATION") or key.startswith("CI_")


@contextmanager
def open_world(root: Path) -> Iterator[World]:
    """``world`` under ``root``, for a fixture of a wider scope (one install, many sessions)."""
    home = root / "home"
    project = root / "project"
    data_dir = root / "data"
    for folder in (home, project, data_dir):
        folder.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = agent_env(home, data_dir)
    port = int(env["WORKBENCH_PORT"])
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", PYTHONUNBUFFERED="1")
    for key in [k for k in env if k.startswith(("ANTHROPIC_", "OPENAI_", "GOOGLE_")) or is_ci(k)]:
        del env[key]
    service = Service(data_dir=data_dir, port=port, env=env)
    found = World(home=home, project=project, data_dir=data_dir, env=env, service=service)
    try:
        yield found
    finally:
        service.stop()
        run_workbench(env, "stop", timeout=30)  # a service a hook spawned on a cold start
