"""``workbench doctor``'s compressor row probes an OpenAI-compatible server (issue 19, item 13).

A configured local model (Ollama's ``base_url``) that does not answer used to read
``compressor ok``: doctor now asks it (one short GET of ``<base_url>/models``) and reports a
PROBLEM naming the URL and the fix. The server is the only faked part: a real local HTTP
server (``tests/fake_openai.py``) when it answers, a free port with nothing on it when not.
The CLI is real, as a subprocess.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.agent_home import agent_env, make_home
from tests.conftest import free_port, run_workbench
from tests.fake_openai import FakeOpenAI


def compressor_row(tmp_path: Path, data_dir: Path, base_url: str) -> dict[str, str]:
    env = agent_env(
        make_home(tmp_path),
        data_dir,
        WORKBENCH_COMPRESSOR="openai_compat",
        WORKBENCH_OPENAI_COMPAT_PROVIDER="ollama",
        WORKBENCH_OPENAI_COMPAT_BASE_URL=base_url,
        WORKBENCH_OPENAI_COMPAT_MODEL="qwen2.5:7b",
    )
    proc = run_workbench(env, "doctor", "--json")
    assert proc.returncode in (0, 1), proc.stderr
    (row,) = [r for r in json.loads(proc.stdout) if r["check"] == "compressor"]
    return row


def test_an_unreachable_ollama_is_a_problem_with_the_fix(tmp_path: Path, data_dir: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    row = compressor_row(tmp_path, data_dir, url)
    assert row["status"] == "PROBLEM", row
    assert url in row["detail"]
    assert "does not answer" in row["detail"]
    assert "WORKBENCH_OPENAI_COMPAT_BASE_URL" in row["detail"]


def test_an_ollama_that_answers_is_ok(
    tmp_path: Path, data_dir: Path, fake_openai: FakeOpenAI
) -> None:
    row = compressor_row(tmp_path, data_dir, fake_openai.base_url)
    assert row["status"] == "ok", row
    assert "openai_compat" in row["detail"]
