"""``workbench team init|status|allow|deny``: settings stored once, validated precisely.

The catalog is a postgres:// URL with no password (libpq reads PGPASSWORD or ~/.pgpass); the
settings go through the one settings module, so the same rules hold for settings.json and the
``WORKBENCH_TEAM_*`` variables.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import free_port
from tests.team_harness import init, machine
from workbench.sections.team import check_catalog, conninfo

pytestmark = pytest.mark.slow


def test_init_stores_the_settings_and_status_shows_them(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    init(ana, team_lake, "api", "web", author="ana@laptop")

    stored = json.loads((ana.data_dir / "settings.json").read_text())
    assert stored["team_catalog"] == team_lake.dsn
    assert stored["team_data"] == str(team_lake.data)
    assert stored["team_projects"] == ["api", "web"]
    assert stored["team_author"] == "ana@laptop"
    out = ana.run("team", "status")
    assert out.returncode == 0, out.stderr
    for text in (team_lake.dsn, "api, web", "ana@laptop", "answers, snapshot"):
        assert text in out.stdout
    status = json.loads(ana.run("team", "status", "--json").stdout)
    tables = team_lake.query(
        tmp_path, "SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake' ORDER BY 1"
    )
    assert status["snapshot"] >= 1  # init created the tables (one snapshot)
    assert [t for (t,) in tables] == [
        "observations",
        "publish_locks",
        "publish_marks",
        "sessions",
        "summaries",
    ]


def test_author_defaults_to_user_at_host(team_lake: Any, tmp_path: Path) -> None:
    import getpass
    import socket

    ana = machine(tmp_path, "ana")
    out = ana.run("team", "init", "--catalog", team_lake.dsn, "--data", str(team_lake.data))
    assert out.returncode == 0, out.stderr
    status = json.loads(ana.run("team", "status", "--json").stdout)
    assert status["author"].startswith(getpass.getuser() + "@")
    assert socket.gethostname().split(".")[0][:10] in status["author"]


def test_a_password_in_the_catalog_is_refused_and_never_stored(tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    out = ana.run(
        "team", "init", "--catalog", "postgres://ana:s3cret@db.example:5432/team", "--data", "x"
    )
    assert out.returncode == 1
    assert "PGPASSWORD" in out.stderr
    assert ".pgpass" in out.stderr
    settings_file = ana.data_dir / "settings.json"
    assert not settings_file.exists() or "s3cret" not in settings_file.read_text()


@pytest.mark.parametrize(
    ("catalog", "said"),
    [
        ("mysql://ana@db/team", "not a PostgreSQL URL"),
        ("team.duckdb", "not a PostgreSQL URL"),
        ("postgres://ana@db.example:5432/", "names no database"),
        ("postgres:///team", "names no host"),
        ("postgres://ana@db:99999/team", "not a valid URL"),
        ("postgres://ana@db/team?password=x", "PGPASSWORD"),
        ("postgres://ana@db/team?sslmode=require&foo=1", "unsupported parameters ['foo']"),
    ],
)
def test_bad_catalogs_are_refused_with_the_fix(tmp_path: Path, catalog: str, said: str) -> None:
    """Through the settings module, the one place the rule lives (CLI runs: the tests around)."""
    from pydantic import ValidationError

    from workbench.settings import load_settings

    with pytest.raises(ValidationError) as caught:
        load_settings(tmp_path, team_catalog=catalog)
    assert said in str(caught.value)


def test_init_refuses_a_catalog_that_is_not_postgres(tmp_path: Path) -> None:
    out = machine(tmp_path, "ana").run("team", "init", "--catalog", "team.duckdb", "--data", "x")
    assert out.returncode == 1
    assert "not a PostgreSQL URL; write postgres://USER@HOST:PORT/DBNAME" in out.stderr


def test_a_data_path_that_is_a_file_or_another_scheme_is_refused(tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    dsn = "postgres://ana@127.0.0.1/team"
    out = ana.run("team", "init", "--catalog", dsn, "--data", str(a_file))
    assert out.returncode == 1
    assert "is a file" in out.stderr
    out = ana.run("team", "init", "--catalog", dsn, "--data", "gs://bucket/x")
    assert out.returncode == 1
    assert "s3://BUCKET/PREFIX" in out.stderr


def test_an_unreachable_catalog_is_reported_precisely(tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    dsn = f"postgres://ana@127.0.0.1:{free_port()}/team"
    out = ana.run("team", "init", "--catalog", dsn, "--data", str(tmp_path / "lake"))
    assert out.returncode == 1
    assert f"cannot open the team lake at {dsn}" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (ana.data_dir / "settings.json").exists()  # nothing stored for a dead catalog


def test_status_without_a_lake_says_how_to_set_one(tmp_path: Path) -> None:
    out = machine(tmp_path, "ana").run("team", "status")
    assert out.returncode == 1
    assert "workbench team init --catalog" in out.stderr


def test_allow_and_deny_edit_the_allowlist(tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    assert ana.run("team", "allow", "api").returncode == 0
    assert ana.run("team", "allow", "web").returncode == 0
    assert "already allowed" in ana.run("team", "allow", "api").stdout
    assert ana.run("team", "deny", "api").returncode == 0
    stored = json.loads((ana.data_dir / "settings.json").read_text())
    assert stored["team_projects"] == ["web"]
    out = ana.run("team", "deny", "nope")
    assert out.returncode == 1
    assert "not on the team allowlist" in out.stderr


def test_a_password_in_the_environment_variable_is_refused_too(tmp_path: Path) -> None:
    from pydantic import ValidationError

    from workbench.settings import load_settings

    with pytest.raises(ValidationError, match="PGPASSWORD"):
        load_settings(tmp_path, team_catalog="postgresql://a:b@h/d")


@given(st.text(max_size=80))
def test_any_catalog_text_is_accepted_or_refused_with_a_value_error(text: str) -> None:
    """Fuzz: no other exception, and whatever is accepted holds no password."""
    try:
        checked = check_catalog(text)
    except ValueError:
        return
    assert checked.startswith(("postgres://", "postgresql://"))
    assert not re.search(r"(^|\s)password=", conninfo(checked))


@given(
    user=st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    db=st.from_regex(r"[a-z][a-z0-9_]{0,8}", fullmatch=True),
    port=st.integers(1, 65535),
)
def test_conninfo_carries_what_the_url_names(user: str, db: str, port: int) -> None:
    info = conninfo(check_catalog(f"postgres://{user}@db.example:{port}/{db}"))
    assert info == f"host=db.example dbname={db} port={port} user={user}"
