"""Every command has help, and the root help is the quickstart (STYLE lesson 17)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer.main

from workbench.cli.main import app

COMMANDS = sorted(typer.main.get_command(app).commands)  # type: ignore[attr-defined]


def test_root_help_is_a_quickstart() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "--help"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0
    for command in ("workbench install", "workbench serve", "workbench demo"):
        assert command in proc.stdout


def test_expected_commands_are_registered() -> None:
    expected = {
        "serve",
        "status",
        "stop",
        "doctor",
        "install",
        "uninstall",
        "export",
        "import",
        "replay",
        "retry",
        "recompress",
        "demo",
        "mcp",
    }
    assert expected <= set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help(name: str) -> None:
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    assert command.help, f"`workbench {name}` has no help text"
    assert command.help.strip(), f"`workbench {name}` has blank help text"
