"""SessionStart with the service cold (issue 20 item 1): the memory still reaches the session.

On a loaded machine the service needs longer to answer health than the hook may wait, so the
hook reads the block straight from the store, read-only, whenever the service does not answer
at once: stopped (it also spawns it, detached), starting under another hook's spawn lock,
holding the port without answering, or failing the context request. The block is the one the
service would have given (same rows, same text, same ``source`` rule), and a store the hook
cannot read (none yet, older or newer schema, locked, not a database) means no context and
exit 0, never a crash, and never a byte written to it.

One real service builds the store for the module (``reference``); each test copies it into
its own data dir, then runs the real hook as a subprocess.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.agent_hooks import run_as_agent, script_argv
from tests.conftest import ROOT, Service, base_env, free_port, migrate_until
from tests.hook_harness import (
    Recorder,
    _stop_detached,
    _wait_for_health,
    load_payload,
    needs_service,
    run_hook,
)
from workbench import locate
from workbench.recall import cold_context, render
from workbench.settings import load_settings
from workbench.store.connection import connect

pytestmark = needs_service

START = load_payload("session_start_startup")
PROJECT, KEY = locate.project_identity(START["cwd"])
SESSION = "cold-session-1"
FIXTURES = ROOT / "tests" / "fixtures" / "hooks"


@dataclass(frozen=True)
class Reference:
    """A store the real service wrote, and the blocks it answered for it."""

    db: Path
    startup_block: str  # GET /api/context/inject for a new session
    resumed_news: str  # the same route for SESSION resumed after "rate limiter added"


def _save(svc: Service, title: str) -> None:
    body = {"text": f"{title}: details", "title": title, "project": PROJECT, "projectKey": KEY}
    status, answer = svc.post("/api/memory/save", body)
    assert status == 200, answer


def _inject(svc: Service, session: str, source: str) -> str:
    query = (
        f"projects={PROJECT}&project_key={locate_quote(KEY)}&contentSessionId={session}"
        f"&source={source}"
    )
    status, text = svc.get(f"/api/context/inject?{query}")
    assert status == 200, text
    return str(text) if text else ""


def locate_quote(text: str) -> str:
    from urllib.parse import quote

    return quote(text, safe="")


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    data = tmp_path_factory.mktemp("reference") / "data"
    data.mkdir()
    port = free_port()
    svc = Service(data_dir=data, port=port, env=base_env(data, port, WORKBENCH_EMBEDDER="none"))
    svc.start()
    try:
        _save(svc, "token expiry fixed")
        assert "token expiry fixed" in _inject(svc, SESSION, "startup")  # SESSION's block
        _save(svc, "rate limiter added")  # another session's work, after SESSION's block
        news = _inject(svc, "reference-probe", "startup")  # a new session: the full block
        resumed = _inject(svc, SESSION, "resume")
    finally:
        svc.stop()
    assert "rate limiter added" in resumed
    assert "token expiry fixed" not in resumed
    return Reference(db=data / "workbench.db", startup_block=news, resumed_news=resumed)


def _copy_store(reference: Reference, data_dir: Path) -> Path:
    db = data_dir / "workbench.db"
    shutil.copyfile(reference.db, db)
    return db


@contextmanager
def spawn_lock_held(data_dir: Path) -> Iterator[None]:
    """Another session is spawning the service right now (it holds ``spawn.lock``)."""
    fd = os.open(data_dir / "spawn.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        os.close(fd)


@contextmanager
def silent_port() -> Iterator[int]:
    """A port whose listener accepts connections and never answers (a hung service)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield int(sock.getsockname()[1])


def _context(output: dict[str, Any] | None) -> str:
    assert output is not None
    if output == {}:
        return ""
    hook_output = output["hookSpecificOutput"]
    assert hook_output["hookEventName"] == "SessionStart"
    text: str = hook_output["additionalContext"]
    return text


