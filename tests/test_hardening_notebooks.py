"""Headless notebooks say what they did, and refuse a data dir that is not there (item 17).

``python notebooks/<name>.py --data-dir DIR`` used to print nothing and exit 0, even for a
data dir that does not exist. Now: a missing dir is exit 2 with a message naming it, a dir
without a memory is exit 1, and a real run prints a short summary of what it computed
(checked against SQL on the same file). Real subprocesses, a real data dir.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, base_env, free_port, http_json

pytestmark = pytest.mark.slow

NOTEBOOKS = ["analytics", "corpus_builder", "evaluate", "knowledge_agent"]
MEMORY = ROOT / "data" / "demo" / "memory.json"


def headless(name: str, env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "notebooks" / f"{name}.py"), *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=240,
    )


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding the demo history (imported with the library, no service)."""
    from workbench.store import transfer
    from workbench.store.database import Store

    data_dir = tmp_path_factory.mktemp("headless") / "data"
    data_dir.mkdir()
    (data_dir / "settings.json").write_text(json.dumps({"port": free_port()}), encoding="utf-8")
    document = transfer.parse(json.loads(MEMORY.read_text(encoding="utf-8")))
    with Store(data_dir / "workbench.db") as store:
        transfer.import_document(store.conn, document)
    return data_dir


def count(data_dir: Path, sql: str) -> int:
    conn = sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return int(conn.execute(sql).fetchone()[0])
    finally:
        conn.close()


@pytest.mark.parametrize("name", NOTEBOOKS)
def test_a_missing_data_dir_is_an_error(name: str, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    proc = headless(name, base_env(missing, free_port()), "--data-dir", str(missing))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"data dir {missing} does not exist" in proc.stderr
    assert proc.stdout == ""
    assert not missing.exists()  # and it was not created either


@pytest.mark.parametrize("name", ["analytics", "corpus_builder", "evaluate"])
def test_a_data_dir_without_a_memory_is_an_error(name: str, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = headless(name, base_env(empty, free_port()), "--data-dir", str(empty))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no workbench memory at" in proc.stderr


def test_analytics_prints_what_it_computed(seeded: Path) -> None:
    proc = headless("analytics", base_env(seeded, free_port()), "--data-dir", str(seeded))
    assert proc.returncode == 0, proc.stderr
    observations = count(seeded, "SELECT count(*) FROM observations")
    tokens = count(seeded, "SELECT sum(discovery_tokens) FROM observations")
    assert f"observations: {observations}; discovery tokens {tokens:,}" in proc.stdout
    assert "sql cell:" in proc.stdout


def test_corpus_builder_prints_its_preview(seeded: Path) -> None:
    env = base_env(seeded, free_port())
    proc = headless("corpus_builder", env, "--data-dir", str(seeded), "--project", "payments-api")
    assert proc.returncode == 0, proc.stderr
    expected = count(seeded, "SELECT count(*) FROM observations WHERE project = 'payments-api'")
    assert f": {expected} observations" in proc.stdout
    assert "not saved (pass --save" in proc.stdout


def test_evaluate_prints_its_best_setting(seeded: Path) -> None:
    env = base_env(seeded, free_port())
    proc = headless("evaluate", env, "--data-dir", str(seeded), "--vectors", "none")
    assert proc.returncode == 0, proc.stderr
    assert "questions from" in proc.stdout
    assert "best recall: " in proc.stdout


def test_knowledge_agent_answers_and_leaves_no_service_behind(seeded: Path, tmp_path: Path) -> None:
    """It needs the service: it starts one, asks, prints the answer, and stops it again."""
    port = json.loads((seeded / "settings.json").read_text())["port"]
    env = base_env(seeded, port, WORKBENCH_EMBEDDER="none")
    built = subprocess.run(
        [sys.executable, "-m", "workbench", "corpus", "build", "security", "--types",
         "security_alert,security_note", "--json"],
        capture_output=True, text=True, env=env, cwd=ROOT, timeout=120,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    proc = headless(
        "knowledge_agent", env, "--data-dir", str(seeded), "--corpus", "security",
        "--question", "Which credentials were exposed?",
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "corpus security" in proc.stdout
    assert "answer: Offline extractive answer" in proc.stdout
    assert "stopped the workbench service this run started" in proc.stderr
    assert not (seeded / "service.pid").exists()
    assert _health(port) is None


def _health(port: int) -> Any:
    try:
        return http_json("GET", f"http://127.0.0.1:{port}/api/health", timeout=1.0)
    except OSError:
        return None
