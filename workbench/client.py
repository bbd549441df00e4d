"""The small HTTP client the CLI (and later the MCP server) use to talk to the service.

The service is the store's one writer, so everything that writes goes through here. Errors
come back as ``WorkbenchError`` subclasses carrying the service's own message, and a service
that is not running is a ``ServiceUnavailable`` that says how to start it.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import InvalidInput, NotFound, ServiceUnavailable, WorkbenchError
from workbench.settings import Settings


class ServiceClient:
    def __init__(self, settings: Settings, timeout: float = 30.0) -> None:
        import httpx

        self.settings = settings
        self._http = httpx.Client(base_url=settings.base_url, timeout=timeout, trust_env=False)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        import httpx

        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError:
            raise ServiceUnavailable(
                f"the workbench service is not answering at {self.settings.base_url}; "
                "start it with `workbench serve --detach` (or check `workbench doctor`)"
            ) from None
        content_type = response.headers.get("content-type", "")
        body = response.json() if "json" in content_type else response.text
        if response.status_code >= 400:
            message = body.get("message") if isinstance(body, dict) else str(body)
            error_cls: type[WorkbenchError] = {404: NotFound}.get(
                response.status_code, InvalidInput if response.status_code < 500 else WorkbenchError
            )
            err = error_cls(message or f"HTTP {response.status_code}")
            err.status_code = response.status_code
            if isinstance(body, dict) and body.get("error"):
                err.code = str(body["error"])
            raise err
        return body

    def get(self, path: str, **params: Any) -> Any:
        clean = {k: v for k, v in params.items() if v is not None}
        return self.request("GET", path, params=clean)

    def post(self, path: str, body: Any = None) -> Any:
        return self.request("POST", path, json=body if body is not None else {})

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)


def writer(settings: Settings, *, start: bool = True) -> tuple[ServiceClient, bool]:
    """A client for a command that writes; starts the service when it is down.

    Returns ``(client, started)`` so the command can say that it started the service.
    """
    from workbench import launch

    started = False
    if launch.health(settings.port) is None:
        if not start:
            raise ServiceUnavailable(
                f"the workbench service is not running at {settings.base_url}; start it with "
                "`workbench serve --detach`"
            )
        if launch.ensure_running(settings.data_dir, settings.port, wait_s=30.0) is None:
            raise ServiceUnavailable(
                f"could not start the workbench service at {settings.base_url}; see "
                f"{settings.logs_dir / 'service.log'} or run `workbench doctor`"
            )
        started = True
    return ServiceClient(settings, timeout=600.0), started