def _start(env: dict[str, str], source: str = "startup", session: str = "cold-new-1") -> str:
    payload = {**START, "source": source, "session_id": session}
    return _context(run_hook("session_start", payload, env).output())


# ----- the service is not answering: the block comes from the store ---------------------------


def test_a_session_starting_while_another_spawns_the_service_gets_the_memory(
    reference: Reference, data_dir: Path
) -> None:
    """Two sessions after a stop: the second finds the spawn lock taken and must not wait
    for a service that needs longer than its budget to answer."""
    _copy_store(reference, data_dir)
    with spawn_lock_held(data_dir):
        context = _start(base_env(data_dir, free_port()))
    assert context == reference.startup_block  # the very block the service gives
    assert not (data_dir / "logs").exists()  # the lock holder spawns, not this hook


def test_a_port_that_accepts_and_never_answers_still_gets_the_memory(
    reference: Reference, data_dir: Path
) -> None:
    _copy_store(reference, data_dir)
    with silent_port() as port:
        context = _start(base_env(data_dir, port))
    assert context == reference.startup_block
    assert not (data_dir / "logs").exists()  # the port is held: a spawn could not bind


def test_a_session_id_past_the_routes_limit_gets_no_block_warm_or_cold(
    reference: Reference, data_dir: Path
) -> None:
    """The context route refuses a contentSessionId over 200 characters (422: the hook gets
    no block from the service), and the store answers the same: one rule at both ends, so a
    start's memory never depends on whether the service happened to be up (make fuzz drew a
    3,013-character id and asked the cold path for the block)."""
    from service.routes.context import SessionParam

    (query,) = SessionParam.__metadata__
    route_limit = next(m.max_length for m in query.metadata if hasattr(m, "max_length"))
    assert route_limit == cold_context.MAX_SESSION_CHARS
    _copy_store(reference, data_dir)
    cwd = START["cwd"]
    at_limit = cold_context.session_context(data_dir, cwd, "x" * route_limit, "startup")
    assert at_limit == reference.startup_block
    assert cold_context.session_context(data_dir, cwd, "x" * (route_limit + 1), "startup") == ""


def test_the_first_session_after_a_stop_gets_the_memory_and_the_service_is_spawned(
    reference: Reference, data_dir: Path
) -> None:
    _copy_store(reference, data_dir)
    port = free_port()
    env = base_env(data_dir, port)
    svc = Service(data_dir=data_dir, port=port, env=env)
    try:
        context = _start(env)
        assert context == reference.startup_block
        health = _wait_for_health(svc, timeout=60)  # it was spawned, detached, as before
        assert health["service"] == "workbench"
    finally:
        _stop_detached(svc, data_dir)


def test_a_service_another_hook_just_spawned_is_not_spawned_twice(
    reference: Reference, data_dir: Path
) -> None:
    """The first hook released the lock and left its child's pid in it: while that child
    lives (and for ``SPAWN_GRACE_S`` at most), a second service would only compete for the
    CPU with the one starting."""
    _copy_store(reference, data_dir)
    starting = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:
        (data_dir / "spawn.lock").write_text(f"{starting.pid} {int(time.time())}", "ascii")
        env = base_env(data_dir, free_port())
        try:
            context = _start(env)
            assert not (data_dir / "logs").exists()
        finally:  # had it spawned one after all, stop it
            if (data_dir / "logs").exists():
                _wait_for_health(Service(data_dir, int(env["WORKBENCH_PORT"]), env), 60)
                _stop_detached(Service(data_dir, int(env["WORKBENCH_PORT"]), env), data_dir)
    finally:
        starting.kill()
        starting.wait()
    assert context == reference.startup_block


def test_a_service_that_fails_the_context_request_is_replaced_by_the_store(
    reference: Reference, data_dir: Path, recorder: Recorder
) -> None:
    _copy_store(reference, data_dir)
    recorder.replies["/api/context/inject"] = (500, b"Internal Server Error")
    context = _start(base_env(data_dir, recorder.port))
    assert context == reference.startup_block


