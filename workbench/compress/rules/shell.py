"""Parsing a Bash call: the command's simple commands, its exit code, and a memory of failures.

A command line is split into segments on ``&&``, ``||``, ``;``, ``|`` and newlines (heredoc
bodies removed first, quoting ignored: good enough to find the verb of each segment), and
wrappers are peeled (``sudo``, ``FOO=1``, ``uv run``, ``npx``, ``[.venv/bin/]python -m``…), so
``cd app && uv run pytest -q`` is seen as ``cd app`` then ``pytest -q``.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass
from threading import Lock

from workbench.compress.rules.call import ToolCall
from workbench.compress.rules.text import short
from workbench.models import ObservationDraft

HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?[^\n]*\n(.*?)\n\s*\1\b", re.DOTALL)
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\n|\|)\s*")
_WRAPPER = re.compile(
    r"^(?:(?:sudo|time|nice|nohup|exec|command|env)\s+|[A-Za-z_]\w*=\S*\s+"
    r"|(?:uv|poetry|pipenv|pdm|hatch)\s+run\s+|npx\s+|bunx\s+|pnpm\s+exec\s+"
    r"|(?:\S*/)?python[\d.]*\s+-m\s+)+"
)
_EXIT = re.compile(r"\b[Ee]xit (?:code|status)[: ]+(-?\d+)")
_EXIT_KEYS = ("exitCode", "exit_code", "returncode", "returnCode", "code")


class FailureMemory:
    """Which test runners failed last in each session, so a later pass can say "pass again".

    Bounded (oldest entries forgotten first) and thread-safe. A fresh compressor has no
    memory, so for it a passing run is a plain ``discovery``: same input, same output.
    """

    def __init__(self, limit: int = 1024) -> None:
        self._failing: OrderedDict[tuple[str, str], list[str]] = OrderedDict()
        self._limit = limit
        self._lock = Lock()

    def failed(self, key: tuple[str, str], failures: list[str]) -> None:
        with self._lock:
            self._failing[key] = failures
            self._failing.move_to_end(key)
            while len(self._failing) > self._limit:
                self._failing.popitem(last=False)

    def passed(self, key: tuple[str, str]) -> list[str] | None:
        with self._lock:
            return self._failing.pop(key, None)


@dataclass(frozen=True, slots=True)
class BashCall:
    """A Bash call with its command parsed once for every rule."""

    call: ToolCall
    command: str
    segments: list[list[str]]
    code: int | None
    memory: FailureMemory

    @classmethod
    def parse(cls, call: ToolCall, memory: FailureMemory) -> BashCall:
        command = str(call.input.get("command") or "").strip()
        return cls(call, command, segments(command), exit_code(call), memory)

    def cmd(self, limit: int = 60) -> str:
        return short(self.command, limit)

    def status_facts(self) -> list[str]:
        """Exit code, interruption and background facts, when they apply."""
        facts = []
        if self.code not in (None, 0):
            facts.append(f"exit code {self.code}")
        if self.call.resp.get("interrupted") is True:
            facts.append("interrupted (timeout or user)")
        if self.call.input.get("run_in_background") is True:
            facts.append("started in the background")
        return facts

    def draft(
        self,
        kind: str,
        title: str,
        facts: list[str],
        narrative: str,
        *,
        tags: list[str] | None = None,
        read: list[str] | None = None,
        modified: list[str] | None = None,
    ) -> ObservationDraft:
        """Like ``ToolCall.draft``; the subtitle is the agent's own description of the command."""
        return self.call.draft(
            kind,
            title,
            [*facts, *self.status_facts()],
            narrative,
            subtitle=short(self.call.input.get("description") or "", 100),
            read=read,
            modified=modified,
            tags=[*(tags or []), "shell"],
        )


def segments(command: str) -> list[list[str]]:
    """Each simple command's words, wrappers peeled, verb reduced to its basename."""
    flat = HEREDOC.sub("<<heredoc", command) if "<<" in command else command
    result = []
    for part in _SPLIT.split(flat):
        words = _WRAPPER.sub("", part.strip()).split()
        if words:
            words[0] = words[0].rsplit("/", 1)[-1]
            result.append(words)
    return result


def exit_code(call: ToolCall) -> int | None:
    """An exit code from the response's keys, or from "Exit code N" in its text."""
    for key in _EXIT_KEYS:
        value = call.resp.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    match = _EXIT.search(call.text[:2000]) or _EXIT.search(call.text[-500:])
    return int(match.group(1)) if match else None


def subcommand(words: list[str]) -> str:
    return words[1] if len(words) > 1 else ""


def args_of(words: list[str]) -> list[str]:
    """Non-option arguments, unquoted."""
    return [w.strip("'\"") for w in words[1:] if not w.startswith("-") and w != "<<heredoc"]


def file_args(words: list[str]) -> list[str]:
    """Arguments that look like paths (a slash or a dot; no variables)."""
    return [a for a in args_of(words) if ("/" in a or "." in a) and not a.startswith(("$", "<"))]
