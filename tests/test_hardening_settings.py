"""An unreadable settings.json fails closed (issue 9, item 10).

While ``excluded_projects`` cannot be known, nothing is captured for any project (hooks,
direct posts and spool replay alike), with the reason in ``/api/health`` and ``workbench
status``; ``PUT /api/settings`` refuses with a 409 naming the file instead of overwriting
it; every write keeps a timestamped backup beside the file; a directory at the path is a
clear message, never a 500.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import base_env, free_port, http_json, run_workbench
from tests.hook_harness import load_payload, run_hook
from workbench.settings import load_settings

EXCLUDING = '{"excluded_projects": ["acme-*"], "context_observations": 9'  # cut mid-write
OTHER_CWD = "/home/dev/code/open-notes"


def write(data_dir: Path, content: Any) -> Path:
    path = data_dir / "settings.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        text = content if isinstance(content, str) else json.dumps(content)
        path.write_text(text, encoding="utf-8")
    return path


def stored(data_dir: Path) -> dict[str, int]:
    conn = sqlite3.connect(data_dir / "workbench.db")
    try:
        return {
            table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            for table in ("events", "sessions", "user_prompts", "observations")
        }
    finally:
        conn.close()


def hook_events(cwd: str) -> list[tuple[str, dict[str, Any]]]:
    """A prompt and a tool call from ``cwd``, as Claude Code sends them."""
    prompt = load_payload("user_prompt_submit")
    edit = load_payload("post_tool_use_edit")
    for payload in (prompt, edit):
        payload["cwd"] = cwd
        payload["session_id"] = f"s-{Path(cwd).name}"
    return [("user_prompt_submit", prompt), ("post_tool_use", edit)]


def put(svc: Any, body: Any) -> tuple[int, Any]:
    return http_json("PUT", f"{svc.url}/api/settings", body)


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_workbench(env, *args, timeout=60)


# ----- capture fails closed ----------------------------------------------------------------------
@pytest.mark.parametrize(
    "content",
    [
        EXCLUDING,
        '["acme-*"]',
        json.dumps({"excluded_projects": 5}),
        json.dumps({"excluded_projects": ["acme-*"]}).encode("utf-16"),
    ],
    ids=["truncated", "not-an-object", "bad-exclusions", "not-utf8"],
)
def test_real_hooks_store_nothing_while_the_file_is_unreadable(
    data_dir: Path, make_service: Any, content: str
) -> None:
    path = write(data_dir, content)
    svc = make_service()
    for cwd in ("/home/dev/code/acme-api", OTHER_CWD):  # excluded, and not excluded
        for script, payload in hook_events(cwd):
            run_hook(script, payload, svc.env).output()  # exit 0, one JSON object
    svc.wait_idle()
    assert stored(data_dir) == {"events": 0, "sessions": 0, "user_prompts": 0, "observations": 0}
    assert not list((data_dir / "spool").glob("*.json"))  # answered, not spooled for later
    _, health = svc.get("/api/health")
    assert health["capture"]["state"] == "paused"
    assert str(path) in health["capture"]["reason"]
    status, answer = svc.post(
        "/api/sessions/observations",
        {"contentSessionId": "x", "tool_name": "Bash", "cwd": OTHER_CWD, "tool_input": {}},
    )
    assert status == 200
    assert answer["status"] == "skipped"
    assert str(path) in answer["reason"]


@pytest.mark.slow
def test_status_and_doctor_say_capture_is_paused(data_dir: Path, make_service: Any) -> None:
    path = write(data_dir, EXCLUDING)
    port = free_port()
    env = base_env(data_dir, port)
    offline = cli(env, "status", "--json")
    assert offline.returncode == 0, offline.stderr
    assert json.loads(offline.stdout)["capture"]["state"] == "paused"
    text = cli(env, "status")
    assert "capture paused" in text.stdout
    assert str(path) in text.stdout.replace("\n", "")
    make_service(port)
    running = json.loads(cli(env, "status", "--json").stdout)
    assert running["service"] == "running"
    assert running["capture"]["state"] == "paused"
    doctor = json.loads(cli(env, "doctor", "--json").stdout)
    assert {c["check"]: c["status"] for c in doctor}["capture"] == "PROBLEM"


def spool_files(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "spool").glob("*.json"))


def test_hooks_spool_nothing_while_the_file_is_unreadable(data_dir: Path) -> None:
    """Service down: the hook applies the exclusion rule before writing to disk, fail closed."""
    write(data_dir, EXCLUDING)
    down = base_env(data_dir, free_port())
    for cwd in ("/home/dev/code/acme-api", OTHER_CWD):
        for script, payload in hook_events(cwd):
            assert run_hook(script, payload, down).output() == {}
    assert spool_files(data_dir) == []


def test_hooks_never_spool_an_excluded_project(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(data_dir, {"excluded_projects": ["acme-*"]})
    down = base_env(data_dir, free_port())
    for cwd in ("/home/dev/code/acme-api", OTHER_CWD):
        for script, payload in hook_events(cwd):
            run_hook(script, payload, down).output()
    bodies = [json.loads(p.read_text())["body"] for p in spool_files(data_dir)]
    assert len(bodies) == 2  # the prompt and the edit of open-notes, nothing of acme-api
    assert [b.get("project") or b.get("cwd") for b in bodies] == ["open-notes", OTHER_CWD]
    # The environment decides when it is set, as in the service (and so does a broken file not).
    write(data_dir, EXCLUDING)
    env = dict(down, WORKBENCH_EXCLUDED_PROJECTS="open-*")
    for script, payload in hook_events("/home/dev/code/acme-api"):
        run_hook(script, payload, env).output()
    assert len(spool_files(data_dir)) == 4


def test_stop_and_session_end_never_spool_an_excluded_project(data_dir: Path) -> None:
    """Their bodies carry only the session id (no cwd, no project): the hook must judge the
    exclusion by the payload's cwd, or an excluded project's last answer reaches the disk."""
    write(data_dir, {"excluded_projects": ["acme-*"]})
    down = base_env(data_dir, free_port())
    for name in ("stop", "session_end"):
        payload = load_payload(name)
        payload["cwd"] = "/home/dev/code/acme-api"
        run_hook(name, payload, down).output()
    assert spool_files(data_dir) == []
    for name in ("stop", "session_end"):  # the same events of another project are kept
        payload = load_payload(name)
        payload["cwd"] = OTHER_CWD
        run_hook(name, payload, down).output()
    assert len(spool_files(data_dir)) == 2


def test_spooled_events_are_not_stored_by_a_service_with_an_unreadable_file(
    data_dir: Path, make_service: Any
) -> None:
    """Spooled before the file broke, replayed by a service that cannot read it: not stored."""
    from workbench import spool

    for path, body in (
        ("/api/sessions/init", {"contentSessionId": "sp", "project": "notes", "prompt": "hi"}),
        (
            "/api/sessions/observations",
            {"contentSessionId": "sp", "tool_name": "Bash", "cwd": OTHER_CWD, "tool_input": {}},
        ),
    ):
        spool.write(data_dir / "spool", spool.Envelope(spool.new_event_key(), path, body))
    write(data_dir, EXCLUDING)
    svc = make_service()
    svc.wait_idle()
    _, health = svc.get("/api/health")
    assert health["spool"]["pending"] == 0
    assert stored(data_dir)["events"] == 0
    assert stored(data_dir)["user_prompts"] == 0


def test_a_readable_file_still_captures_and_excludes(data_dir: Path, make_service: Any) -> None:
    write(data_dir, {"excluded_projects": ["acme-*"], "context_observations": "lots"})
    svc = make_service()
    for cwd in ("/home/dev/code/acme-api", OTHER_CWD):
        for script, payload in hook_events(cwd):
            run_hook(script, payload, svc.env).output()
    svc.wait_idle()
    _, health = svc.get("/api/health")
    assert health["capture"] == {"state": "on"}
    conn = sqlite3.connect(data_dir / "workbench.db")
    try:
        projects = {r[0] for r in conn.execute("SELECT project FROM sessions")}
    finally:
        conn.close()
    assert projects == {"open-notes"}


def test_exclusions_from_the_environment_keep_capture_on(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(data_dir, EXCLUDING)
    assert load_settings(data_dir).capture_paused is not None
    monkeypatch.setenv("WORKBENCH_EXCLUDED_PROJECTS", "acme-*")
    settings = load_settings(data_dir)
    assert settings.capture_paused is None  # env beats the file: the rule is known
    assert settings.excluded_projects == ["acme-*"]
    assert settings.load_warnings  # the broken file is still reported


# ----- PUT /api/settings never overwrites what it cannot read -------------------------------------
def test_put_refuses_409_and_leaves_an_unreadable_file_untouched(
    data_dir: Path, make_service: Any
) -> None:
    path = write(data_dir, EXCLUDING)
    svc = make_service()
    status, body = put(svc, {"context_observations": 30})
    assert status == 409, body
    assert body["error"] == "SETTINGS_FILE_UNREADABLE"
    assert str(path) in body["message"]
    assert "fix or delete" in body["message"]
    assert path.read_text(encoding="utf-8") == EXCLUDING
    assert not list(data_dir.glob("settings.json.*"))


def test_a_directory_at_the_settings_path_is_a_clear_error(
    data_dir: Path, make_service: Any
) -> None:
    path = data_dir / "settings.json"
    path.mkdir()
    svc = make_service()
    status, health = svc.get("/api/health")
    assert status == 200
    assert "is a directory" in health["capture"]["reason"]
    assert "is a directory" in health["warnings"][0]
    status, body = svc.get("/api/settings")
    assert status == 200, body
    status, body = put(svc, {"context_observations": 30})
    assert status == 409, body
    assert "is a directory" in body["message"]
    assert path.is_dir()


def test_every_write_keeps_a_timestamped_backup_beside_the_file(
    data_dir: Path, make_service: Any
) -> None:
    path = write(data_dir, {"context_observations": 7, "note": "mine"})
    svc = make_service()
    assert put(svc, {"context_observations": 30})[0] == 200
    assert put(svc, {"context_full": 2})[0] == 200
    backups = sorted(data_dir.glob("settings.json.*.bak"))
    assert len(backups) == 2
    assert json.loads(backups[0].read_text()) == {"context_observations": 7, "note": "mine"}
    assert json.loads(backups[1].read_text())["context_observations"] == 30
    assert json.loads(path.read_text()) == {
        "context_observations": 30,
        "context_full": 2,
        "note": "mine",
    }
