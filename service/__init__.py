"""The local ingest service: a FastAPI app on 127.0.0.1, the one writer of the store.

Modules:
- ``app``        ``create_app(settings)``: middleware, error mapping, routers, lifespan
- ``runtime``    what the lifespan owns: store, ingestor, worker, spool replayer, PID file
- ``deps``       ``Annotated`` dependency aliases used by route signatures
- ``schemas``    request bodies (the wire contract; unknown fields are a 422)
- ``limits``     pure-ASGI guards: body size limit, HTML security headers, the JSON refusal
- ``origin``     ``OwnOriginOnly``: only the service's own origin and Host read or write
- ``idle_trim``  pure ASGI: a heap trim once the service goes quiet after requests
- ``instance_guard`` pure ASGI: the data dir's id on every reply; 421 for another's request
- ``http_protocol`` uvicorn's httptools protocol: JSON 414/431/408 for over-long or stalled heads
- ``file_limit`` the soft open-files limit raised toward the hard one at start
- ``worker``     the background thread that drains the durable queue
- ``replay``     replays spooled hook events through the same ingest path
- ``routes/``    one module per resource
- ``__main__``   ``python -m service``: load settings, run uvicorn on loopback
"""
