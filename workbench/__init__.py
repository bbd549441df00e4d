"""workbench: a local-first memory and knowledge workbench for AI coding agents.

Modules:
- ``settings``  env > settings.json > defaults; every path derived from one data dir
- ``settings_file`` settings.json on disk: strict or lenient reads, backups before writes
- ``settings_edit`` changing settings from outside (``PUT /api/settings``): editable keys only
- ``sections/`` each settings section's own checks (compressors, team lake, durations)
- ``errors``    the few specific errors users meet, each carrying its fix
- ``redact``    stdlib-only stripping of private and injected blocks (hooks and service)
- ``line_endings`` stdlib-only: a user's CRLF file is written back with CRLF
- ``models``    pydantic domain types (observation, summary, ...)
- ``bounds``    the ranges a number from outside must fit before it reaches SQLite
- ``clock``     timestamps: ISO text plus epoch milliseconds
- ``tokens``    stdlib-only token estimates, ``ceil(chars / 4)``, one rule for every figure
- ``locate``    stdlib-only: the data dir, the service port, the project of a cwd (hooks use it)
- ``spool``     stdlib-only: the on-disk spool of events the service could not take yet
- ``shred``     stdlib-only: a file overwritten with zeros, synced, then removed (forget)
- ``notebook_files`` stdlib-only: the notebooks, and where marimo snapshots their outputs
- ``own_tools`` stdlib-only: tool calls that are never memories (our MCP tools, tool discovery)
- ``platforms`` the agents events come from: hook platforms and MCP-only ones
- ``platform_filter`` a ``platform_source`` filter checked against the known platforms
- ``store/``    SQLite: connection policy, migrations, events log + queue, typed tables;
  read-only DuckDB over it
- ``event_payloads`` one typed payload per event kind: what ingest logs and derive reads
- ``ingest``    accepting one hook event: redact, skip rules, dedup, append, enqueue
- ``derive``    events → observations and summaries (the worker, and recompress)
- ``forget``    forgetting observations: delete, scrub sources and spool copies, purge the file
- ``forget_words`` a forgotten observation's own words, and their copies in its summaries
- ``config_file``     an agent's config file: regular files only, symlinks kept, locked, atomic
- ``exact_json``      JSON read and written back with every number spelled as it was
- ``agents/``   the agents workbench installs into, one module each (Claude Code's
  settings.json, MCP registration and plugin folder among them)
- ``provider_errors`` one classification of model-provider errors, whichever SDK raised them
- ``anthropic_api`` the one place that builds an ``anthropic`` client
- ``compress/`` turning events into observations and summaries (offline rules or Claude)
- ``recall/``   search (FTS5 + vectors, fused), timeline, context injection, file history
- ``folder_memory/`` per-folder CLAUDE.md sections written from the memory
- ``transcripts/`` agents' own session files imported as events
- ``sources/``  one read interface (``MemorySource``) over the local store and the team lake,
  typed replies, one merger
- ``team/``     team memory: publish to a shared DuckLake, read and search it
- ``knowledge/`` analytics, corpora and the knowledge agent
- ``api_models/`` the service's request and response models (shared with the CLI and MCP)
- ``client``    the small HTTP client the CLI uses to talk to the service
- ``launch``    stdlib-only: find the running service (of this data dir) or start it detached
- ``instance``  stdlib-only: the data dir's id, which tells its service from another's
- ``spawn``     stdlib-only: how the service is started (command, cwd, env), CLI and hooks alike
- ``pidfile``   the PID file held with a lock: one service per data dir
- ``demo``      the bundled demo memory and the demo run through the real pipeline
- ``notebooks`` what the notebooks share: where the data is, how to reach the writer
- ``code/``     code navigation for agents: smart_search, smart_outline, smart_unfold (tree-sitter)
- ``mcp_server/`` the stdio MCP server: the memory as tools for an agent
- ``staleness/`` memory that knows when the code moved on: evidence at capture, stale checks
- ``cli/``      the Typer app, one module per command group
- ``__main__``  ``python -m workbench`` is the ``workbench`` command (and ``mcp``)

Layers, lowest first. A package or module imports only from its own layer or a lower one,
never through a cycle: at module level, inside a function or for types only
(``tests/test_layers.py`` reads this list and checks it):

1. base: bounds, clock, errors, exact_json, instance, locate, models, event_payloads,
   own_tools, platforms, platform_filter, redact, spawn, spool, tokens, sections,
   provider_errors, line_endings, config_file, settings_file, pidfile, launch, shred,
   notebook_files
2. settings: settings, settings_edit
3. resources: store, staleness, client, code, agents, demo
4. capture: anthropic_api, compress, ingest, transcripts, derive
5. recall: recall, folder_memory
6. forgetting: forget_words, forget
7. sources: sources
8. team: team
9. knowledge: knowledge
10. edges: api_models, notebooks
11. front ends: mcp_server, cli, __main__

Kept empty on purpose: hooks import ``workbench.redact`` and must not pay for anything else.
"""

__version__ = "0.1.0"
