"""One module per resource; ``service.app`` includes their routers.

- ``health``        GET /api/health, GET /api/readiness
- ``index``         POST /api/reindex, GET /api/index/status (FTS + vector rebuilds)
- ``sessions``      POST /api/sessions/{init,observations,summarize,end} (the hook routes)
- ``observations``  GET /api/observations, GET /api/observation/{id}, POST /api/observations/batch
- ``summaries``     GET /api/summaries
- ``prompts``       GET /api/prompts
- ``memory``        POST /api/memory/save
- ``stats``         GET /api/stats, GET /api/projects
- ``transfer``      GET /api/export, POST /api/import
- ``queue``         POST /api/spool/replay, GET /api/queue/failed, POST /api/queue/retry,
                    POST /api/recompress
- ``stream``        GET /stream (Server-Sent Events for the live page, Last-Event-ID replay)
- ``viewer``        GET / and /static/* (the viewer page, strict CSP)
- ``admin``         DELETE /api/observation/{id}, POST /api/observations/forget,
                    GET /api/observation/{id}/injections,
                    GET/PUT /api/settings
"""
