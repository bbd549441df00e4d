"""The few errors users meet. Each message names the input, the rule and the next step.

The service maps every ``WorkbenchError`` to an HTTP status in one place (``status_code`` and
``code`` below); the CLI prints ``str(error)`` and exits non-zero.
"""

from __future__ import annotations


class WorkbenchError(Exception):
    """Base class: shown to the user as is."""

    status_code = 400
    code = "WORKBENCH_ERROR"

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class InvalidInput(WorkbenchError):
    """A request value broke a rule that pydantic could not express."""

    code = "INVALID_INPUT"


class NotFound(WorkbenchError):
    """An id or name that does not exist."""

    status_code = 404
    code = "NOT_FOUND"


class SchemaTooNew(WorkbenchError):
    """The database was written by a newer workbench; opening it could corrupt it."""

    status_code = 500
    code = "SCHEMA_TOO_NEW"

    def __init__(self, path: str, unknown: list[str]) -> None:
        super().__init__(
            f"database {path} was migrated by a newer workbench (unknown migrations: "
            f"{', '.join(unknown)}). Upgrade workbench (pip install -U workbench) or point "
            "WORKBENCH_DATA_DIR at another folder; the file was not touched.",
            unknown=unknown,
        )


class ServiceUnavailable(WorkbenchError):
    """The local service is not answering."""

    status_code = 503
    code = "SERVICE_UNAVAILABLE"


class StoreUnavailable(WorkbenchError):
    """The store cannot take a write right now; the client should keep the event and retry.

    A 503, so the hooks spool the event (they spool every 5xx) and the service replays it
    later: the write is refused, never lost. Subclasses say why.
    """

    status_code = 503
    code = "STORE_UNAVAILABLE"


class StoreBusy(StoreUnavailable):
    """Another process holds the database's write lock longer than this write may wait."""

    code = "STORE_BUSY"


class StoreGone(StoreUnavailable):
    """The database file was deleted or replaced under the running service."""

    code = "STORE_GONE"


class SpoolReplaying(WorkbenchError):
    """Events spooled earlier are still being replayed: a live event must wait its turn.

    A 503, so the hook spools this event too, behind them; replay keeps capture order.
    """

    status_code = 503
    code = "SPOOL_REPLAYING"


class CompressionError(WorkbenchError):
    """A compressor failed on one event.

    ``retryable`` says whether trying again later can help (rate limit, overload, network)
    or not (bad key, no credit, a reply we cannot parse at all): the worker backs off on the
    first kind and parks the event with this message on the second.
    """

    status_code = 502
    code = "COMPRESSION_FAILED"

    def __init__(self, message: str, *, retryable: bool, kind: str = "error") -> None:
        super().__init__(message, retryable=retryable, kind=kind)
        self.retryable = retryable
        self.kind = kind


class MissingDependency(WorkbenchError):
    """An optional package is not installed."""

    status_code = 501
    code = "MISSING_DEPENDENCY"

    def __init__(self, package: str, feature: str) -> None:
        super().__init__(
            f"{feature} needs the package {package!r}, which is not installed. "
            f"Install it with: pip install {package}",
            package=package,
        )


class InvalidCorpusName(InvalidInput):
    """A corpus name that could escape the corpora dir or is not a plain file name.

    Checked on the raw value: trimming or rewriting it would silently build or delete a
    different corpus than the one asked for.
    """

    code = "INVALID_CORPUS_NAME"
    RULE = "^[A-Za-z0-9._-]+$"

    def __init__(self, name: object, why: str = "") -> None:
        super().__init__(
            f"invalid corpus name {name!r}{f' ({why})' if why else ''}: a name must match "
            f"{self.RULE} (ASCII letters, digits, '.', '_' and '-' only, at most 200 "
            "characters, not '.' or '..'), exactly as given; nothing was changed. Pick a name "
            "like 'hooks-lifecycle' or 'bugfixes.2026-11'.",
            rule=self.RULE,
        )


class CorpusNotFound(NotFound):
    """A corpus name with no corpus file; the message lists the ones that exist."""

    code = "CORPUS_NOT_FOUND"

    def __init__(self, name: str, available: list[str]) -> None:
        listed = ", ".join(available) if available else "none yet"
        super().__init__(
            f"no corpus named {name!r}; available corpora: {listed}. Build one with "
            "`workbench corpus build NAME --project ...` (or POST /api/corpus).",
            available=available,
        )


class WrongService(WorkbenchError):
    """The service on our port serves another data dir: reading or writing it would touch
    the wrong memory (``workbench/instance.py``). Not a ``ServiceUnavailable``: nothing may
    fall back, start a service or retry on it."""

    status_code = 421
    code = "WRONG_INSTANCE"


class NoDataDir(WorkbenchError):
    """A command that does not create a data dir was pointed at a folder that holds none."""

    status_code = 404
    code = "NO_DATA_DIR"

    def __init__(self, data_dir: str) -> None:
        super().__init__(
            f"no workbench data dir at {data_dir}: nothing was read or written. Check the path "
            "(-d / WORKBENCH_DATA_DIR); to start a new memory there, run `workbench serve "
            f"--detach -d {data_dir}` or `workbench import FILE -d {data_dir}`",
            data_dir=data_dir,
        )
