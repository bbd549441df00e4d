"""Embedding in a child process of the service: fed from the store, supervised, never leaked.

Real service (``make_service``), real ONNX int8 model (built once per session by the CLI),
real signals: the worker is paused with SIGSTOP to make a backlog, killed with SIGKILL to
see it restarted, and the service is killed with SIGKILL to see the child go with it.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service, run_workbench
from workbench.recall.tier_note import vectors_note

pytestmark = pytest.mark.slow

NOTES = [
    ("Stripe webhook retries caused duplicate refunds", "Added idempotency keys per event."),
    ("Pillow images not closed in thumbnail worker", "RSS grew to 3 GB over a day."),
    ("Multi-stage Docker build", "A slim runtime stage cut the image to 180 MB."),
    ("Websocket dropped behind load balancer", "Heartbeat ping every 25s fixed it."),
    ("AWS key committed in .env.example", "Rotated the key and added gitleaks."),
]


# A memory saved only to give the embedding worker work (see ``running_worker``).
WARM = ("Embedding worker warm-up note", "Saved so the worker has a text to embed.")


def start(make_service: Any, onnx_model: Path) -> Service:
    """A MiniLM service past its indexer's first pass (the worker, if any, decided)."""
    svc: Service = make_service(
        WORKBENCH_EMBEDDER="minilm", WORKBENCH_ONNX_MODEL_DIR=str(onnx_model)
    )
    wait_vectors(svc, first_pass_done)
    return svc


def first_pass_done(vectors: dict[str, Any]) -> bool:
    """The index is loaded and the first pass has started the worker or let it sleep (its
    state is ``stopped`` only before that pass)."""
    worker = vectors["worker"] or {}
    return bool(vectors["state"] == "ready" and worker.get("state", "stopped") != "stopped")


def running_worker(svc: Service) -> int:
    """The pid of a live embedding worker, idle and caught up.

    Issue 21: a service with nothing behind starts no worker, so when none runs this saves
    ``WARM`` (one memory without a vector) and waits until the worker has embedded it; the
    worker then stays, idle, for ``embed_worker_linger_s`` (30 s by default).
    """
    vectors = wait_vectors(svc, first_pass_done)
    if not vectors["pid"]:
        save(svc, [WARM])
    vectors = wait_vectors(
        svc, lambda v: v["pid"] and v["behind"] == 0 and v["worker"]["embedded"] >= 1
    )
    return int(vectors["pid"])


def wait_vectors(
    svc: Service, predicate: Callable[[dict[str, Any]], Any], timeout: float = 60.0
) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    vectors: dict[str, Any] = {}
    while time.monotonic() < deadline:
        _, health = svc.get("/api/health")
        vectors = health["vectors"]
        if predicate(vectors):
            return vectors
        time.sleep(0.1)
    raise AssertionError(f"vectors never got there: {vectors}")


def save(svc: Service, notes: list[tuple[str, str]]) -> None:
    for title, text in notes:
        status, body = svc.post("/api/memory/save", {"title": title, "text": text, "project": "p"})
        assert status == 200, body


def found_by_meaning(svc: Service) -> dict[str, Any]:
    """The vector search for a paraphrase of NOTES[0] (no word in common) answers with it
    first; its reply, for more checks."""
    status, found = svc.get(
        "/api/search?query=customer+reimbursed+two+times&mode=vector&format=json"
    )
    assert status == 200, found
    assert found["observations"][0]["title"] == NOTES[0][0]
    return found


