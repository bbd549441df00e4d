"""Build workbench's ``MCPServer`` from its tool modules, and run it over stdio.

``build_server`` creates one ``ServiceBackend`` and hands it, with the server, to every tool
module listed in ``tool_modules`` (each defines ``register(server, client)``; listed by hand,
as the CLI's command groups and the service's routers are).

stdout is the protocol channel. The transport (``wire``) points fd 1 at stderr while it
serves, so a stray ``print`` in a tool cannot corrupt the stream; before that, nothing here
writes anything: logs go to ``<data_dir>/logs/mcp.log`` and warnings (only) to stderr, which
Claude Code keeps in its MCP logs.

``workbench mcp`` starts in ``front``, which answers the handshake without the SDK and calls
``run_on_lines`` on the first real request; ``run`` serves stdio with the SDK from the start
(``python -m workbench.mcp_server``, what ``front``'s snapshot is taken from).
"""

from __future__ import annotations

import logging
import queue
from collections.abc import Callable
from logging.handlers import RotatingFileHandler
from typing import Any

from workbench import __version__
from workbench.mcp_server.backend import ServiceBackend
from workbench.mcp_server.wire import StdioServer
from workbench.settings import Settings, load_settings

log = logging.getLogger("workbench.mcp")

INSTRUCTIONS = (
    "workbench is the memory of earlier coding sessions (observations of what was read, "
    "changed, decided and fixed). Recall in three layers to keep token cost low: `search` "
    "for a compact index (~50-100 tokens per hit), `timeline` around interesting hits, then "
    "`get_observations` only for the ids you need. Call `workflow` for the details. Save "
    "something worth remembering with `save_memory`."
)


def tool_modules() -> list[Any]:
    """Every tool module, listed by hand (as ``service.app.ROUTERS`` lists routers), by name.

    A new tool group is one new module defining ``register(server, client)`` plus its line
    here; ``tests/test_module_lists.py`` fails on a module left out. Imported here, not at the
    top: ``front`` answers the handshake without the SDK the tool modules load.
    """
    from workbench.mcp_server import code_tools, corpus_tools, recall_tools

    return [code_tools, corpus_tools, recall_tools]


def build_server(
    settings: Settings, *, start: bool = True, platform: str | None = None
) -> tuple[StdioServer, ServiceBackend]:
    """The server with every tool module registered, and the backend they share
    (``platform``: the agent that launched it, ``workbench mcp --platform``)."""
    client = ServiceBackend(settings, start=start, platform_source=platform)
    server = StdioServer(
        name="workbench",
        title="workbench memory",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="INFO",
    )
    for module in tool_modules():
        module.register(server, client)
    return server, client


def configure_logging(settings: Settings) -> None:
    """INFO and up to ``<data_dir>/logs/mcp.log``, WARNING and up to stderr; never stdout.

    Done before the SDK's own ``configure_logging`` (a ``basicConfig``, which then does
    nothing because the root logger already has handlers).
    """
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    # httpx logs every request URL at INFO, search text included: not worth keeping.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    stderr = logging.StreamHandler()  # defaults to sys.stderr
    stderr.setLevel(logging.WARNING)
    stderr.setFormatter(logging.Formatter("workbench mcp: %(levelname)s %(message)s"))
    root.addHandler(stderr)
    try:
        settings.ensure_dirs()
        handler = RotatingFileHandler(
            settings.logs_dir / "mcp.log", maxBytes=2_000_000, backupCount=2, encoding="utf-8"
        )
    except OSError as exc:  # an unwritable data dir must not stop the server: stderr only
        log.warning("cannot write %s (%s); logging to stderr only", settings.logs_dir, exc)
        return
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    root.addHandler(handler)


def run_on_lines(
    data_dir: str | None,
    start: bool,
    lines: queue.Queue[bytes | None],
    write: Callable[[bytes], None],
    platform: str | None = None,
) -> None:
    """Serve the lines ``front`` hands over (it has answered the handshake) until ``None``."""
    import anyio

    settings = load_settings(data_dir)
    configure_logging(settings)
    server, client = build_server(settings, start=start, platform=platform)
    log.info(
        "mcp server taking over (data dir %s, service %s)", settings.data_dir, settings.base_url
    )
    try:
        anyio.run(server.run_lines_async, lines, write)
    finally:
        client.close()
        log.info("mcp server stopped")


def run(settings: Settings, *, start: bool = True) -> None:
    """Serve over stdio until the client closes stdin."""
    configure_logging(settings)
    server, client = build_server(settings, start=start)
    log.info("mcp server starting (data dir %s, service %s)", settings.data_dir, settings.base_url)
    try:
        server.run("stdio")
    finally:
        client.close()
        log.info("mcp server stopped")
