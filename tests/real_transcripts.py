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


def codex_config(world: World, fake: FakeResponses) -> Path:
    """The user's ``config.toml`` (their model served by ``fake``), as before an install;
    returns CODEX_HOME."""
    from tests.test_real_codex import answer, user_config

    codex_home = world.home / ".codex"
    codex_home.mkdir(exist_ok=True)
    fake.rules.append(answer)
    (codex_home / "config.toml").write_text(user_config(fake), "utf-8")
    return codex_home


def codex_session(world: World, prompt: str, fake: FakeResponses | None = None) -> Path:
    """One real ``codex exec`` session; its rollout file. Without ``fake``, a new fake model
    and the user's config are made for it; with one, the config already written
    (``codex_config``, then perhaps ``workbench install --agent codex``) is kept."""
    own = fake is None
    served = FakeResponses().start() if fake is None else fake
    codex_home = codex_config(world, served) if own else world.home / ".codex"
    root = codex_home / "sessions"
    before = set(root.glob("**/*.jsonl"))
    try:
        proc = world.run(
            [str(program("codex")), "exec", "--skip-git-repo-check", prompt],
            stdin="",
            timeout=180,
            CODEX_HOME=str(codex_home),
            **{CODEX_KEY_VAR: "local-key"},
        )
    finally:
        if own:
            served.stop()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return _new(before, "**/*.jsonl", root)
