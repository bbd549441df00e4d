"""The suite caches bytecode even when the shell says not to (issue 23: its wall time).

With ``PYTHONDONTWRITEBYTECODE`` set, each of the ~2,000 interpreters a run starts (services,
CLIs, hooks) compiled every module it imports from source again, and each xdist worker rewrote
every test module's asserts again. conftest lifts the variable for the run, so bytecode lands
in the ``__pycache__`` folders git ignores, as any Python install writes it. Checked in a child
pytest that loads conftest, started with the variable set.
"""

from __future__ import annotations

from pathlib import Path

from tests.child_pytest import one_folder_run

PROBE = """
import os
import subprocess
import sys


def test_this_process_and_its_children_write_bytecode():
    assert sys.dont_write_bytecode is False
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ
    child = subprocess.run(
        [sys.executable, "-c", "import sys; print(sys.flags.dont_write_bytecode)"],
        env=dict(os.environ), capture_output=True, text=True, check=True,
    )
    assert child.stdout.strip() == "0"
"""


def test_a_run_started_without_bytecode_caches_it_and_so_do_its_children(tmp_path: Path) -> None:
    proc = one_folder_run(tmp_path, {"test_probe.py": PROBE}, PYTHONDONTWRITEBYTECODE="1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "PASSED t/test_probe.py::test_this_process_and_its_children_write_bytecode" in (
        proc.stdout
    )
    assert list((tmp_path / "t" / "__pycache__").glob("test_probe*.pyc"))
