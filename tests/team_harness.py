"""What the team tests share: a fresh lake per test, a seeded store, CLI runs, lake reads.

Real parts only: the session's PostgreSQL cluster (tests/postgres.py) as the DuckLake catalog,
a directory in tmp_path as the data path, stores written with the real ``Store`` API, and
``python -m workbench`` as a subprocess for every command under test.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.conftest import base_env, free_port, run_workbench
from tests.postgres import Cluster


@dataclass
class Lake:
    """One test's lake: its own catalog database and data directory."""

    cluster: Cluster
    database: str
    data: Path

    @property
    def dsn(self) -> str:
        return self.cluster.dsn(self.database)

    def settings(self, tmp: Path) -> Any:
        from workbench.settings import load_settings

        return load_settings(tmp, team_catalog=self.dsn, team_data=str(self.data))

    def query(self, tmp: Path, sql: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
        """Run ``sql`` against the lake (attached as ``lake``) from a reader of our own."""
        from workbench.team import lake

        con = lake.connect(self.settings(tmp), create_tables=False)
        try:
            return con.execute(sql, params or []).fetchall()
        finally:
            con.close()

    def parquet_files(self) -> list[Path]:
        return sorted(self.data.rglob("*.parquet"))


@dataclass
class Machine:
    """One author's data dir and the environment its CLI runs with."""

    data_dir: Path
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return run_workbench(self.env, *args, "--data-dir", str(self.data_dir), timeout=timeout)

    def publish_json(self, *args: str) -> dict[str, Any]:
        out = self.run("publish", "--json", *args)
        assert out.returncode == 0, out.stderr + out.stdout
        return json.loads(out.stdout)


Seeded = TypeVar("Seeded")


def published_lake(
    cluster: Cluster, folder: Path, publish: Callable[[Lake, Path], Seeded]
) -> tuple[Lake, Seeded]:
    """A lake of its own in ``folder``, which ``publish`` seeds and publishes to, for a
    module-scoped fixture whose tests only read it (issue 23: the authors' seeding, init and
    publish cost more than any one test). ``publish`` gets the lake and ``folder`` and returns
    what the tests need (the machines, ids, a snapshot). The machines it makes run full text
    only, as under ``_clean_env``, which a module fixture precedes.
    """
    lake = Lake(cluster, cluster.new_database(), folder / "lake")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("WORKBENCH_EMBEDDER", "none")  # copied into each machine's environment
        return lake, publish(lake, folder)


def machine(tmp_path: Path, name: str) -> Machine:
    data_dir = tmp_path / name
    data_dir.mkdir(parents=True, exist_ok=True)
    return Machine(data_dir=data_dir, env=base_env(data_dir, free_port()))


def init(m: Machine, lake: Lake, *projects: str, author: str) -> None:
    """What ``team init`` stores and creates, done in-process to keep the suite fast.

    ``team init`` itself runs as a real CLI in tests/test_team_settings.py; here it is only
    the set-up of tests about publishing.
    """
    from workbench.settings import load_settings, write_settings_file
    from workbench.team import lake as team

    settings = load_settings(m.data_dir)
    write_settings_file(
        settings,
        {
            "team_catalog": lake.dsn,
            "team_data": str(lake.data),
            "team_projects": list(projects),
            "team_author": author,
        },
    )
    team.connect(load_settings(m.data_dir)).close()


def forget(data_dir: Path, *ids: int) -> None:
    """Forget observations with the library behind ``POST /api/observations/forget``."""
    from workbench.forget import forget as run
    from workbench.store.database import Store

    with Store(data_dir / "workbench.db") as store:
        report = run(store.conn, data_dir / "spool", list(ids))
    assert [d.id for d in report.deleted] == list(ids)


def seed(
    data_dir: Path,
    project: str,
    session: str,
    titles: list[str],
    *,
    narrative: str = "",
    platform: str = "claude-code",
    at_ms: int = 1_780_000_000_000,
    summary: str | None = None,
) -> list[int]:
    """Observations (one per title) in one session of ``project``; returns their ids."""
    from workbench.models import ObservationDraft, SummaryDraft
    from workbench.store import observations, sessions, summaries
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    ids = []
    with Store(data_dir / "workbench.db") as store, atomic(store.conn):
        sessions.ensure(store.conn, session, project, platform, at_ms=at_ms)
        for i, title in enumerate(titles):
            obs_id, _ = observations.insert(
                store.conn,
                ObservationDraft(
                    title=title,
                    narrative=narrative or f"about {title}",
                    facts=[f"fact of {title}"],
                ),
                content_session_id=session,
                project=project,
                prompt_number=1,
                created_ms=at_ms + i,
            )
            ids.append(obs_id)
        if summary is not None:
            summaries.upsert(
                store.conn,
                SummaryDraft(request=summary, learned=summary),
                content_session_id=session,
                project=project,
                prompt_number=1,
                created_ms=at_ms,
            )
    return ids
