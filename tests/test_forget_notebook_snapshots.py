"""A notebook's marimo snapshot is a copy of the memory: forget removes it, an export leaves none.

``marimo export html`` (the headless run ``notebooks/README.md`` showed) also writes a snapshot
of every output it computed to ``notebooks/__marimo__/session/<name>.py.json``, beside the
notebook and outside the data dir (``marimo edit`` does too with ``auto_instantiate`` off).
The corpus builder's preview table holds memories' titles, so a forgotten memory's words stayed
there, unreported. Real parts: a real service, the real ``marimo export html`` and
``workbench`` commands as subprocesses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT
from tests.team_harness import seed
from workbench.notebook_files import snapshot_path, snapshot_paths

pytestmark = pytest.mark.slow

MARKER = "qjvnotebookmarker"
NAME = "corpus_builder"  # its preview table shows the memories' titles


def export(svc: Any, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable, "-m", "marimo", "export", "html",
            str(ROOT / "notebooks" / f"{NAME}.py"), "-o", str(out), "-f",
            "--", "--data-dir", str(svc.data_dir),
        ],
        capture_output=True, text=True, timeout=180, cwd=ROOT, env=svc.env,
    )  # fmt: skip


def test_forget_removes_a_notebook_snapshot_holding_the_memory(
    make_service: Any, tmp_path: Path
) -> None:
    svc = make_service()
    ids = seed(svc.data_dir, "p", "s1", [f"Rotated the {MARKER} key", "Pinned the image"])
    seed(svc.data_dir, "p", "s2", ["Cache warmup moved"], at_ms=1_780_000_100_000)
    proc = export(svc, tmp_path / "out.html")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    snapshot = snapshot_path(NAME)
    assert MARKER in snapshot.read_text(encoding="utf-8")  # the copy the test is about

    forgot = subprocess.run(
        [sys.executable, "-m", "workbench", "forget", str(ids[0]), "--json"],
        capture_output=True, text=True, timeout=120, cwd=ROOT, env=svc.env,
    )  # fmt: skip
    assert forgot.returncode == 0, forgot.stderr
    report = json.loads(forgot.stdout)
    assert not snapshot.exists()
    cleaned = {c["place"]: c["items"] for c in report["copies"]["cleaned"]}
    assert str(snapshot) in cleaned["notebook snapshots"]
    assert snapshot_paths() == []  # every snapshot: which data dir wrote one is not recorded


def test_workbench_notebook_html_exports_without_leaving_a_snapshot(
    make_service: Any, tmp_path: Path
) -> None:
    svc = make_service()
    seed(svc.data_dir, "p", "s1", [f"Rotated the {MARKER} key", "Pinned the image"])
    snapshot = snapshot_path(NAME)
    snapshot.unlink(missing_ok=True)
    out = tmp_path / "corpus.html"
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "notebook", NAME, "--html", str(out),
         "--data-dir", str(svc.data_dir), "--", "--project", "p"],
        capture_output=True, text=True, timeout=180, cwd=ROOT, env=svc.env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert MARKER in out.read_text(encoding="utf-8")  # the notebook ran on this data dir
    assert not snapshot.exists()


def test_workbench_notebook_html_leaves_no_service_it_started(
    make_service: Any, tmp_path: Path
) -> None:
    """The knowledge agent starts the service to talk to it; a headless export stops it again,
    as a notebook run as a script does (``marimo export html`` alone left it running)."""
    from workbench import launch
    from workbench.pidfile import terminate
    from workbench.settings import load_settings

    svc = make_service(start=False)
    seed(svc.data_dir, "p", "s1", ["Rotated the key", "Pinned the image"])
    settings = load_settings(svc.data_dir, port=svc.port)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "workbench", "notebook", "knowledge_agent", "--html",
             str(tmp_path / "agent.html"), "--data-dir", str(svc.data_dir)],
            capture_output=True, text=True, timeout=180, cwd=ROOT, env=svc.env,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "stopped the workbench service this run started" in proc.stderr
        assert launch.health(svc.port) is None
    finally:
        terminate(settings.pid_path)
