"""Building blocks for demo sessions: projects, tool calls in Claude Code's shapes, tool output.

Every builder returns one ``{"tool_name", "tool_input", "tool_response"}`` dict shaped like the
PostToolUse payloads Claude Code sends (see ``tests/fixtures/hooks/``): ``Read`` answers with a
``file`` block, ``Edit`` with a ``structuredPatch``, ``Write`` with ``type: "create"``, ``Bash``
with ``stdout``/``stderr``/``interrupted``. The outputs (pytest, vitest, go test, tsc, eslint,
ruff, git) are printed the way those tools print them, because the offline compressor reads
them the way it would read a real session: counts, failing tests, first errors, commit hashes.

File contents are synthesised from a project's catalogue of definitions, so a ``Read`` costs
what reading a real module costs (which is what the token economics compare against).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

ToolCall = dict[str, Any]
HOME = "/home/dev/src"


@dataclass(frozen=True)
class Project:
    """One demo repository: its folder, language and the definitions each module holds."""

    name: str
    language: str  # python | ts | go | hcl
    files: dict[str, list[str]] = field(default_factory=dict)
    module: str = ""  # Go module path / Python package, for output lines

    @property
    def cwd(self) -> str:
        return f"{HOME}/{self.name}"

    def abs(self, rel: str) -> str:
        return f"{self.cwd}/{rel}"


def session(
    project: Project, title: str, turns: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    """A session in the ``data/demo/sessions.json`` schema (what ``workbench.demo`` replays)."""
    return {"title": title, "project": project.name, "cwd": project.cwd, "turns": turns, **extra}


def turn(prompt: str, tools: list[ToolCall], assistant: str) -> dict[str, Any]:
    """One prompt, the tool calls it led to, and the assistant's closing message.

    "Next:" / "Remaining:" start their own line, as an assistant writes them, which is also
    where the offline digest looks for next steps.
    """
    closing = re.sub(r"\s+(Next|Remaining):", r"\n\1:", assistant)
    return {"prompt": prompt, "tools": tools, "assistant": closing}


def _digest(*parts: str) -> str:
    return hashlib.sha1("\x1f".join(parts).encode()).hexdigest()


# ----- synthesised file content ----------------------------------------------------------------
_PY_LINES = (
    "    key = _cache_key({arg})",
    "    cached = _CACHE.get(key)",
    "    if cached is not None:",
    "        return cached",
    '    log.debug("{name}: %s", key)',
    "    with session_scope() as session:",
    "        rows = session.execute(_query({arg})).all()",
    "    total = 0",
    "    for row in rows:",
    "        if row.status not in ACTIVE_STATES:",
    "            continue",
    "        total += row.amount",
    "    _CACHE[key] = total",
    "    return total",
)
_PY_FIELDS = (
    "    id: int",
    "    merchant_id: int",
    '    status: str = "pending"',
    "    created_at: datetime | None = None",
    '    currency: str = "EUR"',
    "    metadata: dict[str, str] = field(default_factory=dict)",
    "    attempts: int = 0",
    "    updated_at: datetime | None = None",
)
_TS_LINES = (
    "  const key = cacheKey({arg});",
    "  const cached = cache.get(key);",
    "  if (cached !== undefined) {{",
    "    return cached;",
    "  }}",
    "  const result = items.filter((item) => item.active).map(normalise);",
    "  cache.set(key, result);",
    "  return result;",
)
_GO_LINES = (
    "\tif ctx.Err() != nil {{",
    "\t\treturn ctx.Err()",
    "\t}}",
    "\trows, err := s.db.QueryContext(ctx, query{name}, {arg})",
    "\tif err != nil {{",
    '\t\treturn fmt.Errorf("{name}: %w", err)',
    "\t}}",
    "\tdefer rows.Close()",
    "\tfor rows.Next() {{",
    "\t\tcount++",
    "\t}}",
    "\treturn rows.Err()",
)


def _body(lines: tuple[str, ...], name: str, arg: str) -> list[str]:
    """A function body of 12 to 44 lines, the length fixed by the name (so reruns agree)."""
    size = 12 + int(_digest(name)[:2], 16) % 33
    return [lines[i % len(lines)].format(name=name, arg=arg) for i in range(size)]


def synthesise(project: Project, rel: str, snippet: str = "") -> str:
    """Plausible content for ``rel``: a header, the catalogue's definitions, and ``snippet``.

    Sized like real modules (a few hundred lines), so reading one costs what it would.
    """
    names = project.files.get(rel, [])
    ext = rel.rsplit(".", 1)[-1] if "." in rel else ""
    out: list[str] = []
    if ext == "py":
        out += [
            f'"""{rel}: {", ".join(names) or "module"}."""',
            "",
            "from __future__ import annotations",
            "",
        ]
        out += [
            "import logging",
            "",
            "log = logging.getLogger(__name__)",
            "_CACHE: dict[str, int] = {}",
            "",
        ]
        for name in names:
            if name[:1].isupper():
                out += ["", "@dataclass", f"class {name}:", f'    """{name}."""', ""]
                out += [_PY_FIELDS[i % len(_PY_FIELDS)] for i in range(6 + len(name) % 5)]
            else:
                out += [
                    "",
                    f"def {name}(value, *, session=None):",
                    f'    """{name.replace("_", " ")}."""',
                ]
                out += _body(_PY_LINES, name, "value")
    elif ext in ("ts", "tsx"):
        out += [
            'import { cacheKey, normalise } from "../lib/cache";',
            "",
            "const cache = new Map();",
        ]
        for name in names:
            if ext == "tsx" and name[:1].isupper():
                out += ["", f"export function {name}(props: {name}Props) {{"]
                out += ["  const items = useItems(props);"]
                out += _body(_TS_LINES, name, "props")[:-1]
                out += [f'  return <div className="{name.lower()}">{{result.length}}</div>;', "}"]
            else:
                out += ["", f"export function {name}(items: Item[], options: Options = {{}}) {{"]
                out += _body(_TS_LINES, name, "options") + ["}"]
    elif ext == "go":
        package = rel.rsplit("/", 2)[-2] if rel.count("/") else "main"
        out += [f"package {package}", "", "import (", '\t"context"', '\t"fmt"', ")"]
        for name in names:
            if name.startswith("Err"):
                out += ["", f'var {name} = fmt.Errorf("{name[3:].lower()}")']
                continue
            out += [
                "",
                f"// {name} is part of the {package} package.",
                f"func {name}(ctx context.Context) error {{",
            ]
            out += ["\tcount := 0"] + _body(_GO_LINES, name, "id") + ["}"]
    elif ext == "tf":
        out += ["locals {", '  common_tags = { team = "platform", managed_by = "terraform" }', "}"]
        for name in names:
            out += [
                "",
                f'resource "aws_{name}" "main" {{',
                "  name = local.name",
                "  tags = local.common_tags",
                "}",
            ]
    if snippet:
        out += ["", snippet.strip("\n")]
    return "\n".join(out) + "\n"


# ----- file tools --------------------------------------------------------------------------------
def read(project: Project, rel: str, snippet: str = "", *, offset: int | None = None) -> ToolCall:
    """``Read``: the whole file, or from ``offset`` on (a long file read in a window)."""
    content = synthesise(project, rel, snippet)
    lines = content.splitlines()
    tool_input: dict[str, Any] = {"file_path": project.abs(rel)}
    start, total = 1, len(lines)
    if offset is not None:  # the window of a longer file: the lines shown start at ``offset``
        tool_input.update(offset=offset, limit=len(lines))
        start, total = offset, offset + len(lines) + 150
    return {
        "tool_name": "Read",
        "tool_input": tool_input,
        "tool_response": {
            "type": "text",
            "file": {
                "filePath": project.abs(rel),
                "content": "\n".join(lines) + "\n",
                "numLines": len(lines),
                "startLine": start,
                "totalLines": total,
            },
        },
    }


def _patch(old: str, new: str, line: int) -> list[dict[str, Any]]:
    before, after = old.splitlines(), new.splitlines()
    return [
        {
            "oldStart": line,
            "oldLines": len(before),
            "newStart": line,
            "newLines": len(after),
            "lines": [f"-{x}" for x in before] + [f"+{x}" for x in after],
        }
    ]


def edit(project: Project, rel: str, old: str, new: str, *, line: int = 12) -> ToolCall:
    """``Edit``: replace ``old`` with ``new`` (a one-identifier change reads as a rename)."""
    return {
        "tool_name": "Edit",
        "tool_input": {
            "file_path": project.abs(rel),
            "old_string": old,
            "new_string": new,
            "replace_all": False,
        },
        "tool_response": {
            "filePath": project.abs(rel),
            "oldString": old,
            "newString": new,
            "originalFile": synthesise(project, rel, old),
            "structuredPatch": _patch(old, new, line),
            "userModified": False,
            "replaceAll": False,
        },
    }


def multi_edit(project: Project, rel: str, edits: list[tuple[str, str]]) -> ToolCall:
    """``MultiEdit``: several replacements in one file."""
    return {
        "tool_name": "MultiEdit",
        "tool_input": {
            "file_path": project.abs(rel),
            "edits": [{"old_string": o, "new_string": n, "replace_all": False} for o, n in edits],
        },
        "tool_response": {
            "filePath": project.abs(rel),
            "edits": [{"old_string": o, "new_string": n, "replace_all": False} for o, n in edits],
            "originalFileContents": synthesise(project, rel),
            "structuredPatch": [
                p for i, (o, n) in enumerate(edits) for p in _patch(o, n, 10 + i * 20)
            ],
            "userModified": False,
        },
    }


def write(project: Project, rel: str, content: str, *, create: bool = True) -> ToolCall:
    """``Write``: a new file (``type: "create"``) or an overwrite (``type: "update"``)."""
    return {
        "tool_name": "Write",
        "tool_input": {"file_path": project.abs(rel), "content": content},
        "tool_response": {
            "type": "create" if create else "update",
            "filePath": project.abs(rel),
            "content": content,
            "structuredPatch": [] if create else _patch("", content, 1),
        },
    }


def grep(
    project: Project,
    pattern: str,
    files: list[str],
    *,
    path: str = "",
    glob: str | None = None,
    lines: list[str] | None = None,
) -> ToolCall:
    """``Grep``: files with matches, or (``lines``) matching lines in content mode."""
    tool_input: dict[str, Any] = {
        "pattern": pattern,
        "path": project.abs(path) if path else project.cwd,
        "output_mode": "content" if lines is not None else "files_with_matches",
    }
    if glob:
        tool_input["glob"] = glob
    if lines is not None:
        tool_input["-n"] = True
        response: dict[str, Any] = {
            "mode": "content",
            "numFiles": 0,
            "filenames": [],
            "content": "\n".join(f"{project.abs(x)}" for x in lines),
            "numLines": len(lines),
        }
    else:
        response = {
            "mode": "files_with_matches",
            "filenames": [project.abs(f) for f in files],
            "numFiles": len(files),
        }
    return {"tool_name": "Grep", "tool_input": tool_input, "tool_response": response}


def glob_files(project: Project, pattern: str, files: list[str]) -> ToolCall:
    return {
        "tool_name": "Glob",
        "tool_input": {"pattern": pattern},
        "tool_response": {
            "filenames": [project.abs(f) for f in files],
            "durationMs": 9 + len(files),
            "numFiles": len(files),
            "truncated": False,
        },
    }


# ----- shell -----------------------------------------------------------------------------------
def bash(
    command: str, stdout: str = "", stderr: str = "", *, description: str = "", exit_code: int = 0
) -> ToolCall:
    """``Bash``; a non-zero ``exit_code`` is reported the way Claude Code shows it to the model."""
    if exit_code:
        stderr = (stderr + "\n" if stderr else "") + f"Exit code {exit_code}"
    return {
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": description},
        "tool_response": {
            "stdout": stdout,
            "stderr": stderr,
            "interrupted": False,
            "isImage": False,
        },
    }


def pytest_out(
    target: str,
    *,
    passed: int,
    failed: Sequence[tuple[str, str]] = (),
    seconds: float = 1.2,
) -> str:
    """pytest's output: progress, one FAILURES block per failure, the short summary."""
    total = passed + len(failed)
    lines = [
        "============================= test session starts ==============================",
        "platform linux -- Python 3.11.9, pytest-8.3.4, pluggy-1.5.0",
        f"collected {total} items",
        "",
        f"{target} " + "." * passed + "F" * len(failed),
    ]
    if failed:
        lines += [
            "",
            "=================================== FAILURES ===================================",
        ]
        for nodeid, error in failed:
            name = nodeid.rsplit("::", 1)[-1]
            lines += [f"_____________ {name} _____________", "", f"E       {error}", ""]
        lines.append(
            "=========================== short test summary info ============================"
        )
        lines += [f"FAILED {nodeid} - {error}" for nodeid, error in failed]
        counts = f"{len(failed)} failed, {passed} passed"
    else:
        counts = f"{passed} passed"
    lines.append(f"========================= {counts} in {seconds:.2f}s =========================")
    return "\n".join(lines) + "\n"


