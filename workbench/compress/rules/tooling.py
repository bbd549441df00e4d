"""Bash rules for developer tooling: git, linters/builds/formatters, installs, file operations.

Each ``*_rule`` returns ``None`` when the command is not its kind, so ``bash.RULES`` can try
them in order. See ``bash`` for the order and the types each rule gives.
"""

from __future__ import annotations

import re

from workbench.compress.rules.shell import HEREDOC, BashCall, args_of, file_args, subcommand
from workbench.compress.rules.text import first_line, short
from workbench.models import ObservationDraft

_CHECK_VERBS = frozenset(
    "ruff flake8 pylint mypy pyright eslint tsc biome shellcheck hadolint golangci-lint".split()
)
_CHECK_SUBS = {
    "cargo": {"build", "check", "clippy"},
    "go": {"build", "vet"},
    "mvn": {"compile", "package"},
    "gradle": {"build"},
    "gradlew": {"build"},
    "make": {"", "all", "build"},
}
_NPM_CHECKS = ("build", "lint", "typecheck", "type-check", "check", "tsc")
_FORMATTERS = frozenset("black isort gofmt rustfmt prettier autopep8".split())
_INSTALL_SUBS = {
    "pip": {"install"},
    "pip3": {"install"},
    "uv": {"add", "pip"},
    "poetry": {"add"},
    "npm": {"install", "i", "add"},
    "pnpm": {"add", "install", "i"},
    "yarn": {"add"},
    "cargo": {"add", "install"},
    "go": {"get", "install"},
    "gem": {"install"},
    "apt-get": {"install"},
    "apt": {"install"},
    "brew": {"install"},
    "conda": {"install"},
}
_CHANGE_VERBS = frozenset("rm rmdir mkdir cp touch chmod chown ln tee truncate unzip patch".split())
_GIT_READS = frozenset(
    "status diff log show blame grep ls-files rev-parse describe remote reflog shortlog".split()
)
_GIT_OPTS_WITH_VALUE = frozenset({"-C", "-c", "--git-dir", "--work-tree"})
_COMMIT_OUT = re.compile(
    r"^\[(?P<branch>[^\]\s]+)(?: \(root-commit\))? (?P<sha>[0-9a-f]{7,40})\]", re.M
)
_COMMIT_MSG = re.compile(r"(?:-m|--message)(?:=|\s+)(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)'|(\S+))")
_STAT = re.compile(r"^\s*\d+ files? changed.*$", re.M)
_CREATED = re.compile(r"^\s*create mode \d+ (\S+)$", re.M)
_REDIRECT = re.compile(r"(?<![\d&>])>>?\s*([^\s&|;<>]+)")
_DIAGNOSTIC = re.compile(r"^\S+?:\d+(?::\d+)?[:\s].*\S", re.MULTILINE)  # path:line[:col]: message
_ERROR_COUNT = re.compile(r"Found (\d+) errors?|(\d+) errors?\b|(\d+) problems?\b")


# ----- 4: git ------------------------------------------------------------------------------
def _git_words(words: list[str]) -> list[str]:
    """``git -C dir -c k=v commit -m x`` → ``[commit, -m, x]``."""
    rest = words[1:]
    while rest and rest[0].startswith("-"):
        rest = rest[2:] if rest[0] in _GIT_OPTS_WITH_VALUE else rest[1:]
    return rest


def git_rule(b: BashCall) -> ObservationDraft | None:
    calls = [g for g in (_git_words(w) for w in b.segments if w[0] == "git") if g]
    if not calls:
        return None
    args = next((g for g in calls if g[0] == "commit"), calls[-1])
    sub, text = args[0], b.call.text
    if sub == "commit":
        return _git_commit(b)
    if sub == "mv":
        moved = [b.call.rel(p) for p in args_of(args)]
        return b.draft(
            "refactor",
            f"Moved {' → '.join(moved)}",
            [],
            f"Moved {' to '.join(moved)} with git mv.",
            tags=["git"],
            modified=args_of(args),
        )
    if sub in _GIT_READS or (sub == "branch" and len(args) == 1):
        stat = _STAT.search(text)
        facts = [stat.group(0).strip() if stat else first_line(text)]
        return b.draft(
            "discovery",
            f"git {sub}: `{b.cmd()}`",
            facts,
            f"Inspected the repository with git {sub}.",
            tags=["git"],
        )
    facts = ["forced"] if ("--force" in args or "-f" in args) else []
    facts += [short(line, 100) for line in text.splitlines() if "->" in line][:3]
    restored = args_of(args) if sub in ("restore", "rm", "checkout") and "--" in args else []
    return b.draft(
        "change",
        f"git {sub}: `{b.cmd()}`",
        facts,
        f"Ran git {sub}.",
        tags=["git"],
        modified=[p for p in restored if p != "--"],
    )


def _git_commit(b: BashCall) -> ObservationDraft:
    text = b.call.text
    out = _COMMIT_OUT.search(text)
    message = _commit_message(b.command) or (first_line(text[out.end() :]) if out else "")
    if out is None and ("nothing to commit" in text or b.code not in (None, 0)):
        title = "Nothing to commit" if "nothing to commit" in text else "Commit failed"
        detail = first_line(text) or "no output"
        return b.draft("discovery", title, [detail], f"{title}: {detail}", tags=["git"])
    facts = [f"commit {out.group('sha')} on {out.group('branch')}"] if out else []
    stat = _STAT.search(text)
    if stat:
        facts.append(stat.group(0).strip())
    facts.append(f"message: {short(message, 160)}")
    narrative = f'Committed "{short(message, 100)}"'
    narrative += f" ({stat.group(0).strip()})." if stat else "."
    return b.draft(
        "change",
        f"Committed: {short(message, 70) or 'changes'}",
        facts,
        narrative,
        tags=["git"],
        modified=_CREATED.findall(text)[:10],
    )


