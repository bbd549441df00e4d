"""The CLI, the hooks and the MCP server act on their own memory only (issue 19, item 2).

Two real services' worth of data dirs: A's service runs on the port B is configured to use
(two data dirs given one ``port``, as in the report). Every client of B must notice that the
service answering there serves A (the ``X-Workbench-Instance`` id, ``workbench/instance.py``)
and refuse (CLI, MCP) or spool (hooks); A's memory is never touched. A data dir that does not
exist is an error, never created and never written elsewhere; and two data dirs no longer
share a default port.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from tests.conftest import ROOT, Service, base_env, free_port, http_json
from tests.hook_harness import load_payload, run_hook, spooled
from tests.test_hardening_cli_writes import export_file
from tests.test_mcp import params, run_session, text_of

MARKER = "zanzibar-flux-marker"
# Spelled out rather than imported from workbench.instance: the test ran, and failed, on the
# code before it existed.
HEADER = "X-Workbench-Instance"
ID_FILE = "instance_id"


def instance_id(data_dir: Path) -> str:
    return (data_dir / ID_FILE).read_text(encoding="ascii").strip()


def counts(data_dir: Path) -> dict[str, int]:
    """Rows of A's canonical tables, read straight from its file (read-only)."""
    conn = sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("events", "observations", "sessions", "user_prompts")
        }
    finally:
        conn.close()


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=env,
    )


@pytest.fixture
def a_running(tmp_path: Path) -> Any:
    """A's service on a port, holding one observation that carries ``MARKER``."""
    a_dir = tmp_path / "a"
    a_dir.mkdir()
    port = free_port()
    svc = Service(data_dir=a_dir, port=port, env=base_env(a_dir, port)).start()
    try:
        status, saved = svc.post("/api/memory/save", {"text": f"A's {MARKER}", "project": "pa"})
        assert status == 200, saved
        svc.wait_idle()
        yield svc, saved["id"]
    finally:
        svc.stop()


def b_env(svc: Service, b_dir: Path) -> dict[str, str]:
    """B's environment: its own data dir, but the port A's service listens on."""
    return base_env(b_dir, svc.port)


def test_two_data_dirs_get_two_default_ports_that_hooks_and_service_agree_on(
    tmp_path: Path,
) -> None:
    from workbench.locate import PORT_BASE, PORT_SPAN, default_port, service_port
    from workbench.settings import load_settings

    a, b = tmp_path / "a", tmp_path / "b"
    assert default_port(a) != default_port(b)
    for folder in (a, b):
        port = load_settings(folder).port
        assert port == service_port(folder) == default_port(folder)
        assert PORT_BASE <= port < PORT_BASE + PORT_SPAN
        assert default_port(folder) == default_port(folder)  # stable
    (tmp_path / "link").symlink_to(a)
    assert default_port(tmp_path / "link") == default_port(a)  # one folder, one port


def test_health_and_every_reply_name_the_data_dir(a_running: Any) -> None:
    svc, _ = a_running
    expected = instance_id(svc.data_dir)
    assert len(expected) == 32
    assert (svc.data_dir / ID_FILE).stat().st_mode & 0o777 == 0o600
    status, body = svc.get("/api/health")
    assert status == 200
    assert body["instanceId"] == expected
    import urllib.error
    import urllib.request

    for path in ("/api/health", "/api/observation/999999", "/no/such/route"):
        try:
            with urllib.request.urlopen(svc.url + path, timeout=5) as reply:
                header = reply.headers.get(HEADER)
        except urllib.error.HTTPError as exc:
            header = exc.headers.get(HEADER)
        assert header == expected, path


def test_the_service_refuses_a_write_meant_for_another_data_dir(a_running: Any) -> None:
    svc, _ = a_running
    before = counts(svc.data_dir)
    status, body = svc.post(
        "/api/memory/save",
        {"text": "for B", "project": "pb"},
        headers={HEADER: "0" * 32},
    )
    assert status == 421, body
    assert body["error"] == "WRONG_INSTANCE"
    assert str(svc.data_dir) in body["message"]
    assert counts(svc.data_dir) == before
    own = instance_id(svc.data_dir)
    status, _ = svc.post(
        "/api/memory/save", {"text": "mine", "project": "pa"}, headers={HEADER: own}
    )
    assert status == 200


def test_import_into_b_never_writes_into_a(a_running: Any, tmp_path: Path) -> None:
    svc, _ = a_running
    before = counts(svc.data_dir)
    b_dir = tmp_path / "b"
    proc = cli(b_env(svc, b_dir), "import", str(export_file(tmp_path)), "-d", str(b_dir))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert str(svc.data_dir) in proc.stderr
    assert str(b_dir) in proc.stderr
    assert str(svc.port) in proc.stderr
    assert "Traceback" not in proc.stderr
    assert counts(svc.data_dir) == before


