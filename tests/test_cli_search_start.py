"""``workbench search`` as a real process: what it imports, and that it answers as before.

Issue 21: the command took ~1 s as a process (Typer, pydantic, pydantic-settings, httpx and
rich before the first byte was sent). Its common form (words and a few options, the service
up) now goes through the standard library only; everything else takes the full Typer path,
so each case here compares the process's output with the full path's (``CliRunner`` on
``app``) against the same real service.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests import conftest
from tests.conftest import ROOT, Service, base_env, free_port
from tests.relevance_set import Seeded
from workbench.cli.main import app

# The process writes the modules it loaded to MODULES_OUT on exit (typer exits via SystemExit).
PROBE = (
    "import atexit, os, sys\n"
    "atexit.register(lambda: open(os.environ['MODULES_OUT'], 'w', encoding='utf-8')"
    ".write('\\n'.join(sorted(sys.modules))))\n"
    "sys.argv[0] = 'workbench'\n"  # the name usage lines show, as the entry point's
    "from workbench.cli.main import run\n"
    "run()\n"
)
HEAVY = ("typer", "click", "pydantic", "pydantic_settings", "httpx", "numpy", "fastapi")
WIDE = {"COLUMNS": "120"}  # one width for the process and CliRunner: rich folds to it


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, Seeded]]:
    with conftest.relevance_set_service(tmp_path_factory.mktemp("cli-start") / "data") as found:
        yield found


def process(
    service: Service, tmp_path: Path, *args: str, up: bool = True
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``workbench ARGS`` as a fresh process; its result and the modules it imported."""
    out = tmp_path / "modules.txt"
    port = service.port if up else free_port()
    env = base_env(service.data_dir, port, MODULES_OUT=str(out), **WIDE)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done, set(out.read_text(encoding="utf-8").split())


def full_path(service: Service, *args: str, up: bool = True) -> tuple[int, str, str]:
    """The same command through the Typer app (the path every other command takes)."""
    port = service.port if up else free_port()
    env = {"WORKBENCH_DATA_DIR": str(service.data_dir), "WORKBENCH_PORT": str(port), **WIDE}
    result = CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def answers_as_full_path(service: Service, tmp_path: Path, *args: str) -> None:
    """``workbench ARGS`` as a fresh process exits and prints as the full path does (stdout
    exactly, stderr but for the blank space around it)."""
    done, _ = process(service, tmp_path, *args)
    code, stdout, stderr = full_path(service, *args)
    assert (done.returncode, done.stdout) == (code, stdout)
    assert done.stderr.strip() == stderr.strip()


def heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


def test_search_json_imports_only_the_standard_library_path(
    svc: tuple[Service, Seeded], tmp_path: Path
) -> None:
    service, labels = svc
    args = ("search", "why were refunds charged twice", "--json")
    done, modules = process(service, tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert heavy(modules) == []
    assert "rich" not in {m.split(".")[0] for m in modules}
    assert "http.client" not in modules  # a plain socket: http.client pulls in ssl and email
    data = json.loads(done.stdout)
    assert data["observations"][0]["id"] == labels.ids["refund-idempotency"]
    code, stdout, _ = full_path(service, *args)
    assert code == 0
    assert json.loads(stdout) == data


def test_search_table_is_the_full_paths_table(svc: tuple[Service, Seeded], tmp_path: Path) -> None:
    service, labels = svc
    args = ("search", "docker image too large", "--project", "infra", "--limit", "5")
    done, modules = process(service, tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert heavy(modules) == []
    assert "rich" not in {m.split(".")[0] for m in modules}  # plain text: cli.plain_text
    assert str(labels.ids["docker-slim"]) in done.stdout
    code, stdout, _ = full_path(service, *args)
    assert code == 0
    assert done.stdout == stdout


def test_option_spelled_with_equals_and_mode(svc: tuple[Service, Seeded], tmp_path: Path) -> None:
    service, _ = svc
    args = ("search", "retry", "--mode=fts", "--limit=3", "--json")
    done, modules = process(service, tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert heavy(modules) == []
    assert json.loads(done.stdout) == json.loads(full_path(service, *args)[1])
    assert json.loads(done.stdout)["mode"] == "fts"


@pytest.mark.parametrize(
    "args",
    [
        ("search", "retry", "--mode", "nope"),  # the service refuses: the full path says why
        ("search", "retry", "--limit", "0"),  # Typer's own bound
        ("search", "retry", "--obs-type", "change", "--json"),  # an option the fast path lacks
        ("search",),  # no words: the full path's error
        ("search", "retry", "--team"),  # the team lake is not set up: the full path says so
    ],
)
def test_everything_else_answers_as_the_full_path(
    svc: tuple[Service, Seeded], tmp_path: Path, args: tuple[str, ...]
) -> None:
    answers_as_full_path(svc[0], tmp_path, *args)


def test_service_down_reads_the_store_as_before(
    svc: tuple[Service, Seeded], tmp_path: Path
) -> None:
    service, labels = svc
    args = ("search", "why were refunds charged twice", "--json")
    done, _ = process(service, tmp_path, *args, up=False)
    assert done.returncode == 0, done.stderr
    assert "not running" in done.stderr
    assert json.loads(done.stdout)["observations"][0]["id"] == labels.ids["refund-idempotency"]


def test_another_data_dirs_service_is_never_used(
    svc: tuple[Service, Seeded], tmp_path: Path
) -> None:
    """A service answering on the port for another data dir: refused, as the full path does."""
    service, _ = svc
    other = tmp_path / "other"
    other.mkdir()
    args = ["search", "refund", "--json"]
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args],
        env=base_env(other, service.port, MODULES_OUT=str(tmp_path / "m.txt"), **WIDE),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    env = {"WORKBENCH_DATA_DIR": str(other), "WORKBENCH_PORT": str(service.port), **WIDE}
    full = CliRunner().invoke(app, args, env=env, catch_exceptions=False)
    assert (done.returncode, done.stdout) == (full.exit_code, full.stdout) == (1, "")
    assert done.stderr.strip() == full.stderr.strip()
    assert str(other) in done.stderr
