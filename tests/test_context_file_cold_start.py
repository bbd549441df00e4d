"""Cursor's and Windsurf's rules file with the service cold (issue 20 item 1): it still gets
the memory.

Neither agent takes context from a hook, so ``hooks/context_file.py`` writes the block into
the rules file they read into the next chat. It used to wait up to 5 s for the service and
had no other source, so the first turns after a stop on a loaded machine left the file stale
or empty. Like SessionStart, it now reads the block straight from its own data dir's store
(read-only) whenever the service does not answer at once, and spawns the service without
waiting. A store it cannot read, or another data dir's service on the port, means nothing
written: the previous file stays, the hook exits 0.

One real service writes the store for the module (``reference``), its rows keyed by a real
workspace folder; each test copies the store into its own data dir and runs the real hook as
a subprocess, as the agent runs it.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from hooks.adapters import cursor as cursor_adapter
from hooks.adapters import windsurf as windsurf_adapter
from tests.agent_hooks import run_as_agent, script_argv
from tests.conftest import Service, base_env, free_port
from tests.hook_harness import Recorder, _stop_detached, _wait_for_health, needs_service
from tests.test_hooks_cold_start import locate_quote, silent_port, spawn_lock_held
from tests.test_hooks_cursor import load as cursor_payload
from tests.test_hooks_windsurf import load as windsurf_payload
from workbench import locate

pytestmark = needs_service

ADAPTERS: dict[str, Any] = {"cursor": cursor_adapter, "windsurf": windsurf_adapter}
OLDER = "<workbench-context>\n# acme-api\n- an older memory\n</workbench-context>"


@dataclass(frozen=True)
class Reference:
    """A store the real service wrote for ``workspace``, and the block it answered."""

    db: Path
    workspace: Path
    block: str  # GET /api/context/inject for the workspace, as context_file asks for it


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> Reference:
    base = tmp_path_factory.mktemp("rules-cold")
    workspace = base / "acme-api"
    workspace.mkdir()
    data = base / "data"
    data.mkdir()
    project, key = locate.project_identity(str(workspace))
    port = free_port()
    svc = Service(data_dir=data, port=port, env=base_env(data, port, WORKBENCH_EMBEDDER="none"))
    svc.start()
    try:
        for title in ("token expiry fixed", "rate limiter added"):
            body = {"text": f"{title}: details", "title": title, "project": project}
            status, answer = svc.post("/api/memory/save", {**body, "projectKey": key})
            assert status == 200, answer
        status, block = svc.get(
            f"/api/context/inject?projects={project}&project_key={locate_quote(key)}"
        )
    finally:
        svc.stop()
    assert status == 200, block
    assert "token expiry fixed" in block
    assert "rate limiter added" in block
    return Reference(db=data / "workbench.db", workspace=workspace, block=str(block))


@pytest.fixture
def workspace(reference: Reference) -> Path:
    """The reference's workspace (its rows are keyed by this folder), with no rules file."""
    for folder in (".cursor", ".windsurf"):
        shutil.rmtree(reference.workspace / folder, ignore_errors=True)
    return reference.workspace


def refresh(platform: str, workspace: Path, env: dict[str, str]) -> None:
    """Run ``context_file`` as the agent runs it at the end of a turn (exit 0, one answer)."""
    if platform == "cursor":
        answer = run_as_agent(
            script_argv("context_file", "cursor"), cursor_payload("stop", workspace), env
        )
    else:
        payload = windsurf_payload("post_cascade_response")
        answer = run_as_agent(script_argv("context_file", "windsurf"), payload, env, workspace)
    assert answer == {}


def rules(platform: str, workspace: Path) -> str | None:
    path = workspace / ADAPTERS[platform].CONTEXT_FILE
    return path.read_text("utf-8") if path.exists() else None


def written(platform: str, block: str) -> str:
    document: str = ADAPTERS[platform].context_document(block)
    return document


def older_file(platform: str, workspace: Path) -> None:
    """A rules file an earlier refresh wrote: it must outlive a refresh that read nothing."""
    path = workspace / ADAPTERS[platform].CONTEXT_FILE
    path.parent.mkdir(parents=True)
    path.write_text(written(platform, OLDER), "utf-8")


# ----- the service is not answering: the block comes from the store ---------------------------


