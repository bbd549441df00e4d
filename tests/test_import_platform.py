"""``workbench import`` / ``POST /api/import`` and ``platform_source``: ours are kept,
claude-mem's (``claude``, ``codex``, ``gemini``…, see ``workbench.store.transfer``) are mapped
to ours, and anything else is a 422 naming the row, the field, the value and the known ones,
with nothing written. The real service and store; the CLI through it."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.conftest import Service
from workbench.cli.main import app
from workbench.errors import InvalidInput
from workbench.platforms import PLATFORM_SOURCES
from workbench.store import transfer


def session(sid: str, platform: Any) -> dict[str, Any]:
    return {"content_session_id": sid, "project": "p", "platform_source": platform}


def obs(sid: str, title: str, **extra: Any) -> dict[str, Any]:
    return {"content_session_id": sid, "project": "p", "title": title, **extra}


def platforms(data_dir: Path) -> dict[str, tuple[str, str]]:
    """session -> (its platform, the platform of its observation)."""
    with sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True) as conn:
        return {
            sid: (platform, obs_platform)
            for sid, platform, obs_platform in conn.execute(
                "SELECT s.content_session_id, s.platform_source, o.platform_source"
                " FROM sessions s JOIN observations o USING (content_session_id)"
            )
        }


# claude-mem's values (src/shared/platform-source.ts) and ours, as each is stored.
MAPPED = {
    "claude": "claude-code",
    "Claude Code": "claude-code",
    "claude-code": "claude-code",
    "codex": "codex-cli",
    "transcript": "codex-cli",
    "codex-cli": "codex-cli",
    "gemini": "gemini-cli",
    "gemini-cli": "gemini-cli",
    "": "claude-code",
}


def test_claude_mem_platforms_are_mapped_to_ours(service: Service) -> None:
    sids = {value: f"s{i}" for i, value in enumerate(MAPPED)}
    document = {
        "sessions": [session(sid, value) for value, sid in sids.items()],
        "observations": [obs(sid, f"from {value!r}") for value, sid in sids.items()],
    }
    status, body = service.post("/api/import", document)
    assert status == 200, body
    stored = platforms(service.data_dir)
    assert {value: stored[sid] for value, sid in sids.items()} == {
        value: (ours, ours) for value, ours in MAPPED.items()
    }


@pytest.mark.parametrize(("platform", "adapter"), list(PLATFORM_SOURCES.items()))
def test_every_adapter_name_maps_to_its_platform(platform: str, adapter: str) -> None:
    doc = transfer.parse({"sessions": [session("s", adapter)]})
    assert doc.sessions[0].platform_source == platform


def test_a_session_the_file_does_not_list_takes_its_observations_platform(
    service: Service,
) -> None:
    document = {"observations": [obs("lonely", "seen by gemini", platform_source="gemini")]}
    status, body = service.post("/api/import", document)
    assert status == 200, body
    assert platforms(service.data_dir) == {"lonely": ("gemini-cli", "gemini-cli")}


@pytest.mark.parametrize(
    ("document", "field", "value"),
    [
        ({"sessions": [session("a", "vim-agent")]}, "sessions.0.platform_source", "'vim-agent'"),
        (
            {"sessions": [session("a", "claude-code"), session("b", "emacs")]},
            "sessions.1.platform_source",
            "'emacs'",
        ),
        (
            {"observations": [obs("a", "t", platform_source="zed")]},
            "observations.0.platform_source",
            "'zed'",
        ),
        ({"sessions": [session("a", 7)]}, "sessions.0.platform_source", "'7'"),
    ],
)
def test_an_unknown_platform_is_refused_naming_field_value_and_known_ones(
    service: Service, document: dict[str, Any], field: str, value: str
) -> None:
    full = {**document, "observations": [*document.get("observations", []), obs("z", "kept?")]}
    status, body = service.post("/api/import", full)
    assert status == 422, body
    assert field in body["message"]
    assert value in body["message"]
    if not value.strip("'").isdigit():
        assert all(name in body["message"] for name in PLATFORM_SOURCES)
    with pytest.raises(InvalidInput, match=field):
        transfer.parse(full)
    with sqlite3.connect(f"file:{service.data_dir / 'workbench.db'}?mode=ro", uri=True) as conn:
        assert conn.execute("SELECT count(*) FROM observations").fetchone()[0] == 0


def test_cli_import_refuses_an_unknown_platform(service: Service, tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps({"sessions": [session("a", "notepad")]}), encoding="utf-8")
    env = {"WORKBENCH_DATA_DIR": str(service.data_dir), "WORKBENCH_PORT": str(service.port)}
    result = CliRunner().invoke(app, ["import", str(path)], env=env)
    assert result.exit_code == 1
    assert "sessions.0.platform_source" in result.stderr
    assert "'notepad' is not a known platform" in result.stderr


def test_an_export_round_trips_its_platforms(service: Service) -> None:
    document = {
        "sessions": [session("g", "gemini-cli"), session("x", "codex")],
        "observations": [obs("g", "gemini one"), obs("x", "codex one")],
    }
    assert service.post("/api/import", document)[0] == 200
    status, exported = service.get("/api/export")
    assert status == 200
    assert {o["platform_source"] for o in exported["observations"]} == {"gemini-cli", "codex-cli"}
    assert transfer.parse(exported).sessions[1].platform_source == "codex-cli"


def test_the_library_reads_the_platform_without_its_private_block() -> None:
    """As the service's boundary does before it: the library and the API agree."""
    doc = transfer.parse({"sessions": [session("s", "gemini-cli<private>secret</private>")]})
    assert doc.sessions[0].platform_source == "gemini-cli"