def jest_out(
    file: str, *, passed: int, failed: Sequence[tuple[str, str]] = (), seconds: float = 3.1
) -> str:
    """jest's output (``●`` blocks per failing test, then the totals)."""
    lines = [f"{'FAIL' if failed else 'PASS'} {file}"]
    for name, error in failed:
        lines += [f"  ● {name}", "", f"    {error}", ""]
    status = f"{len(failed)} failed, {passed} passed" if failed else f"{passed} passed"
    lines += [
        "Test Suites: " + ("1 failed, 0 passed" if failed else "1 passed") + ", 1 total",
        f"Tests:       {status}, {passed + len(failed)} total",
        f"Time:        {seconds:.3f} s",
    ]
    return "\n".join(lines) + "\n"


def vitest_out(
    file: str, *, passed: int, failed: Sequence[tuple[str, str]] = (), seconds: float = 1.4
) -> str:
    """vitest's output: a FAIL line and the assertion per failure, then the two totals lines."""
    lines = [" RUN  v2.1.4 /home/dev/src/webshop-frontend", ""]
    for name, error in failed:
        lines += [f" FAIL  {file} > {name}", f"AssertionError: {error}", ""]
    if not failed:
        lines.append(f" ✓ {file} ({passed} tests) {int(seconds * 300)}ms")
    tests = f"{len(failed)} failed | {passed} passed" if failed else f"{passed} passed"
    lines += [
        "",
        f" Test Files  {'1 failed' if failed else '1 passed'} (1)",
        f"      Tests  {tests} ({passed + len(failed)})",
        f"   Duration  {seconds:.2f}s",
    ]
    return "\n".join(lines) + "\n"


