"""The JSON replies of the service, as pydantic models: one module per resource.

The service declares them as its routes' response models, so ``/openapi.json`` documents
every reply; the CLI's ``--json``, the MCP tools and tests validate what they receive with the
same classes. They live in ``workbench/`` (not ``service/``) so those clients can import them
without importing FastAPI. Field names are the wire's: camelCase where the reply used
camelCase (``hasMore``, ``totalResults``), snake_case where the stored record does (an
observation's ``files_read``); ``CamelModel`` accepts either spelling on input.

- ``base``          ``CamelModel``: camelCase aliases, populated by name too
- ``pages``         ``Page[T]``: ``{items, hasMore, offset, limit}`` of every list route
- ``observations``  an observation with its staleness (get, batch), one found by file
                    (``GET /api/observations/by-file``)
- ``search``        ``SearchReply`` (``/api/search?format=json``), ``Timeline``
- ``projects``      ``GET /api/projects``
- ``health``        ``GET /api/health``, ``GET /api/readiness``
- ``ingest``        the hook routes and ``POST /api/memory/save``
- ``forget``        ``DELETE /api/observation/{id}``, ``POST /api/observations/forget``
- ``ledger``        ``GET /api/observation/{id}/injections``
- ``analytics``     ``GET /api/stats`` and the reports under it
- ``queue``         the spool, the parked events, recompress
- ``index``         ``POST /api/reindex``, ``GET /api/index/status``
- ``corpora``       ``/api/corpus`` (build, list, show, rebuild, delete)
- ``agent``         ``POST /api/corpus/{name}/prime|reprime|query``
- ``transfer``      ``GET /api/export``, ``POST /api/import``
- ``transcripts``   ``POST /api/transcripts/import`` (one agent transcript file read)
- ``stale``         ``POST /api/stale`` (observations a later change made stale)
- ``settings``      ``GET/PUT /api/settings``
- ``team``          a colleague's observations by team ref (``/api/team/…``)
- ``check``         ``checked(shape, data)``: the CLI and MCP tools validate a reply before use
"""
