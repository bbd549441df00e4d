"""What a new user hits first (issue 9, items 14 and 18), run as a person runs it.

- The README's "look around" block, verbatim, with ``-d .demo/data`` relative to the cwd: the
  service must open ``<cwd>/.demo/data/workbench.db``, and ``status``/``stop`` must find it.
- ``workbench import`` (and every CLI write) into a data dir with no service imports the data
  and leaves no service behind.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import LEAKY_ENV, ROOT, free_port, http_json

pytestmark = pytest.mark.slow

README = (ROOT / "README.md").read_text(encoding="utf-8")
MEMORY = ROOT / "data" / "demo" / "memory.json"


def look_around_commands() -> list[list[str]]:
    """The README's "look around the demo memory" block, as argv lists."""
    block = README.split("look around the demo memory", 1)[1]
    block = block.split("```console", 1)[1].split("```", 1)[0]
    lines = [line[2:].split("#")[0].strip() for line in block.splitlines()]
    return [shlex.split(line) for line in lines if line]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        WORKBENCH_EMBEDDER="none",
        PYTHONPATH=str(ROOT),  # this checkout, whatever cwd the command runs in
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if argv[0].endswith("/workbench") or argv[0] == "workbench":
        argv = [sys.executable, "-m", "workbench", *argv[1:]]
    return subprocess.run(argv, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def seed(data_dir: Path, port: int) -> None:
    """A demo-like data dir: its own port, the offline compressor, the demo history."""
    from workbench.store import transfer
    from workbench.store.database import Store

    data_dir.mkdir(parents=True)
    (data_dir / "settings.json").write_text(
        json.dumps({"port": port, "compressor": "offline"}), encoding="utf-8"
    )
    document = transfer.parse(json.loads(MEMORY.read_text(encoding="utf-8")))
    with Store(data_dir / "workbench.db") as store:
        transfer.import_document(store.conn, document)


def test_readme_look_around_block_works_with_a_relative_data_dir(tmp_path: Path) -> None:
    commands = look_around_commands()
    assert [c[1] for c in commands] == ["serve", "search", "notebook", "stop"]
    port = free_port()
    demo = tmp_path / ".demo" / "data"
    seed(demo, port)
    env = clean_env()
    try:
        served = run(commands[0], tmp_path, env)
        assert served.returncode == 0, served.stdout + served.stderr
        _, health = http_json("GET", f"http://127.0.0.1:{port}/api/health")
        assert health["dataDir"] == str(demo)  # absolute, not .demo/data/.demo/data
        assert not (demo / ".demo").exists()

        found = run(commands[1], tmp_path, env)
        assert found.returncode == 0, found.stderr
        assert "not running" not in found.stderr  # it asked the service it just started
        assert "refund" in found.stdout.lower()

        # (the notebook command opens a browser-facing server: covered by test_notebooks)
        status = run(["workbench", "status", "--json", "-d", ".demo/data"], tmp_path, env)
        assert status.returncode == 0, status.stderr
        assert json.loads(status.stdout)["service"] == "running"
        assert json.loads(status.stdout)["totals"]["observations"] > 0

        stopped = run(commands[3], tmp_path, env)
        assert stopped.returncode == 0, stopped.stderr
        assert "stopped workbench" in stopped.stdout
        assert not (demo / "service.pid").exists()
        assert http_json_or_none(f"http://127.0.0.1:{port}/api/health") is None
    finally:
        run(["workbench", "stop", "-d", str(demo)], tmp_path, env)


def test_relative_data_dir_resolves_to_an_absolute_path_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workbench import locate
    from workbench.settings import load_settings

    monkeypatch.chdir(tmp_path)
    assert load_settings(".demo/data").data_dir == tmp_path / ".demo" / "data"
    assert locate.resolve_data_dir("x/../.demo/data") == tmp_path / ".demo" / "data"
    monkeypatch.setenv("WORKBENCH_DATA_DIR", "rel/data")
    assert locate.resolve_data_dir() == tmp_path / "rel" / "data"
    assert load_settings().settings_path == tmp_path / "rel" / "data" / "settings.json"


def http_json_or_none(url: str) -> Any:
    try:
        return http_json("GET", url, timeout=1.0)
    except OSError:
        return None
