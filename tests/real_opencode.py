"""Driving the real ``opencode`` (``tests/real_agents.py``) in a ``World``, offline.

Shared by ``tests/test_real_opencode.py`` and ``bench/opencode_session.py``: the user's
``opencode.json`` (the model provider pointed at the fake, one MCP server of their own),
OpenCode's switches for everything it would fetch from the network, a ``Tripwire`` proxy that
shows whether anything still tried, one ``opencode run`` read back from its JSON events, and
the wait for the plugin's last write of a session.

Offline, as measured with the tripwire: without the switches OpenCode 1.18.33 fetches
``models.opencode.ai`` and ``registry.npmjs.org``; with them, still the registry: for each
config folder (``~/.config/opencode`` included) it installs ``@opencode-ai/plugin`` there in
the background unless ``node_modules`` exists and ``package-lock.json`` already names every
dependency of ``package.json`` (its ``Npm.install``). ``user_config`` leaves the folder as
that install does on a user's machine with network, so nothing is fetched at all.

Read from the 1.18.33 binary and its runs: ``opencode run`` takes its folder from ``$PWD``;
``--format json`` prints one JSON object per line, each with the ``sessionID``, tool calls as
``{"type": "tool_use", "part": {"tool", "callID", "state"}}``; a prompt holding spaces is sent
wrapped in double quotes.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.conftest import ROOT
from tests.fake_http import FakeHTTPServer, QuietHandler, Scripted
from tests.opencode_model import REPLY, OpenCodeModel
from tests.real_agents import program
from tests.real_world import World

# OpenCode's switches for what it would fetch from the network (read by the 1.18.33 binary).
OFFLINE = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_SHARE": "1",
}


# What OpenCode's background install puts in a config folder (only the names are compared).
PLUGIN_DEPENDENCY = {"@opencode-ai/plugin": "1.18.33"}
LOOPBACK = "127.0.0.1,localhost"


class Tripwire(FakeHTTPServer[str, None]):
    """An HTTP(S) proxy that lets nothing through: each request is recorded and refused.

    Given to OpenCode as ``HTTP(S)_PROXY`` (which its runtime's ``fetch`` honours), with the
    loopback in ``NO_PROXY``: the fake model and the service are reached directly, anything
    else ends here, as ``"CONNECT host:443"`` (or the method and URL) in ``requests``.
    """

    name = "network tripwire"

    def env(self) -> dict[str, str]:
        proxy = f"http://127.0.0.1:{self.port}"
        names = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
        return {**dict.fromkeys(names, proxy), "NO_PROXY": LOOPBACK, "no_proxy": LOOPBACK}

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        tripwire = self

        class _Refuse(QuietHandler):
            def _refuse(self) -> None:
                with tripwire._lock:
                    tripwire.requests.append(f"{self.command} {self.path}")
                self.send_answer(Scripted(403, "tests reach no network"))

            do_CONNECT = do_GET = do_POST = do_HEAD = do_PUT = _refuse

        return _Refuse


@dataclass
class Run:
    """One ``opencode run``: its prompt, OpenCode's session id and its JSON event lines."""

    prompt: str
    session_id: str
    lines: list[dict[str, Any]]
    ended: float  # time.monotonic() when OpenCode exited

    def tool_calls(self) -> list[dict[str, Any]]:
        """The tool parts OpenCode reported (``tool``, ``callID``, ``state``)."""
        return [line["part"] for line in self.lines if line.get("type") == "tool_use"]


def user_config(world: World, model: OpenCodeModel) -> None:
    """The user's own ``opencode.json``, written before install (which must keep it)."""
    folder = world.home / ".config" / "opencode"
    folder.mkdir(parents=True)
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "model": "anthropic/claude-haiku-4-5",
        "provider": {
            "anthropic": {"options": {"baseURL": f"{model.base_url}/v1", "apiKey": "test-key"}}
        },
        "mcp": {
            "notes": {
                "type": "local",
                "command": [sys.executable, str(ROOT / "tests" / "notes_mcp_server.py")],
                "enabled": True,
            }
        },
    }
    (folder / "opencode.json").write_text(json.dumps(config, indent=2), "utf-8")
    # OpenCode's own dependency, as its first run with network leaves it (module docstring).
    (folder / "node_modules").mkdir()
    (folder / "package.json").write_text(json.dumps({"dependencies": PLUGIN_DEPENDENCY}), "utf-8")
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": PLUGIN_DEPENDENCY}}}
    (folder / "package-lock.json").write_text(json.dumps(lock), "utf-8")


def opencode(world: World, prompt: str, network: Tripwire, *options: str) -> Run:
    """``opencode run --format json [OPTIONS] PROMPT`` in the project (``--continue``…), its
    network through ``network``; asserts it ended well."""
    argv = [str(program("opencode")), "run", "--format", "json", *options, prompt]
    # OpenCode takes its folder from $PWD: the project's, as a shell there would set it.
    env = {**OFFLINE, **network.env(), "PWD": str(world.project)}
    proc = world.run(argv, timeout=120, **env)
    ended = time.monotonic()
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    (session_id,) = {line["sessionID"] for line in lines if "sessionID" in line}
    assert any(line.get("part", {}).get("text") == REPLY for line in lines), proc.stdout
    return Run(prompt, session_id, lines, ended)


def wait_for_stop(
    world: World, session_id: str, timeout: float = 30.0, *, prompt_number: int = 1
) -> None:
    """Until the Stop (``summarize``) of the session's prompt is stored: the plugin sends it
    last, and may do so after OpenCode exited (its hook scripts run in the background)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if world.rows(
            "SELECT 1 FROM events WHERE kind = 'summarize' AND content_session_id = ?"
            " AND prompt_number = ?",
            session_id,
            prompt_number,
        ):
            return
        time.sleep(0.1)
    raise AssertionError(f"no Stop stored for {session_id} in {timeout}s: {world.events()}")
