"""``workbench search <words>`` through the standard library only, or not at all.

The full command (``cli.recall.search``) imports Typer, pydantic (the ``SearchQuery`` model),
pydantic-settings and httpx before it sends a byte: ~1 s as a process on a loaded 2-core
machine, where the service answered in ~30 ms (issue 21). This module handles the form
people and agents type, and **declines** (returns None, so ``cli.main.run`` runs the full
command) everything else, so what the command prints and how it fails never changes:

- arguments: one query, and only ``--json``, ``--project``, ``--mode``, ``--limit`` and
  ``--data-dir``/``-d`` (``--name value`` or ``--name=value``); any other word, option or
  form declines, and so does a limit Typer would refuse or a blank query;
- the data dir and port by the rules ``Settings`` uses (``locate.resolve_data_dir``,
  ``locate.service_port``); a data dir without its id file (``instance``), a settings file
  that does not parse as an object, or ``WORKBENCH_HOST`` set declines (the full command
  owns those errors);
- one ``GET /api/search`` with ``format=json`` and the data dir's id header (as
  ``client.ServiceClient`` sends), over a plain socket (``_get``); anything but a 200
  from this data dir's service with a reply of the expected shape declines: no service
  (the full command reads the store read-only and says so), another data dir's service,
  or a refusal (the full command validates the same fields and names the fix). A declined
  request is sent again by the full command: one more round trip, on those paths only.

The reply is printed as the full command prints it (``cli.tables.print_json``,
``cli.search_table.print_hits``): rich is imported for a table, never for ``--json``.
"""

from __future__ import annotations

import json
import os
import socket
import urllib.parse
from pathlib import Path

TYPE_CHECKING = False  # typing costs start-up
if TYPE_CHECKING:
    from typing import Any

TIMEOUT_S = 60.0  # the full command's (cli.recall_sources.from_service)
MAX_LIMIT = 100  # Typer's bound on --limit (cli.recall.search)
VALUED = {"--project": "project", "--mode": "mode", "--limit": "limit", "--data-dir": "data_dir"}
SHORT = {"-d": "--data-dir"}
REPLY_LISTS = ("observations", "sessions", "prompts")


def parse(argv: list[str]) -> dict[str, Any] | None:
    """The options of ``argv`` (after ``search``), or None when the fast path does not apply."""
    found: dict[str, Any] = {"json": False}
    words: list[str] = []
    rest = list(argv)
    while rest:
        arg = rest.pop(0)
        if arg == "--json":
            found["json"] = True
            continue
        if not arg.startswith("-"):
            words.append(arg)
            continue
        name, eq, value = arg.partition("=")
        if name in SHORT and eq:
            return None  # "-d=x": Click's reading of that form is its own
        name = SHORT.get(name, name)
        if name not in VALUED or VALUED[name] in found:
            return None  # --help, another option, a repeated one, "--", "-x"…
        if not eq:
            if not rest:
                return None
            value = rest.pop(0)
        found[VALUED[name]] = value
    if len(words) != 1 or not words[0].strip():
        return None
    found["query"] = words[0]
    if "limit" in found:
        text = found["limit"].strip()
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_LIMIT:
            return None
        found["limit"] = int(text)
    return found


def main(argv: list[str]) -> int | None:
    """Run the search and print it (exit code 0), or None to let the full command run."""
    options = parse(argv)
    if options is None or os.environ.get("WORKBENCH_HOST", "").strip():
        return None
    from workbench import instance, locate

    data_dir = locate.resolve_data_dir(options.get("data_dir"))
    ident = instance.read(data_dir)
    if ident is None or not _settings_file_ok(data_dir):
        return None
    params: dict[str, Any] = {"query": options["query"], "format": "json"}
    for name in ("project", "mode", "limit"):
        if name in options:
            params[name] = options[name]
    data = _reply(locate.service_port(data_dir), ident, params)
    if data is None:
        return None
    if options["json"]:
        from workbench.cli.tables import print_json

        print_json(data)
    else:
        from workbench.cli.search_table import print_hits

        print_hits(data)
    return 0


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


def _reply(port: int, ident: str, params: dict[str, Any]) -> dict[str, Any] | None:
    """The service's JSON reply, when it is a 200 of the expected shape from this data dir."""
    from workbench import instance

    try:
        status, headers, body = _get(port, f"/api/search?{urllib.parse.urlencode(params)}", ident)
        if status != 200 or headers.get(instance.HEADER.lower()) != ident:
            return None
        data = json.loads(body)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("totalResults"), int):
        return None
    if not all(isinstance(data.get(key), list) for key in REPLY_LISTS):
        return None
    hits = [hit for key in REPLY_LISTS for hit in data[key]]
    if not all(isinstance(hit, dict) and _hit_ok(hit) for hit in hits):
        return None
    return data


def _get(port: int, target: str, ident: str) -> tuple[int, dict[str, str], bytes]:
    """One ``GET`` over a plain socket: (status, lower-cased headers, body).

    Not ``http.client``: with ``ssl`` and ``email`` it costs ~40 ms of start-up on a loaded
    machine, a tenth of the command. ``Connection: close`` lets the body run to the end of the
    stream; a reply this reader does not expect (chunked, a short body, no status line) is a
    ``ValueError``, so the full command asks again.
    """
    from workbench import instance

    head = (
        f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n"
        f"Accept: application/json\r\n{instance.HEADER}: {ident}\r\n\r\n"
    )
    chunks: list[bytes] = []
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT_S)
        sock.connect(("127.0.0.1", port))  # a numeric address: no getaddrinfo, no idna
        sock.sendall(head.encode("latin-1"))
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


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _hit_ok(hit: dict[str, Any]) -> bool:
    """The fields the table prints are there, with their types (``SearchReply`` checks all)."""
    return (
        isinstance(hit.get("id"), int)
        and isinstance(hit.get("created_at_epoch"), int)
        and isinstance(hit.get("title"), str)
        and isinstance(hit.get("type"), str)
    )
