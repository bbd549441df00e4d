"""The Bash rules, in order; the first that matches any segment of the command wins.

1. a secret-looking value in the output → ``security_alert`` (the kind is named, never the value)
2. a command touching ``.env``/credentials/keys, setting a secret variable, dumping the
   environment, piping a download into a shell, ``chmod 777`` → ``security_note``
3. a test runner, known by its command or by its output (``make test``, ``./ci.sh`` printing
   pytest's summary) → ``bugfix`` when it fails (counts, failing tests, first error, exit code);
   a passing run of a runner that failed earlier in the same session → ``bugfix`` ("pass
   again"); any other passing run → ``discovery``
4. git (``tooling``): ``commit`` → ``change`` (hash, branch, stat); ``mv`` → ``refactor``;
   other writes → ``change``; reads (status, diff, log…) → ``discovery``
5. linters, type checkers, builds (``tooling``) → ``bugfix`` when they report errors, else
   ``discovery``; formatters that write → ``change``
6. package installs (``tooling``) → ``change``
7. file operations (``tooling``): ``mv`` → ``refactor``; ``rm``/``mkdir``/``cp``/``sed -i``/
   ``> file``… → ``change``
8. anything else → ``discovery`` with the exit code and the first output or error line, and
   ``files_read`` for ``cat``/``head``/``tail``…
"""

from __future__ import annotations

import re
from collections.abc import Callable

from workbench.compress.rules.call import ToolCall
from workbench.compress.rules.secrets import secret_kinds
from workbench.compress.rules.shell import BashCall, FailureMemory, file_args, subcommand
from workbench.compress.rules.tags import concepts_for
from workbench.compress.rules.testrun import RunOutcome, parse_test_output, runner_from_output
from workbench.compress.rules.text import dedupe, first_line
from workbench.compress.rules.tooling import check_rule, file_ops_rule, git_rule, install_rule
from workbench.models import ObservationDraft

Rule = Callable[[BashCall], ObservationDraft | None]

_SECRET_CMD = re.compile(
    r"(?P<file>(?:^|[\s/'\"=:])\.env(?:\.[\w-]+)?(?=$|[\s'\"/;|&)])|\bid_(?:rsa|dsa|ecdsa|ed25519)\b"
    r"|[\w-]\.(?:pem|p12|pfx|key)\b|\bcredentials?(?:\.\w+)?\b|\.netrc\b|\.npmrc\b|\.pypirc\b)"
    r"|(?P<tool>\b(?:ssh-keygen|ssh-add|gpg)\b|\bvault\s+(?:kv|read|write|login)\b"
    r"|\bop\s+(?:read|item|signin)\b|\bsecurity\s+find-\w+-password\b|\baws\s+configure\b"
    r"|\b(?:gh|gcloud)\s+auth\b|\b(?:docker|npm)\s+login\b|\bkubectl\s+get\s+secrets?\b)"
    # a literal value only: ``GITHUB_TOKEN=$GITHUB_TOKEN npm test`` passes a secret along
    r"|(?P<var>\b[A-Z][A-Z0-9_]*(?:API_KEY|TOKEN|SECRET|PASSWORD)[A-Z0-9_]*=(?=[\"']?[^\s$\"']))"
    r"|(?P<env>\bprintenv\b|(?:^|[;&|]\s*)env\s*(?:$|[;&|]))"
    r"|(?P<pipe>\b(?:curl|wget)\b[^|\n]*\|\s*(?:sudo\s+)?(?:ba|z)?sh\b)"
    r"|(?P<perm>\bchmod\s+(?:-R\s+)?0?777\b)"
)
_SECRET_CMD_WHAT = {
    "file": "touches a secrets file",
    "tool": "uses a credential tool",
    "var": "sets a secret variable",
    "env": "prints the environment",
    "pipe": "pipes a download into a shell",
    "perm": "makes files world-writable",
}
_TEST_VERBS = frozenset(
    "pytest py.test tox nox jest vitest mocha rspec phpunit ctest unittest".split()
)
_TEST_SUBS = {
    "npm": {"test", "t"},
    "pnpm": {"test"},
    "yarn": {"test"},
    "bun": {"test"},
    "cargo": {"test", "nextest"},
    "go": {"test"},
    "mvn": {"test", "verify"},
    "gradle": {"test"},
    "gradlew": {"test"},
    "make": {"test", "check"},
    "dotnet": {"test"},
    "deno": {"test"},
    "mix": {"test"},
    "swift": {"test"},
}
_READ_VERBS = frozenset("cat head tail less more bat wc nl sort uniq jq xxd od stat file".split())
_SEARCH_VERBS = frozenset("grep egrep rg ag ack git".split())
_NOISE_VERBS = frozenset("cd pushd popd source . export set true echo printf sleep :".split())


def observe_bash(call: ToolCall, memory: FailureMemory) -> ObservationDraft:
    """The observation for one Bash call (a command is always worth a line)."""
    bash = BashCall.parse(call, memory)
    for rule in RULES:
        draft = rule(bash)
        if draft is not None:
            return draft
    return _generic(bash)


