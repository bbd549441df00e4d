"""``bench/harness.py``, the one copy of the bench scripts' service helpers, and the scripts on it.

The harness starts the real service (no fake), reports one that cannot start with its log, and
every bench script still parses its arguments; the scripts that start services are run once at
a tiny size. Figures are printed, never judged: no timing is asserted.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from bench import harness
from tests.conftest import ROOT, run_bench

pytestmark = pytest.mark.slow

SCRIPTS = sorted(  # the runnable ones; relevance_set*.py are data modules
    p.name
    for p in (ROOT / "bench").glob("*.py")
    if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8")
)


def test_start_service_runs_this_checkout_in_the_data_dir_and_stop_ends_it(
    tmp_path: Path,
) -> None:
    data_dir, port = tmp_path / "data", harness.free_port()
    proc = harness.start_service(data_dir, port, WORKBENCH_EMBEDDER="none")
    try:
        health = harness.health(port)
        assert health is not None
        assert health["pid"] == proc.pid
        assert Path(health["dataDir"]) == data_dir
        if Path(f"/proc/{proc.pid}/cwd").exists():
            assert os.readlink(f"/proc/{proc.pid}/cwd") == str(data_dir)
    finally:
        harness.stop_service(proc)
    assert proc.returncode is not None
    assert harness.health(port) is None


def test_a_bench_service_runs_in_a_session_of_its_own_as_a_spawned_one_does(
    tmp_path: Path,
) -> None:
    """Hooks spawn the service in a session of its own (``workbench.spawn``), so Linux's
    autogroup schedules it, and its niced embedding worker, apart from the caller. A bench
    service sharing the bench's session competed with the bench's own processes for CPU: the
    worker starved where a user's would not (issue 21's time to full vectors)."""
    data_dir, port = tmp_path / "data", harness.free_port()
    proc = harness.start_service(data_dir, port, WORKBENCH_EMBEDDER="none")
    try:
        assert os.getsid(proc.pid) == proc.pid
        assert os.getsid(proc.pid) != os.getsid(0)
    finally:
        harness.stop_service(proc)


def test_a_service_that_cannot_start_is_reported_with_its_log(tmp_path: Path) -> None:
    log = tmp_path / "service.log"
    with socket.socket() as squatter:  # something else holds the port: the service must exit
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        with pytest.raises(harness.ServiceDidNotStart) as caught:
            harness.start_service(tmp_path / "data", port, log=log, WORKBENCH_EMBEDDER="none")
    message = str(caught.value)
    assert "exited" in message
    assert str(log) in message
    assert log.read_text(encoding="utf-8")[-200:] in message


def test_the_service_environment_drops_the_developers_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_COMPRESSOR", "claude")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = harness.service_env(tmp_path, 4242, root=tmp_path / "before", WORKBENCH_EMBEDDER="x")
    assert "WORKBENCH_COMPRESSOR" not in env
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["WORKBENCH_EMBEDDER"] == "x"
    assert env["WORKBENCH_DATA_DIR"] == str(tmp_path)
    assert env["WORKBENCH_PORT"] == "4242"
    assert env["PYTHONPATH"] == str((tmp_path / "before").resolve())  # that checkout's code


def test_another_checkouts_service_serves_that_checkouts_own_models(tmp_path: Path) -> None:
    """A before/after run across a model change: every variant's service runs on this
    interpreter, whose venv holds the new model, so the old checkout must be pointed at the
    builds of its own venv, or it serves the new model and the run compares it with itself."""
    before = tmp_path / "before"
    share = before / ".venv" / "share" / "workbench"
    onnx_dir, static_dir = share / "minilm-l6-v2-int8", share / "minilm-static-256"
    assert harness.own_models(before) == {}  # no venv there: the service's defaults
    for where in (onnx_dir, static_dir):
        where.mkdir(parents=True)
        (where / "manifest.json").write_text("{}", encoding="utf-8")
    env = harness.service_env(tmp_path / "data", 4242, root=before)
    assert env["WORKBENCH_ONNX_MODEL_DIR"] == str(onnx_dir)
    assert env["WORKBENCH_STATIC_MODEL_DIR"] == str(static_dir)
    elsewhere = str(tmp_path / "elsewhere")
    named = harness.service_env(
        tmp_path / "data", 4242, root=before, WORKBENCH_ONNX_MODEL_DIR=elsewhere
    )
    assert named["WORKBENCH_ONNX_MODEL_DIR"] == elsewhere  # a variant's own setting wins
    this = harness.service_env(tmp_path / "data", 4242)
    assert "WORKBENCH_ONNX_MODEL_DIR" not in this  # this checkout: its venv's, by default


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_bench_script_still_parses_its_arguments(script: str) -> None:
    out = run_bench(f"bench/{script}", "--help", timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip()


@pytest.mark.parametrize(
    "argv",
    [
        ("bench/ingest.py", "--events", "5", "--clients", "1", "--import-rows", "10"),
        ("bench/hooks.py", "--runs", "1", "--cold", "1"),
        ("bench/hooks_ab.py", "--before", ".", "--after", ".", "--runs", "1", "--settle", "0"),
        ("bench/service_bursts.py", "--n", "300", "--bursts", "1", "--clients", "2", "--warm", "2"),
        ("bench/vector_subsets.py", "--vectors", "16000", "--queries", "3"),
    ],
    ids=lambda argv: Path(argv[0]).stem,
)
def test_the_scripts_that_start_services_run_at_a_tiny_size(argv: tuple[str, ...]) -> None:
    out = run_bench(*argv)
    assert out.returncode == 0, out.stderr + out.stdout
    assert out.stdout.strip()


def test_stop_detached_ends_a_service_a_hook_has_only_just_spawned(tmp_path: Path) -> None:
    """SessionStart spawns the service and returns at once (issue 20), before the service has
    written its PID file: stopping by that file alone found nothing, and the service lived on
    after the bench (``bench/hooks.py --cold``). The spawn lock names the child."""
    data_dir, port = tmp_path / "cold", harness.free_port()
    done = subprocess.run(
        [sys.executable, str(ROOT / "hooks" / "session_start.py")],
        input='{"session_id": "s", "cwd": "/tmp", "source": "startup"}',
        env=harness.hook_env(data_dir, port),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    pid = int((data_dir / "spawn.lock").read_text(encoding="ascii").split()[0])
    harness.stop_detached(data_dir, port)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return
    os.kill(pid, 9)
    pytest.fail(f"the service the hook spawned (pid {pid}) still runs after stop_detached")


def test_a_settings_spec_reads_json_values_and_keeps_text() -> None:
    """``--also`` sides of bench/search.py and bench/search_ann.py: one parser for both."""
    from bench.harness import settings_spec

    assert settings_spec("vector_index=hnsw_fp16&search_rerank=true&vector_graph_ef=512") == {
        "vector_index": "hnsw_fp16",
        "search_rerank": True,
        "vector_graph_ef": 512,
    }
    assert settings_spec("search_rerank_method=learned") == {"search_rerank_method": "learned"}
