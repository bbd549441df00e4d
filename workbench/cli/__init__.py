"""The ``workbench`` command line: one module per command group, all on one Typer app.

- ``main``      the entry point (``run``): search, timeline and show try their fast paths
  before Typer loads
- ``app``       the Typer app, its quickstart help, and the group registration
- ``fast_wire`` the fast paths' argument reader and their one request to this data dir's
  service, over a plain socket
- ``fast_search`` ``workbench search <words>`` through the standard library, or declines
- ``fast_timeline`` ``workbench timeline <anchor>`` through the standard library, or declines
- ``fast_show`` ``workbench show <ids>`` through the standard library, or declines
- ``output``    shared ``--json`` option, rich tables, error rendering
- ``tables``    JSON and rich tables, without Typer (``output`` re-exports them)
- ``plain_text`` rich's table and line layout for plain text on a pipe, in the standard
  library (the same bytes), or declines to rich
- ``search_table`` a search reply as a table (the full command and the fast path alike)
- ``timeline_table`` a timeline reply as a table (the full command and the fast path alike)
- ``observation_table`` one full observation as a table (``show``, both paths)
- ``service``   serve, status, stop, doctor
- ``install``   install, uninstall (every agent's hooks and MCP registration; Claude Code's
  auto-memory switch)
- ``plugin``    plugin build (workbench as a Claude Code plugin folder and local marketplace)
- ``folder_memory`` folder-memory generate | clean (the per-folder CLAUDE.md sections)
- ``data``      export, import, replay, retry, recompress
- ``demo``      seed a separate demo data dir through the real pipeline
- ``index``     reindex (rebuild FTS and vectors from SQLite, with a progress bar)
- ``code``      code search, outline, unfold (the MCP smart_* tools; ``workbench.code``)
- ``transcripts`` import-transcripts (agents' own session files, with a progress bar)
- ``stale``     stale (observations whose cited files changed since; ``workbench.staleness``)
- ``recall``    search, timeline, show (the 3-layer recall workflow)
- ``recall_sources`` the sources those read: the store through the service (read-only when it
  is down), with the team lake for ``--team``
- ``query_options`` the ``SearchQuery`` fields as CLI options, one ``--field-name`` each
- ``forget``    forget <id>… (delete observations for good, say what was scrubbed)
- ``analytics`` sql, stats (analyse the memory without the service)
- ``corpus``    corpus build | list | show | rm | rebuild
- ``agent``     agent prime | ask | reprime (the knowledge agent of a corpus)
- ``notebook``  notebook [name] (a marimo notebook on the active data dir)
- ``mcp``       mcp (the stdio MCP server agents start)
- ``models``    models build (the install artifacts recall runs on, offline)
- ``rerank``    rerank train | build (the second-stage reranker's models)
- ``team``      team init | status | allow | deny | maintain, and publish
- ``team_mirror`` team refresh (the local team mirror brought up to the lake)

``app.COMMAND_MODULES`` lists every module that registers a group, by hand.
"""
