"""workbench: a local-first memory and knowledge workbench for AI coding agents.

Modules:
- ``settings``  env > settings.json > defaults; every path derived from one data dir
- ``settings_file`` settings.json on disk: strict or lenient reads, backups before writes
- ``errors``    the few specific errors users meet, each carrying its fix
- ``redact``    stdlib-only stripping of private and injected blocks (hooks and service)
- ``models``    pydantic domain types (observation, summary, ...)
- ``clock``     timestamps: ISO text plus epoch milliseconds
- ``locate``    stdlib-only: the data dir, the service port, the project of a cwd (hooks use it)
- ``spool``     stdlib-only: the on-disk spool of events the service could not take yet
- ``own_tools`` stdlib-only: tool calls that are never memories (our MCP tools, tool discovery)
- ``store/``    SQLite: connection policy, migrations, events log + queue, typed tables
- ``ingest``    accepting one hook event: redact, skip rules, dedup, append, enqueue
- ``derive``    events → observations and summaries (the worker, and recompress)
- ``forget``    forgetting observations: delete, scrub sources and spool copies, purge the file
- ``forget_words`` a forgotten observation's own words, and their copies in its summaries
- ``claude_settings`` merge our hooks into Claude Code settings.json and take them out
- ``config_file``     an agent's config file: regular files only, symlinks kept, locked, atomic
- ``exact_json``      JSON read and written back with every number spelled as it was
- ``compress/`` turning events into observations and summaries (offline rules or Claude)
- ``client``    the small HTTP client the CLI uses to talk to the service
- ``launch``    stdlib-only: find the running service (of this data dir) or start it detached
- ``instance``  stdlib-only: the data dir's id, which tells its service from another's
- ``spawn``     stdlib-only: how the service is started (command, cwd, env), CLI and hooks alike
- ``pidfile``   the PID file held with a lock: one service per data dir
- ``code/``     code navigation for agents: smart_search, smart_outline, smart_unfold (tree-sitter)
- ``staleness/`` memory that knows when the code moved on: evidence at capture, stale checks
- ``cli/``      the Typer app, one module per command group

Kept empty on purpose: hooks import ``workbench.redact`` and must not pay for anything else.
"""

__version__ = "0.1.0"
