"""Rules for tools that look things up, plan, or are unknown to us.

- Read → ``discovery``: the line range read (of how many), the definitions in view; a
  secret-looking value in the content → ``security_alert``; a secrets file → ``security_note``.
- Grep / Glob / LS → ``discovery``: the pattern, where, how many matches, the first few files.
- WebFetch / WebSearch → ``discovery``: the URL or query, status, the answer's first sentences
  or the top results.
- Task / Agent → ``discovery``: which subagent did what, the first sentences of its result.
- TodoWrite / ExitPlanMode → ``decision``: the task list or the plan the agent chose.
- Anything else (including ``mcp__server__tool``) → ``discovery`` naming the tool, its main
  inputs and the first line of its result; nothing at all when the result is empty.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from workbench.compress.rules.call import ToolCall, secured, text_of
from workbench.compress.rules.tags import concepts_for
from workbench.compress.rules.text import (
    count_lines,
    definitions,
    first_line,
    first_sentences,
    response_text,
    short,
)
from workbench.models import ObservationDraft

_LINE_PREFIX = re.compile(r"^ *\d+(?:→|\t)", re.MULTILINE)  # Read's "   12→code" numbering


def observe_read(call: ToolCall) -> ObservationDraft:
    path = call.path("file_path")
    file = call.resp.get("file")
    info = file if isinstance(file, dict) else {}
    kind = text_of(call.resp.get("type")) or "text"
    content = text_of(info.get("content")) if info else _LINE_PREFIX.sub("", call.text)
    facts = []
    start, count, total = info.get("startLine"), info.get("numLines"), info.get("totalLines")
    if isinstance(start, int) and isinstance(count, int) and count > 0:
        of = f" of {total}" if isinstance(total, int) else ""
        facts.append(f"lines {start}–{start + count - 1}{of}")
    elif content:
        facts.append(f"{count_lines(content)} lines")
    if kind != "text":
        facts.append(f"{kind} content")
    elif not content:
        facts.append("empty file")
    names = definitions(content)
    if names:
        facts.append(f"defines: {', '.join(names)}")
    rp = call.rel(path) or "a file"
    narrative = f"Read {rp}" + (f" ({facts[0]})" if facts else "")
    narrative += f"; it defines {', '.join(names)}." if names else "."
    draft = call.draft(
        "discovery",
        f"Read {rp}",
        facts,
        narrative,
        subtitle=facts[0] if facts else "",
        read=[path],
    )
    return secured(draft, path, content)


def observe_grep(call: ToolCall) -> ObservationDraft:
    pattern = short(call.input.get("pattern"), 60)
    where = call.rel(text_of(call.input.get("path")) or ".")
    scope = " ".join(
        p for p in (where, text_of(call.input.get("glob")), text_of(call.input.get("type"))) if p
    )
    files = _filenames(call)
    count = call.resp.get("numFiles") if isinstance(call.resp.get("numFiles"), int) else len(files)
    mode = text_of(call.resp.get("mode")) or text_of(call.input.get("output_mode"))
    lines = call.resp.get("numLines") if mode == "content" else None
    if isinstance(lines, int):
        found = f"{lines} matching lines"
    else:
        found = f"{count} matching files" if count else "no matches"
    facts = [found, _listing(call, files)]
    if mode == "content" and call.text:
        facts.append(f"first match: {first_line(call.text, 120)}")
    narrative = f"Searched {scope} for `{pattern}`: {found}."
    return call.draft(
        "discovery",
        f"Searched for `{pattern}`",
        facts,
        narrative,
        subtitle=f"in {scope}",
        tags=["search", *concepts_for(call.rel(f) for f in files[:10])],
    )


def observe_glob(call: ToolCall) -> ObservationDraft:
    pattern = short(call.input.get("pattern"), 60)
    files = _filenames(call)
    count = call.resp.get("numFiles") if isinstance(call.resp.get("numFiles"), int) else len(files)
    facts = [f"{count} files" if count else "no files", _listing(call, files)]
    if call.resp.get("truncated") is True:
        facts.append("results truncated")
    where = call.rel(text_of(call.input.get("path")) or ".")
    return call.draft(
        "discovery",
        f"Listed files matching `{pattern}`",
        facts,
        f"Globbed `{pattern}` in {where}: {facts[0]}.",
        subtitle=f"in {where}",
        tags=concepts_for(call.rel(f) for f in files[:10]),
    )


def observe_ls(call: ToolCall) -> ObservationDraft:
    path = call.path("path", "dir_path")  # Gemini CLI's list_directory says ``dir_path``
    entries = [ln for ln in call.text.splitlines() if ln.strip()]
    rp = call.rel(path) or "a directory"
    return call.draft(
        "discovery",
        f"Listed {rp}",
        [f"{len(entries)} entries"],
        f"Listed the directory {rp} ({len(entries)} entries).",
    )


def _filenames(call: ToolCall) -> list[str]:
    raw = call.resp.get("filenames")
    if isinstance(raw, list):
        return [f for f in raw if isinstance(f, str)]
    if isinstance(call.response, str):  # older Claude Code: "Found 3 files\na.py\nb.py"
        lines = [ln.strip() for ln in call.response.splitlines()[1:201]]
        return [ln for ln in lines if ln and " " not in ln]
    return []


def _listing(call: ToolCall, files: list[str], limit: int = 5) -> str:
    if not files:
        return ""
    shown = ", ".join(call.rel(f) for f in files[:limit])
    more = f" (+{len(files) - limit} more)" if len(files) > limit else ""
    return f"matches: {shown}{more}"


def observe_web_fetch(call: ToolCall) -> ObservationDraft:
    url = text_of(call.input.get("url")) or text_of(call.resp.get("url"))
    code = call.resp.get("code")
    facts = [f"HTTP {code} {text_of(call.resp.get('codeText'))}".strip() if code else ""]
    answer = first_sentences(text_of(call.resp.get("result")) or call.text, 2, 240)
    facts.append(f"answer: {answer}" if answer else "")
    host = url.split("/")[2] if url.count("/") >= 2 else url
    narrative = f"Fetched {short(url, 100)}" + (f": {answer}" if answer else ".")
    return call.draft(
        "discovery",
        f"Fetched {short(url, 70)}",
        facts,
        narrative,
        subtitle=short(call.input.get("prompt"), 100),
        tags=["web", host.lower()],
    )


def observe_web_search(call: ToolCall) -> ObservationDraft:
    query = short(call.input.get("query"), 80)
    hits = _search_hits(call.resp.get("results"), [])
    facts = [f"{len(hits)} results" if hits else first_line(call.text)]
    facts += [f"{title} ({url})" for title, url in hits[:4]]
    narrative = f"Searched the web for “{query}”" + (
        f"; top result: {hits[0][0]}." if hits else "."
    )
    return call.draft("discovery", f"Searched the web: {query}", facts, narrative, tags=["web"])


def _search_hits(value: Any, found: list[tuple[str, str]], depth: int = 0) -> list[tuple[str, str]]:
    if depth > 4 or len(found) >= 10:
        return found
    if isinstance(value, dict):
        if isinstance(value.get("url"), str):
            found.append((short(value.get("title") or value["url"], 80), short(value["url"], 100)))
        else:
            for inner in value.values():
                _search_hits(inner, found, depth + 1)
    elif isinstance(value, list):
        for inner in value[:20]:
            _search_hits(inner, found, depth + 1)
    return found


def observe_task(call: ToolCall) -> ObservationDraft:
    what = short(call.input.get("description") or call.input.get("prompt"), 70)
    agent = text_of(call.input.get("subagent_type")) or "agent"
    result = response_text(call.resp.get("content")) if call.resp else call.text
    summary = first_sentences(result or call.text, 3, 400)
    facts = [f"result: {summary}" if summary else "no result text"]
    uses = call.resp.get("totalToolUseCount")
    if isinstance(uses, int):
        facts.append(f"{uses} tool uses")
    return call.draft(
        "discovery",
        f"Delegated to {agent}: {what}",
        facts,
        f"A {agent} subagent worked on “{what}”" + (f": {summary}" if summary else "."),
        tags=["subagent"],
    )


# ----- decisions ---------------------------------------------------------------------------
def observe_todo(call: ToolCall) -> ObservationDraft:
    raw = call.input.get("todos")
    todos = [t for t in raw if isinstance(t, dict)] if isinstance(raw, list) else []
    done = sum(1 for t in todos if t.get("status") == "completed")
    facts = [f"[{t.get('status', '?')}] {short(t.get('content'), 100)}" for t in todos[:8]]
    return call.draft(
        "decision",
        f"Task list: {done}/{len(todos)} done",
        facts,
        f"Updated the task list ({len(todos)} tasks, {done} done).",
        tags=["planning"],
    )


def observe_plan(call: ToolCall) -> ObservationDraft:
    plan = text_of(call.input.get("plan"))
    bullets = [
        ln.strip(" -*•") for ln in plan.splitlines() if ln.strip().startswith(("-", "*", "•"))
    ]
    heading = first_line(plan.lstrip("# "), 80) or "plan"
    return call.draft(
        "decision",
        f"Plan: {heading}",
        [short(b, 140) for b in bullets[:8]],
        first_sentences(plan, 3, 400) or "Proposed a plan.",
        tags=["planning"],
    )


# ----- anything else -----------------------------------------------------------------------
def observe_generic(call: ToolCall) -> ObservationDraft | None:
    if not call.text:
        return None  # an unknown tool that returned nothing showed nothing
    name = call.tool or "tool"
    if name.startswith("mcp__"):
        parts = name.split("__")
        name = f"{parts[1]}: {'__'.join(parts[2:])}" if len(parts) > 2 else name
    scalars = [(k, v) for k, v in call.input.items() if isinstance(v, (str, int, float))][:4]
    facts = [f"{k}: {short(v, 80)}" for k, v in scalars]
    facts.append(f"result: {first_line(call.text, 160)}")
    main = short(scalars[0][1], 60) if scalars else ""
    title = f"{name}: {main}" if main else f"Used {name}"
    return call.draft(
        "discovery",
        title,
        facts,
        f"Called {name}; it returned: {first_line(call.text, 200)}",
        tags=[t for t in (call.tool.split("__")[1] if "__" in call.tool else "",) if t],
    )


READ_RULES: dict[str, Callable[[ToolCall], ObservationDraft | None]] = {
    "Read": observe_read,
    "Grep": observe_grep,
    "Glob": observe_glob,
    "LS": observe_ls,
    "WebFetch": observe_web_fetch,
    "WebSearch": observe_web_search,
    "Task": observe_task,
    "Agent": observe_task,
    "TodoWrite": observe_todo,
    "ExitPlanMode": observe_plan,
}