def go_test_out(
    pkg: str, *, failed: Sequence[tuple[str, str]] = (), passed: Sequence[str] = (), race: str = ""
) -> str:
    """``go test -v``: ``--- FAIL``/``--- PASS`` lines, an optional race report, ``FAIL``/``ok``."""
    lines = []
    if race:
        lines += ["==================", "WARNING: DATA RACE", race, "=================="]
    for name in passed:
        lines += [f"=== RUN   {name}", f"--- PASS: {name} (0.00s)"]
    for name, message in failed:
        lines += [f"=== RUN   {name}", f"    {message}", f"--- FAIL: {name} (0.01s)"]
    if failed or race:
        lines += ["FAIL", f"FAIL\t{pkg}\t0.214s", "FAIL"]
    else:
        lines += ["PASS", f"ok  \t{pkg}\t0.118s"]
    return "\n".join(lines) + "\n"


def lint_out(tool: str, problems: list[tuple[str, int, str]]) -> str:
    """ruff / tsc / eslint / go vet output; ``problems`` are (file, line, message)."""
    if tool == "ruff":
        body = [f"{f}:{n}:5: {m}" for f, n, m in problems]
        tail = (
            f"Found {len(problems)} error{'s' * (len(problems) != 1)}."
            if problems
            else "All checks passed!"
        )
        return "\n".join([*body, tail]) + "\n"
    if tool == "tsc":
        body = [f"{f}({n},7): error {m}" for f, n, m in problems]
        files = len({f for f, _, _ in problems})
        tail = (
            [f"Found {len(problems)} errors in {files} file{'s' * (files != 1)}."]
            if problems
            else []
        )
        return "\n".join(body + tail) + "\n" if problems else ""
    if tool == "eslint":
        body = []
        for f, n, m in problems:
            body += ["", f"/home/dev/src/webshop-frontend/{f}", f"  {n}:9  error  {m}"]
        tail = (
            [f"\n✖ {len(problems)} problems ({len(problems)} errors, 0 warnings)"]
            if problems
            else []
        )
        return "\n".join(body + tail) + "\n" if problems else ""
    # go vet
    return "\n".join(f"# {f.rsplit('/', 1)[0]}\n{f}:{n}:2: {m}" for f, n, m in problems) + "\n"


