"""Sources: one read interface over the places memories come from, and one merger.

Modules:
- ``replies``  the typed replies every source returns: they ARE the response models
  (``SearchReply``, ``TimelineReply``; with a colleague's author and ref in a merged one)
- ``observations`` full observations by id or team ref (``ObservationView``,
  ``TeamObservation``) and ``Fetched``, what ``get`` returns
- ``source``   ``MemorySource`` (search, timeline, get) and ``TeamSide`` (what a merger asks a team
  source for): the protocols callers and the merger are written against
- ``local``    the local store (SQLite + FAISS through ``recall.search.SearchEngine``)
- ``merged``   one local source and one team side read as one: rank fusion, local wins
- ``select``   the observations one filter value picks (a corpus): this store's
  (``LocalRows``), the team's, or both (``MergedRows``: the newest, local wins)
- ``tables``   the rows ``sql`` and ``stats`` read as DuckDB (``Tables``; ``LocalTables`` here,
  the team's in ``team/tables.py``)
- ``text``     a merged reply as the compact text index (``@author``, ``team:author:id``)

Why a package of its own: the search route, the CLI and the MCP tools asked the store and the
team lake each in their own ``if team:`` branch and merged dicts by hand. Here a caller picks
its sources once and asks them; ``team/`` implements ``TeamSide`` and nothing on the local side
imports ``team/``.
"""
