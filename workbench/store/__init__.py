"""The SQLite store. SQLite rows are canonical; everything else is derived.

Canonical (never corrupted, never lost, survives kill -9): ``events`` (the append-only log of
every accepted hook event, after redaction), ``sessions``, ``user_prompts``, ``observations``,
``session_summaries``. Observations and summaries are derived *from events* by a compressor,
and can be re-derived (``workbench recompress``); the work queue is the state of each event.

Derived (eventually consistent, rebuildable with one command): the FTS5 tables (kept in sync by
triggers, ``workbench reindex``), vectors and the FAISS index, corpora, analytics views.
Temporary staleness of derived state is always better than a deadlock or a lost write.

Modules:
- ``connection``    connection policy (pragmas, each with its reason) and ``atomic()``
- ``database``      ``Store``: one file, migrated on open, one connection per thread
- ``schema``        numbered migrations, each applied with its record in one transaction
- ``fts_rebuild``   ``workbench reindex``'s full text: built beside the live index, swapped in
- ``identifiers``   CamelCase words expanded into their parts for the FTS index
- ``events``        append to the events log (and ``scrub``, its one rewrite); the queue over it
- ``sessions``      sessions and user prompts
- ``observations``  observations: insert with content-hash dedup, fetch, list
- ``deletions``     deleting an observation for good: row, source scrubbed, tombstone, purge
- ``summaries``     session summaries
- ``transfer``      export/import in one JSON format
- ``pages``         one page of a table, newest first (the list routes)
- ``stats``         counts for ``/api/stats`` and ``workbench status``
- ``duck``          read-only DuckDB over the store: the analytics views, the write refusal
"""
