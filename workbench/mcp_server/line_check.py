"""Judge one line read from the MCP client: a message to serve, or the error that answers it.

The SDK's stdio reader hands a line it cannot parse to the server as an exception, which the
server only logs: a ``tools/call`` whose arguments held a lone surrogate (``"\\ud800"``, which
the SDK's JSON parser refuses) never got a reply, and the client waited forever. A request
with an id that is neither an integer nor a string (``1e400``) was read as a notification:
no reply either. Here every line that carries a request gets an answer:

- valid: parsed by the SDK into a ``JSONRPCMessage`` and served as usual;
- not UTF-8, not JSON (``NaN`` included), or nested too deep for Python: ``-32700`` parse
  error;
- not one JSON-RPC object, an id of the wrong type, or refused by the SDK's parser (which
  stops at 200 levels of nesting): ``-32600`` invalid request;
- a lone surrogate anywhere (a value or a key): ``-32602`` invalid params naming the field.

The error carries the request's id when one can be found, even in a line that does not
parse (``recover_id`` reads only the top level, without recursion), else ``null`` as
JSON-RPC says. Lines that carry no request (notifications, replies) are refused in the log
only: there is nobody to answer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from pydantic import ValidationError

RequestId = int | str
_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")


@dataclass(frozen=True)
class Refusal:
    """Why a line is not served; ``answer`` is the error to send (None: nobody to answer)."""

    reason: str
    answer: types.JSONRPCError | None


Verdict = types.JSONRPCMessage | Refusal | None  # None: a blank line, ignored


def judge(raw: bytes) -> Verdict:
    """The message in ``raw`` (one line from stdin), or the refusal that answers it."""
    if not raw.strip():
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad = raw[exc.start : exc.start + 4]
        return _refuse(
            raw.decode("utf-8", "replace"),
            types.PARSE_ERROR,
            f"the line is not valid UTF-8 (bytes {bad!r} at offset {exc.start}); send JSON "
            "text encoded as UTF-8",
        )
    try:
        parsed = json.loads(text, parse_constant=_no_constant)
    except RecursionError:
        return _refuse(text, types.PARSE_ERROR, "the message is nested too deep to read")
    except ValueError as exc:
        return _refuse(text, types.PARSE_ERROR, f"the line is not JSON ({exc})")
    if not isinstance(parsed, dict):
        return Refusal(
            f"a JSON {type(parsed).__name__}, not an object",
            _error(
                None,
                types.INVALID_REQUEST,
                "a JSON-RPC message is one JSON object (batches are not supported)",
            ),
        )
    asks = "method" in parsed and "id" in parsed
    if "id" in parsed and not _valid_id(parsed["id"]):
        shown = _shown(json.dumps(parsed["id"])[:40])
        return Refusal(
            "a bad id",
            _error(None, types.INVALID_REQUEST, f"id {shown} must be a string or an integer"),
        )
    request_id = parsed.get("id") if asks else None
    if isinstance(request_id, str) and _has_surrogate(request_id):
        request_id = None  # an id that cannot be written back: answered as "null"
    where = _surrogate_path(parsed)
    if where is not None:
        path, value = where
        message = (
            f"{path} holds a lone surrogate ({_shown(value)}), which is not Unicode text; send "
            "the character itself (a surrogate pair for one beyond U+FFFF) in valid UTF-8"
        )
        if not asks:
            return Refusal(message, None)
        return Refusal(message, _error(request_id, types.INVALID_PARAMS, message))
    try:
        return types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValidationError as exc:
        problem = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'message'}: {err['msg']}"
            for err in exc.errors()[:3]
        )
        reason = f"not a JSON-RPC message ({_shown(problem)})"
        if not asks:
            return Refusal(reason, None)
        return Refusal(reason, _error(request_id, types.INVALID_REQUEST, reason))


def recover_id(text: str) -> RequestId | None:
    """The top-level ``"id"`` of a line that may not parse as a whole, or None.

    Walks the top-level object only, skipping nested values by counting brackets (strings
    respected), so a line nested 100,000 deep costs one pass and no recursion.
    """
    match = _WHITESPACE.match(text)
    pos = match.end() if match else 0
    if not text.startswith("{", pos):
        return None
    pos += 1
    while pos < len(text):
        pos = _skip_ws(text, pos)
        if text.startswith("}", pos):
            return None
        try:
            key, pos = _DECODER.raw_decode(text, pos)
        except ValueError:
            return None
        pos = _skip_ws(text, pos)
        if not text.startswith(":", pos):
            return None
        pos = _skip_ws(text, pos + 1)
        if key == "id":
            try:
                value, _ = _DECODER.raw_decode(text, pos)
            except (ValueError, RecursionError):
                return None
            return value if _valid_id(value) and _surrogate_path(value) is None else None
        pos = _skip_value(text, pos)
        if pos < 0:
            return None
        pos = _skip_ws(text, pos)
        if text.startswith(",", pos):
            pos += 1
        else:
            return None
    return None


def _refuse(text: str, code: int, message: str) -> Refusal:
    return Refusal(message, _error(recover_id(text), code, message))


def _error(request_id: RequestId | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _skip_ws(text: str, pos: int) -> int:
    match = _WHITESPACE.match(text, pos)
    return match.end() if match else pos


def _skip_value(text: str, pos: int) -> int:
    """The position after the JSON value at ``pos`` (scanned, not parsed), or -1."""
    depth = 0
    in_string = escaped = False
    for index in range(pos, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                if depth == 0:
                    return index + 1
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            if depth == 0:
                return index  # the end of the enclosing object: a scalar ended here
            depth -= 1
            if depth == 0:
                return index + 1
        elif char == "," and depth == 0:
            return index
    return -1


def _surrogate_path(value: Any) -> tuple[str, str] | None:
    """Where the first lone surrogate is (``params.arguments.text``), and the string."""
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, str):
            if _has_surrogate(item):
                return path or "the message", item
        elif isinstance(item, dict):
            for key, child in reversed(list(item.items())):
                if _has_surrogate(key):
                    return f"a key of {path or 'the message'}", key
                stack.append((f"{path}.{key}" if path else key, child))
        elif isinstance(item, list):
            for index in reversed(range(len(item))):
                stack.append((f"{path}[{index}]", item[index]))
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _shown(text: str) -> str:
    """``text`` made safe to send back: escapes for anything not printable ASCII, cut short."""
    shown = ascii(text[:60])
    return shown + ("…" if len(text) > 60 else "")
