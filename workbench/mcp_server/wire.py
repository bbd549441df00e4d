"""The stdio transport of ``workbench mcp``: every request line gets an answer.

The SDK's ``stdio_server`` reads stdin as text with ``errors="replace"`` and drops any line
its parser refuses (only logged), so a request holding a lone surrogate hung its client
(issue 19, item 11). This transport does the same job with ``line_check.judge`` on each raw
line: a message is served, a refusal is answered with its JSON-RPC error, and the reading
loop never stops before stdin ends.

What it keeps from the SDK's transport:

- While serving, fd 0 points at the null device and fd 1 at stderr, so a child process
  (the service started on demand) cannot read the client's bytes and a stray ``print``
  cannot corrupt the protocol; the wire is kept on private descriptors and both are
  restored on exit.
- One writer task owns stdout: replies and refusals are written one whole line at a time.
  A reply that cannot be encoded (a lone surrogate in a tool's result) becomes an internal
  error for that id instead of killing the writer, and with it the server.

``StdioServer`` is the ``MCPServer`` whose ``run("stdio")`` uses this transport.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage
from pydantic_core import PydanticSerializationError

from workbench.mcp_server.line_check import Refusal, judge

log = logging.getLogger("workbench.mcp")

Inbound = SessionMessage | Exception


class StdioServer(MCPServer[Any]):
    """``MCPServer`` served over ``guarded_stdio`` (the rest is the SDK's)."""

    async def run_stdio_async(self) -> None:
        server = self._lowlevel_server
        async with guarded_stdio() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


@asynccontextmanager
async def guarded_stdio() -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[Inbound], MemoryObjectSendStream[SessionMessage]]
]:
    """The server's two streams over this process's stdin and stdout."""
    wire_in, restore_in = _claim(0, os.open(os.devnull, os.O_RDONLY))
    wire_out, restore_out = _claim(1, os.dup(2))
    try:
        stdin = anyio.wrap_file(os.fdopen(wire_in, "rb", closefd=False))
        stdout = anyio.wrap_file(os.fdopen(wire_out, "wb", closefd=False))
        inbound_send, inbound = anyio.create_memory_object_stream[Inbound](0)
        outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
        answers = outbound.clone()

        async def read() -> None:
            async with inbound_send, answers:
                async for raw in stdin:
                    verdict = judge(raw)
                    if verdict is None:
                        continue
                    if isinstance(verdict, Refusal):
                        log.warning("refused a line from the client: %s", verdict.reason)
                        if verdict.answer is not None:
                            await answers.send(SessionMessage(verdict.answer))
                        continue
                    await inbound_send.send(SessionMessage(verdict))

        async def write() -> None:
            async with outbound_receive:
                async for message in outbound_receive:
                    await stdout.write(encode_line(message.message))
                    await stdout.flush()

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            tasks.start_soon(write)
            try:
                yield inbound, outbound
            finally:
                await outbound.aclose()  # the server is done: let the writer finish
    finally:
        restore_out()
        restore_in()


def encode_line(message: types.JSONRPCMessage) -> bytes:
    """One line of JSON; a reply that cannot be encoded becomes an error for its id."""
    try:
        text = message.model_dump_json(by_alias=True, exclude_unset=True)
    except PydanticSerializationError as exc:
        request_id = getattr(message, "id", None)
        log.error("could not encode the reply to request %r: %s", request_id, exc)
        error = types.JSONRPCError(
            jsonrpc="2.0",
            id=request_id,
            error=types.ErrorData(
                code=types.INTERNAL_ERROR,
                message="the reply held text that is not valid Unicode and could not be sent",
            ),
        )
        text = error.model_dump_json(by_alias=True, exclude_unset=True)
    return text.encode("utf-8") + b"\n"


def _claim(fd: int, diversion: int) -> tuple[int, Callable[[], None]]:
    """Move the wire on ``fd`` to a private descriptor and point ``fd`` at ``diversion``.

    Returns the private descriptor and the function that puts the wire back.
    """
    if sys.platform == "win32":  # pragma: no cover - the stdio wire is never diverted there
        os.close(diversion)
        return fd, lambda: None
    import fcntl

    wire = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 3)
    os.dup2(diversion, fd)
    os.close(diversion)

    def restore() -> None:
        with suppress(OSError):
            os.dup2(wire, fd)

    return wire, restore
