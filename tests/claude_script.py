"""What the fake Anthropic server answers the real Claude Code, by rule from each request.

Why rules and not a queue: ``claude -p`` makes requests of its own (tool discovery, one
request per tool result, side requests without tools), so the script follows from what a
request says. The user's prompt names the plan in words the rule reads:

- ``READ <absolute path>``: a ``Read`` of that file, then a reply quoting what it returned;
- ``SEARCH <query>``: ``ToolSearch`` ``select:mcp__workbench__search`` (Claude Code 2.1 lists
  MCP tools by name only, as deferred tools), then ``mcp__workbench__search``, then a reply;
- ``SAVE <text>``: the same through ``mcp__workbench__save_memory``;
- anything else: a short text reply.

A request without ``Read`` among its tools (a side request) gets a short text. The rule is
stateless: the step is the number of ``tool_result`` blocks since the prompt's message.
"""

from __future__ import annotations

import zlib
from typing import Any

from tests.fake_anthropic import RecordedRequest, result_text

SIDE_REPLY = "Workbench session"
REPLY_HEAD = "Done. The tool said: "


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _prompt(text: str) -> bool:
    return not text.lstrip().startswith("<system-reminder>")


def latest_prompt(body: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The last user prompt's text and every tool_result block after it, in order."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    results: list[dict[str, Any]] = []
    for message in reversed(messages):
        if message.get("role") != "user":
            continue
        blocks = _blocks(message)
        texts = [b.get("text", "") for b in blocks if b.get("type") == "text"]
        prompts = [t for t in texts if _prompt(t)]
        found = [b for b in blocks if b.get("type") == "tool_result"]
        results[:0] = found
        if prompts and not found:
            return prompts[-1], results
    return "", results


def _plan(prompt: str) -> list[tuple[str, dict[str, Any]]]:
    word, _, rest = prompt.strip().partition(" ")
    rest = rest.strip()
    if word == "READ":
        return [("Read", {"file_path": rest})]
    if word == "SEARCH":
        return [
            ("ToolSearch", {"query": "select:mcp__workbench__search", "max_results": 1}),
            ("mcp__workbench__search", {"query": rest}),
        ]
    if word == "SAVE":
        return [
            ("ToolSearch", {"query": "select:mcp__workbench__save_memory", "max_results": 1}),
            ("mcp__workbench__save_memory", {"text": rest, "title": rest[:40]}),
        ]
    return []


def claude_rule(request: RecordedRequest) -> list[dict[str, Any]]:
    """The content blocks of the reply to ``request``."""
    body = request.body if isinstance(request.body, dict) else {}
    tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    if "Read" not in tools:
        return [{"type": "text", "text": SIDE_REPLY}]
    prompt, results = latest_prompt(body)
    plan = _plan(prompt)
    if len(results) < len(plan):
        name, arguments = plan[len(results)]
        step = f"toolu_{zlib.crc32(f'{prompt}|{len(results)}'.encode()):010d}"
        return [{"type": "tool_use", "id": step, "name": name, "input": arguments}]
    said = result_text(results[-1])[:400] if results else "nothing"
    return [{"type": "text", "text": REPLY_HEAD + said}]
