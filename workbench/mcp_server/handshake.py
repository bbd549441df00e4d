"""Take ``handshake.json``: the SDK server's own replies that ``front`` answers from.

Run ``python -m workbench.mcp_server.handshake`` after changing a tool, its schema or the
server's instructions (tests/test_mcp_start.py fails, naming this command, while the file is
stale). It starts the SDK server as it ran before ``front`` (``python -m
workbench.mcp_server``) with ``CLAUDE_PROJECT_DIR`` naming a project called
``front.PROJECT_MARK``, sends ``initialize`` and the ``front.LISTS`` requests (``tools/list``
and the empty prompt and resource lists agents ask for at start), and keeps their results:
``front`` puts the session's own project back in place of the mark.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Any

from workbench.mcp_server.front import LISTS, PROJECT_MARK, SNAPSHOT

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "workbench-handshake", "version": "1"},
    },
}


def sdk_replies(requests: list[dict[str, Any]], env: dict[str, str]) -> list[dict[str, Any]]:
    """The SDK server's replies to ``requests``, in order; stdin is closed after the last.

    Closing stdin earlier would end the server before it answered what it was still serving.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "workbench.mcp_server"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        for request in requests:
            proc.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
        proc.stdin.flush()
        asked = sum(1 for r in requests if "id" in r)
        replies = [json.loads(proc.stdout.readline()) for _ in range(asked)]
        proc.stdin.close()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return replies


def take() -> dict[str, Any]:
    """The snapshot as ``front`` reads it."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    with tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ,
            "WORKBENCH_DATA_DIR": home,
            "CLAUDE_PROJECT_DIR": os.path.join(home, PROJECT_MARK),
        }
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        listings = [
            {"jsonrpc": "2.0", "id": n, "method": method} for n, method in enumerate(LISTS, 2)
        ]
        first, *lists = sdk_replies([INITIALIZE, initialized, *listings], env)
    result = dict(first["result"])
    result.pop("protocolVersion")
    return {
        "handshake_versions": list(HANDSHAKE_PROTOCOL_VERSIONS),
        "initialize": result,
        "lists": {method: reply["result"] for method, reply in zip(LISTS, lists, strict=True)},
    }


def write() -> None:
    SNAPSHOT.write_text(json.dumps(take(), indent=1, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    write()
