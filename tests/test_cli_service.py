"""The service-facing CLI as a person runs it: serve --detach, status, stop, doctor,
export/import, replay, retry and recompress — real subprocesses on a real data dir."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_env, free_port, http_json
from workbench.agents import NAMES

pytestmark = pytest.mark.slow


def cli(env: dict[str, str], *args: str, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


@pytest.fixture
def env(data_dir: Path, tmp_path: Path) -> Any:
    environment = base_env(data_dir, free_port(), CLAUDE_CONFIG_DIR=str(tmp_path / "claude"))
    yield environment
    cli(environment, "stop")


def seed(url: str) -> None:
    http_json(
        "POST",
        f"{url}/api/sessions/init",
        {"contentSessionId": "cli-1", "project": "shop", "prompt": "fix the cart total"},
    )
    for i in range(3):
        http_json(
            "POST",
            f"{url}/api/sessions/observations",
            {
                "contentSessionId": "cli-1",
                "tool_name": "Edit",
                "cwd": "/src/shop",
                "tool_input": {
                    "file_path": f"/src/shop/cart{i}.py",
                    "old_string": "a",
                    "new_string": "b",
                },
                "tool_response": {"filePath": f"/src/shop/cart{i}.py"},
                "tool_use_id": f"t{i}",
            },
        )


def wait_idle(url: str) -> None:
    import time

    for _ in range(200):
        _, health = http_json("GET", f"{url}/api/health")
        if health["queueDepth"] == 0:
            return
        time.sleep(0.05)
    raise AssertionError(health)


def test_serve_status_stop_lifecycle(env: dict[str, str], data_dir: Path) -> None:
    stopped = cli(env, "status", "--json")
    assert stopped.returncode == 0, stopped.stderr
    assert json.loads(stopped.stdout)["service"] == "stopped"

    started = cli(env, "serve", "--detach")
    assert started.returncode == 0, started.stderr
    assert "started" in started.stdout
    url = f"http://127.0.0.1:{env['WORKBENCH_PORT']}"
    again = cli(env, "serve", "--detach")
    assert "already running" in again.stdout

    seed(url)
    wait_idle(url)
    running = json.loads(cli(env, "status", "--json").stdout)
    assert running["service"] == "running"
    assert running["totals"]["observations"] == 3
    assert running["queue"]["pending"] == 0

    table = cli(env, "status")
    assert "service running" in table.stdout
    assert "observations" in table.stdout

    stop = cli(env, "stop")
    assert stop.returncode == 0
    assert "stopped workbench" in stop.stdout
    assert not (data_dir / "service.pid").exists()
    offline = json.loads(cli(env, "status", "--json").stdout)
    assert offline["service"] == "stopped"
    assert offline["totals"]["observations"] == 3  # read-only view of the database
    assert cli(env, "stop").stdout.strip() == "workbench is not running"


def test_doctor_reports_each_check(env: dict[str, str]) -> None:
    proc = cli(env, "doctor", "--json")
    checks = {c["check"]: c for c in json.loads(proc.stdout)}
    assert proc.returncode == 1  # service down and hooks not installed are problems
    assert checks["service"]["status"] == "PROBLEM"
    assert "workbench serve --detach" in checks["service"]["detail"]
    assert checks["agents"]["status"] == "PROBLEM"  # no agent has workbench: nothing captured
    assert checks["python"]["status"] == "ok"
    assert cli(env, "install").returncode == 0
    assert cli(env, "serve", "--detach").returncode == 0
    healthy = cli(env, "doctor", "--json")
    assert healthy.returncode == 0, healthy.stdout
    statuses = {c["check"]: c["status"] for c in json.loads(healthy.stdout)}
    # agents not on this machine are notes, never problems; everything else is fine
    for agent in NAMES:
        if agent != "claude":
            assert statuses.pop(f"agent {agent}") == "info"
    assert statuses.pop("team") == "info"  # no team lake configured: optional
    assert set(statuses.values()) == {"ok"}


def test_export_import_recompress_through_the_cli(env: dict[str, str], tmp_path: Path) -> None:
    assert cli(env, "serve", "--detach").returncode == 0
    url = f"http://127.0.0.1:{env['WORKBENCH_PORT']}"
    seed(url)
    wait_idle(url)
    out = tmp_path / "export.json"
    exported = cli(env, "export", str(out))
    assert exported.returncode == 0, exported.stderr
    document = json.loads(out.read_text())
    assert len(document["observations"]) == 3

    other_dir = tmp_path / "other"
    other = base_env(other_dir, free_port())
    try:
        imported = cli(other, "import", str(out), "--json")  # starts the service itself
        assert imported.returncode == 0, imported.stderr
        assert "started a temporary one" in imported.stderr
        assert json.loads(imported.stdout)["observations"] == {"imported": 3, "skipped": 0}
        again = json.loads(cli(other, "import", str(out), "--json").stdout)
        assert again["observations"] == {"imported": 0, "skipped": 3}
    finally:
        cli(other, "stop")

    report = json.loads(cli(env, "recompress", "--compressor", "offline", "--json").stdout)
    assert report["events"] == 3
    assert report["observationsBefore"] == report["observationsAfter"] == 3
    assert report["unchanged"] == 3
    assert report["added"] == report["removed"] == 0


def test_import_of_a_bad_file_is_a_clear_error(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something-else"}')
    proc = cli(env, "import", str(bad))
    assert proc.returncode == 1
    assert "unknown import format" in proc.stderr


def test_replay_delivers_the_spool(env: dict[str, str], data_dir: Path) -> None:
    from workbench import spool

    spool.write(
        data_dir / "spool",
        spool.Envelope(
            event_key=spool.new_event_key(),
            path="/api/sessions/init",
            body={"contentSessionId": "sp-1", "project": "shop", "prompt": "spooled prompt"},
        ),
    )
    proc = cli(env, "replay", "--json")  # the service's own start replays it first
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["pending"] == 0
    assert "stopped the temporary workbench service" in proc.stderr  # none left behind
    import sqlite3

    conn = sqlite3.connect(data_dir / "workbench.db")
    try:
        assert [r[0] for r in conn.execute("SELECT prompt_text FROM user_prompts")] == [
            "spooled prompt"
        ]
    finally:
        conn.close()
