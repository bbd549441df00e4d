"""The README quickstart is true: `make demo` runs the demo job, `make test` is what CI runs.

``make demo`` = create the venv + ``workbench demo``; the venv part is what CI itself does
before running this suite, so here we run the demo job exactly as the Makefile does and check
what it prints and stores.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import LEAKY_ENV, ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def quickstart_commands() -> list[str]:
    block = README.split("## Quickstart", 1)[1].split("```console", 1)[1].split("```", 1)[0]
    return [line[2:].split("#")[0].strip() for line in block.splitlines() if line.startswith("$ ")]


def test_readme_quickstart_is_two_make_targets() -> None:
    assert quickstart_commands() == ["make demo", "make test"]
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^demo: .*\n\t\$\(BIN\)/workbench demo$", makefile, re.M)
    assert re.search(
        r"^test: .*\n\t\$\(BIN\)/python -m pytest -n \$\(TEST_WORKERS\) --dist loadfile$",
        makefile,
        re.M,
    )


def test_ci_runs_exactly_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    commands = [
        line.strip()
        for line in ci.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "set ", "cd ", "export "))
    ]
    assert commands[-1] == quickstart_commands()[1]


@pytest.mark.slow
def test_demo_job_seeds_history_and_replays_live_sessions_through_the_real_pipeline(
    tmp_path: Path,
) -> None:
    """The imported history (memory.json) plus the live part (sessions.json through the hooks)."""
    demo_dir = tmp_path / "demo"
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "demo", "--data-dir", str(demo_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    sessions = json.loads((ROOT / "data" / "demo" / "sessions.json").read_text())["sessions"]
    history = json.loads((ROOT / "data" / "demo" / "memory.json").read_text())
    tools = sum(len(t.get("tools", [])) for s in sessions for t in s["turns"])
    turns = sum(len(s["turns"]) for s in sessions)
    assert "imported the demo history" in proc.stdout
    assert "replayed" in proc.stdout
    assert "0 failed" in proc.stdout
    conn = sqlite3.connect(demo_dir / "workbench.db")
    try:
        count = lambda table: conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]  # noqa: E731
        live = lambda table: conn.execute(  # noqa: E731  (rows of the replayed sessions only)
            f"SELECT count(*) FROM {table} WHERE content_session_id IN"
            f" ({','.join('?' * len(sessions))})",
            [s["session_id"] for s in sessions],
        ).fetchone()[0]
        assert count("sessions") == len(sessions) + len(history["sessions"])
        assert live("sessions") == len(sessions)
        assert live("user_prompts") == turns
        assert live("session_summaries") == turns
        assert live("observations") >= tools - 1  # identical calls dedup by content hash
        assert count("observations") == live("observations") + len(history["observations"])
        assert count("session_summaries") == turns + len(history["summaries"])
        assert conn.execute("SELECT count(*) FROM queue WHERE status != 'done'").fetchone()[0] == 0
        completed = conn.execute("SELECT count(*) FROM sessions WHERE status='completed'")
        assert completed.fetchone()[0] == count("sessions")
    finally:
        conn.close()
    # The knowledge agent has corpora to load as soon as the demo is done.
    corpora = sorted(p.name for p in (demo_dir / "corpora").glob("*.corpus.json"))
    assert corpora == ["decisions.corpus.json", "payments-api.corpus.json", "security.corpus.json"]
    # The private part of a demo prompt never reaches the store (redacted at the hook).
    for path in demo_dir.rglob("*"):
        if path.is_file():
            assert b"AKIA-DEMO-SECRET-KEY-123" not in path.read_bytes(), path
    # The demo stopped its service; running it again resets the demo dir, nothing doubles.
    again = subprocess.run(
        [sys.executable, "-m", "workbench", "demo", "--data-dir", str(demo_dir)],
        capture_output=True,
        text=True,
        env=env,
        timeout=240,
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    conn = sqlite3.connect(demo_dir / "workbench.db")
    total = len(sessions) + len(history["sessions"])
    assert conn.execute("SELECT count(*) FROM sessions").fetchone()[0] == total
    conn.close()


def test_demo_refuses_to_reset_a_folder_that_is_not_a_demo_dir(tmp_path: Path) -> None:
    real = tmp_path / "real-memory"
    real.mkdir()
    (real / "workbench.db").write_bytes(b"precious")
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "demo", "--data-dir", str(real)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert "refusing to reset" in proc.stderr
    assert (real / "workbench.db").read_bytes() == b"precious"
