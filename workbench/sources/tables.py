"""``Tables``: the rows ``workbench sql`` and ``workbench stats`` read, as one DuckDB connection.

A source's tables are either this store's (``LocalTables``: the read-only SQL sandbox over
the SQLite file, ``store/duck.py``) or this store's and the team lake's (``TeamTables`` in
``team/tables.py``: ``team_*`` tables beside the sandbox's views for ``sql``, and the
combined views with ``author`` for ``stats``). The command picks one with ``source_for`` and
asks it; a report then follows the rows it is given (``knowledge.reports.groupings``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    import duckdb

    from workbench.settings import Settings


class Tables(Protocol):
    """Where a query or a statistic reads its rows."""

    label: str  # what a table's heading adds ("" for this store alone)

    def sandbox(self) -> duckdb.DuckDBPyConnection:
        """The SQL sandbox: one read-only SELECT of a user's (``workbench sql``)."""
        ...

    def views(self, kind: str) -> duckdb.DuckDBPyConnection:
        """The views statistic ``kind`` reads (``knowledge/stats.py``); refuses a statistic
        these rows cannot give."""
        ...


class LocalTables:
    """This store alone."""

    label = ""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def sandbox(self) -> duckdb.DuckDBPyConnection:
        from workbench.store import duck

        return duck.connect(self.settings.db_path)

    def views(self, kind: str) -> duckdb.DuckDBPyConnection:
        return self.sandbox()
