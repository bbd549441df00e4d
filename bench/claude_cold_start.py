"""The first Claude Code session after the service stopped: does the memory reach the model?

Issue 20, item 1: with the service down, the SessionStart hook spawns it and waits at most
5 s for it; a service slower than that meant a session without memory. This runs the real
Claude Code (``tests/real_agents.py``) the way ``tests/test_real_claude.py`` does: one session
makes a memory, then, ``--runs`` times, ``workbench stop`` and a ``claude -p`` session. For
each it prints how long the SessionStart hook took (Claude Code's own debug log) and whether
the model's first request carried the memory.

Figures, never assertions. Usage::

    .venv/bin/python bench/claude_cold_start.py [--runs 3]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.claude_script import claude_rule  # noqa: E402
from tests.fake_anthropic import FakeAnthropic  # noqa: E402
from tests.real_agents import program  # noqa: E402
from tests.real_world import World, open_world  # noqa: E402

MEMORY = "frobnicator"
SESSION_START = re.compile(r"SessionStart:startup \[[^\]]*\] finished with status \d+ \((\d+)ms\)")


def session(world: World, fake: FakeAnthropic, claude: Path, log: Path) -> tuple[float, bool]:
    """One ``claude -p`` reading notes.md: (SessionStart seconds, memory in the first request)."""
    first = len(fake.requests)
    world.run(
        [str(claude), "-p", f"READ {world.project / 'notes.md'}", "--debug-file", str(log)],
        timeout=180,
        ANTHROPIC_BASE_URL=fake.base_url,
        ANTHROPIC_API_KEY="sk-test",
    )
    found = SESSION_START.search(log.read_text("utf-8"))
    seconds = int(found.group(1)) / 1000 if found else float("nan")
    asked = [r for r in fake.requests[first:] if "Read" in str(r.raw[:200_000])]
    return seconds, bool(asked) and MEMORY in asked[0].raw.decode("utf-8", "replace")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    claude = program("claude")
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as fake:
        with open_world(Path(tmp)) as world:
            (world.project / "notes.md").write_text(f"The {MEMORY} is 42.\n", "utf-8")
            world.install("claude")
            world.service.start(timeout=60)
            fake.answer_by(claude_rule)
            session(world, fake, claude, Path(tmp) / "warm.log")
            world.service.wait_idle(timeout=60)
            world.service.stop()
            print("run  SessionStart (s)  memory in the first request")
            for run in range(1, args.runs + 1):
                world.workbench("stop")
                time.sleep(1)
                seconds, delivered = session(world, fake, claude, Path(tmp) / f"cold{run}.log")
                print(f"{run:3}  {seconds:16.2f}  {'yes' if delivered else 'no'}")


if __name__ == "__main__":
    main()