def embeds_queries(svc: Service) -> None:
    """A search by meaning answers as one, whether or not a worker is alive (the service
    embeds queries with its own copy of the model)."""
    status, found = svc.get("/api/search?query=anything&mode=vector&format=json")
    assert status == 200, found
    assert found["mode"] == "vector"


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie waiting for its reaper counts as gone)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text(encoding="ascii").rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_search_says_vectors_behind_until_the_worker_catches_up(
    make_service: Any, onnx_model: Path
) -> None:
    svc = start(make_service, onnx_model)
    pid = running_worker(svc)
    assert pid != svc.proc.pid  # type: ignore[union-attr]
    os.kill(pid, signal.SIGSTOP)  # the worker is busy elsewhere: a backlog builds
    try:
        save(svc, NOTES)
        _, index = svc.get("/api/index/status")
        held = len(NOTES) if index["static"]["state"] == "ready" else 0  # the static tier's
        wait_vectors(svc, lambda v: v["behind"] == len(NOTES) and v["staticIndexed"] == held)
        status, found = svc.get("/api/search?query=idempotency+refunds&format=json")
        assert status == 200, found
        assert found["vectorsBehind"] == len(NOTES)
        # Full text still answers for everything.
        assert found["observations"][0]["title"] == NOTES[0][0]
        # Which tier covers them depends on the static model (test_vectors_two_tier has both).
        note = vectors_note(found["vectorsBehind"], found["vectorsStatic"])
        assert note is not None
        assert f" {len(NOTES)} " in note
        status, text = svc.get("/api/search?query=idempotency+refunds")
        assert note in text
        cli = run_workbench(svc.env, "search", "idempotency refunds")
        assert cli.returncode == 0, cli.stderr
        assert note in " ".join(cli.stdout.split())
        _, fts_only = svc.get("/api/search?query=idempotency+refunds&mode=fts&format=json")
        assert fts_only["vectorsBehind"] is None  # no vector ranker took part
    finally:
        os.kill(pid, signal.SIGCONT)
    wait_vectors(svc, lambda v: v["behind"] == 0)
    assert found_by_meaning(svc)["vectorsBehind"] == 0
    _, index = svc.get("/api/index/status")
    assert index["worker"]["embedded"] >= len(NOTES)
    assert index["torchImported"] is False  # queries ran on ONNX in the service: no torch


def test_a_killed_worker_is_restarted_and_finishes_the_backlog(
    make_service: Any, onnx_model: Path
) -> None:
    svc = start(make_service, onnx_model)
    first = running_worker(svc)
    os.kill(first, signal.SIGSTOP)
    save(svc, NOTES)
    wait_vectors(svc, lambda v: v["behind"] == len(NOTES))
    os.kill(first, signal.SIGKILL)
    after = wait_vectors(svc, lambda v: v["pid"] and v["pid"] != first and v["behind"] == 0)
    assert after["worker"]["restarts"] == 1
    assert not alive(first)


def test_a_killed_service_leaves_no_worker_behind(make_service: Any, onnx_model: Path) -> None:
    svc = start(make_service, onnx_model)
    child = running_worker(svc)
    assert alive(child)
    svc.kill9()
    deadline = time.monotonic() + 10
    while alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(child), f"embedding worker {child} outlived its service"


def test_a_stopped_service_stops_its_worker(make_service: Any, onnx_model: Path) -> None:
    svc = start(make_service, onnx_model)
    child = running_worker(svc)
    svc.stop()  # SIGTERM: the lifespan stops the indexer, which closes the child's stdin
    assert not alive(child)


def test_the_worker_knows_its_parent_by_pid_not_by_pid_1(tmp_path: Path) -> None:
    """A worker whose named parent is not its parent exits at once (it was re-parented); one
    whose parent is the named pid stays — even when that parent would be PID 1 in a container,
    which the old ``getppid() == 1`` check took for a dead parent."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "workbench.recall.embed_worker"]
    command += ["--data-dir", str(tmp_path), "--model", "none"]
    orphan = subprocess.run(
        [*command, "--parent-pid", str(os.getpid() + 10_000_000)],
        stdin=subprocess.PIPE,
        capture_output=True,
        timeout=60,
    )
    assert orphan.returncode == 0
    assert orphan.stdout == b""  # gone before saying anything
    with subprocess.Popen(
        [*command, "--parent-pid", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    ) as child:
        assert child.stdout is not None
        first = child.stdout.readline()  # it ran on: its first word (here, that model is wrong)
        assert first, "the worker exited although its parent is alive"
        child.kill()


def children_of(pid: int) -> list[int]:
    """The live children of ``pid`` (listed per thread: the indexer thread starts the worker)."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            kids += [int(k) for k in task.read_text(encoding="ascii").split()]
        except OSError:
            continue
    return [k for k in kids if alive(k)]


