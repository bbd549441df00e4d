"""Team memory: publish this machine's redacted memory to a shared DuckLake.

- ``lake``        a DuckDB connection with the DuckLake + postgres extensions loaded from their
                  PyPI packages and the lake attached; the lake's tables
- ``catalog_stats`` a catalog trigger that keeps text out of DuckLake's column statistics
- ``s3``          an ``s3://`` data path: httpfs and a temporary secret from the ``AWS_*`` variables
- ``local_rows``  reads sessions, observations, summaries and tombstones from the SQLite store,
                  re-redacted, with their content hashes
- ``machine``     this data dir's machine id (``team_machine_id``): rows and marks per machine
- ``publish``     one publishing run: one transaction, one snapshot, marks and tombstones
- ``autopublish`` the service's publisher thread behind ``team_publish_on_stop``
- ``last_publish`` the last run's outcome in ``team_publish.json``, for ``team status``
- ``maintain``    lake upkeep: expire snapshots, rewrite/merge files, delete dead ones
- ``read``        a reader pinned to one snapshot; team tables, timeline, corpus rows
- ``combined``    the local store and the lake as one set of views (``stats --team``)
- ``tables``      the local store and the lake as the ``Tables`` ``sql --team`` and
                  ``stats --team`` read (``workbench.sources.tables``)
- ``mirror``      the local, derived FTS5 copy of the lake's live observations (team search)
- ``mirror_read`` BM25 search over the mirror and observations by team ref
- ``source``      the team side of ``search --team`` / ``timeline --team`` and a team corpus
                  (``workbench.sources``): mirror hits, lake windows and selections, this
                  store's own rows left out
- ``refs``        citable team ids ``team:<author>:<id>`` and the observations they name
- ``context``     colleagues' memories for the SessionStart block, read from the lake
"""