def commit(
    message: str,
    files: int = 1,
    plus: int = 8,
    minus: int = 2,
    *,
    branch: str = "main",
    created: Sequence[str] = (),
) -> ToolCall:
    """``git commit``: the short hash is derived from the message, so reruns give the same one."""
    sha = _digest(message, branch)[:7]
    out = [
        f"[{branch} {sha}] {message}",
        f" {files} file{'s' * (files != 1)} changed, {plus} insertions(+), {minus} deletions(-)",
    ]
    out += [f" create mode 100644 {path}" for path in created]
    quoted = message.replace("'", "")
    return bash(
        f"git add -A && git commit -m '{quoted}'",
        "\n".join(out) + "\n",
        description="Commit the change",
    )


def git_log(entries: list[str]) -> ToolCall:
    lines = [f"{_digest(e)[:7]} {e}" for e in entries]
    return bash("git log --oneline -n 8", "\n".join(lines) + "\n", description="Recent commits")


def git_diff_stat(files: list[tuple[str, int, int]]) -> ToolCall:
    lines = [f" {f} | {a + d} {'+' * a}{'-' * d}" for f, a, d in files]
    added, removed = sum(a for _, a, _ in files), sum(d for _, _, d in files)
    total = f" {len(files)} files changed, {added} insertions(+), {removed} deletions(-)"
    return bash(
        "git diff --stat main",
        "\n".join([*lines, total]) + "\n",
        description="What changed on the branch",
    )


