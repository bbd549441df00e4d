"""Settings: env ``WORKBENCH_*`` > settings.json > defaults, derived paths, corrupt files, host.

The autouse ``_clean_env`` fixture (conftest) unsets every ``WORKBENCH_*`` variable first, so
each test sets exactly the environment it describes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.conftest import ROOT
from workbench.locate import PORT_BASE, default_port, resolve_data_dir, service_port
from workbench.settings import DEFAULT_SKIPPED_TOOLS, load_settings, write_settings_file


def write_file(data_dir: Path, content: Any) -> Path:
    path = data_dir / "settings.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content), encoding="utf-8")
    return path


# ----- precedence -----------------------------------------------------------------------------
def test_defaults_without_file_or_env(data_dir: Path) -> None:
    settings = load_settings(data_dir)
    assert settings.port == default_port(data_dir)
    assert settings.host == "127.0.0.1"
    assert settings.context_observations == 50
    assert settings.excluded_projects == []
    assert settings.skipped_tools == DEFAULT_SKIPPED_TOOLS
    assert settings.compressor == "auto"
    assert settings.load_warnings == []


def test_default_port_is_the_data_dirs_own(tmp_path: Path) -> None:
    """Each data dir its own port in 37700-39699 (issue 19, item 2): two never share one."""
    ports = {default_port(tmp_path / f"d{i}") for i in range(20)}
    assert len(ports) > 15  # a hash, so a rare collision is possible; 20 dirs on 1 port is not
    assert all(PORT_BASE <= port < PORT_BASE + 2000 for port in ports)


@pytest.mark.parametrize(
    ("field", "file_value", "env_value", "expected_file", "expected_env"),
    [
        ("port", 40001, "40002", 40001, 40002),
        ("context_observations", 7, "9", 7, 9),
        ("compressor", "claude", "offline", "claude", "offline"),
        ("retry_base_s", 0.5, "0.25", 0.5, 0.25),
    ],
)
def test_file_beats_defaults_and_env_beats_file(
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    field: str,
    file_value: Any,
    env_value: str,
    expected_file: Any,
    expected_env: Any,
) -> None:
    write_file(data_dir, {field: file_value})
    assert getattr(load_settings(data_dir), field) == expected_file
    monkeypatch.setenv(f"WORKBENCH_{field.upper()}", env_value)
    assert getattr(load_settings(data_dir), field) == expected_env


def test_env_beats_file_key_by_key(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_file(data_dir, {"port": 40001, "context_observations": 7})
    monkeypatch.setenv("WORKBENCH_PORT", "40002")
    settings = load_settings(data_dir)
    assert settings.port == 40002
    assert settings.context_observations == 7  # the file still supplies what env does not


def test_empty_env_value_is_ignored(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_file(data_dir, {"context_observations": 7})
    monkeypatch.setenv("WORKBENCH_CONTEXT_OBSERVATIONS", "")
    assert load_settings(data_dir).context_observations == 7


def test_explicit_override_beats_env(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_PORT", "40002")
    assert load_settings(data_dir, port=40003).port == 40003


def test_excluded_projects_from_file_as_json_list(data_dir: Path) -> None:
    write_file(data_dir, {"excluded_projects": ["secret-*", "client"]})
    assert load_settings(data_dir).excluded_projects == ["secret-*", "client"]


@pytest.mark.parametrize(
    ("env_value", "expected"),
    [
        ("secret-*, client", ["secret-*", "client"]),
        ("solo", ["solo"]),
        ('["a*", "b"]', ["a*", "b"]),
    ],
)
def test_excluded_projects_from_env_csv_or_json(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, env_value: str, expected: list[str]
) -> None:
    write_file(data_dir, {"excluded_projects": ["from-file"]})
    monkeypatch.setenv("WORKBENCH_EXCLUDED_PROJECTS", env_value)
    assert load_settings(data_dir).excluded_projects == expected


def test_skipped_tools_from_env_csv(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_SKIPPED_TOOLS", "TodoWrite,Glob")
    assert load_settings(data_dir).skipped_tools == ["TodoWrite", "Glob"]


def test_write_settings_file_merges_validates_and_is_read_back(data_dir: Path) -> None:
    settings = load_settings(data_dir)
    write_settings_file(settings, {"context_observations": 12})
    merged = write_settings_file(settings, {"excluded_projects": ["x"]})
    assert merged == {"context_observations": 12, "excluded_projects": ["x"]}
    with pytest.raises(ValidationError):
        write_settings_file(settings, {"context_observations": "many"})
    assert json.loads((data_dir / "settings.json").read_text(encoding="utf-8")) == merged
    reread = load_settings(data_dir)
    assert (reread.context_observations, reread.excluded_projects) == (12, ["x"])


# ----- paths ----------------------------------------------------------------------------------
def test_every_path_derives_from_data_dir(data_dir: Path) -> None:
    settings = load_settings(data_dir)
    assert settings.data_dir == data_dir
    derived = {
        "settings_path": "settings.json",
        "db_path": "workbench.db",
        "spool_dir": "spool",
        "logs_dir": "logs",
        "pid_path": "service.pid",
        "corpora_dir": "corpora",
        "index_dir": "index",
        "conversations_dir": "conversations",
    }
    for name, relative in derived.items():
        assert getattr(settings, name) == data_dir / relative, name


def test_data_dir_env_moves_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(tmp_path / "elsewhere"))
    settings = load_settings()
    assert settings.data_dir == tmp_path / "elsewhere"
    assert settings.db_path == tmp_path / "elsewhere" / "workbench.db"
    assert resolve_data_dir() == tmp_path / "elsewhere"


@pytest.mark.parametrize("end", ["\x85", "\xa0", "\u3000", "\u2028"])
def test_a_data_dir_ending_in_unicode_white_space_is_the_same_folder_for_the_service(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, end: str
) -> None:
    """The CLI resolves ``--data-dir`` and hands the service ``WORKBENCH_DATA_DIR`` (spawn.py);
    the service resolves that again. NEL, NBSP, U+3000 and U+2028 are legal at a folder name's
    end, and ``str.strip()`` took them off on the second reading: the service opened folder
    ``memory`` for the user's ``memory`` + NBSP. Only ASCII blanks around a value are trimmed."""
    chosen = resolve_data_dir(tmp_path / f"memory{end}")
    assert chosen == tmp_path / f"memory{end}"
    monkeypatch.setenv("WORKBENCH_DATA_DIR", str(chosen))
    assert resolve_data_dir() == chosen
    monkeypatch.setenv("WORKBENCH_DATA_DIR", f" {chosen}\n")  # a shell's stray blanks go
    assert resolve_data_dir() == chosen


