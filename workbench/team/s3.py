"""An ``s3://bucket/prefix`` team data path: DuckDB's httpfs and an S3 secret from the environment.

The credentials are the AWS SDKs' own variables, read when a lake connection opens and kept in
a DuckDB ``TEMPORARY`` secret (in memory, gone with the connection): nothing is written to the
data dir, and no ``~/.aws`` file is read.

- ``AWS_ACCESS_KEY_ID`` and ``AWS_SECRET_ACCESS_KEY`` are required (``S3NotConfigured`` names
  the missing ones before any request is made); ``AWS_SESSION_TOKEN`` for temporary ones.
- ``AWS_REGION``, else ``AWS_DEFAULT_REGION`` (else httpfs' default, ``us-east-1``).
- ``AWS_ENDPOINT_URL_S3``, else ``AWS_ENDPOINT_URL`` (the SDKs' precedence): an S3-compatible
  server (MinIO, Ceph, moto…) as ``http://HOST:PORT`` or ``https://HOST[:PORT]``. With one,
  requests go to ``HOST:PORT`` with path-style URLs (``/bucket/key``, what such servers serve;
  virtual-hosted style would put the bucket in the host name), TLS only for ``https``. Without
  one, AWS itself: virtual-hosted URLs over TLS.

httpfs comes from its PyPI package (``duckdb-extension-httpfs``), loaded by file path like the
other extensions (``workbench/team/lake.py``): no download.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from workbench.errors import WorkbenchError

REQUIRED = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY")
ENDPOINT_VARS = ("AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
REGION_VARS = ("AWS_REGION", "AWS_DEFAULT_REGION")


class S3NotConfigured(WorkbenchError):
    """The environment lacks S3 credentials, or its endpoint URL is malformed."""

    status_code = 409
    code = "S3_NOT_CONFIGURED"


def _get(environ: Mapping[str, str], *names: str) -> tuple[str, str] | None:
    """(name, value) of the first of ``names`` set to a non-blank value (blank = unset)."""
    for name in names:
        value = (environ.get(name) or "").strip()
        if value:
            return name, value
    return None


def _problem(value: str) -> str | None:
    """What is wrong with an endpoint URL, or None."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (raises ValueError for a port that is not a number in range)
    except ValueError:
        return "its port is not a number from 0 to 65535"
    if parts.scheme not in ("http", "https"):
        return "it must start with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    if parts.username is not None or parts.password is not None:
        return "it must not carry credentials (use AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY)"
    if parts.path.strip("/") or parts.query or parts.fragment:
        return "it must be the server's root URL, with no path or query"
    return None


def endpoint(name: str, value: str) -> tuple[str, bool]:
    """``(HOST[:PORT], use_ssl)`` from the URL in variable ``name``; else how to write it."""
    problem = _problem(value)
    if problem is not None:
        raise S3NotConfigured(
            f"{name}={value!r} is not an S3 endpoint URL: {problem}. Write it as "
            "http://HOST:PORT (or https://HOST[:PORT]), e.g. http://127.0.0.1:9000 for a "
            "local MinIO, or unset it to use AWS itself"
        )
    parts = urlsplit(value)
    return parts.netloc, parts.scheme == "https"


def secret_options(data: str, environ: Mapping[str, str]) -> dict[str, str | bool]:
    """The ``CREATE SECRET (TYPE s3, …)`` options for ``data`` from ``environ``; checked first."""
    missing = [name for name in REQUIRED if _get(environ, name) is None]
    if missing:
        raise S3NotConfigured(
            f"the team data path {data} is on S3 and needs credentials from the environment: "
            f"set {' and '.join(missing)} (and AWS_SESSION_TOKEN for temporary credentials; "
            "AWS_REGION, and AWS_ENDPOINT_URL=http://HOST:PORT for MinIO or another "
            "S3-compatible server). workbench never stores them and reads no ~/.aws file"
        )
    options: dict[str, str | bool] = {
        "KEY_ID": environ["AWS_ACCESS_KEY_ID"].strip(),
        "SECRET": environ["AWS_SECRET_ACCESS_KEY"].strip(),
    }
    if token := _get(environ, "AWS_SESSION_TOKEN"):
        options["SESSION_TOKEN"] = token[1]
    if region := _get(environ, *REGION_VARS):
        options["REGION"] = region[1]
    if custom := _get(environ, *ENDPOINT_VARS):
        host, use_ssl = endpoint(*custom)
        options.update(ENDPOINT=host, USE_SSL=use_ssl, URL_STYLE="path")
    return options


def _literal(value: str | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return "'" + value.replace("'", "''") + "'"


def setup(con: Any, data: str, environ: Mapping[str, str], httpfs_file: str) -> None:
    """Load httpfs from ``httpfs_file`` and create the session's S3 secret on ``con``."""
    options = secret_options(data, environ)  # before LOAD: a missing key costs no extension load
    con.execute(f"LOAD {_literal(httpfs_file)}")
    body = ", ".join(f"{key} {_literal(value)}" for key, value in options.items())
    con.execute(f"CREATE TEMPORARY SECRET team_s3 (TYPE s3, {body})")
