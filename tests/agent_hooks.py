"""Run a hook as an agent runs it, and read back what it left (the spool, the store).

An agent runs a hook command with the event's JSON on stdin and reads stdout; the contract
every hook keeps, whatever the platform (ARCHITECTURE.md): exit 0, nothing on stderr, exactly
one JSON object on stdout. ``run_as_agent`` asserts it and returns that object, so each
platform's tests only say which command runs for which payload.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import HOOKS_DIR, Service
from workbench import spool
from workbench.store.database import Store


def script_argv(script: str, platform: str) -> list[str]:
    """The argv of ``hooks/<script>.py --platform <platform>`` under this interpreter."""
    return [sys.executable, str(HOOKS_DIR / f"{script}.py"), "--platform", platform]


def run_as_agent(
    argv: list[str],
    payload: dict[str, Any] | bytes,
    env: dict[str, str],
    cwd: Path | None = None,
) -> dict[str, Any]:
    """Run ``argv`` with ``payload`` on stdin; assert the hook contract; return its JSON."""
    raw = payload if isinstance(payload, bytes) else json.dumps(payload).encode("utf-8")
    proc = subprocess.run(argv, input=raw, env=env, cwd=cwd, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert proc.stderr == b"", proc.stderr.decode(errors="replace")
    lines = proc.stdout.decode("utf-8").splitlines()
    assert len(lines) == 1, proc.stdout
    value = json.loads(lines[0])
    assert isinstance(value, dict)
    return value


def spooled(data_dir: Path) -> list[spool.Envelope]:
    """The envelopes in ``data_dir``'s spool: what hooks wrote while the service was down."""
    return [
        spool.Envelope.from_json(p.read_text("utf-8")) for p in spool.pending(data_dir / "spool")
    ]


def db_rows(svc: Service, sql: str, *args: Any) -> list[dict[str, Any]]:
    """``sql`` on the service's store, opened read-only, as dicts."""
    with Store(svc.data_dir / "workbench.db", readonly=True) as ro:
        return [dict(r) for r in ro.conn.execute(sql, args)]


def assert_carries_memory(output: dict[str, Any], before: str, titles: list[str]) -> None:
    """A next session's SessionStart ``output`` holds only the context, and it has the titles.

    ``before`` is what the first SessionStart printed: none of ``titles`` were in it, so they
    came from the session in between.
    """
    context = output["hookSpecificOutput"]["additionalContext"]
    assert output == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}
    }
    assert context.startswith("<workbench-context>")
    assert any(title in context for title in titles)
    assert not any(title in before for title in titles)
