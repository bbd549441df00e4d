"""A throwaway PostgreSQL cluster for the team tests: the DuckLake catalog, real and local.

Debian's ``postgresql`` package (``.ci/run`` installs it when ``initdb`` is missing under
/usr/lib/postgresql) gives ``initdb`` and ``pg_ctl``. The cluster lives in a temp dir, listens
on 127.0.0.1 only, on a free port, with ``trust`` authentication for 127.0.0.1 and nothing else
(no Unix-socket login, no other host). It is started once per test session; each test gets its
own database (``Cluster.new_database``) so tests never see each other's lake.

``initdb`` refuses to run as root, and tests run as root here: when uid is 0 the server runs as
the ``postgres`` user (``runuser -u postgres --``) in a temp dir chowned to it. When neither the
binaries nor that user are available, the fixture skips the team tests with the reason.

``Cluster.hold_lock`` opens a ``psql`` session that holds a table lock until released: the team
tests use it to stop a publisher exactly at its commit (DuckLake's commit inserts into
``ducklake_snapshot``), with no sleeps, by waiting until PostgreSQL reports the publisher's
backend waiting on that lock.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import free_port


def find_bin_dir() -> Path | None:
    """The newest /usr/lib/postgresql/<version>/bin holding initdb, else None."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda p: (
            int(Path(p).parent.parent.name) if Path(p).parent.parent.name.isdigit() else 0
        ),
    )
    return Path(found[-1]).parent if found else None


def unavailable_reason() -> str | None:
    """Why a cluster cannot be started here (None when it can)."""
    if find_bin_dir() is None:
        return (
            "PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb); "
            "apt-get install postgresql, as .ci/run does"
        )
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user for initdb to run as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing (initdb refuses root)"
    return None


@dataclass
class Cluster:
    """A running cluster: ``dsn(db)`` for a database, ``psql(sql)`` to run SQL as superuser."""

    bin_dir: Path
    root: Path
    port: int
    _databases: int = 0
    _as_postgres: list[str] = field(default_factory=list)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def dsn(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self._as_postgres, *args], capture_output=True, text=True, timeout=60, check=True
        )

    def start(self) -> Cluster:
        if os.geteuid() == 0:
            self._as_postgres = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres", "postgres")
        self._run(
            str(self.bin_dir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            "postgres",
            "-A",
            "reject",
            "--no-sync",
            "-E",
            "UTF8",
        )
        # Trust on 127.0.0.1 only: no socket logins, no other address.
        (self.data / "pg_hba.conf").write_text("host all postgres 127.0.0.1/32 trust\n")
        options = f"-h 127.0.0.1 -p {self.port} -k {self.root} -F -c max_connections=100"
        self._run(
            str(self.bin_dir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "server.log"),
            "-w",
            "start",
        )
        return self

    def stop(self) -> None:
        subprocess.run(
            [
                *self._as_postgres,
                str(self.bin_dir / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "immediate",
                "stop",
            ],
            capture_output=True,
            timeout=60,
        )

    def _psql_argv(self, database: str) -> list[str]:
        """psql as the superuser over loopback: unaligned, tuples only, stop on error."""
        return [
            str(self.bin_dir / "psql"),
            *("-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1"),
            *("-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "-d", database),
        ]

    def psql(self, sql: str, database: str = "postgres") -> str:
        out = subprocess.run(
            [*self._psql_argv(database), "-c", sql],
            capture_output=True,
            text=True,
            timeout=60,
        )
        if out.returncode != 0:
            raise RuntimeError(f"psql failed: {out.stderr}")
        return out.stdout.strip()

    def new_database(self) -> str:
        """A fresh, empty database for one test; returns its name."""
        self._databases += 1
        name = f"lake_{os.getpid()}_{self._databases}"
        self.psql(f"CREATE DATABASE {name}")
        return name

    @contextmanager
    def hold_lock(self, database: str, table: str, mode: str = "EXCLUSIVE") -> Iterator[None]:
        """Hold ``LOCK TABLE table IN mode`` in an open transaction until the block ends.

        EXCLUSIVE still lets plain SELECTs through (readers and DuckLake's reads of the
        catalog) but blocks INSERT: a DuckLake commit waits on it.
        """
        proc = subprocess.Popen(
            self._psql_argv(database),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdin is not None
        assert proc.stdout is not None
        proc.stdin.write(f"BEGIN; LOCK TABLE {table} IN {mode} MODE; SELECT 'locked';\n")
        proc.stdin.flush()
        line = proc.stdout.readline().strip()
        if line != "locked":
            proc.kill()
            raise RuntimeError(
                f"could not lock {table}: {line} {proc.stderr.read() if proc.stderr else ''}"
            )
        try:
            yield
        finally:
            proc.stdin.write("ROLLBACK;\n\\q\n")
            proc.stdin.flush()
            proc.wait(timeout=30)

    def wait_for_lock_waiter(
        self, database: str, table: str, count: int = 1, timeout: float = 60.0
    ) -> None:
        """Return once ``count`` backends wait for a lock on ``table`` (commits blocked on it)."""
        sql = (
            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
            f" WHERE NOT l.granted AND c.relname = '{table}'"
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if int(self.psql(sql, database) or 0) >= count:
                return
            time.sleep(0.05)
        raise AssertionError(f"no backend waited on {table} within {timeout}s")


@contextmanager
def running_cluster() -> Iterator[Cluster]:
    """Start a cluster in a temp dir on a free port; stop it and remove the dir at the end."""
    bin_dir = find_bin_dir()
    assert bin_dir is not None
    root = Path(tempfile.mkdtemp(prefix="workbench-pg-"))
    cluster = Cluster(bin_dir=bin_dir, root=root, port=free_port())
    try:
        yield cluster.start()
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)
