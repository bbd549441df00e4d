"""Staleness: memory that knows when the code moved on (issue 22, item 5).

An observation cites files (``files_read``, ``files_modified``) as they were at one moment.
At capture the service records, per cited file, the git blob id of its content (computed in
Python, no git process), its size and mtime, and the repository's HEAD commit; later, an
observation is *stale* when one of those files no longer has the content it saw (edited,
committed over, reverted, deleted, or created where it was absent).

Why content and not only ``git diff <commit> HEAD``: a tool call's own uncommitted edit is in
the working tree at capture, so a diff against the recorded commit would call the edit that
made the memory "a later change"; and committing exactly what the memory saw changes no
claim. The blob id is git's own, so the recorded commit plus the blob say what the memory saw
in git's terms, and ``workbench stale`` shows the commits and the diff since.

Modules:
- ``blobs``    stdlib only: git blob ids of files, cached by stat signature
- ``check``    stdlib only: which observations are stale, and which of their files changed
               (the SessionStart hook's cold path uses it; no git, no cache across processes
               needed: an unchanged file is one ``stat``)
- ``gitrepo``  the repository of a path and its HEAD (cached per HEAD), and the commits and
               diff since a recorded commit; git runs with a timeout, never prompts, never
               reaches the network; every git failure is "unknown", never an exception
- ``capture``  the evidence rows of a new observation (the service's worker, at derive)
- ``report``   the stale list for ``workbench stale`` and ``POST /api/stale``, recorded in
               ``observation_staleness`` for DuckDB's ``staleness`` view
"""
