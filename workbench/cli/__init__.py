"""The ``workbench`` command line: one module per command group, all on one Typer app.

- ``main``      the app, its quickstart help, and the group registration
- ``output``    shared ``--json`` option, rich tables, error rendering
- ``service``   serve, status, stop, doctor
- ``install``   install, uninstall (Claude Code hooks and MCP registration)
- ``data``      export, import, replay, retry, recompress
- ``demo``      seed a separate demo data dir through the real pipeline
- ``index``     reindex (rebuild FTS and vectors from SQLite, with a progress bar)
"""
