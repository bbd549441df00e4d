"""``workbench mcp`` as Claude Code 2.1.332 really opens and closes it (seen in its debug log).

Claude Code 2.1 first sends a ``server/discover`` probe (protocol era 2026-07-28), not
``initialize``. The fast front did not know it and handed it to the SDK, so the probe waited
for the SDK to load (1-2 s idle, 3.5-7 s loaded): past the probe's timeout Claude Code restarts
the server with the legacy handshake, and its first model request goes out without our tools.
Any JSON-RPC error other than -32022 ("unsupported protocol version", which names versions)
makes it fall back to ``initialize`` on the same process at once, which the front answers.

On exit Claude Code sends SIGINT and, if the process is still there 100 ms later, SIGTERM:
``tests/test_mcp_start.py`` (the SIGINT test) checks the server stops without the
interpreter's teardown.
"""

from __future__ import annotations

from pathlib import Path

from tests.test_mcp_start import HEAVY, imported, server

# The first line Claude Code 2.1.332 writes to a stdio MCP server (captured from a real run).
DISCOVER = (
    b'{"jsonrpc":"2.0","id":"server-discover-probe-1","method":"server/discover","params":'
    b'{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientInfo":{"name":"claude-code","title":"Claude Code",'
    b'"version":"2.1.332","description":"Anthropic\'s agentic coding tool",'
    b'"websiteUrl":"https://claude.com/claude-code"},'
    b'"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},'
    b'"elicitation":{"form":{},"url":{}}}}}}'
)
# Claude Code's answer to an "unsupported protocol version" error: retry, not fall back.
UNSUPPORTED_VERSION = -32022


def test_claude_codes_discover_probe_gets_the_legacy_handshake_without_the_sdk(
    data_dir: Path,
) -> None:
    client = server(data_dir, "-X", "importtime")
    try:
        client.send_line(DISCOVER)
        probe = client.reply("server-discover-probe-1")
        assert "error" in probe, probe
        assert probe["error"]["code"] != UNSUPPORTED_VERSION
        client.send(
            {
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"roots": {"listChanged": True}},
                    "clientInfo": {"name": "claude-code", "version": "2.1.332"},
                },
            }
        )
        assert client.reply(0)["result"]["protocolVersion"] == "2025-11-25"
        client.send({"method": "notifications/initialized"})
        client.send({"id": 1, "method": "tools/list"})
        assert "search" in {t["name"] for t in client.reply(1)["result"]["tools"]}
    finally:
        assert client.close() == 0
    loaded = imported(client.stderr_at_exit())
    assert "workbench" in loaded
    assert loaded.isdisjoint(HEAVY), sorted(loaded & set(HEAVY))
