"""One module per resource; ``service.app`` includes their routers.

- ``health``        GET /api/health, GET /api/readiness
- ``sessions``      POST /api/sessions/{init,observations,summarize,end} (the hook routes)
- ``observations``  GET /api/observations, GET /api/observation/{id}, POST /api/observations/batch
- ``summaries``     GET /api/summaries
- ``prompts``       GET /api/prompts
- ``memory``        POST /api/memory/save
- ``stats``         GET /api/stats, GET /api/projects
- ``transfer``      GET /api/export, POST /api/import
- ``queue``         POST /api/spool/replay, GET /api/queue/failed, POST /api/queue/retry,
                    POST /api/recompress
"""
