"""The bundled demo memory: generated, deterministic, current, realistic, importable.

``data/demo/memory.json`` is the output of ``data/generate_demo.py`` (scripted sessions
replayed through the real hooks' body builders, Ingestor and offline compressor). These tests
regenerate it twice in separate processes, with different hash seeds, so any dependence on
set or dict iteration order shows up as a difference.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LEAKY_ENV, ROOT
from workbench.compress.rules.secrets import secret_kinds
from workbench.models import OBSERVATION_TYPES
from workbench.settings import load_settings
from workbench.store import transfer
from workbench.store.database import Store

GENERATOR = ROOT / "data" / "generate_demo.py"
MEMORY = ROOT / "data" / "demo" / "memory.json"
LIVE = ROOT / "data" / "demo" / "sessions.json"


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, bytes]:
    """Two fresh runs of the generator, in parallel, with different hash seeds."""
    folder = tmp_path_factory.mktemp("generated")
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
    runs = []
    for n in (1, 2):
        out = folder / f"memory-{n}.json"
        proc = subprocess.Popen(
            [sys.executable, str(GENERATOR), "-o", str(out)],
            env={**env, "PYTHONHASHSEED": str(n)},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=folder,
        )
        runs.append((proc, out))
    for proc, _ in runs:
        output, _ = proc.communicate(timeout=180)
        assert proc.returncode == 0, output.decode()
    return runs[0][1].read_bytes(), runs[1][1].read_bytes()


@pytest.fixture(scope="module")
def memory() -> dict[str, Any]:
    return json.loads(MEMORY.read_text(encoding="utf-8"))


def _day(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def test_the_generator_is_deterministic(regenerated: tuple[bytes, bytes]) -> None:
    first, second = regenerated
    assert first == second


def test_the_bundled_file_is_what_the_generator_writes(regenerated: tuple[bytes, bytes]) -> None:
    assert MEMORY.read_bytes() == regenerated[0], (
        "data/demo/memory.json is stale: run `python data/generate_demo.py` and commit it"
    )


def test_it_is_an_export_document_of_reasonable_size(memory: dict[str, Any]) -> None:
    assert memory["format"] == "workbench-export"
    assert memory["version"] == 1
    assert MEMORY.stat().st_size < 2 * 1024 * 1024


def test_every_observation_type_is_present(memory: dict[str, Any]) -> None:
    assert {o["type"] for o in memory["observations"]} == set(OBSERVATION_TYPES)


def test_weeks_of_history_in_several_projects(memory: dict[str, Any]) -> None:
    days = sorted(_day(o["created_at"]) for o in memory["observations"])
    assert (days[-1] - days[0]).days >= 28
    assert len({o["project"] for o in memory["observations"]}) >= 4
    assert len(memory["observations"]) >= 300
    assert len(memory["sessions"]) >= 40
    assert len(memory["summaries"]) == len(memory["prompts"]) >= 50
    assert sum(o["discovery_tokens"] for o in memory["observations"]) > 0


def test_rows_fall_inside_their_sessions(memory: dict[str, Any]) -> None:
    sessions = {s["content_session_id"]: s for s in memory["sessions"]}
    assert all(s["status"] == "completed" for s in sessions.values())
    for row in (*memory["observations"], *memory["prompts"], *memory["summaries"]):
        session = sessions[row["content_session_id"]]
        assert session["started_at_epoch"] <= row["created_at_epoch"]
        assert row["created_at_epoch"] <= session["completed_at_epoch"]
        assert 1 <= row["prompt_number"] <= session["prompt_counter"]


def test_no_secret_value_survived_the_pipeline() -> None:
    """The stories contain AWS's documented example key; the compressor must have masked it."""
    text = MEMORY.read_text(encoding="utf-8")
    assert secret_kinds(text) == []
    assert "AKIAIOSFODNN7EXAMPLE" not in text


def test_it_imports_with_no_errors_and_only_once(tmp_path: Path, memory: dict[str, Any]) -> None:
    settings = load_settings(tmp_path / "data")
    with Store(settings.db_path) as store:
        report = transfer.import_document(store.conn, transfer.parse(memory))
        again = transfer.import_document(store.conn, transfer.parse(memory))
        count = store.conn.execute("SELECT count(*) FROM observations").fetchone()[0]
    for kind in ("sessions", "prompts", "observations", "summaries"):
        assert report[kind] == {"imported": len(memory[kind]), "skipped": 0}
        assert again[kind] == {"imported": 0, "skipped": len(memory[kind])}
    assert count == len(memory["observations"])


def test_the_live_sessions_continue_projects_of_the_history(memory: dict[str, Any]) -> None:
    """``workbench demo`` replays sessions.json on top: the same projects, later in time."""
    live = json.loads(LIVE.read_text(encoding="utf-8"))["sessions"]
    history = {o["project"] for o in memory["observations"]}
    assert {Path(s["cwd"]).name for s in live} <= history
    ids = {s["content_session_id"] for s in memory["sessions"]}
    assert not ids & {s["session_id"] for s in live}
