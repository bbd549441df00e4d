"""The recall commands' fast paths: their arguments, and one request to this data dir's service.

``cli.fast_search``, ``cli.fast_timeline`` and ``cli.fast_show`` answer the common forms of
``workbench search | timeline | show`` with the standard library only (issue 21: Typer,
pydantic, pydantic-settings and httpx cost most of each command's time as a process). Each
reads its arguments with ``read_args`` and asks the service with ``ask``; whenever either
returns None the command **declines** and ``cli.main.run`` runs the full Typer command,
which owns every error message. So:

- ``read_args`` accepts only the options it is given (``--name value`` or ``--name=value``,
  flags bare); any other option, a repeated valued option, ``--`` or a short option glued to
  its value declines;
- ``service_of`` finds the data dir and port by the rules ``Settings`` uses
  (``locate.resolve_data_dir``, ``locate.service_port``); a data dir without its id file
  (``instance``), a settings file that does not parse as an object, or ``WORKBENCH_HOST``
  set declines (the full command owns those errors);
- ``ask`` sends one request with the data dir's id header (as ``client.ServiceClient``
  does), over a plain socket (``exchange``), and returns the JSON of a 200 from this data
  dir's service only: no service (the full command reads the store read-only and says so),
  another data dir's service, or a refusal (the full command names the fix) is None. A
  declined request is sent again by the full command: one more round trip, on those paths.

``answer`` runs those steps for a command (its reader of arguments, its request, its check of
the reply's shape, its table) and prints the reply as JSON or as the command's table.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.parse
from pathlib import Path

TYPE_CHECKING = False  # typing costs start-up
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    Reply = TypeVar("Reply")
    Request = tuple[str, str, dict[str, Any] | None, Any]  # method, path, params, JSON body

TIMEOUT_S = 60.0  # the full commands' (cli.recall_sources.from_service)


def read_args(
    argv: list[str], flags: dict[str, str], valued: dict[str, str], short: dict[str, str]
) -> tuple[dict[str, Any], list[str]] | None:
    """``(options by key, positional words)`` of ``argv``, or None when the fast path declines.

    ``flags`` and ``valued`` map an option's long name to its key; ``short`` maps a short
    name to its long one. A flag may repeat (Click sets it again); a valued option may not.
    """
    found: dict[str, Any] = {}
    words: list[str] = []
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if not arg.startswith("-"):
            words.append(arg)
            continue
        if arg in flags:
            found[flags[arg]] = True
            continue
        name, eq, value = arg.partition("=")
        if name in short and eq:
            return None  # "-d=x": Click's reading of that form is its own
        name = short.get(name, name)
        if name not in valued or valued[name] in found:
            return None  # --help, another option, a repeated one, "--", "-x"…
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        found[valued[name]] = value
    return found, words


def bounded_int(text: str, low: int, high: int) -> int | None:
    """``text`` as Click's ``IntRange(low, high)`` reads it, or None (decline) otherwise.

    Only plain ASCII digits: Click also takes ``+7``, ``1_0`` and other scripts' digits, which
    the full command then handles.
    """
    digits = text.strip()
    if not (digits.isascii() and digits.isdigit()) or not low <= int(digits) <= high:
        return None
    return int(digits)


def service_of(data_dir_option: str | None) -> tuple[int, str] | None:
    """``(port, data dir id)`` of the service to ask, or None when the fast path declines."""
    if os.environ.get("WORKBENCH_HOST", "").strip():
        return None
    from workbench import instance, locate

    data_dir = locate.resolve_data_dir(data_dir_option)
    ident = instance.read(data_dir)
    if ident is None or not _settings_file_ok(data_dir):
        return None
    return locate.service_port(data_dir), ident


def answer(
    argv: list[str],
    parse: Callable[[list[str]], dict[str, Any] | None],
    request: Callable[[dict[str, Any]], Request],
    checked: Callable[[Any], Reply | None],
    print_table: Callable[[Reply, dict[str, Any]], None],
) -> tuple[dict[str, Any], Reply] | None:
    """Answer a recall command on the fast path: ``(its options, the reply it printed)``, or
    None when the fast path declines (and has printed nothing).

    ``parse`` reads ``argv`` into options (None declines); ``service_of`` finds the service
    to ask (None declines); ``ask`` sends ``request(options)`` (no usable reply declines);
    ``checked`` passes a reply of the shape the command prints (None declines). The reply is
    printed as JSON under ``--json`` (``tables.print_json``), else by ``print_table``.
    """
    options = parse(argv)
    if options is None:
        return None
    service = service_of(options.get("data_dir"))
    if service is None:
        return None
    method, path, params, body = request(options)
    data = checked(ask(service, method, path, params, body))
    if data is None:
        return None
    if options["json"]:
        from workbench.cli.tables import print_json

        print_json(data)
    else:
        print_table(data, options)
    return options, data


def ask(
    service: tuple[int, str],
    method: str,
    path: str,
    params: dict[str, Any] | None = None,
    body: Any = None,
) -> Any | None:
    """The JSON of the service's 200 reply, when it came from this data dir; else None."""
    from workbench import instance

    port, ident = service
    target = f"{path}?{urllib.parse.urlencode(params)}" if params else path
    payload = None if body is None else json.dumps(body).encode("utf-8")
    try:
        status, headers, raw = exchange(port, method, target, ident, payload)
        if status != 200 or headers.get(instance.HEADER.lower()) != ident:
            return None
        return json.loads(raw)
    except (OSError, ValueError):
        return None


def exchange(
    port: int, method: str, target: str, ident: str, payload: bytes | None = None
) -> tuple[int, dict[str, str], bytes]:
    """One request over a plain socket: (status, lower-cased headers, body).

    Not ``http.client``: with ``ssl`` and ``email`` it costs ~40 ms of start-up on a loaded
    machine, a tenth of the command. ``Connection: close`` lets the body run to the end of the
    stream; a reply this reader does not expect (chunked, a short body, no status line) is a
    ``ValueError``, so the full command asks again.
    """
    from workbench import instance

    head = (
        f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
        f"Accept: application/json\r\n{instance.HEADER}: {ident}\r\n"
    )
    if payload is not None:
        head += f"Content-Type: application/json\r\nContent-Length: {len(payload)}\r\n"
    chunks: list[bytes] = []
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT_S)
        sock.connect(("127.0.0.1", port))  # a numeric address: no getaddrinfo, no idna
        sock.sendall((head + "\r\n").encode("latin-1") + (payload or b""))
        while data := sock.recv(65536):
            chunks.append(data)
    raw = b"".join(chunks)
    end = raw.find(b"\r\n\r\n")
    if end < 0:
        raise ValueError("no complete response head")
    status_line, *lines = raw[:end].decode("latin-1").split("\r\n")
    parts = status_line.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not _digits(parts[1]):
        raise ValueError("not an HTTP status line")
    headers = {}
    for line in lines:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    body = raw[end + 4 :]
    length = headers.get("content-length", "")
    if "transfer-encoding" in headers or not _digits(length) or len(body) != int(length):
        raise ValueError("a body this reader does not frame")
    return int(parts[1]), headers, body


def _settings_file_ok(data_dir: Path) -> bool:
    """No settings file, or one holding a JSON object (the full command reports the rest)."""
    path = data_dir / "settings.json"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        return isinstance(json.loads(text), dict)
    except ValueError:
        return False


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()