# ----- 1, 2: security ----------------------------------------------------------------------
def _secret_output(b: BashCall) -> ObservationDraft | None:
    kinds = secret_kinds(b.call.text)
    if not kinds:
        return None
    touched = _touched_secret_files(b.command)
    return b.draft(
        "security_alert",
        f"Secret-looking value in output of `{b.cmd()}`",
        [f"output contains {kind} (value not stored)" for kind in kinds]
        + [f"touches {path}" for path in touched],
        f"The output of `{b.cmd(80)}` contains {', '.join(kinds)}. Rotate it if it is real "
        "and keep it out of logs and transcripts.",
        tags=["security", "secrets"],
        read=touched,
    )


def _secret_command(b: BashCall) -> ObservationDraft | None:
    matches = list(_SECRET_CMD.finditer(b.command))
    if not matches:
        return None
    whats = dedupe(_SECRET_CMD_WHAT[m.lastgroup or "file"] for m in matches)
    touched = _touched_secret_files(b.command)
    return b.draft(
        "security_note",
        f"Sensitive command: `{b.cmd()}`",
        [f"command {what}" for what in whats] + [f"touches {path}" for path in touched],
        f"Ran `{b.cmd(80)}`, which {' and '.join(whats)}.",
        tags=["security", "secrets"],
        read=touched,
    )


def _touched_secret_files(command: str) -> list[str]:
    found = (m.group("file") for m in _SECRET_CMD.finditer(command) if m.group("file"))
    return dedupe(f.strip(" '\"=:/") for f in found)


# ----- 3: tests ----------------------------------------------------------------------------
def _test_runner(words: list[str]) -> str | None:
    verb, sub = words[0], subcommand(words)
    if verb in _TEST_VERBS:
        return verb
    if sub in _TEST_SUBS.get(verb, ()):
        return f"{verb} {sub}"
    if verb in ("npm", "pnpm", "yarn", "bun") and sub == "run" and len(words) > 2:
        return f"{verb} run {words[2]}" if words[2].startswith("test") else None
    return None


def _runner(b: BashCall) -> str | None:
    """The runner's name: from the command, with the runner its output shows when they differ.

    ``make test`` printing pytest's output is ``make test (pytest)``; a command that names no
    runner (``./scripts/ci.sh``) is known by its output alone, unless it only shows a file
    (``cat``, ``grep``… of an old log is not a test run).
    """
    by_command = next((r for r in map(_test_runner, b.segments) if r), None)
    main = next((w[0] for w in b.segments if w[0] not in _NOISE_VERBS), "")
    if by_command is None and (main in _READ_VERBS or main in _SEARCH_VERBS):
        return None
    by_output = runner_from_output(b.call.text)
    if by_command is None or by_output is None or by_output in by_command:
        return by_command or by_output
    return f"{by_command} ({by_output})"


def _tests(b: BashCall) -> ObservationDraft | None:
    runner = _runner(b)
    if runner is None:
        return None
    outcome = parse_test_output(b.call.text)
    status = outcome.status(b.code, interrupted=b.call.resp.get("interrupted") is True)
    facts = [f"{runner}: {outcome.counts_text() or status}"]
    facts += [f"failed: {name}" for name in outcome.failures[:5]]
    if outcome.first_error:
        facts.append(f"first error: {outcome.first_error}")
    facts += outcome.notes
    tags = ["testing", *concepts_for(outcome.failure_files())]
    key = (b.call.session, runner)
    if status == "failing":
        b.memory.failed(key, outcome.failures)
        kind, title, verdict = "bugfix", "Tests failing", "failed"
    elif status == "passing" and (before := b.memory.passed(key)) is not None:
        facts += [f"previously failing: {name}" for name in before[:5]]
        kind, title, verdict = "bugfix", "Tests pass again", "passed again after failing"
    elif status == "passing":
        kind, title, verdict = "discovery", "Tests pass", "passed"
    else:
        kind, title, verdict = "discovery", f"Test run {status}", status
    narrative = _test_narrative(runner, outcome, verdict)
    return b.draft(kind, f"{title}: `{b.cmd()}`", facts, narrative, tags=tags)


def _test_narrative(runner: str, outcome: RunOutcome, verdict: str) -> str:
    counts = outcome.counts_text()
    text = f"The {runner} run {verdict}" + (f" ({counts})." if counts else ".")
    if outcome.failures:
        text += f" First failure: {outcome.failures[0]}."
    if outcome.first_error:
        text += f" Error: {outcome.first_error}"
    return text


# ----- 8: anything else --------------------------------------------------------------------
def _generic(b: BashCall) -> ObservationDraft:
    segments = b.segments
    main = next((w for w in segments if w[0] not in _NOISE_VERBS), segments[0] if segments else [])
    read = file_args(main) if main and main[0] in _READ_VERBS else []
    error, output = b.call.failure(), first_line(b.call.text)
    facts = [f"error: {error}" if error else f"output: {output}" if output else ""]
    lines = b.call.text.count("\n") + 1 if b.call.text else 0
    if lines > 1:
        facts.append(f"{lines} lines of output")
    narrative = f"Ran `{b.cmd(100)}`" + (f" (exit code {b.code})" if b.code else "")
    narrative += f"; it printed: {output}" if output else "; no output."
    title = f"Ran `{b.cmd(70)}`" if b.command else "Ran an empty command"
    return b.draft("discovery", title, facts, narrative, read=read)


RULES: tuple[Rule, ...] = (
    _secret_output,
    _secret_command,
    _tests,
    git_rule,
    check_rule,
    install_rule,
    file_ops_rule,
)
