"""Every request to ``workbench mcp`` gets an answer, whatever its bytes (issue 19, item 11).

A ``tools/call`` whose arguments held a lone surrogate (JSON text ``"\\ud800"``) never got a
reply: the SDK's parser refused the line and the server only logged it. The SDK's own client
will not send such a line, so these tests write raw JSON-RPC bytes to a real ``workbench mcp``
(``tests.mcp_stdio.RawClient``) talking to a real service: lone surrogates (in a value, a
key, the tool name, the id), invalid UTF-8, deep nesting, huge numbers, lines that are not
JSON at all, then random hostile requests. Each request gets a reply with its id (or, when
no id can be read from the line, a parse error with a ``null`` id), the server answers the
next request, and it exits 0 when stdin closes with nothing but JSON-RPC on its stdout.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ROOT, Service, base_env, free_port
from tests.fuzz_harness import budget
from tests.fuzz_strategies import deep, json_values, render
from tests.mcp_stdio import RawClient, initialized_mcp

pytestmark = pytest.mark.slow

TOOLS = ["search", "timeline", "get_observations", "save_memory", "workflow"]
_ids = itertools.count(1000)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data = tmp_path_factory.mktemp("mcp-fuzz") / "data"
    data.mkdir()
    port = free_port()
    running = Service(data_dir=data, port=port, env=base_env(data, port)).start()
    status, body = running.post("/api/memory/save", {"text": "the cache key has the tenant"})
    assert status == 200, body
    yield running
    running.stop()


@pytest.fixture(scope="module")
def mcp(service: Service) -> Iterator[RawClient]:
    with initialized_mcp(base_env(service.data_dir, service.port), ROOT) as client:
        yield client
    for line in client.lines:
        assert json.loads(line)["jsonrpc"] == "2.0", line
    assert "Traceback" not in client.stderr()


def observations(service: Service) -> int:
    conn = sqlite3.connect(f"file:{service.data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return int(conn.execute("SELECT count(*) FROM observations").fetchone()[0])
    finally:
        conn.close()


def assert_alive(mcp: RawClient) -> None:
    request_id = next(_ids)
    mcp.send({"id": request_id, "method": "tools/list"})
    names = {tool["name"] for tool in mcp.reply(request_id)["result"]["tools"]}
    assert set(TOOLS) <= names


def call(request_id: Any, tool: str, arguments: str | bytes) -> bytes:
    """A ``tools/call`` line with ``arguments`` written as given (any JSON text, or bytes)."""
    head = f'{{"jsonrpc":"2.0","id":{json.dumps(request_id)},"method":"tools/call",'
    start = f'{head}"params":{{"name":"{tool}","arguments":'.encode()
    raw = arguments if isinstance(arguments, bytes) else arguments.encode()
    return start + raw + b"}}"


def test_a_lone_surrogate_in_tool_arguments_is_answered_naming_the_field(
    service: Service, mcp: RawClient
) -> None:
    before = observations(service)
    request_id = next(_ids)
    mcp.send_line(call(request_id, "save_memory", '{"text": "\\ud800", "project": "p"}'))
    error = mcp.reply(request_id)["error"]
    assert error["code"] == -32602
    assert "params.arguments.text" in error["message"]
    assert "lone surrogate" in error["message"]
    assert "\\ud800" in error["message"]
    assert observations(service) == before
    assert_alive(mcp)


# (name, line with {id} where the request id goes, what answers it)
# "error:<code>" a JSON-RPC error with that id; "answered" a result or an error with that id;
# "null:<code>" an error with a null id (nothing in the line says which request it was).
HOSTILE_LINES: list[tuple[str, bytes, str]] = [
    ("surrogate-value", call("{id}", "search", '{"query": "x \\udfff"}'), "error:-32602"),
    ("surrogate-key", call("{id}", "search", '{"query": "x", "\\udc80": 1}'), "error:-32602"),
    ("surrogate-tool", call("{id}", "sea\\ud800rch", '{"query": "x"}'), "error:-32602"),
    (
        "surrogate-method",
        b'{"jsonrpc":"2.0","id":{id},"method":"tools/\\ud800","params":{}}',
        "error:-32602",
    ),
    ("surrogate-pair-ok", call("{id}", "search", '{"query": "\\ud83d\\ude00"}'), "answered"),
    ("surrogate-id", b'{"jsonrpc":"2.0","id":"\\ud800","method":"tools/list"}', "null:-32602"),
    ("invalid-utf8", call("{id}", "search", b'{"query": "\xff\xfe"}'), "error:-32700"),
    ("utf8-surrogate", call("{id}", "search", b'{"query": "\xed\xa0\x80"}'), "error:-32700"),
    ("overlong-utf8", call("{id}", "search", b'{"query": "\xc0\xaf"}'), "error:-32700"),
    ("garbage", b"\xff\xfe\x00garbage", "null:-32700"),
    (
        "deep-150",
        call("{id}", "search", '{"query": "x", "deep": ' + "[" * 150 + "]" * 150 + "}"),
        "answered",
    ),
    (
        "deep-300",
        call("{id}", "search", '{"query": "x", "deep": ' + "[" * 300 + "]" * 300 + "}"),
        "error:-32600",
    ),
    (
        "deep-5000",
        call("{id}", "search", '{"query": "x", "deep": ' + "[" * 5000 + "]" * 5000 + "}"),
        "error:-32700",
    ),
    ("deep-top", deep(100_000, "list"), "null:-32700"),
    ("deep-object-top", deep(5000, "object"), "null:-32700"),
    ("id-1e400", b'{"jsonrpc":"2.0","id":1e400,"method":"tools/list"}', "null:-32600"),
    ("id-float", b'{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', "null:-32600"),
    ("id-bool", b'{"jsonrpc":"2.0","id":true,"method":"tools/list"}', "null:-32600"),
    ("id-huge-int", b'{"jsonrpc":"2.0","id":1' + b"0" * 400 + b',"method":"tools/list"}', "huge"),
    (
        "id-5000-digits",
        b'{"jsonrpc":"2.0","id":' + b"9" * 5000 + b',"method":"tools/list"}',
        "null:-32700",
    ),
    ("arg-1e400", call("{id}", "search", '{"query": "x", "limit": 1e400}'), "answered"),
    (
        "arg-huge-int",
        call("{id}", "search", '{"query": "x", "limit": 1' + "0" * 400 + "}"),
        "answered",
    ),
    ("arg-nan", call("{id}", "search", '{"query": "x", "limit": NaN}'), "error:-32700"),
    ("arg-infinity", call("{id}", "search", '{"query": "x", "limit": -Infinity}'), "error:-32700"),
    ("truncated", call("{id}", "search", '{"query": "x"')[:-2], "error:-32700"),
    ("not-json", b"hello", "null:-32700"),
    ("open-brace", b"{", "null:-32700"),
    ("batch", b'[{"jsonrpc":"2.0","id":{id},"method":"tools/list"}]', "null:-32600"),
    ("json-null", b"null", "null:-32600"),
    ("no-jsonrpc", b'{"id":{id},"method":"tools/list"}', "error:-32600"),
]


@pytest.mark.parametrize(
    ("name", "template", "expect"), HOSTILE_LINES, ids=[h[0] for h in HOSTILE_LINES]
)
def test_every_hostile_line_is_answered_and_the_server_lives(
    mcp: RawClient, name: str, template: bytes, expect: str
) -> None:
    assert_answered(mcp, template, expect)


@pytest.mark.parametrize(
    ("name", "template", "expect"), HOSTILE_LINES, ids=[h[0] for h in HOSTILE_LINES]
)
def test_a_hostile_line_right_after_the_fast_handshake_is_answered(
    service: Service, name: str, template: bytes, expect: str
) -> None:
    """The first line after ``initialize`` meets ``front`` (no SDK yet), which hands it over."""
    client = RawClient(
        [sys.executable, "-m", "workbench", "mcp", "--no-start"],
        base_env(service.data_dir, service.port),
        ROOT,
    )
    try:
        client.initialize()
        assert_answered(client, template, expect)
    finally:
        assert client.close() == 0, client.stderr()[-2000:]
    assert "Traceback" not in client.stderr()


@pytest.mark.parametrize(
    "params",
    [
        {"protocolVersion": 20250618, "capabilities": {}, "clientInfo": {"name": "x"}},
        {"protocolVersion": "2025-06-18", "capabilities": {}},
        {"protocolVersion": "\ud800", "capabilities": {}, "clientInfo": {"name": "x"}},
        {"protocolVersion": "", "capabilities": [], "clientInfo": "x"},
        None,
    ],
    ids=["version-number", "no-client-info", "version-surrogate", "wrong-shapes", "no-params"],
)
def test_an_odd_initialize_is_answered_by_the_sdk(service: Service, params: Any) -> None:
    """What ``front`` does not recognise as a plain handshake, the SDK answers (or refuses)."""
    client = RawClient(
        [sys.executable, "-m", "workbench", "mcp", "--no-start"],
        base_env(service.data_dir, service.port),
        ROOT,
    )
    try:
        message: dict[str, Any] = {"id": "init", "method": "initialize"}
        if params is not None:
            message["params"] = params
        client.send(message)
        reply = client.reply("init", timeout=60)
        assert "result" in reply or "error" in reply, reply
    finally:
        assert client.close() == 0, client.stderr()[-2000:]
    assert "Traceback" not in client.stderr()


@pytest.mark.parametrize(
    "message",
    [
        {"id": "server-discover-probe-1", "method": "server/discover"},
        {"id": 7, "method": "server/discover", "params": None},
        {"id": 8, "method": "server/discover", "params": ["2026-07-28"]},
        {"id": 9, "method": "server/discover", "params": {"_meta": "\ud800"}},
        {"id": 10, "method": "server/discover", "params": {"_meta": {"x": 1e308}}},
        {"method": "server/discover", "params": {}},
    ],
    ids=["no-params", "null-params", "list-params", "surrogate-meta", "odd-meta", "no-id"],
)
def test_an_odd_discover_probe_first_is_answered_and_initialize_still_works(
    data_dir: Path, message: dict[str, Any]
) -> None:
    """Claude Code 2.1 opens with ``server/discover``; any shape of it, first, leaves a
    server that answers the probe (when it has an id) and then the legacy handshake."""
    client = RawClient(
        [sys.executable, "-m", "workbench", "mcp", "--no-start"],
        base_env(data_dir, free_port()),
        ROOT,
    )
    try:
        client.send(message)
        if "id" in message:
            reply = client.reply(message["id"], timeout=60)
            assert "error" in reply, reply
        assert client.initialize()["result"]["serverInfo"]["name"] == "workbench"
        client.send({"id": "tools", "method": "tools/list"})
        assert client.reply("tools", timeout=60)["result"]["tools"]
    finally:
        assert client.close() == 0, client.stderr()[-2000:]
    assert "Traceback" not in client.stderr()


def assert_answered(mcp: RawClient, template: bytes, expect: str) -> None:
    """Send ``template`` (``{id}`` filled in); its answer is ``expect``; the server lives."""
    request_id = next(_ids)
    line = template.replace(b'"{id}"', b"{id}").replace(b"{id}", str(request_id).encode())
    nulls = mcp.count(None)
    mcp.send_line(line)
    if expect == "huge":
        huge = int("1" + "0" * 400)
        assert "result" in mcp.reply(huge), "a valid integer id, however long, is answered"
    elif expect.startswith("null:"):
        reply = mcp.next_reply(None, nulls)
        assert reply["error"]["code"] == int(expect.split(":")[1]), reply
    else:
        reply = mcp.reply(request_id)
        if expect.startswith("error:"):
            assert reply.get("error", {}).get("code") == int(expect.split(":")[1]), reply
            assert reply["error"]["message"]
        else:
            assert "result" in reply or "error" in reply, reply
    assert_alive(mcp)


# Random requests: a known tool or any name, hostile arguments (surrogates, NaN, 1e400, keys
# of every shape), and sometimes bytes spliced in anywhere.
splices = st.one_of(
    st.just(b""),
    st.sampled_from([b"\xff", b"\xed\xa0\x80", b"\\ud800", b"\x00", b"{", b'"', b"\\"]),
    # Any bytes but those that could close a structure and make a new top-level "id".
    st.binary(max_size=4).filter(lambda b: not set(b) & set(b'{}[],:"\\\n')),
)


@settings(
    max_examples=budget(40),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    tool=st.one_of(st.sampled_from(TOOLS), st.text(max_size=10)),
    arguments=json_values,
    splice=splices,
    where=st.floats(min_value=0, max_value=1),
)
def test_random_hostile_requests_are_each_answered(
    mcp: RawClient, tool: str, arguments: Any, splice: bytes, where: float
) -> None:
    request_id = next(_ids)
    head = f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call","params":'
    body = f'{{"name":{render(tool)},"arguments":{render(arguments)}}}}}'.encode()
    cut = int(len(body) * where)
    line = head.encode() + body[:cut] + splice + body[cut:]
    nulls = mcp.count(None)
    mcp.send_line(line.replace(b"\n", b" "))
    # The id sits before any splice, so it can always be read back: the reply carries it.
    reply = mcp.reply(request_id)
    assert "result" in reply or "error" in reply, reply
    assert mcp.count(None) == nulls
    assert_alive(mcp)


def test_a_reply_that_cannot_be_encoded_becomes_an_error_for_its_id() -> None:
    """The writer's guard: a tool result holding a lone surrogate must not kill stdout (and
    with it every later reply); the client gets an internal error for that request."""
    import mcp_types as types

    from workbench.mcp_server.wire import encode_line

    reply = types.JSONRPCResponse(jsonrpc="2.0", id=7, result={"text": "cut \ud83d"})
    line = encode_line(reply)
    assert line.endswith(b"\n")
    answer = json.loads(line)
    assert answer["id"] == 7
    assert answer["error"]["code"] == types.INTERNAL_ERROR


def test_the_id_of_a_line_too_deep_to_parse_is_still_read() -> None:
    from workbench.mcp_server.line_check import recover_id

    tail = '"params":{"a":' + "[" * 200_000 + "]" * 200_000 + "}"
    assert recover_id('{"jsonrpc":"2.0","id":42,' + tail + "}") == 42
    assert recover_id('{"params":{"id":1,"x":"}"},"id":"abc"}') == "abc"
    assert recover_id('{"params":' + "[" * 200_000) is None
    assert recover_id('["id", 1]') is None