def test_paths_cannot_be_configured_on_their_own(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_DB_PATH", str(tmp_path / "other.db"))
    write_file(data_dir, {"data_dir": str(tmp_path / "moved"), "spool_dir": "/tmp/x"})
    settings = load_settings(data_dir)
    assert settings.data_dir == data_dir
    assert settings.db_path == data_dir / "workbench.db"
    assert settings.spool_dir == data_dir / "spool"


def test_ensure_dirs_creates_owner_only_dirs(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "fresh")
    settings.ensure_dirs()
    for path in (settings.data_dir, settings.spool_dir, settings.logs_dir):
        assert path.is_dir()
        assert path.stat().st_mode & 0o777 == 0o700


# ----- corrupt files --------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "not valid JSON"),
        ('["a", "list"]', "must hold a JSON object"),
        ('"just a string"', "must hold a JSON object"),
        (json.dumps({"context_observations": "lots"}), "invalid values"),
        (json.dumps({"port": 99999}), "invalid values"),
        (json.dumps({"excluded_projects": 5}), "invalid values"),
    ],
)
def test_corrupt_file_gives_defaults_and_a_warning(
    data_dir: Path, content: str, words: str
) -> None:
    path = write_file(data_dir, content)
    settings = load_settings(data_dir)
    assert settings.port == default_port(data_dir)
    assert settings.context_observations == 50
    assert settings.excluded_projects == []
    [warning] = settings.load_warnings
    assert words in warning
    assert str(path) in warning  # names the file
    assert "fix or delete the file" in warning  # and the fix


def test_invalid_file_value_names_the_field(data_dir: Path) -> None:
    write_file(data_dir, {"context_observations": "lots"})
    [warning] = load_settings(data_dir).load_warnings
    assert "context_observations" in warning


