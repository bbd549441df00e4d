"""One rule for every command about the service (issue 19, item 13).

A command that needs the service uses the running one, or starts a temporary one, says so,
and stops it when done (``forget`` too, which used to refuse); each says so in ``--help``.
``corpus build --project`` with a project the memory has never seen is an error naming the
known ones, not a silently empty corpus.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.conftest import free_port
from tests.test_hardening_newuser import clean_env, run, seed
from workbench.cli.main import app

RULE = "a temporary one is started"
NEEDS_THE_SERVICE = [
    ["forget"],
    ["import"],
    ["replay"],
    ["retry"],
    ["recompress"],
    ["reindex"],
    ["corpus", "build"],
    ["corpus", "rm"],
    ["corpus", "rebuild"],
    ["agent", "prime"],
    ["agent", "reprime"],
    ["agent", "ask"],
    ["mcp"],
]


@pytest.mark.parametrize("argv", NEEDS_THE_SERVICE, ids=lambda a: "-".join(a))
def test_every_command_that_needs_the_service_states_the_rule_in_its_help(
    argv: list[str],
) -> None:
    result = CliRunner().invoke(app, [*argv, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert RULE in " ".join(result.output.split()), result.output


def test_corpus_build_for_an_unknown_project_names_the_known_ones(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    port = free_port()
    seed(data_dir, port)
    env = clean_env(WORKBENCH_DATA_DIR=str(data_dir), WORKBENCH_PORT=str(port))
    proc = run(["workbench", "corpus", "build", "typo", "--project", "nosuch"], tmp_path, env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "no project named 'nosuch'" in proc.stderr
    assert "payments-api" in proc.stderr  # one of the demo history's projects
    assert not (data_dir / "corpora" / "typo.json").exists()