@pytest.mark.parametrize("platform", ["gemini", "codex"])
def test_other_agents_get_the_cold_block_in_their_own_shape(
    platform: str, reference: Reference, data_dir: Path
) -> None:
    _copy_store(reference, data_dir)
    payload = {**json.loads((FIXTURES / platform / "session_start.json").read_text("utf-8"))}
    payload["cwd"] = START["cwd"]
    with spawn_lock_held(data_dir):
        output = run_as_agent(
            script_argv("session_start", platform), payload, base_env(data_dir, free_port())
        )
    assert output["hookSpecificOutput"]["additionalContext"] == reference.startup_block


# ----- SessionStart's source, honoured the same way -------------------------------------------


def test_a_resumed_session_gets_only_what_is_new_from_the_store(
    reference: Reference, data_dir: Path
) -> None:
    db = _copy_store(reference, data_dir)
    with sqlite3.connect(db) as conn:  # back to before the service answered that resume
        newest = "SELECT max(id) FROM injections WHERE content_session_id = ?"
        conn.execute(f"DELETE FROM injection_items WHERE injection_id = ({newest})", (SESSION,))
        conn.execute(f"DELETE FROM injections WHERE id = ({newest})", (SESSION,))
    conn.close()
    with spawn_lock_held(data_dir):
        resumed = _start(base_env(data_dir, free_port()), "resume", SESSION)
    assert resumed == reference.resumed_news


@pytest.mark.parametrize("source", ["compact", "clear", "startup", "", "RESUME?"])
def test_compact_clear_and_other_sources_get_the_full_block_from_the_store(
    source: str, reference: Reference, data_dir: Path
) -> None:
    _copy_store(reference, data_dir)
    with spawn_lock_held(data_dir):
        context = _start(base_env(data_dir, free_port()), source, SESSION)
    assert "token expiry fixed" in context
    assert "rate limiter added" in context


def test_a_resume_with_nothing_new_gets_nothing_from_the_store(
    reference: Reference, data_dir: Path
) -> None:
    """SESSION resumed once more after the service gave it its news: nothing is new."""
    _copy_store(reference, data_dir)
    with spawn_lock_held(data_dir):
        assert _start(base_env(data_dir, free_port()), "resume", SESSION) == ""


# ----- a store the hook cannot read: no context, exit 0, nothing written ----------------------


def _cold_output(data_dir: Path) -> dict[str, Any] | None:
    with spawn_lock_held(data_dir):
        return run_hook("session_start", START, base_env(data_dir, free_port())).output()


def test_no_store_yet_means_no_context(data_dir: Path) -> None:
    assert _cold_output(data_dir) == {}
    assert not (data_dir / "workbench.db").exists()  # a hook never creates the store


@pytest.mark.parametrize(
    "content",
    [b"", b"SQLite format 3\x00" + b"\x00" * 80, os.urandom(4096), b"not a database\n" * 300],
    ids=["empty", "header-only", "random", "text"],
)
def test_a_store_that_is_not_a_database_means_no_context(content: bytes, data_dir: Path) -> None:
    db = data_dir / "workbench.db"
    db.write_bytes(content)
    assert _cold_output(data_dir) == {}
    assert db.read_bytes() == content


