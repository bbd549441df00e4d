"""CLI writes never leave a daemon behind unasked (issue 9, item 18).

A write command (import, replay, retry, recompress, reindex, corpus, agent) run while no
service serves the data dir starts a temporary one, says so, does its work, waits for the
queue it fed, and stops it. A service that was already running is used and left running.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest

from tests.conftest import free_port
from tests.test_hardening_newuser import MEMORY, clean_env, http_json_or_none, run, seed

pytestmark = pytest.mark.slow


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def export_file(tmp_path: Path) -> Path:
    """A small export: two sessions' worth of the demo history."""
    document = json.loads(MEMORY.read_text(encoding="utf-8"))
    keep = {s["content_session_id"] for s in document["sessions"][:2]}
    small = {
        **document,
        **{
            kind: [row for row in document[kind] if row.get("content_session_id") in keep]
            for kind in ("sessions", "prompts", "observations", "summaries")
        },
    }
    path = tmp_path / "export.json"
    path.write_text(json.dumps(small), encoding="utf-8")
    return path


def assert_no_service(data_dir: Path, port: int) -> None:
    assert not (data_dir / "service.pid").exists() or not (data_dir / "service.pid").read_text()
    assert http_json_or_none(f"http://127.0.0.1:{port}/api/health") is None


def test_import_into_a_fresh_data_dir_imports_and_leaves_no_service(tmp_path: Path) -> None:
    data_dir = tmp_path / "fresh"
    port = free_port()
    env = clean_env(WORKBENCH_DATA_DIR=str(data_dir), WORKBENCH_PORT=str(port))
    source = export_file(tmp_path)
    expected = len(json.loads(source.read_text())["observations"])
    assert expected > 0
    proc = run(["workbench", "import", str(source), "--json"], tmp_path, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["observations"] == {"imported": expected, "skipped": 0}
    assert "temporary" in proc.stderr
    assert "stopped" in proc.stderr
    assert_no_service(data_dir, port)
    conn = sqlite3.connect(data_dir / "workbench.db")
    try:
        assert conn.execute("SELECT count(*) FROM observations").fetchone()[0] == expected
    finally:
        conn.close()


@pytest.mark.parametrize(
    "argv",
    [
        ["replay", "--json"],
        ["retry"],
        ["recompress", "--compressor", "offline", "--json"],
        ["reindex", "--json"],
        ["corpus", "build", "all", "--json"],
        ["corpus", "rebuild", "all", "--json"],
        ["agent", "prime", "all", "--json"],
        ["corpus", "rm", "all", "--json"],
    ],
    ids=lambda a: "-".join(a[:2]),
)
def test_every_cli_write_leaves_no_service_behind(tmp_path: Path, argv: list[str]) -> None:
    data_dir = tmp_path / "data"
    port = free_port()
    seed(data_dir, port)
    env = clean_env(WORKBENCH_DATA_DIR=str(data_dir), WORKBENCH_PORT=str(port))
    if argv[0] in ("agent",) or argv[1:2] in (["rebuild"], ["rm"]):
        built = run(["workbench", "corpus", "build", "all", "--json"], tmp_path, env)
        assert built.returncode == 0, built.stderr
        assert_no_service(data_dir, port)
    proc = run(["workbench", *argv], tmp_path, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "temporary" in proc.stderr
    assert_no_service(data_dir, port)


def test_a_running_service_is_used_and_left_running(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    port = free_port()
    seed(data_dir, port)
    env = clean_env(WORKBENCH_DATA_DIR=str(data_dir), WORKBENCH_PORT=str(port))
    try:
        assert run(["workbench", "serve", "--detach"], tmp_path, env).returncode == 0
        pid = int((data_dir / "service.pid").read_text())
        proc = run(["workbench", "retry"], tmp_path, env)
        assert proc.returncode == 0, proc.stderr
        assert "temporary" not in proc.stderr
        assert pid_alive(pid)
        assert int((data_dir / "service.pid").read_text()) == pid
    finally:
        run(["workbench", "stop"], tmp_path, env)


def test_reindex_no_wait_refuses_to_start_a_service_it_would_abandon(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    port = free_port()
    seed(data_dir, port)
    env = clean_env(WORKBENCH_DATA_DIR=str(data_dir), WORKBENCH_PORT=str(port))
    proc = run(["workbench", "reindex", "--no-wait"], tmp_path, env)
    assert proc.returncode == 1
    assert "workbench serve --detach" in proc.stderr
    assert_no_service(data_dir, port)