# ----- web, agents, plans -------------------------------------------------------------------------
def web_search(query: str, results: list[tuple[str, str]]) -> ToolCall:
    return {
        "tool_name": "WebSearch",
        "tool_input": {"query": query},
        "tool_response": {
            "query": query,
            "results": [
                {
                    "tool_use_id": f"srvtoolu_{_digest(query)[:20]}",
                    "content": [{"title": t, "url": u} for t, u in results],
                }
            ],
            "durationSeconds": 1.8,
        },
    }


def web_fetch(url: str, prompt: str, result: str) -> ToolCall:
    return {
        "tool_name": "WebFetch",
        "tool_input": {"url": url, "prompt": prompt},
        "tool_response": {
            "bytes": 48_213 + len(result) * 31,
            "code": 200,
            "codeText": "OK",
            "result": result,
            "durationMs": 1420,
            "url": url,
        },
    }


def task(
    description: str, prompt: str, result: str, *, agent: str = "Explore", uses: int = 9
) -> ToolCall:
    return {
        "tool_name": "Task",
        "tool_input": {"description": description, "prompt": prompt, "subagent_type": agent},
        "tool_response": {
            "content": [{"type": "text", "text": result}],
            "totalDurationMs": 41_000 + uses * 2_000,
            "totalTokens": 18_000 + uses * 1_500,
            "totalToolUseCount": uses,
        },
    }


def plan(text: str) -> ToolCall:
    """``ExitPlanMode``: the plan the agent proposed and the user accepted (a decision)."""
    return {
        "tool_name": "ExitPlanMode",
        "tool_input": {"plan": text},
        "tool_response": {"plan": text, "isAgent": False},
    }


def todos(items: list[tuple[str, str]]) -> ToolCall:
    """``TodoWrite`` (skipped by default settings, as in a real install: captured, not stored)."""
    todo_list = [{"content": c, "status": s, "activeForm": c} for c, s in items]
    return {
        "tool_name": "TodoWrite",
        "tool_input": {"todos": todo_list},
        "tool_response": {"oldTodos": [], "newTodos": todo_list},
    }