def test_a_truncated_store_means_no_context_or_the_rows_it_still_holds(
    reference: Reference, data_dir: Path
) -> None:
    db = _copy_store(reference, data_dir)
    whole = db.read_bytes()
    for size in (100, 4096, len(whole) // 2, len(whole) - 1):
        db.write_bytes(whole[:size])
        output = _cold_output(data_dir)
        assert output is not None  # exit 0 and one JSON line, checked by output()
        assert db.read_bytes() == whole[:size]


def test_a_store_mid_migration_means_no_context(data_dir: Path) -> None:
    """An older schema (the service migrates it when it starts): columns the block reads may
    not exist yet, so the hook does not guess."""
    db = data_dir / "workbench.db"
    conn = connect(db)  # the service's connection policy, as an older version ran it
    migrate_until(conn, "m011_summary_updated_at")
    conn.close()
    before = db.read_bytes()
    assert _cold_output(data_dir) == {}
    assert db.read_bytes() == before


def test_a_store_written_by_a_newer_version_means_no_context(
    reference: Reference, data_dir: Path
) -> None:
    db = _copy_store(reference, data_dir)
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT INTO _migrations (name, applied_at) VALUES ('m999_future', 'then')")
    conn.close()
    assert _cold_output(data_dir) == {}  # the service refuses it too (SchemaTooNew)


def test_a_locked_store_means_no_context_and_the_hook_does_not_hang(
    reference: Reference, data_dir: Path
) -> None:
    db = _copy_store(reference, data_dir)
    holder = sqlite3.connect(db)
    try:
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("INSERT INTO _migrations (name, applied_at) VALUES ('x', 'y')")
        holder.commit()  # keeps the exclusive lock: no reader gets in
        assert _cold_output(data_dir) == {}
    finally:
        holder.close()


def test_the_hook_reads_only_its_own_data_dirs_store(
    reference: Reference, data_dir: Path, tmp_path: Path
) -> None:
    """Another data dir's memory never shows: not through its store, not through its
    service answering on this data dir's port."""
    other = tmp_path / "other"
    other.mkdir()
    _copy_store(reference, other)
    with spawn_lock_held(data_dir):
        assert run_hook("session_start", START, base_env(data_dir, free_port())).output() == {}
    port = free_port()
    svc = Service(data_dir=other, port=port, env=base_env(other, port)).start()
    try:
        assert run_hook("session_start", START, base_env(data_dir, port)).output() == {}
    finally:
        svc.stop()


# ----- the shared implementation --------------------------------------------------------------


def test_the_store_the_hook_opens_is_the_one_the_service_writes(data_dir: Path) -> None:
    assert data_dir / cold_context.DB_NAME == load_settings(data_dir).db_path


def test_every_observation_type_has_a_marker() -> None:
    from workbench.models import OBSERVATION_TYPES

    assert set(render.TYPE_MARKERS) == set(OBSERVATION_TYPES)


def test_the_hook_reads_the_context_limits_the_service_uses(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (data_dir / "settings.json").write_text(
        json.dumps({"context_observations": 7, "context_full": 2, "context_summaries": 900}),
        encoding="utf-8",
    )
    monkeypatch.setenv("WORKBENCH_CONTEXT_FULL_FIELD", "facts")
    limits = cold_context.limits(data_dir)
    served = load_settings(data_dir)
    assert (limits.observations, limits.full, limits.summaries, limits.full_field) == (
        served.context_observations,
        served.context_full,
        served.context_summaries,  # 900 is out of range: the default, in both
        served.context_full_field,
    )
    assert (limits.observations, limits.full, limits.summaries) == (7, 2, 10)


def test_workbench_stop_right_after_a_cold_start_stops_the_service_the_hook_spawned(
    reference: Reference, data_dir: Path
) -> None:
    """SessionStart spawns and returns at once, before the service holds its PID file: a
    ``workbench stop`` then said "not running" and the service came up and stayed (the real
    Codex suite left such services behind). Stop now waits for the one the hook is starting."""
    _copy_store(reference, data_dir)
    port = free_port()
    env = base_env(data_dir, port)
    _start(env)
    pid = int((data_dir / "spawn.lock").read_text(encoding="ascii").split()[0])
    try:
        done = subprocess.run(
            [sys.executable, "-m", "workbench", "stop"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert f"stopped workbench (pid {pid})" in done.stdout
        deadline = time.monotonic() + 20  # it released its PID file: now it exits
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    finally:
        _stop_detached(Service(data_dir=data_dir, port=port, env=env), data_dir)
