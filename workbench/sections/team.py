"""Where the team lake lives: the catalog DSN, the data path, the author id. Standard library only.

Called by the ``team_*`` validators of ``workbench/settings.py`` (the one settings module), so a
bad value is refused the same way from ``team init``, ``settings.json`` or ``WORKBENCH_TEAM_*``.

Secrets never go in the settings: the catalog is a ``postgres://user@host:port/db`` URL with no
password; libpq itself reads the password from ``PGPASSWORD`` or ``~/.pgpass`` (``PGPASSFILE``)
when DuckDB's postgres extension connects. The data path is a shared directory (made absolute)
or an ``s3://bucket/prefix`` URL (read and written through DuckDB's httpfs extension, with the
credentials from the environment: see ``workbench/team/lake.py``).
"""

from __future__ import annotations

import getpass
import os
import re
import socket
from pathlib import Path
from urllib.parse import parse_qsl, unquote, urlsplit

CATALOG_SCHEMES = ("postgres", "postgresql")
# libpq parameters a catalog URL may carry in its query string (no password, no service file
# that could hold one): https://www.postgresql.org/docs/15/libpq-connect.html#LIBPQ-PARAMKEYWORDS
ALLOWED_QUERY_KEYS = {
    "sslmode",
    "sslrootcert",
    "sslcert",
    "sslkey",
    "connect_timeout",
    "application_name",
    "options",
    "target_session_attrs",
}
_NAME = re.compile(r"[A-Za-z0-9._@+-]{1,128}\Z")  # \Z: "$" would let a trailing newline in


def check_catalog(value: str) -> str:
    """A ``postgres://user@host[:port]/dbname`` URL with no password; else ValueError (the fix)."""
    text = value.strip()
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"team catalog {value!r} is not a valid URL ({exc})") from None
    if parts.scheme not in CATALOG_SCHEMES:
        raise ValueError(
            f"team catalog {value!r} is not a PostgreSQL URL; write "
            "postgres://USER@HOST:PORT/DBNAME (DuckLake keeps its catalog in PostgreSQL)"
        )
    query = dict(parse_qsl(parts.query, keep_blank_values=True))
    if parts.password is not None or "password" in query or "passfile" in query:
        raise ValueError(
            "team catalog URL holds a password; remove it (postgres://USER@HOST:PORT/DBNAME) "
            "and give the password through PGPASSWORD or ~/.pgpass, so no secret is stored "
            "in settings.json"
        )
    if not parts.hostname:
        raise ValueError(f"team catalog {value!r} names no host; write postgres://USER@HOST/DBNAME")
    if not parts.path.strip("/"):
        raise ValueError(
            f"team catalog {value!r} names no database; write postgres://USER@HOST/DBNAME"
        )
    unknown = sorted(set(query) - ALLOWED_QUERY_KEYS)
    if unknown:
        raise ValueError(
            f"team catalog {value!r} has unsupported parameters {unknown}; allowed: "
            f"{sorted(ALLOWED_QUERY_KEYS)}"
        )
    del port  # parsed only to refuse a bad one
    return text


def conninfo(catalog: str) -> str:
    """The libpq ``key=value`` string DuckLake's postgres catalog takes, from a checked URL."""
    parts = urlsplit(catalog)
    pairs = [("host", parts.hostname or ""), ("dbname", unquote(parts.path.strip("/")))]
    if parts.port:
        pairs.append(("port", str(parts.port)))
    if parts.username:
        pairs.append(("user", unquote(parts.username)))
    pairs.extend(parse_qsl(parts.query))
    return " ".join(f"{key}={_quote_value(val)}" for key, val in pairs)


def _quote_value(value: str) -> str:
    if value and not re.search(r"[\s'\\]", value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def check_data_path(value: str) -> str:
    """An ``s3://bucket[/prefix]`` URL or a directory, made absolute; else ValueError."""
    text = value.strip()
    if not text:
        raise ValueError("team data path is empty; give a shared directory or s3://bucket/prefix")
    if "://" in text:
        scheme = text.split("://", 1)[0]
        if scheme != "s3" or not text[len("s3://") :].strip("/"):
            raise ValueError(
                f"team data path {value!r}: only s3://BUCKET/PREFIX or a directory path is "
                "supported"
            )
        return text.rstrip("/") + "/"
    path = Path(text).expanduser().absolute()
    if path.exists() and not path.is_dir():
        raise ValueError(f"team data path {path} is a file; give a directory (shared by the team)")
    return str(path)


def check_project_names(values: list[str]) -> list[str]:
    """Allowlist entries: non-empty names, each once, order kept."""
    seen: list[str] = []
    for value in values:
        name = value.strip() if isinstance(value, str) else value
        if not isinstance(name, str) or not name:
            raise ValueError("team_projects holds an empty name; list project names")
        if name not in seen:
            seen.append(name)
    return seen


def check_author(value: str) -> str:
    """An author id: 1-128 of letters, digits and ``._@+-`` (it names rows in a shared lake)."""
    if not _NAME.match(value):
        raise ValueError(
            f"team author {value!r} must be 1-128 letters, digits or . _ @ + - (e.g. ana@laptop)"
        )
    return value


def default_author() -> str:
    """``user@host`` of this machine, sanitised to an author id."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = os.environ.get("USER", "user")
    raw = f"{user}@{socket.gethostname().split('.')[0]}"
    cleaned = re.sub(r"[^A-Za-z0-9._@+-]", "-", raw)[:128]
    return cleaned or "user@host"
