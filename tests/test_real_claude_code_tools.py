"""The real Claude Code (npm, pinned) using the code tools, against a fake model API (issue 22).

One user's machine (``tests/real_world.py``): ``workbench install --agent claude``, the
service, a git project holding ``src/billing.py``. The fake Anthropic server answers by rule
(the prompt names the plan, as in ``tests/claude_script.py``):

1. ``read``: the model reads ``src/billing.py`` (the PostToolUse hook stores an observation);
2. ``again``: it reads the file again: the PreToolUse hook's file history reaches the model
   and ends with the ``smart_outline`` hint naming the file;
3. ``outline``: it loads ``smart_outline`` through ``ToolSearch`` and outlines the file;
4. ``unfold``: the same with ``smart_unfold`` for one method;
5. ``search``: the same with ``smart_search``.

Each tool result the model receives is compared with what ``workbench.code.navigate`` gives
for the same file in the same project: Claude Code started our MCP server in the project,
and the server resolved the relative paths there.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import pytest

from tests.claude_script import REPLY_HEAD, SIDE_REPLY, latest_prompt
from tests.fake_anthropic import FakeAnthropic, RecordedRequest, result_text, tool_names
from tests.real_agents import program
from tests.real_world import open_world
from tests.test_real_claude import ALLOW_OURS, ClaudeRuns, body_text
from workbench.code import navigate

pytestmark = pytest.mark.slow

BILLING = '''"""Billing: invoices and their totals."""

from dataclasses import dataclass


@dataclass
class Invoice:
    """One invoice: its lines and the tax rate that applies to them."""

    lines: list[int]
    tax_rate: float = 0.2

    def subtotal(self) -> int:
        """The lines added up, before tax."""
        return sum(self.lines)

    def total(self) -> float:
        """The subtotal with tax."""
        return self.subtotal() * (1 + self.tax_rate)


def overdue(invoices: list[Invoice], days: int) -> list[Invoice]:
    """The invoices unpaid for more than ``days`` days."""
    return [invoice for invoice in invoices if days > 30]
''' + "".join(
    f"\n\ndef rule_{i}(amount: int) -> int:\n    return amount + {i}\n" for i in range(40)
)


def plan(prompt: str) -> list[tuple[str, dict[str, Any]]]:
    word, _, rest = prompt.strip().partition(" ")
    rest = rest.strip()
    if word == "READ":
        return [("Read", {"file_path": rest})]
    tool, arguments = {
        "OUTLINE": ("smart_outline", {"file_path": rest}),
        "UNFOLD": (
            "smart_unfold",
            dict(zip(("file_path", "symbol_name"), rest.split(), strict=False)),
        ),
        "FIND": ("smart_search", {"query": rest}),
    }.get(word, ("", {}))
    if not tool:
        return []
    name = f"mcp__workbench__{tool}"
    return [("ToolSearch", {"query": f"select:{name}", "max_results": 1}), (name, arguments)]


def rule(request: RecordedRequest) -> list[dict[str, Any]]:
    body = request.body if isinstance(request.body, dict) else {}
    tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
    if "Read" not in tools:
        return [{"type": "text", "text": SIDE_REPLY}]
    prompt, results = latest_prompt(body)
    steps = plan(prompt)
    if len(results) < len(steps):
        name, arguments = steps[len(results)]
        step = f"toolu_{zlib.crc32(f'{prompt}|{len(results)}'.encode()):010d}"
        return [{"type": "tool_use", "id": step, "name": name, "input": arguments}]
    said = result_text(results[-1])[:400] if results else "nothing"
    return [{"type": "text", "text": REPLY_HEAD + said}]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClaudeRuns]:
    claude = program("claude")
    with open_world(tmp_path_factory.mktemp("real-claude-code")) as world, FakeAnthropic() as fake:
        (world.project / "src").mkdir()
        (world.project / "src" / "billing.py").write_text(BILLING, "utf-8")
        world.install("claude")
        world.service.start(timeout=60)
        fake.answer_by(rule)
        found = ClaudeRuns(world, fake, claude)
        path = world.project / "src" / "billing.py"
        found.session("read", "-p", f"READ {path}")
        world.service.wait_idle(timeout=60)
        for name, prompt in [
            ("again", f"READ {path}"),
            ("outline", "OUTLINE src/billing.py"),
            ("unfold", "UNFOLD src/billing.py Invoice.total"),
            ("search", "FIND subtotal"),
        ]:
            found.session(name, "-p", prompt, *ALLOW_OURS)
        yield found


def last_result(runs: ClaudeRuns, session: str) -> str:
    """The text of the last tool result the model received in ``session``."""
    final = runs.sessions[session].main_requests[-1]
    _, results = latest_prompt(final.body)
    return result_text(results[-1])


def test_the_second_read_brings_the_file_history_ending_with_the_outline_hint(
    runs: ClaudeRuns,
) -> None:
    sent = "\n".join(body_text(r) for r in runs.sessions["again"].main_requests)
    assert "Earlier sessions that touched this file" in sent
    assert 'MCP `smart_outline(\\"src/billing.py\\")`' in sent


def test_smart_outline_answers_the_folded_view(runs: ClaudeRuns) -> None:
    final = runs.sessions["outline"].main_requests[-1]
    assert "mcp__workbench__smart_outline" in tool_names(final)  # loaded by ToolSearch
    expected = navigate.outline_text(navigate.outline(runs.world.project, "src/billing.py"))
    assert last_result(runs, "outline") == expected
    assert "  ◆ Invoice [exported] (L7-19)" in expected


def test_smart_unfold_answers_one_method(runs: ClaudeRuns) -> None:
    assert last_result(runs, "unfold") == (
        "// 📍 src/billing.py L17-19\n"
        "    def total(self) -> float:\n"
        '        """The subtotal with tax."""\n'
        "        return self.subtotal() * (1 + self.tax_rate)"
    )


def test_smart_search_answers_from_the_project(runs: ClaudeRuns) -> None:
    text = last_result(runs, "search")
    assert text == navigate.search_text(navigate.search(runs.world.project, "subtotal"))
    # Invoice, its two methods, overdue and the 40 rules
    assert text.startswith('🔍 Smart Search: "subtotal"\n   Scanned 1 files, found 44 symbols')
    assert "  method Invoice.subtotal (src/billing.py:13-15)" in text
