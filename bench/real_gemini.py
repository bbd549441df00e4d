"""The real Gemini CLI 0.61.0, before vs after issue 20's Gemini fixes (items 10-12): figures.

Runs what tests/test_real_gemini.py runs (three ``gemini -p`` sessions: a ``read_file``, a
``list_directory``, workbench's own ``mcp_workbench_search``; then the interactive UI and
``/quit`` in a pseudo-terminal), against the fake Gemini API, once on another commit's code
(``git archive`` of ``--before-ref``, first on ``PYTHONPATH`` and the cwd of install and the
service, so the hooks install writes are that tree's) and once on this tree. Unlike the test,
every hook command is wrapped to copy its stdin to a file first: that copy is what Gemini
*sent*, the store is what was *kept*.

Prints per side: hook events Gemini sent / events stored / duplicates stored, per kind; the
stored prompt lengths of the three ``-p`` sessions (they must not grow); whether the second
session's first model request carried the first session's memory; whether the MCP search
was offered and its answer reached the model; observations per session.

Figures, never assertions. Usage::

    .venv/bin/python bench/real_gemini.py [--before-ref b6db5e8]
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, hook_env, tree_at  # noqa: E402
from tests import real_agents  # noqa: E402
from tests.conftest import Service, http_json  # noqa: E402
from tests.fake_gemini import FakeGemini  # noqa: E402
from tests.real_world import World  # noqa: E402
from tests.test_real_gemini import (  # noqa: E402
    NOTES,
    PROMPTS,
    QUIT_PROMPT,
    USER_SETTINGS,
    Run,
    first_turn,
    quit_interactively,
)

SEEN = "hooks-seen.jsonl"


def wrap_hooks(settings: Path, copy_to: Path) -> None:
    """Make each workbench hook command copy its stdin to ``copy_to`` (one line per event)."""
    config = json.loads(settings.read_text("utf-8"))
    for groups in config.get("hooks", {}).values():
        for group in groups:
            for hook in group.get("hooks", []):
                command = hook["command"].replace("WORKBENCH_DATA_DIR=", "env WORKBENCH_DATA_DIR=")
                hook["command"] = f"(cat; echo) | tee -a {copy_to} | {command}"
    settings.write_text(json.dumps(config, indent=2), "utf-8")


def start_service(svc: Service, code_root: Path) -> None:
    log = (svc.data_dir.parent / "service.log").open("wb")
    svc.proc = subprocess.Popen(
        [sys.executable, "-m", "service"], cwd=code_root, env=svc.env, stdout=log, stderr=log
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            status, body = http_json("GET", f"{svc.url}/api/health", timeout=1.0)
            if status == 200 and isinstance(body, dict):
                return
        except OSError:
            pass
        time.sleep(0.1)
    raise RuntimeError("the service did not start")


def one_side(code_root: Path, program: str) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="wb-real-gemini-"))
    home, project, data_dir = root / "home", root / "project", root / "data"
    for folder in (home / ".gemini", project, data_dir):
        folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / "notes.md").write_text(NOTES, "utf-8")
    (home / ".gemini" / "settings.json").write_text(json.dumps(USER_SETTINGS), "utf-8")
    port = free_port()
    env = hook_env(data_dir, port, HOME=str(home), PYTHONPATH=str(code_root))
    for key in [k for k in env if k.startswith(("ANTHROPIC_", "OPENAI_", "GOOGLE_", "GEMINI_"))]:
        del env[key]
    subprocess.run(
        [sys.executable, "-m", "workbench", "install", "--agent", "gemini"],
        cwd=code_root,
        env=env,
        check=True,
        capture_output=True,
    )
    wrap_hooks(home / ".gemini" / "settings.json", root / SEEN)
    svc = Service(data_dir=data_dir, port=port, env=env)
    start_service(svc, code_root)
    world = World(home=home, project=project, data_dir=data_dir, env=env, service=svc)
    with FakeGemini() as fake:
        fake.on_prompt("notes", "read_file", {"file_path": "notes.md"})
        fake.on_prompt("listing", "list_directory", {"dir_path": "."})
        fake.on_prompt("recall", "mcp_workbench_search", {"query": "deploy key"})
        run = Run(world=world, fake=fake, program=program)
        try:
            for prompt in PROMPTS:
                run.requests.append(run.gemini(prompt))
                svc.wait_idle(60)
            quit_interactively(run, QUIT_PROMPT)
            svc.wait_idle(60)
            return figures(run, root / SEEN)
        finally:
            svc.stop()


def figures(run: Run, seen_file: Path) -> dict[str, Any]:
    seen = [json.loads(line) for line in seen_file.read_text("utf-8").splitlines() if line]
    sent = collections.Counter(e["hook_event_name"] for e in seen)
    events = run.world.events()
    stored = collections.Counter(e["kind"] for e in events)
    per_session = collections.Counter((e["content_session_id"], e["kind"]) for e in events)
    duplicated = collections.Counter(
        kind for (_, kind), n in per_session.items() for _ in range(n - 1)
    )
    prompts = run.world.rows("SELECT prompt_text FROM user_prompts ORDER BY id")
    sessions = run.sessions()
    observations = [
        len(run.world.rows(
            "SELECT id FROM observations WHERE content_session_id = ?", s["content_session_id"]
        ))
        for s in sessions
    ]  # fmt: skip
    second = first_turn(run.requests[1]).text
    offered = "mcp_workbench_search" in first_turn(run.requests[2]).tool_names
    answered = any(
        "functionResponse" in r.text and "Read notes.md" in r.text
        for r in run.requests[2]
        if r.is_turn
    )
    return {
        "hook events sent by Gemini": dict(sent),
        "events stored": dict(stored),
        "duplicates stored": dict(duplicated),
        "platform_source": sorted({s["platform_source"] for s in sessions}),
        "stored prompt lengths (3 -p sessions)": [len(p["prompt_text"]) for p in prompts[:3]],
        "context in session 2 (S1's memory)": "Read notes.md" in second,
        "MCP search offered / answer reached the model": (offered, answered),
        "observations per session": observations,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-ref", default="b6db5e8")
    args = parser.parse_args()
    program = str(real_agents.program("gemini"))
    for side, code_root in (("before", tree_at(args.before_ref)), ("after", ROOT)):
        started = time.monotonic()
        result = one_side(code_root, program)
        print(f"== {side} ({code_root}), {time.monotonic() - started:.0f} s")
        for key, value in result.items():
            print(f"  {key}: {value}")


if __name__ == "__main__":
    main()
