"""OpenCode 1.18.33 for real: ``workbench install --agent opencode``, then ``opencode run``.

The real ``opencode`` binary (npm ``opencode-ai``, ``tests/real_agents.py``) runs in a temp
HOME (``tests/real_world.py``) the way a user runs it: their ``opencode.json`` names the
model provider and one MCP server of their own (``tests/notes_mcp_server.py``), then install
adds workbench's plugin and MCP server. The model is a fake Anthropic API on 127.0.0.1
(``tests/opencode_model.py``, answering by rule); nothing else is faked: the plugin runs the
hook scripts, the service stores, the MCP servers run over stdio.

Nothing reaches the network, and a test shows it (every run's HTTP(S) goes through a proxy
that refuses and records, ``tests/real_opencode.py`` ``Tripwire``): the provider's ``baseURL``
is the fake, ``autoupdate`` and ``share`` are off in the config, the environment turns off
OpenCode's models fetch, its default (npm-installed) plugins and LSP downloads
(``OPENCODE_DISABLE_*``, the names the 1.18.33 binary reads), and its config folder holds the
``@opencode-ai/plugin`` dependency OpenCode would otherwise install there from npm.

One world (module-scoped: one install, one service), sessions in order: read a file (the
first memory); call the user's MCP tool (item 13; this session's system prompt must hold the
first one's memory); call workbench's ``search`` then ``save_memory`` through MCP (stored as
OpenCode's: item 14); and, last, a session after the service was stopped (item 1: the hook
builds the memory from the store itself while the service it spawned starts).
``opencode run`` wraps a prompt holding spaces in double quotes before sending it (the stored
prompts show them); the rules only look for the text inside.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from hooks.adapters.opencode import PLATFORM_SOURCE
from tests.agent_home import doctor_rows
from tests.fake_anthropic import tool_names, tool_results
from tests.notes_mcp_server import note_on
from tests.opencode_model import Call, OpenCodeModel
from tests.real_agents import program
from tests.real_opencode import Run, Tripwire, opencode, user_config, wait_for_stop
from tests.real_world import World, open_world

pytestmark = pytest.mark.slow

READ = "Read notes.md and tell me how long refresh tokens live"
LOOKUP = "Ask the notes server about refresh tokens"
SEARCH = "Search what workbench remembers about notes, then save what matters"
SAVED = {
    "text": "Refresh tokens live 14 days (the auth module rotates them).",
    "title": "Token lifetime",
}
RESUME = "One more question on that"
COLD = "Read the notes file once more"
NOTE = "The auth module rotates refresh tokens every 14 days.\n"
PLAYS_ARGS = {"topic": "refresh tokens"}
CONTEXT_MARKS = ("<workbench-context>", "workbench-context>")
OWN_TOOLS_SHOWN = {"workbench_search", "workbench_timeline", "workbench_get_observations"}


@dataclass
class Suite:
    world: World
    model: OpenCodeModel
    network: Tripwire
    runs: dict[str, Run]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Suite]:
    program("opencode")  # skips the module only when npm cannot reach its registry
    plays: dict[str, list[Call]] = {
        "Read notes.md": [],  # the read's path is set once the world exists
        "the notes file": [],
        "notes server": [("notes_lookup", PLAYS_ARGS)],
        "workbench remembers": [
            ("workbench_search", {"query": "notes"}),
            ("workbench_save_memory", SAVED),
        ],
    }
    with (
        OpenCodeModel(plays) as model,
        Tripwire() as network,
        open_world(tmp_path_factory.mktemp("opencode")) as world,
    ):
        notes = world.project / "notes.md"
        notes.write_text(NOTE, "utf-8")
        for keyword in ("Read notes.md", "the notes file"):
            plays[keyword] = [("read", {"filePath": str(notes)})]
        user_config(world, model)
        world.install("opencode")
        world.service.start()
        runs: dict[str, Run] = {}
        for prompt in (READ, LOOKUP, SEARCH, RESUME):
            options = ["--continue"] if prompt == RESUME else []  # the last session: SEARCH's
            runs[prompt] = opencode(world, prompt, network, *options)
            wait_for_stop(world, runs[prompt].session_id, prompt_number=2 if options else 1)
        world.service.wait_idle()
        yield Suite(world, model, network, runs)


def observations(world: World, session_id: str) -> list[dict[str, Any]]:
    return world.rows("SELECT * FROM observations WHERE content_session_id = ?", session_id)


def test_install_kept_the_users_config_added_ours_and_doctor_says_so(suite: Suite) -> None:
    folder = suite.world.home / ".config" / "opencode"
    config = json.loads((folder / "opencode.json").read_text("utf-8"))
    assert set(config["mcp"]) == {"notes", "workbench"}
    assert config["provider"]["anthropic"]["options"]["baseURL"] == f"{suite.model.base_url}/v1"
    (backup,) = folder.glob("opencode.json.workbench-backup-*")
    assert set(json.loads(backup.read_text("utf-8"))["mcp"]) == {"notes"}
    row = doctor_rows(suite.world.env)["agent opencode"]
    assert row["status"] == "ok", row
    assert row["detail"].startswith(f"plugin in {folder / 'plugins' / 'workbench.js'};")


def test_every_event_the_plugin_sends_is_stored_once_as_opencode(suite: Suite) -> None:
    world = suite.world
    for prompt, run in suite.runs.items():
        events = world.rows(
            "SELECT kind, payload FROM events"
            " WHERE content_session_id = ? AND prompt_number = ? ORDER BY id",
            run.session_id,
            2 if prompt == RESUME else 1,
        )
        calls = [c for c in run.tool_calls() if not c["tool"].startswith("workbench_")]
        expected = ["session_init", *["observation"] * len(calls), "summarize"]
        assert [e["kind"] for e in events] == expected, (prompt, events)
        stored_calls = [json.loads(e["payload"])["tool_use_id"] for e in events[1:-1]]
        assert stored_calls == [c["callID"] for c in calls]
        (session,) = world.rows(
            "SELECT * FROM sessions WHERE content_session_id = ?", run.session_id
        )
        assert session["platform_source"] == PLATFORM_SOURCE == "opencode"
        assert session["project"] == world.project.name
        assert session["status"] == "active"  # `opencode run` deletes no session: no end
        made = [o for o in observations(world, run.session_id) if o["prompt_number"] == 1]
        assert len(made) == (len(calls) if prompt != RESUME else 0)
        assert {o["platform_source"] for o in made} <= {"opencode"}
    (read,) = observations(world, suite.runs[READ].session_id)
    assert "notes.md" in read["files_read"]


def test_the_memory_reaches_the_system_prompt_and_the_next_session_sees_the_first(
    suite: Suite,
) -> None:
    first = suite.model.asked(READ)
    assert len(first) == 2  # the tool call, then the answer after its result
    assert all(CONTEXT_MARKS[0] in r.system_text for r in first)
    (read,) = observations(suite.world, suite.runs[READ].session_id)
    assert read["title"] not in first[0].system_text  # nothing of it before it happened
    # OpenCode runs the system transform for its side requests too (the title: no tools).
    titles = [r for r in suite.model.requests if not tool_names(r)]
    assert titles
    assert all(CONTEXT_MARKS[0] in r.system_text for r in titles)
    second = suite.model.asked(LOOKUP)
    assert second
    for request in second:
        context = request.system_text[request.system_text.index(CONTEXT_MARKS[0]) :]
        assert read["title"] in context


def test_a_resumed_session_is_given_the_whole_memory_once(suite: Suite) -> None:
    """``opencode run --continue``: OpenCode builds the system prompt afresh for every model
    request, so nothing of the first block is in what it sends: the memory must be added
    again, whole (found here: the plugin asked for what was new since, and got nothing)."""
    assert suite.runs[RESUME].session_id == suite.runs[SEARCH].session_id
    asked = suite.model.asked(RESUME)
    assert asked
    (read,) = observations(suite.world, suite.runs[READ].session_id)
    for request in asked:
        assert request.system_text.count(CONTEXT_MARKS[0]) == 1
        assert read["title"] in request.system_text


def test_the_users_mcp_tool_result_makes_an_observation(suite: Suite) -> None:
    """Issue 20 item 13: OpenCode hands plugins an MCP result as {content, isError}."""
    run = suite.runs[LOOKUP]
    (call,) = run.tool_calls()
    assert call["tool"] == "notes_lookup"
    (event,) = suite.world.rows(
        "SELECT payload FROM events WHERE kind = 'observation' AND content_session_id = ?",
        run.session_id,
    )
    text = note_on(PLAYS_ARGS["topic"])
    assert json.loads(event["payload"])["tool_response"] == {
        "content": [{"type": "text", "text": text}],
        "isError": False,
    }
    (observation,) = observations(suite.world, run.session_id)
    assert "notes_lookup" in observation["title"]
    assert "the refresh token lives 14 days" in observation["narrative"]


def test_workbench_mcp_tools_are_listed_and_a_call_returns_the_memory(suite: Suite) -> None:
    asked = [r for r in suite.model.asked(SEARCH) if RESUME not in r.user_text]
    assert len(asked) == 3  # the search, the save, then the answer
    assert OWN_TOOLS_SHOWN <= set(tool_names(asked[0]))
    search, save = suite.runs[SEARCH].tool_calls()
    assert [search["tool"], save["tool"]] == ["workbench_search", "workbench_save_memory"]
    assert {search["state"]["status"], save["state"]["status"]} == {"completed"}
    (result,) = tool_results(asked[1]).values()
    (read,) = observations(suite.world, suite.runs[READ].session_id)
    assert result.startswith("workbench search")
    assert read["title"] in result


def test_nothing_of_our_own_context_or_tools_is_stored_back(suite: Suite) -> None:
    world = suite.world
    stored = [
        *(json.dumps(e["payload"]) for e in world.events()),
        *(json.dumps(r) for r in world.rows("SELECT * FROM observations")),
        *(json.dumps(r) for r in world.rows("SELECT * FROM user_prompts")),
        *(json.dumps(r) for r in world.rows("SELECT * FROM session_summaries")),
    ]
    for text in stored:
        assert not any(mark in text for mark in CONTEXT_MARKS), text
    assert not observations(world, suite.runs[SEARCH].session_id)
    prompts = world.rows("SELECT prompt_text FROM user_prompts ORDER BY id")
    typed = (READ, LOOKUP, SEARCH, RESUME)
    assert [p["prompt_text"] for p in prompts] == [f'"{p}"' for p in typed]


def test_a_memory_saved_through_mcp_is_stored_once_as_opencode(suite: Suite) -> None:
    saved = [
        o for o in suite.world.rows("SELECT * FROM observations") if SAVED["text"] in json.dumps(o)
    ]
    assert len(saved) == 1, saved
    assert saved[0]["platform_source"] == "opencode"


def test_a_cold_start_still_injects_the_memory(suite: Suite) -> None:
    """The service stopped: the session's start spawns it, and the memory is still there.

    It stops the module's service (the spawned one is stopped with ``workbench stop`` when the
    world closes): only the network check, which needs no service, comes after it."""
    suite.world.service.stop()
    run = opencode(suite.world, COLD, suite.network)
    (read,) = observations(suite.world, suite.runs[READ].session_id)
    asked = suite.model.asked(COLD)
    assert asked
    assert all(read["title"] in r.system_text for r in asked)
    wait_for_stop(suite.world, run.session_id)


def test_opencode_reached_no_network(suite: Suite) -> None:
    """Every run's HTTP(S) went through the tripwire proxy: nothing but the loopback."""
    assert len(suite.model.requests) > 10  # the loopback was reached, directly
    assert suite.network.requests == []