@pytest.mark.parametrize("platform", ["cursor", "windsurf"])
def test_a_refresh_while_another_hook_spawns_the_service_writes_the_memory(
    platform: str, reference: Reference, workspace: Path, data_dir: Path
) -> None:
    shutil.copyfile(reference.db, data_dir / "workbench.db")
    with spawn_lock_held(data_dir):
        refresh(platform, workspace, base_env(data_dir, free_port()))
    assert rules(platform, workspace) == written(platform, reference.block)
    assert not (data_dir / "logs").exists()  # the lock holder spawns, not this hook


@pytest.mark.parametrize("platform", ["cursor", "windsurf"])
def test_a_port_that_accepts_and_never_answers_still_writes_the_memory(
    platform: str, reference: Reference, workspace: Path, data_dir: Path
) -> None:
    shutil.copyfile(reference.db, data_dir / "workbench.db")
    with silent_port() as port:
        refresh(platform, workspace, base_env(data_dir, port))
    assert rules(platform, workspace) == written(platform, reference.block)
    assert not (data_dir / "logs").exists()  # the port is held: a spawn could not bind


def test_the_first_refresh_after_a_stop_writes_the_memory_and_spawns_the_service(
    reference: Reference, workspace: Path, data_dir: Path
) -> None:
    shutil.copyfile(reference.db, data_dir / "workbench.db")
    port = free_port()
    env = base_env(data_dir, port)
    svc = Service(data_dir=data_dir, port=port, env=env)
    try:
        refresh("cursor", workspace, env)
        assert rules("cursor", workspace) == written("cursor", reference.block)
        assert _wait_for_health(svc, timeout=60)["service"] == "workbench"  # spawned, detached
    finally:
        _stop_detached(svc, data_dir)


def test_a_service_that_fails_the_context_request_is_replaced_by_the_store(
    reference: Reference, workspace: Path, data_dir: Path
) -> None:
    shutil.copyfile(reference.db, data_dir / "workbench.db")
    peer = Recorder()
    peer.replies["/api/context/inject"] = (500, b"Internal Server Error")
    try:
        refresh("windsurf", workspace, base_env(data_dir, peer.port))
        asked = [r.path.split("?")[0] for r in peer.requests]
    finally:
        peer.close()
    assert "/api/spool/replay" in asked  # the service answered health: its spool drains
    assert rules("windsurf", workspace) == written("windsurf", reference.block)


# ----- nothing could be read: the previous file stays -----------------------------------------


@pytest.mark.parametrize("platform", ["cursor", "windsurf"])
def test_no_store_yet_keeps_the_previous_rules_file(
    platform: str, workspace: Path, data_dir: Path
) -> None:
    older_file(platform, workspace)
    with spawn_lock_held(data_dir):
        refresh(platform, workspace, base_env(data_dir, free_port()))
    assert rules(platform, workspace) == written(platform, OLDER)
    assert not (data_dir / "workbench.db").exists()  # a hook never creates the store


@pytest.mark.parametrize(
    "content",
    [b"", b"SQLite format 3\x00" + b"\x00" * 80, b"not a database\n" * 300],
    ids=["empty", "header-only", "text"],
)
def test_a_store_that_is_not_a_database_keeps_the_previous_rules_file(
    content: bytes, workspace: Path, data_dir: Path
) -> None:
    db = data_dir / "workbench.db"
    db.write_bytes(content)
    older_file("cursor", workspace)
    with spawn_lock_held(data_dir):
        refresh("cursor", workspace, base_env(data_dir, free_port()))
    assert rules("cursor", workspace) == written("cursor", OLDER)
    assert db.read_bytes() == content


def test_another_data_dirs_memory_never_reaches_the_rules_file(
    reference: Reference, workspace: Path, data_dir: Path, tmp_path: Path
) -> None:
    """Not through its store, not through its service answering on this data dir's port."""
    other = tmp_path / "other"
    other.mkdir()
    shutil.copyfile(reference.db, other / "workbench.db")
    older_file("windsurf", workspace)
    with spawn_lock_held(data_dir):
        refresh("windsurf", workspace, base_env(data_dir, free_port()))
    port = free_port()
    svc = Service(data_dir=other, port=port, env=base_env(other, port)).start()
    try:
        refresh("windsurf", workspace, base_env(data_dir, port))
    finally:
        svc.stop()
    assert rules("windsurf", workspace) == written("windsurf", OLDER)
    assert not (data_dir / "logs").exists()  # its own service could not bind that port
