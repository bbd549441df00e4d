"""The local store and the team lake as one set of views, for ``stats --team`` and the corpus.

``workbench/knowledge/stats.py`` reads the views ``observations``, ``sessions``, ``prompts``
and ``summaries``. Here they are rebuilt in a plain in-memory DuckDB as the union of this
machine's rows (``author = 'me'``) and the lake's rows at one snapshot (``read.team_tables``:
no tombstones), so every statistic means the same thing for one person and for the team.

Local wins on duplicates: a lake row of this machine's author whose local id and session are
in the local store (an observation or summary) or whose session is (a session) is left out:
the local row already counts it. Prompts never leave a machine: ``prompts`` is local only.

The connection runs only our SQL (the stats functions'); nothing a user typed reaches it, so it
needs none of the SQL sandbox's layers. The local rows come through the sandbox
(``duck.connect``) as Arrow, the lake's through its own reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.team import read

if TYPE_CHECKING:
    import duckdb

    from workbench.settings import Settings

_OBSERVATIONS = (
    "id, content_session_id, project, platform_source, type, title, subtitle, narrative, "
    "facts, concepts, files_read, files_modified, discovery_tokens, created_at_epoch"
)
_SESSIONS = (
    "content_session_id, project, platform_source, status, started_at_epoch, completed_at_epoch"
)
_SUMMARIES = (
    "id, content_session_id, project, platform_source, request, learned, files_read, "
    "files_edited, discovery_tokens, created_at_epoch"
)
_PROMPTS = "id, content_session_id, project, platform_source, created_at_epoch"

VIEWS: dict[str, str] = {
    "observations": (
        f"SELECT 'me' AS author, {_OBSERVATIONS} FROM local_observations UNION ALL "
        f"SELECT t.author, t.local_id AS id, {_OBSERVATIONS.replace('id, ', '', 1)} "
        "FROM team_observations AS t WHERE NOT (t.author = $me AND EXISTS (SELECT 1 FROM "
        "local_observations AS l WHERE l.id = t.local_id "
        "AND l.content_session_id IS NOT DISTINCT FROM t.content_session_id))"
    ),
    "sessions": (
        f"SELECT 'me' AS author, {_SESSIONS} FROM local_sessions UNION ALL "
        f"SELECT t.author, {_SESSIONS} FROM team_sessions AS t WHERE NOT (t.author = $me AND "
        "EXISTS (SELECT 1 FROM local_sessions AS l "
        "WHERE l.content_session_id = t.content_session_id))"
    ),
    "summaries": (
        f"SELECT 'me' AS author, {_SUMMARIES} FROM local_summaries UNION ALL "
        f"SELECT t.author, t.local_id AS id, {_SUMMARIES.replace('id, ', '', 1)} "
        "FROM team_summaries AS t WHERE NOT (t.author = $me AND EXISTS (SELECT 1 FROM "
        "local_summaries AS l WHERE l.id = t.local_id "
        "AND l.content_session_id = t.content_session_id))"
    ),
    "prompts": f"SELECT 'me' AS author, {_PROMPTS} FROM local_prompts",
}
_DAY = {
    "observations": "created_at_epoch",
    "sessions": "started_at_epoch",
    "summaries": "created_at_epoch",
    "prompts": "created_at_epoch",
}


def connect(settings: Settings, at_snapshot: int | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB whose ``observations``/``sessions``/``summaries``/``prompts`` views
    hold this machine's rows and the team's (each with ``author``), local winning."""
    import duckdb

    from workbench.store import duck

    r = read.reader(settings, at_snapshot)
    try:
        team = read.team_tables(r)
        me = r.author
    finally:
        r.close()
    sandbox = duck.connect(settings.db_path)
    try:
        queries = {
            "local_observations": f"SELECT {_OBSERVATIONS} FROM observations",
            "local_sessions": f"SELECT {_SESSIONS} FROM sessions",
            "local_summaries": f"SELECT {_SUMMARIES} FROM summaries",
            "local_prompts": f"SELECT {_PROMPTS} FROM prompts",
        }
        local_tables = {
            name: sandbox.execute(sql).to_arrow_table() for name, sql in queries.items()
        }
    finally:
        sandbox.close()
    con = duckdb.connect(":memory:", config={"python_enable_replacements": False})
    try:
        for name, table in (*local_tables.items(), *team.items()):
            con.register(name, table)
        for name, sql in VIEWS.items():
            body = sql.replace("$me", _quote(me))
            con.execute(
                f"CREATE VIEW {name} AS SELECT *, "
                f"CAST(epoch_ms({_DAY[name]}) AS DATE) AS day FROM ({body})"
            )
    except BaseException:
        con.close()
        raise
    return con


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
