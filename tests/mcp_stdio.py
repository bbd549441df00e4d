"""Start a registered MCP server exactly as an agent would, and list its tools.

The command, args and env come from the agent's config file as ``install`` wrote them. The
server starts in a user's project that holds a decoy ``workbench`` package, which exits when
imported: the registered command must run the installed workbench, never whatever
``workbench`` folder the agent's working directory has.

``RawClient`` drives a server with raw JSON-RPC lines, for what the SDK's client will not
send (lone surrogates, invalid UTF-8, deep nesting).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def decoy_project(tmp_path: Path) -> Path:
    """A user's project folder holding a ``workbench`` package that must never be imported."""
    project = tmp_path / "someones-project"
    (project / "workbench").mkdir(parents=True)
    (project / "workbench" / "__init__.py").write_text("raise SystemExit('decoy imported')\n")
    return project


def tool_names(entry: dict[str, Any], tmp_path: Path) -> set[str]:
    """The tools the server of ``entry`` lists, started in ``decoy_project(tmp_path)``."""
    server = StdioServerParameters(
        command=entry["command"],
        args=entry["args"],
        env=entry["env"],
        cwd=str(decoy_project(tmp_path)),
    )

    async def names() -> set[str]:
        with (tmp_path / "mcp-stderr.log").open("w", encoding="utf-8") as errors:
            async with stdio_client(server, errlog=errors) as (read, write):
                async with ClientSession(read, write) as session:
                    with anyio.fail_after(60):
                        await session.initialize()
                        return {tool.name for tool in (await session.list_tools()).tools}

    return anyio.run(names)


class RawClient:
    """``workbench mcp`` as a subprocess fed raw bytes: the lines no SDK client would send.

    A reader thread files every stdout line by its id, so a test waits for the reply to one
    request with a timeout (a missing reply fails in seconds, never hangs the suite), and
    sees replies with a ``null`` id (a parse error) as well. ``lines`` keeps every stdout line:
    each must be one JSON-RPC object.
    """

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
        )
        self.lines: list[bytes] = []
        self.replies: dict[Any, list[dict[str, Any]]] = {}
        self._ready = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._stderr: list[bytes] = []
        self._stderr_reader = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            message = json.loads(line)  # a line that is not JSON fails the test that reads it
            with self._ready:
                self.lines.append(line)
                key = json.dumps(message.get("id"))
                self.replies.setdefault(key, []).append(message)
                self._ready.notify_all()

    def _drain_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._stderr.append(line)

    def send_line(self, raw: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(raw.rstrip(b"\n") + b"\n")
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_line(json.dumps({"jsonrpc": "2.0", **message}).encode())

    def reply(self, request_id: Any, timeout: float = 60.0) -> dict[str, Any]:
        """The first reply to ``request_id`` (``None``: a reply with a null id)."""
        key = json.dumps(request_id)
        with self._ready:
            if not self._ready.wait_for(lambda: key in self.replies, timeout):
                raise AssertionError(
                    f"no reply to id {key[:80]} in {timeout}s; the server is "
                    f"{'running' if self.proc.poll() is None else 'dead'}; stderr:\n"
                    + self.stderr()[-2000:]
                )
            return self.replies[key][0]

    def count(self, request_id: Any) -> int:
        with self._ready:
            return len(self.replies.get(json.dumps(request_id), []))

    def next_reply(self, request_id: Any, seen: int, timeout: float = 60.0) -> dict[str, Any]:
        """The reply to ``request_id`` after the ``seen`` ones already counted (for ``None``,
        which many parse errors share)."""
        key = json.dumps(request_id)
        with self._ready:
            if not self._ready.wait_for(lambda: len(self.replies.get(key, [])) > seen, timeout):
                raise AssertionError(
                    f"no new reply with id {key[:80]} in {timeout}s; the server is "
                    f"{'running' if self.proc.poll() is None else 'dead'}; stderr:\n"
                    + self.stderr()[-2000:]
                )
            return self.replies[key][seen]

    def initialize(self) -> dict[str, Any]:
        self.send(
            {
                "id": "init",
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "pytest", "version": "0"},
                },
            }
        )
        answer = self.reply("init", timeout=60)
        self.send({"method": "notifications/initialized"})
        return answer

    def stderr(self) -> str:
        return b"".join(self._stderr).decode("utf-8", "replace")

    def stderr_at_exit(self) -> str:
        """All of stderr, once the process has exited (its pipe read to the end)."""
        self._stderr_reader.join(timeout=30)
        return self.stderr()

    def close(self) -> int:
        """Close stdin (the client is done) and wait for the server to exit."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=30)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
            self._reader.join(timeout=5)


@contextmanager
def initialized_mcp(env: dict[str, str], cwd: Path) -> Iterator[RawClient]:
    """``workbench mcp --no-start`` under ``env``, past its handshake, shared by a module's fuzz
    examples; closed at the end (killed if it never exits) and required to exit 0, so a server
    that a hostile line broke fails the module even when every example passed."""
    client = RawClient([sys.executable, "-m", "workbench", "mcp", "--no-start"], env, cwd)
    try:
        assert client.initialize()["result"]["serverInfo"]["name"] == "workbench"
        yield client
        code = client.close()
    finally:
        if client.proc.poll() is None:
            client.proc.kill()
    assert code == 0, client.stderr()[-2000:]
