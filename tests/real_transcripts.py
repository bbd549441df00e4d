"""Real transcripts: the real Claude Code and Codex CLIs (npm, pinned) write them in a HOME.

``tests/test_transcripts_*.py`` import what the agents themselves wrote, never hand-written
lines: each helper runs one session of the real program in ``world.project`` against a local
fake model server (``tests/fake_anthropic.py``, ``tests/fake_openai_responses.py``), with no
workbench hook unless the test installed them, and returns the transcript file it left.

- ``claude_session``: ``claude -p PROMPT``; ``READ <path>`` makes a ``Read`` tool call
  (``tests/claude_script.py``), anything else a text reply. The file is
  ``$HOME/.claude/projects/<folder>/<session>.jsonl``.
- ``codex_session``: ``codex exec PROMPT``; ``test_real_codex.READ_PROMPT`` makes an
  ``exec_command`` call (``cat notes.md``). The file is
  ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``.
"""

from __future__ import annotations

from pathlib import Path

from tests.claude_script import claude_rule
from tests.fake_anthropic import FakeAnthropic
from tests.fake_openai_responses import FakeResponses
from tests.real_agents import program
from tests.real_world import World

CODEX_KEY_VAR = "WORKBENCH_TEST_FAKE_OPENAI_KEY"


def _new(files: set[Path], pattern: str, root: Path) -> Path:
    found = set(root.glob(pattern)) - files
    assert len(found) == 1, f"expected one new transcript under {root}, found {sorted(found)}"
    return found.pop()


def claude_session(world: World, prompt: str) -> Path:
    """One real ``claude -p`` session; the transcript file it wrote."""
    root = world.home / ".claude" / "projects"
    before = set(root.glob("*/*.jsonl"))
    with FakeAnthropic() as fake:
        fake.answer_by(claude_rule)
        proc = world.run(
            [str(program("claude")), "-p", prompt],
            timeout=180,
            ANTHROPIC_BASE_URL=fake.base_url,
            ANTHROPIC_API_KEY="sk-test",
        )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return _new(before, "*/*.jsonl", root)


def codex_session(world: World, prompt: str) -> Path:
    """One real ``codex exec`` session (its config written on first use); its rollout file."""
    from tests.test_real_codex import answer, user_config

    codex_home = world.home / ".codex"
    codex_home.mkdir(exist_ok=True)
    root = codex_home / "sessions"
    before = set(root.glob("**/*.jsonl"))
    fake = FakeResponses().start()
    try:
        fake.rules.append(answer)
        (codex_home / "config.toml").write_text(user_config(fake), "utf-8")
        proc = world.run(
            [str(program("codex")), "exec", "--skip-git-repo-check", prompt],
            stdin="",
            timeout=180,
            CODEX_HOME=str(codex_home),
            **{CODEX_KEY_VAR: "local-key"},
        )
    finally:
        fake.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return _new(before, "**/*.jsonl", root)