def test_forget_in_b_never_deletes_from_a(a_running: Any, tmp_path: Path) -> None:
    svc, obs_id = a_running
    b_dir = tmp_path / "b"
    b_dir.mkdir()
    proc = cli(b_env(svc, b_dir), "forget", str(obs_id), "-d", str(b_dir))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "another data dir" in proc.stderr
    status, _ = svc.get(f"/api/observation/{obs_id}")
    assert status == 200


def test_forget_in_a_data_dir_that_does_not_exist_is_an_error(
    a_running: Any, tmp_path: Path
) -> None:
    svc, obs_id = a_running
    nowhere = tmp_path / "nonexistent"
    proc = cli(b_env(svc, nowhere), "forget", str(obs_id), "-d", str(nowhere))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"no workbench data dir at {nowhere}" in proc.stderr
    assert not nowhere.exists()
    status, _ = svc.get(f"/api/observation/{obs_id}")
    assert status == 200


def test_status_and_search_of_b_never_show_a(a_running: Any, tmp_path: Path) -> None:
    svc, _ = a_running
    b_dir = tmp_path / "b"
    b_dir.mkdir()
    env = b_env(svc, b_dir)
    status = cli(env, "status", "-d", str(b_dir), "--json")
    assert status.returncode == 0, status.stderr
    data = json.loads(status.stdout)
    assert data["service"] == "stopped"
    assert "health" not in data
    assert str(svc.data_dir) in data["wrongService"]
    text = cli({**env, "COLUMNS": "300"}, "status", "-d", str(b_dir))
    assert text.returncode == 0, text.stderr
    assert "not this data dir's service" in text.stdout
    assert "service running" not in text.stdout
    search = cli(env, "search", MARKER, "-d", str(b_dir), "--json")
    assert search.returncode == 1, search.stdout
    assert MARKER not in search.stdout
    assert "another data dir" in search.stderr


def test_a_hook_of_b_spools_instead_of_posting_into_a_and_b_gets_it_later(
    a_running: Any, tmp_path: Path
) -> None:
    svc, _ = a_running
    before = counts(svc.data_dir)
    b_dir = tmp_path / "b"
    b_dir.mkdir()
    payload = load_payload("post_tool_use_edit", tmp_path)
    run = run_hook("post_tool_use", payload, b_env(svc, b_dir))
    assert run.output() == {}
    assert len(spooled(b_dir)) == 1
    assert counts(svc.data_dir) == before
    # B's own service (on a port of its own) replays the spool into B when it starts.
    svc.stop()
    b_port = free_port()
    b_svc = Service(data_dir=b_dir, port=b_port, env=base_env(b_dir, b_port)).start()
    try:
        deadline = time.monotonic() + 30
        while spooled(b_dir) and time.monotonic() < deadline:
            time.sleep(0.1)
        b_svc.wait_idle()
        assert spooled(b_dir) == []
        assert counts(b_dir)["events"] == 1
    finally:
        b_svc.stop()


def test_the_mcp_server_of_b_refuses_a_service_of_a(a_running: Any, tmp_path: Path) -> None:
    svc, _ = a_running
    before = counts(svc.data_dir)
    b_dir = tmp_path / "b"
    b_dir.mkdir()

    async def script(session: ClientSession) -> Any:
        saved = await session.call_tool("save_memory", {"text": "for B only", "project": "pb"})
        found = await session.call_tool("search", {"query": MARKER})
        return saved, found

    saved, found = run_session(params(b_dir, svc.port), script, tmp_path / "mcp-stderr.log")
    assert saved.is_error
    assert found.is_error
    assert "another data dir" in text_of(saved)
    assert str(b_dir) in text_of(saved)
    assert MARKER not in text_of(found)
    assert counts(svc.data_dir) == before


def test_http_json_sends_no_identity_and_is_served(a_running: Any) -> None:
    """Clients that send no id (curl, a browser) are served; they check the reply header."""
    svc, obs_id = a_running
    status, body = http_json("GET", f"{svc.url}/api/observation/{obs_id}")
    assert status == 200, body


@pytest.mark.parametrize(
    "argv",
    [
        ["forget", "1"],
        ["replay"],
        ["retry"],
        ["recompress"],
        ["reindex"],
        ["corpus", "build", "all"],
        ["agent", "prime", "all"],
    ],
    ids=lambda a: "-".join(a[:2]),
)
def test_a_write_to_a_data_dir_that_does_not_exist_is_an_error_naming_it(
    tmp_path: Path, argv: list[str]
) -> None:
    nowhere = tmp_path / "nonexistent"
    proc = cli(base_env(nowhere, free_port()), *argv, "-d", str(nowhere))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"no workbench data dir at {nowhere}" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not nowhere.exists()
