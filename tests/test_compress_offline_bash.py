"""The offline compressor's Bash rules (``compress/rules/bash.py``, ``testrun.py``, ``shell.py``):
test runs, git, secrets in commands, lint, installs and plain commands.
"""

from __future__ import annotations

import pytest

from tests.offline_events import ANTHROPIC_KEY, CWD, PYTEST_FAILING, bash, dumped, event, one
from workbench.compress.offline import OfflineCompressor


# ----- Bash ----------------------------------------------------------------------------------
def test_failing_pytest_run_is_a_bugfix_with_counts_failures_and_first_error() -> None:
    obs = one(
        bash("cd /home/dev/proj && uv run pytest -q tests/", PYTEST_FAILING, "Error: Exit code 1")
    )
    assert obs.type == "bugfix"
    assert obs.title == "Tests failing: `cd /home/dev/proj && uv run pytest -q tests/`"
    assert obs.subtitle == "Run it"
    assert obs.facts[0] == "pytest: 3 failed, 41 passed"
    assert "failed: tests/test_queue.py::test_claim_is_exclusive" in obs.facts
    assert "first error: assert 2 == 1" in obs.facts
    assert "exit code 1" in obs.facts
    assert "testing" in obs.concepts
    assert "First failure: tests/test_queue.py::test_claim_is_exclusive" in obs.narrative


def test_a_pass_after_a_failure_is_noted_as_fixed() -> None:
    compressor = OfflineCompressor()
    one(bash("pytest -q", PYTEST_FAILING), compressor)
    fixed = one(bash("pytest -q", "44 passed in 2.02s\n"), compressor)
    assert fixed.type == "bugfix"
    assert fixed.title == "Tests pass again: `pytest -q`"
    assert "previously failing: tests/test_store.py::test_atomic" in fixed.facts
    again = one(bash("pytest -q", "44 passed in 2.02s\n"), compressor)
    assert again.type == "discovery"  # the memory is cleared by the pass
    assert again.title == "Tests pass: `pytest -q`"


def test_a_passing_run_without_history_is_a_discovery() -> None:
    obs = one(
        bash("python -m pytest tests/test_a.py", "===== 12 passed, 1 skipped in 0.50s =====\n")
    )
    assert obs.type == "discovery"
    assert obs.facts[0] == "pytest: 12 passed, 1 skipped"


@pytest.mark.parametrize(
    ("command", "stdout", "stderr", "counts"),
    [
        (
            "npx jest",
            "FAIL src/a.test.ts\n  ● Sum › adds\n\nTests:       1 failed, 12 passed, 13 total\n",
            "",
            "jest: 1 failed, 12 passed",
        ),
        (
            "cargo test",
            "test parse::tests::empty ... FAILED\n\n"
            "test result: FAILED. 3 passed; 1 failed; 0 ignored\n",
            "",
            "cargo test: 1 failed, 3 passed, 0 ignored",
        ),
        (
            "go test ./...",
            "--- FAIL: TestClaim (0.00s)\n    queue_test.go:12: got 2\n"
            "FAIL\tgithub.com/acme/q\t0.01s\n",
            "",
            "go test: 1 failed",
        ),
        ("npm test", "", "Error: Exit code 1\nnpm ERR! Test failed.", "npm test: failing"),
        (
            "python -m unittest",
            "",
            "F.\n======\nFAIL: test_x\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n",
            "unittest: 1 failed, 1 passed",
        ),
    ],
)
def test_other_test_runners_failing(command: str, stdout: str, stderr: str, counts: str) -> None:
    obs = one(bash(command, stdout, stderr))
    assert obs.type == "bugfix"
    assert obs.facts[0] == counts


def test_no_tests_collected_is_not_a_failure() -> None:
    obs = one(
        bash(
            "pytest -k nothing",
            "collected 10 items / 10 deselected\n\n===== 10 deselected in 0.01s =====",
            "Error: Exit code 5",
        )
    )
    assert obs.type == "discovery"
    assert obs.title.startswith("Test run empty")


def test_git_commit_with_heredoc_message() -> None:
    command = (
        "git add -A && git commit -m \"$(cat <<'EOF'\nFix queue claim race\n\n"
        'Claims now take a row lock.\nEOF\n)"'
    )
    obs = one(
        bash(
            command,
            "[main 3f2a9c1] Fix queue claim race\n"
            " 2 files changed, 14 insertions(+), 3 deletions(-)\n"
            " create mode 100644 workbench/store/lock.py\n",
        )
    )
    assert obs.type == "change"
    assert obs.title == "Committed: Fix queue claim race"
    assert "commit 3f2a9c1 on main" in obs.facts
    assert "2 files changed, 14 insertions(+), 3 deletions(-)" in obs.facts
    assert obs.files_modified == ["workbench/store/lock.py"]
    assert "git" in obs.concepts


def test_git_commit_with_m_flag_and_nothing_to_commit() -> None:
    committed = one(
        bash(
            'git commit -m "Add parser tests"',
            "[feat/xml 0a1b2c3] Add parser tests\n 1 file changed, 40 insertions(+)\n",
        )
    )
    assert committed.title == "Committed: Add parser tests"
    assert "commit 0a1b2c3 on feat/xml" in committed.facts
    nothing = one(
        bash(
            'git commit -m "x"',
            "On branch main\nnothing to commit, working tree clean\n",
            "Error: Exit code 1",
        )
    )
    assert nothing.type == "discovery"
    assert nothing.title == "Nothing to commit"


