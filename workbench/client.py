"""The small HTTP client the CLI (and later the MCP server) use to talk to the service.

The service is the store's one writer, so everything that writes goes through here. Errors
come back as ``WorkbenchError`` subclasses carrying the service's own message, and a service
that is not running is a ``ServiceUnavailable`` that says how to start it.

A write command run while no service serves the data dir gets a *temporary* one from
``writer``: started for the command, stopped when its client closes (after the queue it fed
has drained, within a bound), so a CLI command never leaves a daemon behind unasked.

Every request names the data dir it is meant for (``X-Workbench-Instance``, the data dir's id:
``workbench/instance.py``) and every reply must carry the same id: the service refuses (421) a
request for another data dir, and the client refuses a reply from one (``WrongService``). So a
command never reads or writes another data dir's memory through a service that happens to
answer on its port. A data dir that does not exist is a ``NoDataDir`` error, never created
here (``require_data_dir``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from workbench import instance
from workbench.errors import (
    InvalidInput,
    NoDataDir,
    NotFound,
    ServiceUnavailable,
    WorkbenchError,
    WrongService,
)
from workbench.settings import Settings


class ServiceClient:
    def __init__(
        self,
        settings: Settings,
        timeout: float = 30.0,
        *,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        import httpx

        self.settings = settings
        self.instance_id = data_dir_id(settings)
        self._http = httpx.Client(
            base_url=settings.base_url,
            timeout=timeout,
            trust_env=False,
            headers={instance.HEADER: self.instance_id},
        )
        self._on_close = on_close

    def close(self) -> None:
        self._http.close()
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()

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
        if response.headers.get(instance.HEADER) != self.instance_id:
            # Trigger: the reply names another data dir (or none: an older service). / Why:
            # its data would be another memory's; a 421 means it refused our write. /
            # Outcome: refuse, naming both data dirs and the fix; nothing is used.
            from workbench import launch

            raise WrongService(
                launch.wrong_service_message(
                    self.settings.data_dir, self.settings.port, launch.health(self.settings.port)
                )
            )
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


def require_data_dir(settings: Settings) -> None:
    """``NoDataDir`` unless the data dir exists: a command that does not create one must not
    create it silently (nor, worse, act on whatever service answers on its port)."""
    if not settings.data_dir.is_dir():
        raise NoDataDir(str(settings.data_dir))


def data_dir_id(settings: Settings) -> str:
    """The data dir's id (made now if it has none: the data dir must exist)."""
    require_data_dir(settings)
    try:
        return instance.ensure(settings.data_dir)
    except OSError as exc:
        raise WorkbenchError(
            f"cannot read or write {settings.data_dir / instance.FILE_NAME}, which tells this "
            f"data dir's service from another's ({exc.strerror or exc}); make the data dir "
            "writable by you (or point -d / WORKBENCH_DATA_DIR at one that is)"
        ) from None


# How long a temporary service may keep running after its command, to finish the queue the
# command fed (replay, retry, recompress); what is left waits, durably, for the next start.
DRAIN_S = 120.0

Say = Callable[[str], None]


def writer(
    settings: Settings,
    *,
    start: bool = True,
    temporary: bool = True,
    say: Say | None = None,
) -> tuple[ServiceClient, bool]:
    """A client for a command that writes; starts the service when it is down.

    Returns ``(client, started)``. A service started here is temporary unless
    ``temporary=False`` (a notebook, which lives as long as its user wants): closing the
    client waits for its queue to drain (at most ``DRAIN_S``) and stops it. ``say`` is told,
    in one sentence each, that it started and that it stopped.
    """
    from workbench import launch

    report = say or (lambda _message: None)
    data_dir_id(settings)
    if launch.serving(settings.data_dir, settings.port) is not None:
        return ServiceClient(settings, timeout=600.0), False
    if not start:
        raise ServiceUnavailable(
            f"the workbench service is not running at {settings.base_url}; start it with "
            "`workbench serve --detach`"
        )
    found = launch.ensure_running(settings.data_dir, settings.port, wait_s=30.0)
    if found is None:
        raise ServiceUnavailable(
            f"could not start the workbench service at {settings.base_url}; see "
            f"{settings.logs_dir / 'service.log'} or run `workbench doctor`"
        )
    if not temporary:
        report(f"started the workbench service at {settings.base_url} (pid {found['pid']})")
        return ServiceClient(settings, timeout=600.0), True
    report(
        f"no workbench service was running: started a temporary one at {settings.base_url} "
        f"(pid {found['pid']}) for this command; it stops when the command ends "
        "(`workbench serve --detach` keeps one running)"
    )
    pid = int(found["pid"])
    return ServiceClient(
        settings, timeout=600.0, on_close=lambda: stop_temporary(settings, pid, report)
    ), True


def stop_temporary(settings: Settings, pid: int, say: Say, drain_s: float = DRAIN_S) -> None:
    """Let the temporary service finish its queue (bounded), then stop it if it is still ours.

    Trigger: the PID file names another process. / Why: someone started a service of their
    own meanwhile (``workbench serve``), which we did not start and must not stop. /
    Outcome: leave it running.
    """
    from workbench import launch
    from workbench.pidfile import read_pid, terminate

    deadline = time.monotonic() + drain_s
    left = 0
    while True:
        health = launch.health(settings.port, timeout=2.0)
        left = int(health.get("queueDepth", 0)) if health else 0
        if health is None or left == 0 or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    if read_pid(settings.pid_path) != pid:
        return
    _, stopped = terminate(settings.pid_path)
    if not stopped:
        say(f"the temporary workbench service (pid {pid}) did not stop; run `workbench stop`")
        return
    queued = f"; {left} queued events wait for its next start" if left else ""
    say(f"stopped the temporary workbench service (pid {pid}){queued}")
