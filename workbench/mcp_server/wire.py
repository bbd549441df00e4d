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

``StdioServer`` is the ``MCPServer`` whose ``run("stdio")`` uses this transport, and whose
``run_lines_async`` serves the lines ``front`` hands over once it has answered the handshake.
"""

from __future__ import annotations

import logging
import os
import queue
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.shared.message import SessionMessage
from pydantic_core import PydanticSerializationError

from workbench.mcp_server.line_check import Refusal, judge
from workbench.mcp_server.stdio_fds import claim

log = logging.getLogger("workbench.mcp")

Inbound = SessionMessage | Exception


class StdioServer(MCPServer[Any]):
    """``MCPServer`` served over ``guarded_stdio`` (the rest is the SDK's)."""

    async def run_stdio_async(self) -> None:
        server = self._lowlevel_server
        async with guarded_stdio() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    async def run_lines_async(
        self, lines: queue.Queue[bytes | None], write: Callable[[bytes], None]
    ) -> None:
        """Serve the lines ``front`` hands over (``None`` ends them), replying via ``write``."""

        async def next_line() -> bytes | None:
            return await anyio.to_thread.run_sync(lines.get)

        async def write_line(line: bytes) -> None:
            write(line)

        server = self._lowlevel_server
        async with line_streams(next_line, write_line) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


@asynccontextmanager
async def guarded_stdio() -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[Inbound], MemoryObjectSendStream[SessionMessage]]
]:
    """The server's two streams over this process's stdin and stdout."""
    wire_in, restore_in = claim(0, os.open(os.devnull, os.O_RDONLY))
    wire_out, restore_out = claim(1, os.dup(2))
    try:
        stdin = anyio.wrap_file(os.fdopen(wire_in, "rb", closefd=False))
        stdout = anyio.wrap_file(os.fdopen(wire_out, "wb", closefd=False))

        async def next_line() -> bytes | None:
            return (await stdin.readline()) or None

        async def write_line(line: bytes) -> None:
            await stdout.write(line)
            await stdout.flush()

        async with line_streams(next_line, write_line) as streams:
            yield streams
    finally:
        restore_out()
        restore_in()


@asynccontextmanager
async def line_streams(
    next_line: Callable[[], Awaitable[bytes | None]],
    write_line: Callable[[bytes], Awaitable[None]],
) -> AsyncIterator[
    tuple[MemoryObjectReceiveStream[Inbound], MemoryObjectSendStream[SessionMessage]]
]:
    """The server's two streams over raw lines in (``None``: the end) and lines out."""
    inbound_send, inbound = anyio.create_memory_object_stream[Inbound](0)
    outbound, outbound_receive = anyio.create_memory_object_stream[SessionMessage](0)
    answers = outbound.clone()

    async def read() -> None:
        async with inbound_send, answers:
            while (raw := await next_line()) is not None:
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
                await write_line(encode_line(message.message))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read)
        tasks.start_soon(write)
        try:
            yield inbound, outbound
        finally:
            await outbound.aclose()  # the server is done: let the writer finish


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
