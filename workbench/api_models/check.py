"""``checked(shape, data)``: a reply validated against its model before a client uses it.

The CLI and the MCP tools pass on what the service answered as it is (their ``--json`` output
is the wire's, byte for byte); this only refuses a reply that breaks the contract, e.g. from a
service of another version still running, with a message that says what to do.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from workbench.errors import WorkbenchError

T = TypeVar("T")


class ReplyMismatch(WorkbenchError):
    """A reply that does not have the shape ``workbench.api_models`` declares."""

    status_code = 502
    code = "REPLY_MISMATCH"


def checked(shape: Any, data: T, what: str) -> T:
    """``data`` unchanged if it validates as ``shape``; ``ReplyMismatch`` otherwise."""
    try:
        TypeAdapter(shape).validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "the reply"
        raise ReplyMismatch(
            f"{what} answered a reply this version cannot read ({where}: {first['msg']}); the "
            "service may be another version: restart it with "
            "`workbench stop && workbench serve --detach`"
        ) from None
    return data
