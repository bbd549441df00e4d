"""Memories related to a prompt, injected on UserPromptSubmit (only with ``prompt_injection``).

Off by default: it costs a request and a vector query per prompt, and it puts text in front
of the agent that the user did not ask for. When on, the hook sends the redacted prompt and
``related`` asks the vector ranker for the project's nearest observations, then drops

- observations of this very session (they are already in the agent's context), and
- observations this session was already given on an earlier prompt (the ledger knows),
- observations less similar than ``prompt_injection_min_similarity`` (cosine): the nearest
  memories of a prompt about something new are still "nearest", and injecting them costs
  tokens and distracts (the default floor comes from the relevance sets, see
  ``bench/relevance_cv.py``),

and keeps ``prompt_injection_count`` of them. Without a usable vector ranker it returns
nothing, silently: matching a whole prompt by full text mostly finds its common words.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Sequence

from workbench.errors import WorkbenchError
from workbench.models import Observation
from workbench.recall import ledger_reads, render
from workbench.recall.context import TITLE_CHARS, Injection, header
from workbench.recall.filters import SearchFilters
from workbench.recall.search import SearchEngine, VectorRanker
from workbench.store import observations as obs_store
from workbench.tokens import estimate_tokens

log = logging.getLogger("workbench.recall")
MAX_QUERY_CHARS = 2000  # the ranker embeds a prefix anyway; the hook sends at most this
EXCERPT_CHARS = 240


def related(
    conn: sqlite3.Connection,
    ranker: VectorRanker | None,
    query: str,
    *,
    project: str | None,
    content_session_id: str | None,
    count: int,
    project_key: str | None = None,
    min_chars: int,
    min_similarity: float = 0.0,
) -> list[Observation]:
    """The ``count`` observations nearest in meaning to ``query``, best first (maybe none).

    Only hits whose cosine similarity is at least ``min_similarity`` qualify. ``project_key``
    (the hook's folder) scopes them to that folder's project, which ``project`` (a name two
    folders may share) cannot.
    """
    text = query.strip()[:MAX_QUERY_CHARS]
    if len(text) < min_chars or ranker is None or count <= 0:
        return []
    engine = SearchEngine(conn, None, ranker)
    if engine.vector_unavailable() is not None:
        return []
    seen = ledger_reads.injected_ids(conn, content_session_id or "", ["prompt"])
    filters = SearchFilters(project=project, project_key=project_key or None)
    try:
        result = engine.search(
            text,
            filters,
            types="observations",
            mode="vector",
            limit=min(count * 4 + len(seen), 100),
        )
    except WorkbenchError as exc:  # the ranker failed mid-query: no injection, no error
        log.warning("prompt injection skipped: %s", exc)
        return []
    ids = [
        hit.id
        for hit in result.observations
        if hit.id not in seen
        and hit.score >= min_similarity  # mode=vector: the score is the cosine
        and (content_session_id is None or hit.content_session_id != content_session_id)
    ][:count]
    by_id = {o.id: o for o in obs_store.get_many(conn, ids)}
    return [by_id[i] for i in ids if i in by_id]


def render_prompt_context(matches: Sequence[Observation]) -> Injection:
    """The fenced block for the matches (already ranked), or an empty ``Injection``."""
    if not matches:
        return Injection(text="", tokens=0)
    lines = [header([], subject="memories related to this prompt")]
    for obs in matches:
        lines.append(
            f"#{obs.id} {render.stamp(obs.created_at_epoch)} {render.marker(obs.type)} "
            f"{render.neutral(obs.title, TITLE_CHARS)}"
        )
        excerpt = render.neutral(obs.narrative or " · ".join(obs.facts), EXCERPT_CHARS)
        if excerpt:
            lines.append(f"  {excerpt}")
    ids = ", ".join(str(o.id) for o in matches)
    lines.append(
        f"Full records: MCP `get_observations` with ids [{ids}], or POST /api/observations/batch."
    )
    text = render.fence("\n".join(lines))
    return Injection(
        text=text,
        tokens=estimate_tokens(text),
        items=[(o.id, "full") for o in matches],
        discovery_tokens=sum(o.discovery_tokens for o in matches),
    )
