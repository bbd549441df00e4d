"""The real OpenCode with workbench, in figures: what is stored, and memory after a cold start.

One user's machine (``tests/real_world.py``: a temp HOME, a project, a data dir), the pinned
``opencode`` binary after ``workbench install --agent opencode``, its model the rule-driven
fake Anthropic API of the test suite (``tests/opencode_model.py``). Per round:

- a warm session (the service up): a prompt that makes OpenCode read a file, then answer.
  Printed: seconds of ``opencode run``; seconds from its start to its first model request
  holding the memory (from round 2: the first round makes it); the events the plugin sends
  for it (from OpenCode's own JSON output: the session's start with its prompt, one per tool
  call, the Stop at ``session.idle``), how many were stored and how many twice; and how long
  after OpenCode exited its Stop was stored (0.00: before it exited);
- a cold start: ``workbench stop``, then the same kind of session. Printed: seconds from the
  stop to the first model request whose system prompt holds the memory (the first round's
  observation), or "none" when no request of the session had it.

Figures, never assertions (``tests/test_real_opencode.py`` asserts). Usage::

    .venv/bin/python bench/opencode_session.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.fake_anthropic import tool_names  # noqa: E402
from tests.opencode_model import Call, OpenCodeModel  # noqa: E402
from tests.real_opencode import Run, Tripwire, opencode, user_config  # noqa: E402
from tests.real_world import World, open_world  # noqa: E402

PROMPT = "Read notes.md and say how long refresh tokens live"


def stored_after_exit(world: World, run: Run, timeout: float = 30.0) -> float | None:
    """Seconds from OpenCode's exit until the session's Stop is stored (None: never)."""
    while time.monotonic() < run.ended + timeout:
        rows = world.rows(
            "SELECT 1 FROM events WHERE kind = 'summarize' AND content_session_id = ?",
            run.session_id,
        )
        if rows:
            return time.monotonic() - run.ended
        time.sleep(0.02)
    return None


def event_counts(world: World, run: Run) -> tuple[int, int, int]:
    """Events the plugin sends for ``run`` / stored / stored more than once."""
    calls = [line["part"]["callID"] for line in run.lines if line.get("type") == "tool_use"]
    sent = 1 + len(calls) + 1  # the start with its prompt, each tool call, the Stop
    rows = world.rows(
        "SELECT kind, payload FROM events WHERE content_session_id = ?", run.session_id
    )
    keys = [(r["kind"], json.loads(r["payload"]).get("tool_use_id")) for r in rows]
    return sent, len(rows), len(keys) - len(set(keys))


def first_memory(model: OpenCodeModel, since: int, title: str, stopped: float) -> str:
    """Seconds from ``stopped`` to the first agent request (after ``since``) holding ``title``."""
    for request, arrived in zip(model.requests[since:], model.arrived[since:], strict=True):
        if tool_names(request) and title in request.system_text:
            return f"{arrived - stopped:.1f}"
    return "none"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    plays: dict[str, list[Call]] = {PROMPT[:13]: []}
    with (
        tempfile.TemporaryDirectory() as tmp,
        OpenCodeModel(plays) as model,
        Tripwire() as network,
        open_world(Path(tmp)) as world,
    ):
        notes = world.project / "notes.md"
        notes.write_text("The auth module rotates refresh tokens every 14 days.\n", "utf-8")
        plays[PROMPT[:13]] = [("read", {"filePath": str(notes)})]
        user_config(world, model)
        world.install("opencode")
        world.service.start()
        title = ""
        columns = ["warm run s", "warm: s to memory", "sent/stored/dup", "Stop after exit s"]
        print("round  " + "  ".join(columns) + "  cold: s to memory")
        for number in range(1, args.rounds + 1):
            started, since = time.monotonic(), len(model.requests)
            warm = opencode(world, PROMPT, network)
            seconds = warm.ended - started
            warm_memory = first_memory(model, since, title, started) if title else "-"
            after = stored_after_exit(world, warm)
            sent, stored, dup = event_counts(world, warm)
            if not title:
                world.service.wait_idle()
                (row,) = world.rows("SELECT title FROM observations ORDER BY id LIMIT 1")
                title = row["title"]
            world.service.stop()
            world.workbench("stop")  # a service a previous cold start spawned
            stopped, since = time.monotonic(), len(model.requests)
            opencode(world, PROMPT, network)
            cold = first_memory(model, since, title, stopped)
            late = "never" if after is None else f"{after:.2f}"
            counts = f"{sent}/{stored}/{dup}"
            print(
                f"{number:5}  {seconds:10.1f}  {warm_memory:>17}  {counts:>15}  {late:>17}"
                f"  {cold:>17}"
            )


if __name__ == "__main__":
    main()
