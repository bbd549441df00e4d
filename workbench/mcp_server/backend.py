"""The MCP tools' one line to the service: a ``ServiceClient``, started on demand.

Every tool module gets the same ``ServiceBackend`` and calls ``get``/``post`` on it. Two things
happen here so no tool has to think about them:

- **The service is not running.** The first call that finds nothing listening starts it
  (``launch.ensure_running``, the same path as ``workbench serve --detach``) and retries once.
  It is the MCP server's temporary service, the rule of every command that needs one: when
  the MCP server exits (``close``), a service it started is stopped after its queue drains
  (``workbench.client.stop_temporary``); one it found running is left alone.
  With ``start=False`` (``workbench mcp --no-start``), or when starting fails, the call fails
  with a message that says how to start it.
- **Another data dir's service answers on the port.** ``ServiceClient`` sends this data dir's
  id and checks the reply's (``workbench/instance.py``): the call fails with a ``ToolError``
  naming both data dirs and the fix, and nothing is read or written through it.
- **Errors become tool errors.** A ``WorkbenchError`` (the service's own message, e.g. a 400
  "no query and no filter" or a 404 "no observation with id 7") is raised as the SDK's
  ``ToolError``, which the client receives as an ``isError`` result the model can read and
  act on, never as a crash of the server.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from workbench.client import ServiceClient
from workbench.errors import ServiceUnavailable, WorkbenchError
from workbench.settings import Settings

log = logging.getLogger("workbench.mcp")

START_WAIT_S = 30.0


class ServiceBackend:
    """The shared HTTP client of all tool modules (thread-safe: sync tools run in threads)."""

    def __init__(
        self,
        settings: Settings,
        *,
        start: bool = True,
        timeout: float = 120.0,
        platform_source: str | None = None,
    ) -> None:
        self.settings = settings
        self.start = start
        # The agent that launched this server (``workbench mcp --platform``): what it saves is
        # that agent's. None: a registration from before, saved as Claude Code's.
        self.platform_source = platform_source
        self._timeout = timeout
        self._client: ServiceClient | None = None
        self._lock = threading.Lock()
        self._started_pid: int | None = None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        pid, self._started_pid = self._started_pid, None
        if pid is not None:
            from workbench.client import stop_temporary

            stop_temporary(self.settings, pid, log.info)

    def get(self, path: str, **params: Any) -> Any:
        return self.call("GET", path, params={k: v for k, v in params.items() if v is not None})

    def post(self, path: str, body: Any) -> Any:
        return self.call("POST", path, json=body)

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        """One request; a ``ToolError`` carrying the service's message on any failure."""
        try:
            try:
                return self._http().request(method, path, **kwargs)
            except ServiceUnavailable:
                # Trigger: nothing answered (refused, reset or timed out).
                # Why: a timeout may mean the service got the request and is slow; sending a
                #   write again could store it twice.
                # Outcome: retry only after we had to start the service ourselves.
                self._start_or_explain()
                return self._http().request(method, path, **kwargs)
        except WorkbenchError as exc:
            raise ToolError(exc.message) from None

    # ----- internals -------------------------------------------------------------------------

    def _http(self) -> ServiceClient:
        with self._lock:
            if self._client is None:
                self._client = ServiceClient(self.settings, timeout=self._timeout)
            return self._client

    def _start_or_explain(self) -> None:
        from workbench import launch

        settings = self.settings
        if launch.serving(settings.data_dir, settings.port) is not None:
            raise ServiceUnavailable(
                f"the workbench service at {settings.base_url} did not answer in "
                f"{self._timeout:.0f} s; try again, or check `workbench status`"
            )
        if not self.start:
            raise ServiceUnavailable(
                f"the workbench service is not running at {settings.base_url}; start it with "
                "`workbench serve --detach` and call the tool again"
            )
        with self._lock:  # one thread starts it; the others wait here, then find it up
            log.info("starting the workbench service at %s", settings.base_url)
            found = launch.ensure_running(settings.data_dir, settings.port, wait_s=START_WAIT_S)
        if found is None:
            raise ServiceUnavailable(
                f"the workbench service is not running at {settings.base_url} and could not be "
                f"started (see {settings.logs_dir / 'service.log'}); start it with "
                "`workbench serve --detach` or run `workbench doctor`"
            )
        log.info("workbench service is up (pid %s)", found.get("pid"))
        if self._started_pid is None:
            self._started_pid = int(found["pid"])
