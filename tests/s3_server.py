"""A throwaway S3-compatible server for the team tests: moto's server, real HTTP on loopback.

``moto[server]`` (a dev dependency) answers the S3 REST API on a free 127.0.0.1 port, as a
subprocess of its own, in memory: DuckDB's httpfs talks to it exactly as it would to MinIO or
AWS (``AWS_ENDPOINT_URL=http://127.0.0.1:PORT``). It accepts any access key, so the
missing-credentials check under test is workbench's own, made before any request.

The helpers that look into the bucket use boto3 (which moto brings), a client independent of
DuckDB's httpfs, with the same dummy credentials: create a bucket, list a prefix
(ListObjectsV2), download an object. (moto answers unsigned object reads with 403, so plain
``urllib`` is used only to see that the server is up.)
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import free_port

REGION = "us-east-1"


def unavailable_reason() -> str | None:
    """Why the server cannot be started here (None when it can)."""
    try:
        import moto.server  # noqa: F401  (only checks that the dev dependency is installed)
    except ImportError as exc:
        return f"moto[server] is not installed ({exc}); pip install -e '.[dev]'"
    return None


@dataclass
class S3Server:
    """A running server: ``endpoint`` for AWS_ENDPOINT_URL, and a few S3 calls over HTTP."""

    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """The variables a workbench process needs to reach this server (dummy credentials)."""
        return {
            "AWS_ACCESS_KEY_ID": "testing-key-id",
            "AWS_SECRET_ACCESS_KEY": "testing-secret",
            "AWS_REGION": REGION,
            "AWS_ENDPOINT_URL": self.endpoint,
        }

    def client(self) -> Any:
        """A boto3 S3 client for this server (path-style, no retries: a miss fails at once)."""
        import boto3
        from botocore.config import Config

        env = self.env()
        return boto3.client(
            "s3",
            endpoint_url=self.endpoint,
            aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"],
            region_name=REGION,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}),
        )

    def new_bucket(self) -> str:
        """A fresh, empty bucket with a unique name (one per test: tests never share a lake)."""
        name = f"lake-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=name)
        return name

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        """Every object key under ``prefix`` (ListObjectsV2, every page)."""
        pages = (
            self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        )
        return sorted(obj["Key"] for page in pages for obj in page.get("Contents", []))

    def get(self, bucket: str, key: str) -> bytes:
        body: bytes = self.client().get_object(Bucket=bucket, Key=key)["Body"].read()
        return body

    def _answers(self) -> bool:
        try:
            with urllib.request.urlopen(self.endpoint + "/", timeout=5):
                pass
        except urllib.error.HTTPError:
            return True  # an S3 error document: the server is up
        except (urllib.error.URLError, ConnectionError, OSError):
            return False
        return True

    def start(self, timeout: float = 60.0) -> S3Server:
        deadline = time.monotonic() + timeout
        while not self._answers():
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"moto_server exited with {self.process.returncode}:\n"
                    + self.log.read_text(errors="replace")
                )
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(
                    f"moto_server did not answer on {self.endpoint} within {timeout:.0f} s:\n"
                    + self.log.read_text(errors="replace")
                )
            time.sleep(0.1)
        return self

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


@contextmanager
def running_server() -> Iterator[S3Server]:
    """Start ``python -m moto.server`` on a free loopback port; stop it on exit."""
    with tempfile.TemporaryDirectory(prefix="workbench-s3-") as tmp:
        log = Path(tmp) / "moto.log"
        port = free_port()
        with log.open("wb") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=tmp,
                env={k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
            )
        server = S3Server(port=port, process=process, log=log)
        try:
            yield server.start()
        finally:
            server.stop()