def test_invalid_file_value_keeps_env(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_file(data_dir, {"context_observations": "lots"})
    monkeypatch.setenv("WORKBENCH_CONTEXT_FULL", "3")
    settings = load_settings(data_dir)
    assert settings.context_full == 3
    assert settings.load_warnings


def test_one_bad_value_does_not_drop_the_good_ones(data_dir: Path) -> None:
    """A typo in one key must not silently switch off ``excluded_projects`` (a privacy rule)."""
    write_file(
        data_dir, {"excluded_projects": ["secret-*"], "port": 40010, "context_observations": "lots"}
    )
    settings = load_settings(data_dir)
    assert settings.excluded_projects == ["secret-*"]
    assert settings.port == 40010
    assert settings.context_observations == 50
    [warning] = settings.load_warnings
    assert "context_observations" in warning


def test_invalid_env_value_is_an_error(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_CONTEXT_OBSERVATIONS", "lots")
    with pytest.raises(ValidationError, match="context_observations"):
        load_settings(data_dir)


def test_service_starts_on_a_corrupt_file(data_dir: Path, make_service: Any) -> None:
    path = write_file(data_dir, "{this is not json")
    service = make_service()
    status, health = service.get("/api/health")
    assert status == 200
    assert health["warnings"], health
    assert str(path) in health["warnings"][0]
    assert "not valid JSON" in health["warnings"][0]


def test_service_starts_on_a_file_with_an_invalid_value(data_dir: Path, make_service: Any) -> None:
    write_file(data_dir, {"max_attempts": "several"})
    service = make_service()
    status, health = service.get("/api/health")
    assert status == 200
    assert any("max_attempts" in w for w in health["warnings"]), health


# ----- loopback only --------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.com"])
def test_non_loopback_host_is_refused(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    monkeypatch.setenv("WORKBENCH_HOST", host)
    with pytest.raises(ValidationError) as excinfo:
        load_settings(data_dir)
    message = str(excinfo.value)
    assert "loopback" in message
    assert "127.0.0.1" in message


def test_only_127_0_0_1_is_accepted(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_HOST", "127.0.0.1")
    assert load_settings(data_dir).host == "127.0.0.1"


@pytest.mark.parametrize("host", ["localhost", "::1", "127.0.0.2"])
def test_other_loopback_hosts_are_refused_because_hooks_use_127_0_0_1(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, host: str
) -> None:
    monkeypatch.setenv("WORKBENCH_HOST", host)
    with pytest.raises(ValidationError, match="hooks reach the service at 127.0.0.1"):
        load_settings(data_dir)


def test_non_loopback_host_in_file_falls_back_to_loopback(data_dir: Path) -> None:
    write_file(data_dir, {"host": "0.0.0.0"})
    settings = load_settings(data_dir)
    assert settings.host == "127.0.0.1"
    assert any("loopback" in w for w in settings.load_warnings)


def test_service_refuses_to_start_on_a_public_host(data_dir: Path, make_service: Any) -> None:
    svc = make_service(start=False, WORKBENCH_HOST="0.0.0.0")
    proc = subprocess.run(
        [sys.executable, "-m", "service"],
        env=svc.env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert proc.returncode != 0
    assert "is not a loopback address" in proc.stderr


# ----- locate.service_port agrees with Settings.port ------------------------------------------
@pytest.mark.parametrize(
    ("env", "file_content"),
    [
        (None, None),
        ("40002", None),
        (None, {"port": 40001}),
        ("40002", {"port": 40001}),
        (None, {"port": "40003"}),
        (None, {"port": 40004.0}),
        (None, {"port": 0}),
        (None, {"port": 70000}),
        (None, {"port": True}),
        (None, {"port": None}),
        (None, {"port": "high"}),
        (None, {"port": 40005, "context_observations": "lots"}),
        (None, {"other": 1}),
        (None, "{not json"),
        (None, "[40006]"),
        ("40007", "{not json"),
    ],
)
def test_service_port_agrees_with_settings(
    data_dir: Path, monkeypatch: pytest.MonkeyPatch, env: str | None, file_content: Any
) -> None:
    if env is not None:
        monkeypatch.setenv("WORKBENCH_PORT", env)
    if file_content is not None:
        write_file(data_dir, file_content)
    port = service_port(data_dir)
    assert type(port) is int
    assert port == load_settings(data_dir).port
