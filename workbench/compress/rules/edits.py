"""Rules for the tools that change files: Edit, MultiEdit, Write, NotebookEdit.

- Edit / MultiEdit → ``change``: which file, which lines (from ``structuredPatch`` when
  present), +added −removed, what was replaced by what (first lines, shortened; when those
  read the same, the differing part with a little context: ``changed `…a…` → `…b…```), the
  functions touched. ``refactor`` when the edit only renames one identifier throughout, or
  (MultiEdit) when one edit removes a block that another re-inserts: code moved.
- Write → ``feature`` for a new file (``type: "create"``, or an older "File created"
  string), ``change`` for an overwrite; facts give the size and the definitions.
- NotebookEdit → ``change`` naming the edit mode, cell type and cell id.
A secret-looking value in the new content makes any of these a ``security_alert``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from typing import Any

from workbench.compress.rules.call import ToolCall, secured, text_of
from workbench.compress.rules.text import count_lines, definitions, first_line
from workbench.models import ObservationDraft

_TOKEN = re.compile(r"[A-Za-z_]\w*|\S")
DIFF_CONTEXT = 24  # characters kept on each side of a change
DIFF_SIDE = 80  # at most this many characters per side of a shown change


def observe_edit(call: ToolCall) -> ObservationDraft:
    path = call.path("file_path")
    old = text_of(call.input.get("old_string")) or text_of(call.resp.get("oldString"))
    new = text_of(call.input.get("new_string")) or text_of(call.resp.get("newString"))
    where, facts = _patch_facts(call.resp.get("structuredPatch"), old, new)
    change = _replaced(old, new)
    facts.append(change)
    if call.input.get("replace_all") is True:
        facts.append("replaced every occurrence")
    names = definitions(new, 4)
    if names:
        facts.append(f"touches: {', '.join(names)}")
    rename = _rename(old, new)
    rp = call.rel(path) or "a file"
    if rename:
        title, kind = f"Renamed {rename[0]} → {rename[1]} in {rp}", "refactor"
    else:
        title, kind = f"Edited {rp}", "change"
    draft = call.draft(
        kind, title, facts, f"Edited {rp}{where}: {change}.", subtitle=change, modified=[path]
    )
    return secured(draft, path, new)


def observe_multi_edit(call: ToolCall) -> ObservationDraft:
    path = call.path("file_path")
    raw = call.input.get("edits")
    edits = [e for e in raw if isinstance(e, dict)] if isinstance(raw, list) else []
    pairs = [(text_of(e.get("old_string")), text_of(e.get("new_string"))) for e in edits]
    changes = [_replaced(old, new) for old, new in pairs]
    renames = {_rename(old, new) for old, new in pairs}
    rename = next(iter(renames)) if len(renames) == 1 else None
    moved = _moved_block(pairs)
    rp = call.rel(path) or "a file"
    if rename:
        title, kind = f"Renamed {rename[0]} → {rename[1]} in {rp}", "refactor"
    elif moved:
        title, kind = f"Moved code within {rp}", "refactor"
    else:
        title, kind = f"Edited {rp} ({len(pairs)} edits)", "change"
    facts = [f"{len(pairs)} edits", *changes[:4]] + ([f"moved: `{moved}`"] if moved else [])
    narrative = f"Made {len(pairs)} edits to {rp}" + (f", first {changes[0]}." if changes else ".")
    draft = call.draft(
        kind, title, facts, narrative, subtitle=changes[0] if changes else "", modified=[path]
    )
    return secured(draft, path, "\n".join(new for _, new in pairs))


def observe_write(call: ToolCall) -> ObservationDraft:
    path = call.path("file_path")
    content = text_of(call.input.get("content")) or text_of(call.resp.get("content"))
    created = call.resp.get("type") == "create" or (
        isinstance(call.response, str) and "created" in call.response.lower()
    )
    lines = count_lines(content)
    names = definitions(content)
    facts = [f"{lines} lines, {len(content)} chars"]
    if names:
        facts.append(f"defines: {', '.join(names)}")
    if not created:
        facts += _patch_facts(call.resp.get("structuredPatch"), "", "")[1][:1]
    rp = call.rel(path) or "a file"
    verb = "Created" if created else "Rewrote"
    narrative = f"{verb} {rp} ({lines} lines)" + (
        f", defining {', '.join(names)}." if names else "."
    )
    draft = call.draft(
        "feature" if created else "change",
        f"{verb} {rp}",
        facts,
        narrative,
        subtitle=first_line(content, 100),
        modified=[path],
    )
    return secured(draft, path, content)


def observe_notebook_edit(call: ToolCall) -> ObservationDraft:
    path = call.path("notebook_path")
    mode = text_of(call.input.get("edit_mode")) or "replace"
    cell = " ".join(
        part
        for part in (
            mode,
            text_of(call.input.get("cell_type")),
            "cell",
            text_of(call.input.get("cell_id")),
        )
        if part
    )
    source = text_of(call.input.get("new_source"))
    facts = [cell, f"source: {first_line(source, 100)}" if source else ""]
    rp = call.rel(path) or "a file"
    return call.draft(
        "change",
        f"Edited notebook {rp}",
        facts,
        f"Notebook {rp}: {cell}.",
        subtitle=cell,
        modified=[path],
        tags=["notebook"],
    )


def _patch_facts(patch: Any, old: str, new: str) -> tuple[str, list[str]]:
    """(`` (lines a–b)`` for the narrative, [range fact, +added −removed fact])."""
    hunks = [h for h in patch if isinstance(h, dict)] if isinstance(patch, list) else []
    starts = [h.get("newStart") for h in hunks]
    ends = [
        h.get("newStart", 0) + h.get("newLines", 0) - 1
        for h in hunks
        if isinstance(h.get("newStart"), int) and isinstance(h.get("newLines"), int)
    ]
    lines = [ln for h in hunks if isinstance(h.get("lines"), list) for ln in h["lines"]]
    if hunks and lines:
        added = sum(1 for ln in lines if isinstance(ln, str) and ln.startswith("+"))
        removed = sum(1 for ln in lines if isinstance(ln, str) and ln.startswith("-"))
    else:
        added, removed = count_lines(new), count_lines(old)
    facts = [f"+{added} −{removed} lines"]
    numeric = [s for s in starts if isinstance(s, int)]
    if numeric and ends:
        where = f"lines {min(numeric)}–{max(max(ends), min(numeric))}"
        return f" ({where})", [where, *facts]
    return "", facts


def _replaced(old: str, new: str) -> str:
    def snip(text: str) -> str:
        extra = text.strip().count("\n")
        return f"`{first_line(text, 60)}`" + (
            f" (+{extra} more line{'s' * (extra > 1)})" if extra else ""
        )

    if not old:
        return f"inserted {snip(new)}"
    if not new:
        return f"deleted {snip(old)}"
    before, after = snip(old), snip(new)
    if before == after and old != new:
        return _changed(old, new)
    return f"replaced {before} with {after}"


def _changed(old: str, new: str) -> str:
    """The first differing part of two texts that start alike, with context, bounded.

    Lines are compared first (difflib), then the two changed blocks character by character,
    so ``changed `…base * attempt` → `…base**attempt``` names just what differs.
    """
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    hunks = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if hunks:
        _, i1, i2, j1, j2 = hunks[0]
        a, b = "\n".join(old_lines[i1:i2]), "\n".join(new_lines[j1:j2])
        line = i1 + 1
    else:  # only line endings differ
        a, b, line, hunks = old, new, 1, [("replace", 0, 0, 0, 0)]
    prefix = len(_common_prefix(a, b))
    suffix = len(_common_prefix(a[prefix:][::-1], b[prefix:][::-1]))
    start = max(prefix - DIFF_CONTEXT, 0)
    shown_a = _around(a, start, len(a) - suffix)
    shown_b = _around(b, start, len(b) - suffix)
    where = f"line {line}" + (f", +{len(hunks) - 1} more changes" if len(hunks) > 1 else "")
    return f"changed `{shown_a}` → `{shown_b}` ({where})"


def _common_prefix(a: str, b: str) -> str:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return a[:n]


def _around(text: str, start: int, end: int) -> str:
    """``text[start:end]`` plus a little trailing context, one line, at most ``DIFF_SIDE``."""
    end = min(max(end, start) + DIFF_CONTEXT // 2, len(text))
    piece = " ".join(text[start:end].split())
    if len(piece) > DIFF_SIDE:
        piece = piece[: DIFF_SIDE - 1].rstrip() + "…"
    elif end < len(text):
        piece += "…"
    return ("…" if start > 0 else "") + piece


def _rename(old: str, new: str) -> tuple[str, str] | None:
    """(a, b) when ``new`` is ``old`` with one identifier renamed throughout, else None."""
    if not old or not new or old == new or len(old) > 20_000:
        return None
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    if len(a) != len(b):
        return None
    pairs = {(x, y) for x, y in zip(a, b, strict=True) if x != y}
    if len(pairs) != 1:
        return None
    x, y = pairs.pop()
    identifier = (x[0].isalpha() or x[0] == "_") and (y[0].isalpha() or y[0] == "_")
    return (x, y) if identifier else None


def _moved_block(pairs: list[tuple[str, str]]) -> str:
    """The first line of a block (2+ lines) that one edit removes and another re-inserts."""
    for i, (old, new) in enumerate(pairs):
        block = old.strip()
        if block.count("\n") < 1 or block in new:
            continue
        if any(block in other_new for j, (_, other_new) in enumerate(pairs) if j != i):
            return first_line(block, 60)
    return ""


EDIT_RULES: dict[str, Callable[[ToolCall], ObservationDraft | None]] = {
    "Edit": observe_edit,
    "MultiEdit": observe_multi_edit,
    "Write": observe_write,
    "NotebookEdit": observe_notebook_edit,
}
