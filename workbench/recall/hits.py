"""Result rows: what a search hit or a timeline item says about one record, loaded by id.

Rankers return ids; only the page that is actually returned is loaded here, with the columns
the compact index needs (no JSON parsing: the token estimate counts the raw JSON text). So a
search over 100,000 observations reads at most ``limit`` rows of text.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from workbench.recall.filters import Kind
from workbench.recall.tokens import estimate_tokens

RecordKind = Literal["observation", "summary", "prompt"]
KIND_OF: dict[Kind, RecordKind] = {
    "observations": "observation",
    "sessions": "summary",
    "prompts": "prompt",
}
TITLE_CHARS = 160

_COLUMNS: dict[Kind, tuple[str, str]] = {
    "observations": (
        "observations",
        "id, type, title, subtitle, narrative, facts, concepts, files_read, files_modified,"
        " project, created_at, created_at_epoch, content_session_id, prompt_number,"
        " platform_source",
    ),
    "sessions": (
        "session_summaries",
        "id, request, investigated, learned, completed, next_steps, notes, files_read,"
        " files_edited, project, created_at, created_at_epoch, content_session_id, prompt_number",
    ),
    "prompts": (
        "user_prompts",
        "id, prompt_text, project, created_at, created_at_epoch, content_session_id, prompt_number",
    ),
}


class RecordRef(BaseModel):
    """One record in an index: enough to decide whether to fetch it, and what that costs."""

    id: int
    kind: RecordKind
    type: str  # the observation type, or "summary" / "prompt"
    title: str
    subtitle: str = ""
    project: str
    created_at: str
    created_at_epoch: int
    tokens: int  # estimated tokens of the full record
    content_session_id: str | None = None
    prompt_number: int = 0
    platform_source: str | None = None  # observations only (the others have no column)


class SearchHit(RecordRef):
    score: float
    ranks: dict[str, int] = Field(default_factory=dict)  # ranker name -> 1-based rank
    # Which rankers found this hit: "fts" (BM25) and/or "vector" (whatever the model).
    rankers: list[str] = Field(default_factory=list)
    # The second stage that placed it ("features", "features-default", "claude"); None: fused.
    rerank: str | None = None


class TimelineItem(RecordRef):
    is_anchor: bool = False


def first_line(text: str, limit: int = TITLE_CHARS) -> str:
    """The first non-blank line of ``text``, cut to ``limit`` characters with an ellipsis."""
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def _ref(kind: Kind, row: sqlite3.Row) -> dict[str, Any]:
    common = {
        "id": row["id"],
        "kind": KIND_OF[kind],
        "project": row["project"],
        "created_at": row["created_at"],
        "created_at_epoch": row["created_at_epoch"],
        "content_session_id": row["content_session_id"],
        "prompt_number": row["prompt_number"],
    }
    if kind == "observations":
        body = [row[c] for c in ("title", "subtitle", "narrative", "facts", "concepts")]
        body += [row["files_read"], row["files_modified"]]
        return {
            **common,
            "type": row["type"],
            "title": row["title"],
            "subtitle": row["subtitle"],
            "platform_source": row["platform_source"],
            "tokens": estimate_tokens("\n".join(body)),
        }
    if kind == "sessions":
        texts = [row[c] for c in ("request", "investigated", "learned", "completed")]
        texts += [row["next_steps"], row["notes"], row["files_read"], row["files_edited"]]
        return {
            **common,
            "type": "summary",
            "title": first_line(row["request"]) or first_line(row["completed"]) or "(summary)",
            "subtitle": first_line(row["completed"] or row["learned"]),
            "tokens": estimate_tokens("\n".join(texts)),
        }
    text = row["prompt_text"]
    return {
        **common,
        "type": "prompt",
        "title": first_line(text) or "(prompt)",
        "subtitle": f"prompt {row['prompt_number']}",
        "tokens": estimate_tokens(text),
    }


def load(conn: sqlite3.Connection, kind: Kind, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The index fields of each id (unknown ids are absent); build hits or items from them."""
    if not ids:
        return {}
    table, columns = _COLUMNS[kind]
    found: dict[int, dict[str, Any]] = {}
    unique = list(dict.fromkeys(int(i) for i in ids))
    for start in range(0, len(unique), 500):  # SQLite caps host parameters
        chunk = unique[start : start + 500]
        sql = f"SELECT {columns} FROM {table} WHERE id IN ({', '.join('?' * len(chunk))})"
        for row in conn.execute(sql, chunk):
            found[int(row["id"])] = _ref(kind, row)
    return found


def epochs(conn: sqlite3.Connection, kind: Kind, ids: Sequence[int]) -> dict[int, int]:
    """``id -> created_at_epoch`` (to date-order a candidate pool without loading its text)."""
    table = _COLUMNS[kind][0]
    out: dict[int, int] = {}
    unique = list(dict.fromkeys(ids))
    for start in range(0, len(unique), 500):
        chunk = unique[start : start + 500]
        sql = (
            f"SELECT id, created_at_epoch FROM {table} WHERE id IN ({', '.join('?' * len(chunk))})"
        )
        out.update((int(r[0]), int(r[1])) for r in conn.execute(sql, chunk))
    return out


def table_of(kind: Kind) -> str:
    return _COLUMNS[kind][0]
