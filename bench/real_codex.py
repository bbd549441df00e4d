"""Codex CLI 0.171 with workbench: the figures of issue 20's closing table, from the real CLI.

The same user's machine as ``tests/test_real_codex.py`` (its fixture pieces, reused): install,
trust the hooks in Codex's screen, start the service, one session that reads a file. Then:

- ``--runs`` sessions whose first turn searches workbench's tools with ``tool_search``, as
  installed (the MCP server not ``required``) and with ``-c mcp_servers.workbench.required=
  true``: how often the search finds workbench's tools (issue 20 item 9);
- ``--runs`` cold starts: the service stopped (``workbench stop``), a new session: whether
  its first request carries the first session's memory, and the seconds from the stop to
  that request.

Figures, never assertions. Needs npm's registry for the pinned CLI. Usage::

    .venv/bin/python bench/real_codex.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.agent_home import doctor_rows  # noqa: E402
from tests.conftest import run_workbench  # noqa: E402
from tests.fake_openai_responses import FakeResponses  # noqa: E402
from tests.real_world import open_world  # noqa: E402
from tests.test_real_codex import (  # noqa: E402
    CONTEXT_TAG,
    KEY_VAR,
    NAMESPACE,
    READ_PROMPT,
    RECALL_PROMPT,
    SECRET,
    Codex,
    answer,
    trust_in_codex,
    user_config,
)


def found_tools(codex: Codex, name: str) -> bool:
    outputs = [
        i for r in codex.requests[name] for i in r.input if i.get("type") == "tool_search_output"
    ]
    return bool(outputs) and any(t.get("name") == NAMESPACE for t in outputs[-1]["tools"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder, open_world(Path(folder)) as world:
        fake = FakeResponses().start()
        fake.rules.append(answer)
        codex_home = world.home / ".codex"
        codex_home.mkdir()
        world.env.update(CODEX_HOME=str(codex_home), **{KEY_VAR: "local-key"})
        port = int(world.env["WORKBENCH_PORT"])
        (world.data_dir / "settings.json").write_text(json.dumps({"port": port}), "utf-8")
        (codex_home / "config.toml").write_text(user_config(fake), "utf-8")
        (world.project / "notes.md").write_text(f"The secret word is {SECRET}.\n", "utf-8")
        codex = Codex(world, fake, codex_home)
        try:
            world.install("codex")
            trust_in_codex(codex)
            print(f"doctor after the trust: {doctor_rows(world.env)['agent codex']['status']}")
            world.service.start()
            codex.exec("read", READ_PROMPT)
            world.service.wait_idle()
            for required in ("false", "true"):
                hits = 0
                for n in range(runs):
                    name = f"recall-{required}-{n}"
                    codex.exec(
                        name, "-c", f"mcp_servers.workbench.required={required}", RECALL_PROMPT
                    )
                    hits += found_tools(codex, name)
                print(f"first-turn tool_search found workbench's tools (required={required}): "
                      f"{hits}/{runs}")  # fmt: skip
            world.service.wait_idle()
            world.service.stop()
            delivered, seconds = 0, []
            for n in range(runs):
                run_workbench(world.env, "stop", timeout=30)
                stopped = time.monotonic()
                codex.exec(f"cold-{n}", "What do you remember about this project?")
                first = codex.requests[f"cold-{n}"][0]
                if "notes.md" in first.text[first.text.find(CONTEXT_TAG) :]:
                    delivered += 1
                    seconds.append(first.at - stopped)
            median = f"{statistics.median(seconds):.1f} s" if seconds else "n/a"
            print(f"cold start, memory in the first request: {delivered}/{runs}; "
                  f"seconds from the stop to that request, median: {median}")  # fmt: skip
        finally:
            fake.stop()


if __name__ == "__main__":
    main()