def test_a_caught_up_worker_exits_and_is_started_again_when_memories_fall_behind(
    make_service: Any, onnx_model: Path
) -> None:
    """Issue 21: service + worker RSS. A worker with nothing to embed holds a second copy of
    the model for nothing; once caught up it exits (after ``embed_worker_linger_s``), and the
    service starts it again when memories fall behind. Queries are embedded all along (the
    service's own copy), and no memory is left without its vector."""
    svc: Service = make_service(
        WORKBENCH_EMBEDDER="minilm",
        WORKBENCH_ONNX_MODEL_DIR=str(onnx_model),
        WORKBENCH_EMBED_WORKER_LINGER_S="0.5",
    )
    first = running_worker(svc)
    asleep = wait_vectors(svc, lambda v: v["worker"]["state"] == "asleep" and not v["pid"])
    assert asleep["behind"] == 0
    assert asleep["worker"]["restarts"] == 0
    assert not alive(first)
    assert svc.proc is not None
    assert children_of(svc.proc.pid) == []
    # Asleep, the service still embeds queries: search by meaning works.
    embeds_queries(svc)
    save(svc, NOTES)
    woken = wait_vectors(
        svc, lambda v: v["behind"] == 0 and v["worker"]["embedded"] >= 1 + len(NOTES)
    )
    assert woken["worker"]["restarts"] == 0  # a start on demand is no crash restart
    found_by_meaning(svc)
    wait_vectors(svc, lambda v: v["worker"]["state"] == "asleep" and not v["pid"])
    assert children_of(svc.proc.pid) == []
    _, index = svc.get("/api/index/status")
    assert index["indexed"] == 1 + len(NOTES)  # WARM and NOTES
    assert index["pending"] == 0


def test_a_service_with_nothing_behind_starts_no_worker(
    make_service: Any, onnx_model: Path
) -> None:
    """Issue 21: service + worker RSS. A worker started with nothing to embed held a second
    copy of the model (~150 MiB at 100k) for ``embed_worker_linger_s`` after every service
    start. Now the first pass starts none when every memory has its vector; queries are
    embedded by the service's own copy, and the first memory that falls behind starts one."""
    svc = start(make_service, onnx_model)
    first = wait_vectors(svc, first_pass_done)
    assert first["pid"] is None, first
    assert first["worker"]["state"] == "asleep", first
    assert "nothing behind" in first["worker"]["reason"]
    assert svc.proc is not None
    assert children_of(svc.proc.pid) == []
    embeds_queries(svc)
    save(svc, NOTES)
    woken = wait_vectors(svc, lambda v: v["behind"] == 0 and v["worker"]["embedded"] >= len(NOTES))
    assert woken["worker"]["restarts"] == 0  # a start on demand, no crash restart
    found_by_meaning(svc)


def test_the_worker_does_not_load_the_settings_machinery(
    make_service: Any, onnx_model: Path
) -> None:
    """Issue 21: service + worker RSS. The worker read its two choices (embedder, runtime)
    through ``load_settings``, which imports pydantic: ~20 MiB of the worker's ~130 for two
    words the service already knows. The service now passes them, and the worker (a real
    child, its memory map read from /proc) never maps pydantic's core, yet embeds with the
    service's model."""
    svc = start(make_service, onnx_model)
    pid = running_worker(svc)
    maps = Path(f"/proc/{pid}/maps").read_text(encoding="utf-8")
    assert "pydantic_core" not in maps
    assert "onnxruntime" in maps  # the map is the worker's own: it embeds with ONNX
    status, found = svc.get("/api/search?query=warm-up+note&mode=vector&format=json")
    assert status == 200, found
    assert found["observations"][0]["title"] == WARM[0]