def test_other_git_commands() -> None:
    status = one(
        bash("git status", "On branch main\nChanges not staged for commit:\n\tmodified:   a.py\n")
    )
    assert status.type == "discovery"
    assert status.title == "git status: `git status`"
    moved = one(bash("git mv old/name.py new/name.py"))
    assert moved.type == "refactor"
    assert moved.files_modified == ["old/name.py", "new/name.py"]
    push = one(
        bash(
            "git push --force origin main",
            "",
            "To github.com:acme/app.git\n + 1a2b3c...4d5e6f main -> main (forced update)\n",
        )
    )
    assert push.type == "change"
    assert "forced" in push.facts


def test_secret_in_command_output_is_an_alert_and_never_stored() -> None:
    obs = one(bash("cat .env", f"ANTHROPIC_API_KEY={ANTHROPIC_KEY}\nDEBUG=1\n"))
    assert obs.type == "security_alert"
    assert "output contains an Anthropic API key (value not stored)" in obs.facts
    assert "touches .env" in obs.facts
    assert obs.files_read == [".env"]
    assert ANTHROPIC_KEY not in dumped(obs)


def test_secret_typed_into_a_command_is_masked() -> None:
    obs = one(bash(f"export ANTHROPIC_API_KEY={ANTHROPIC_KEY} && claude -p hi", "hello"))
    assert obs.type == "security_note"
    assert "command sets a secret variable" in obs.facts
    assert ANTHROPIC_KEY not in dumped(obs)
    assert "[secret]" in obs.title


def test_a_secret_passed_by_reference_does_not_hide_the_test_run() -> None:
    obs = one(bash("GITHUB_TOKEN=$GITHUB_TOKEN npm test", "Tests:       2 passed, 2 total\n"))
    assert obs.type == "discovery"
    assert obs.facts[0] == "npm test (jest): 2 passed"  # the runner behind npm, by its output


@pytest.mark.parametrize(
    ("command", "what"),
    [
        ("curl -fsSL https://example.com/install.sh | sh", "command pipes a download into a shell"),
        ("chmod -R 777 /srv/app", "command makes files world-writable"),
        ("ssh-keygen -t ed25519 -f deploy_key", "command uses a credential tool"),
        ("printenv", "command prints the environment"),
    ],
)
def test_sensitive_commands_are_security_notes(command: str, what: str) -> None:
    obs = one(bash(command, "done"))
    assert obs.type == "security_note"
    assert what in obs.facts


def test_lint_failures_and_clean_runs() -> None:
    failing = one(
        bash(
            "ruff check .",
            "workbench/x.py:3:1: F401 `os` imported but unused\nFound 3 errors.\n",
            "Error: Exit code 1",
        )
    )
    assert failing.type == "bugfix"
    assert "ruff: Found 3 errors" in failing.facts
    assert "first error: workbench/x.py:3:1: F401 `os` imported but unused" in failing.facts
    clean = one(bash("uv run mypy workbench", "Success: no issues found in 40 source files\n"))
    assert clean.type == "discovery"
    assert clean.title == "mypy passes: `uv run mypy workbench`"
    formatted = one(
        bash("ruff format workbench/", "3 files reformatted, 40 files left unchanged\n")
    )
    assert formatted.type == "change"
    assert formatted.files_modified == ["workbench/"]


def test_installs_moves_and_file_operations() -> None:
    install = one(
        bash("pip install httpx 'rich>=13'", "Successfully installed httpx-0.29.0 rich-13.9.0\n")
    )
    assert install.type == "change"
    assert install.title == "Installed httpx, rich>=13"
    assert "dependencies" in install.concepts
    move = one(bash(f"mv {CWD}/src/old.py {CWD}/src/new.py"))
    assert move.type == "refactor"
    assert move.files_modified == ["src/old.py", "src/new.py"]
    remove = one(bash("rm -rf build/ dist"))
    assert remove.type == "change"
    assert remove.files_modified == ["build/"]
    redirect = one(bash("echo 'x = 1' > generated/consts.py 2>&1"))
    assert redirect.type == "change"
    assert redirect.files_modified == ["generated/consts.py"]
    heredoc = one(bash("cat > notes/plan.md <<'EOF'\nif a > b: go\nEOF", ""))
    assert heredoc.files_modified == ["notes/plan.md"]
    arrow = one(bash("python -c 'print(2 > 1)'", "True"))
    assert arrow.type == "discovery"


def test_plain_commands_are_discoveries_with_output() -> None:
    cat = one(bash(f"cat {CWD}/pyproject.toml", "[project]\nname = 'x'\n"))
    assert cat.type == "discovery"
    assert cat.files_read == ["pyproject.toml"]
    assert "output: [project]" in cat.facts
    failed = one(
        event(
            "Bash",
            {"command": "make deploy"},
            "Error: Exit code 2\nmake: *** No rule to make target 'deploy'.",
        )
    )
    assert "exit code 2" in failed.facts
    background = one(
        event(
            "Bash",
            {"command": "python -m http.server", "run_in_background": True},
            {"stdout": "", "stderr": "", "backgroundTaskId": "b1"},
        )
    )
    assert "started in the background" in background.facts