def _commit_message(command: str) -> str:
    heredoc = HEREDOC.search(command)
    if heredoc and "commit" in command[: heredoc.start()]:
        return first_line(heredoc.group(2), 200)
    match = _COMMIT_MSG.search(command)
    if not match:
        return ""
    value = next(g for g in match.groups() if g is not None)
    return "" if value.startswith("$(") else first_line(value.replace('\\"', '"'), 200)


# ----- 5: checks and formatters ------------------------------------------------------------
def _is_check(words: list[str]) -> bool:
    verb, sub = words[0], subcommand(words)
    if verb in _CHECK_VERBS:
        return True
    if verb in ("npm", "pnpm", "yarn", "bun") and sub == "run" and len(words) > 2:
        return words[2] in _NPM_CHECKS
    return sub in _CHECK_SUBS.get(verb, ()) or (verb == "make" and len(words) == 1)


def _is_format(words: list[str]) -> bool:
    verb, sub = words[0], subcommand(words)
    writes = "--check" not in words and "--diff" not in words
    if verb == "ruff":
        return writes and (sub == "format" or "--fix" in words)
    if verb == "cargo":
        return writes and sub == "fmt"
    return writes and verb in _FORMATTERS and (verb != "prettier" or "--write" in words)


def check_rule(b: BashCall) -> ObservationDraft | None:
    fmt = next((w for w in b.segments if _is_format(w)), None)
    if fmt is not None:
        return b.draft(
            "change",
            f"Formatted code: `{b.cmd()}`",
            [first_line(b.call.text)],
            f"Ran the {fmt[0]} formatter.",
            tags=["formatting"],
            modified=[p for p in file_args(fmt) if p != "format"],
        )
    words = next((w for w in b.segments if _is_check(w)), None)
    if words is None:
        return None
    tool = (
        words[0]
        if words[0] in _CHECK_VERBS
        else " ".join(words[: 3 if subcommand(words) == "run" else 2])
    )
    errors = _ERROR_COUNT.search(b.call.text)
    count = int(next(g for g in errors.groups() if g)) if errors else 0
    error = _first_diagnostic(b.call.text)
    facts = [f"{tool}: {errors.group(0) if errors else 'no errors reported'}"]
    if count == 0 and b.code in (None, 0):
        return b.draft(
            "discovery",
            f"{tool} passes: `{b.cmd(50)}`",
            facts,
            f"{tool} ran cleanly.",
            tags=["lint"],
        )
    if error:
        facts.append(f"first error: {short(error, 160)}")
    narrative = f"{tool} reported problems" + (f": {short(error, 160)}" if error else ".")
    return b.draft(
        "bugfix", f"{tool} reports errors: `{b.cmd(50)}`", facts, narrative, tags=["lint"]
    )


# ----- 6, 7: installs and file operations --------------------------------------------------
def install_rule(b: BashCall) -> ObservationDraft | None:
    for words in b.segments:
        if subcommand(words) in _INSTALL_SUBS.get(words[0], ()):
            pkgs = [
                "the local project" if p == "." else p
                for p in args_of(words[1:])
                if p not in ("install", "-r")
            ][:6]
            what = ", ".join(pkgs) or "dependencies"
            return b.draft(
                "change",
                f"Installed {short(what, 60)}",
                [first_line(b.call.text[-2000:])],
                f"Installed {what} with {words[0]}.",
                tags=["dependencies"],
            )
    return None


def file_ops_rule(b: BashCall) -> ObservationDraft | None:
    for words in b.segments:
        verb, paths = words[0], file_args(words)
        if verb == "mv" and len(args_of(words)) >= 2:
            moved = [b.call.rel(p) for p in args_of(words)]
            return b.draft(
                "refactor",
                f"Moved {' → '.join(moved)}",
                [],
                f"Moved {' to '.join(moved)}.",
                modified=args_of(words),
            )
        if verb in _CHANGE_VERBS or (verb == "sed" and "-i" in words):
            return b.draft(
                "change", f"{verb}: `{b.cmd()}`", [], f"Ran `{b.cmd(100)}`.", modified=paths
            )
    # Heredoc bodies (code, prose) are full of ">"; only file-like targets count.
    command = HEREDOC.sub("", b.command) if "<<" in b.command else b.command
    targets = [
        t
        for t in _REDIRECT.findall(command)
        if ("/" in t or "." in t) and not t.startswith(("/dev/", "&", "$"))
    ]
    if targets:
        shown = ", ".join(b.call.rel(t) for t in targets)
        return b.draft(
            "change", f"Wrote {shown}", [], f"Wrote shell output to {shown}.", modified=targets
        )
    return None


def _first_diagnostic(text: str) -> str:
    """The first ``path:line: message`` line, else the first line that mentions an error."""
    match = _DIAGNOSTIC.search(text)
    if match:
        return match.group(0)
    for line in text.splitlines():
        lowered = line.lower()
        if "error" in lowered and not lowered.lstrip().startswith(("found ", "error: exit code")):
            return line.strip()
    return ""
