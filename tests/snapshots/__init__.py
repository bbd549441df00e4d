"""Snapshot files for whole-text comparisons, and the helper that reads them.

Compare a rendered block whole (STYLE.md lesson 25): one assertion shows every change at once,
as a diff. Write the assertion in the test, so pytest's rewriting prints that diff:

    assert text == snapshot("context_session_start.txt", text)

To accept an intended change, regenerate and review the diff in git:

    UPDATE_SNAPSHOTS=1 .venv/bin/pytest tests/test_context.py tests/test_file_history.py

A missing snapshot file is an error (never silently created), so a fresh checkout cannot
pass by writing its own expectations.
"""

from __future__ import annotations

import os
from pathlib import Path

SNAPSHOTS = Path(__file__).resolve().parent


def snapshot(name: str, actual: str) -> str:
    """The expected text of ``tests/snapshots/<name>`` (rewritten first with UPDATE_SNAPSHOTS=1)."""
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(actual, encoding="utf-8")
    if not path.exists():
        raise FileNotFoundError(
            f"no snapshot {path}; create it with UPDATE_SNAPSHOTS=1 and review it in git"
        )
    return path.read_text(encoding="utf-8")
