"""One module per resource; ``service.app.ROUTERS`` lists their routers, in order.

- ``sessions``      POST /api/sessions/{init,observations,summarize,end} (the hook routes),
                    GET /api/sessions
- ``health``        GET /api/health, GET /api/readiness
- ``context``       GET /api/context/{inject,prompt,file} (text blocks for the hooks)
- ``search``        GET /api/search, GET /api/timeline
- ``observations``  GET /api/observations, GET /api/observation/{id},
                    POST /api/observations/batch, GET /api/observations/by-file,
                    DELETE /api/observation/{id}, POST /api/observations/forget,
                    GET /api/observation/{id}/injections
- ``prompts``       GET /api/prompts
- ``summaries``     GET /api/summaries
- ``projects``      GET /api/projects
- ``analytics``     GET /api/stats (the overview) and GET /api/stats/* (DuckDB reports)
- ``corpora``       POST/GET /api/corpus, GET/DELETE /api/corpus/{name},
                    POST /api/corpus/{name}/rebuild
- ``agent``         POST /api/corpus/{name}/{prime,query,reprime} (the knowledge agent)
- ``memory``        POST /api/memory/save (a memory saved by hand, e.g. the MCP tool)
- ``index``         POST /api/reindex, GET /api/index/status (FTS + vector rebuilds)
- ``queue``         POST /api/spool/replay, GET /api/queue/failed, POST /api/queue/retry,
                    POST /api/recompress
- ``transfer``      GET /api/export, POST /api/import
- ``transcripts``   POST /api/transcripts/import (one agent transcript file read)
- ``stale``         POST /api/stale (observations a later change made stale; records the
                    verdicts for DuckDB's ``staleness`` view)
- ``settings``      GET/PUT /api/settings
- ``team``          GET /api/team/observation/{ref}, POST /api/team/observations/batch
                    (colleagues' observations by team ref)
- ``stream``        GET /stream (Server-Sent Events for the live page, Last-Event-ID replay)
- ``viewer``        GET / and /static/* (the viewer page, strict CSP)
"""
