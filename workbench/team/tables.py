"""This store and the team lake as the ``Tables`` ``workbench sql --team`` and ``stats --team``
read (``workbench.sources.tables``).

- ``sandbox``: the SQL sandbox with the lake's tables at one snapshot beside the local views
  (``team_observations``, ``team_sessions``, ``team_summaries``: ``read.team_tables``).
- ``views``: the combined views, every row with its ``author`` (``team/combined.py``), for
  the statistics they can give (``STATS``); any other is refused with the list.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.errors import InvalidInput

if TYPE_CHECKING:
    import duckdb

    from workbench.settings import Settings

# The statistics the combined views can compute (workbench/team/combined.py builds them).
STATS = ("economics", "types", "activity")


class TeamTables:
    """This store and the team lake, the lake read as of ``at_snapshot`` (None: newest)."""

    label = " · team"

    def __init__(self, settings: Settings, at_snapshot: int | None = None) -> None:
        self.settings = settings
        self.at_snapshot = at_snapshot

    def sandbox(self) -> duckdb.DuckDBPyConnection:
        from workbench.store import duck
        from workbench.team import read

        r = read.reader(self.settings, self.at_snapshot)
        try:
            lake = read.team_tables(r)
        finally:
            r.close()
        return duck.connect(self.settings.db_path, team=lake)

    def views(self, kind: str) -> duckdb.DuckDBPyConnection:
        from workbench.team import combined

        if kind not in STATS:
            raise InvalidInput(
                f"stats {kind} --team is not supported; with --team use one of {', '.join(STATS)}"
            )
        return combined.connect(self.settings, self.at_snapshot)
