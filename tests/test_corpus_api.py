"""The corpus HTTP API (in-process app), then the real thing: a service subprocess that is
restarted mid-conversation, the CLI, and the MCP tools."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from tests.conftest import ROOT, Service, base_env
from tests.fake_anthropic import FakeAnthropic
from tests.test_corpus import add
from workbench.settings import load_settings

CONTRACT_KEYS = {"name", "description", "created_at", "updated_at", "filter", "stats"}


@pytest.fixture
def client(data_dir: Path) -> Iterator[TestClient]:
    settings = load_settings(data_dir)
    with TestClient(create_app(settings), base_url=settings.base_url) as test_client:
        yield test_client


def seed(client: TestClient) -> list[int]:
    store = client.app.state.runtime.store  # type: ignore[attr-defined]
    return [
        add(store, "Hook spool replay", day=0, type="bugfix", project="wb", concepts=["hooks"]),
        add(store, "Stop hook reads the transcript", day=1, type="discovery", project="wb"),
        add(store, "Chose WAL mode", day=2, type="decision", project="wb", concepts=["sqlite"]),
        add(store, "Unrelated", day=3, type="bugfix", project="elsewhere"),
    ]


# ----- the HTTP contract (in-process) -----------------------------------------------------------
def test_build_list_show_delete(client: TestClient) -> None:
    ids = seed(client)
    built = client.post(
        "/api/corpus",
        json={
            "name": "wb",
            "description": "workbench",
            "project": "wb",
            "types": "bugfix,decision",
        },
    )
    assert built.status_code == 200, built.text
    body = built.json()
    assert CONTRACT_KEYS <= set(body)
    assert "observations" not in body
    assert body["stats"]["observation_count"] == 2
    assert body["primed"] is False
    assert body["session_id"] is None
    assert body["replaced"] is False

    listed = client.get("/api/corpus").json()
    assert listed["count"] == 1
    [item] = listed["corpora"]
    assert item["name"] == "wb"
    assert item["stats"]["type_breakdown"] == {"bugfix": 1, "decision": 1}
    assert item["primed"] is False

    shown = client.get("/api/corpus/wb").json()
    assert "observations" not in shown
    assert shown["filter"]["types"] == ["bugfix", "decision"]
    stored = client.app.state.runtime.settings.corpora_dir / "wb.corpus.json"  # type: ignore[attr-defined]
    file_ids = [o["id"] for o in json.loads(stored.read_text(encoding="utf-8"))["observations"]]
    assert file_ids == [ids[0], ids[2]]  # oldest first

    assert client.delete("/api/corpus/wb").json() == {"name": "wb", "deleted": True}
    assert client.get("/api/corpus").json() == {"corpora": [], "count": 0}


def test_unknown_corpus_is_a_404_listing_the_names(client: TestClient) -> None:
    client.post("/api/corpus", json={"name": "alpha"})
    client.post("/api/corpus", json={"name": "beta"})
    for method, path in [
        ("GET", "/api/corpus/nope"),
        ("DELETE", "/api/corpus/nope"),
        ("POST", "/api/corpus/nope/rebuild"),
        ("POST", "/api/corpus/nope/prime"),
        ("POST", "/api/corpus/nope/reprime"),
    ]:
        response = client.request(method, path)
        assert response.status_code == 404, (method, path)
        body = response.json()
        assert body["error"] == "CORPUS_NOT_FOUND"
        assert body["available"] == ["alpha", "beta"]
        assert "alpha, beta" in body["message"]
    response = client.post("/api/corpus/nope/query", json={"question": "hi"})
    assert response.status_code == 404


@pytest.mark.parametrize("name", ["../x", "a/b", " bad ", "café", ".", "..", "", "x\n", None, 3])
def test_bad_names_in_the_body_are_400_invalid_corpus_name(client: TestClient, name: Any) -> None:
    response = client.post("/api/corpus", json={"name": name, "project": "wb"})
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "INVALID_CORPUS_NAME"
    assert "^[A-Za-z0-9._-]+$" in body["message"]
    assert body["rule"] == "^[A-Za-z0-9._-]+$"
    assert client.get("/api/corpus").json()["count"] == 0


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/api/corpus/%20bad%20"),
        ("GET", "/api/corpus/a%2Fb"),
        ("GET", "/api/corpus/caf%C3%A9"),
        ("DELETE", "/api/corpus/..%2Fx"),
        ("POST", "/api/corpus/%20bad%20/prime"),
        ("POST", "/api/corpus/caf%C3%A9/rebuild"),
    ],
)
def test_bad_names_in_the_path_are_400(client: TestClient, method: str, path: str) -> None:
    response = client.request(method, path)
    assert response.status_code == 400, response.text
    assert response.json()["error"] == "INVALID_CORPUS_NAME"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"limit": 0}, "positive integer"),
        ({"limit": -3}, "positive integer"),
        ({"types": "bugfix,oops"}, "not an observation type"),
        ({"types": '["bugfix"'}, "JSON"),
        ({"dateStart": "yesterday"}, "ISO"),
        ({"colour": "red"}, "unknown corpus filter"),
    ],
)
def test_bad_filters_are_400(client: TestClient, body: dict[str, Any], words: str) -> None:
    response = client.post("/api/corpus", json={"name": "ok", **body})
    assert response.status_code == 400
    assert response.json()["error"] == "INVALID_INPUT"
    assert words in response.json()["message"]


def test_list_filters_accept_every_form_over_http(client: TestClient) -> None:
    seed(client)
    counts = set()
    for types in (["bugfix", "decision"], '["bugfix","decision"]', "bugfix,decision"):
        response = client.post("/api/corpus", json={"name": "t", "project": "wb", "types": types})
        counts.add(response.json()["stats"]["observation_count"])
    assert counts == {2}


def test_offline_prime_query_reprime_rebuild(client: TestClient) -> None:
    ids = seed(client)
    client.post("/api/corpus", json={"name": "wb", "project": "wb"})

    asked = client.post("/api/corpus/wb/query", json={"question": "What does the Stop hook read?"})
    assert asked.status_code == 200, asked.text
    answer = asked.json()
    assert answer["auto_primed"] is True  # a query before prime primes
    assert answer["agent"] == "offline-extractive"
    assert answer["citations"][0] == ids[1]
    assert set(answer["citations"]) <= set(ids[:3])
    assert {"answer", "session_id", "citations", "usage"} <= set(answer)

    primed = client.post("/api/corpus/wb/prime").json()
    assert primed["session_id"] == answer["session_id"]
    assert primed["already_primed"] is True
    assert client.get("/api/corpus/wb").json()["primed"] is True

    fresh = client.post("/api/corpus/wb/reprime").json()
    assert set(fresh) >= {"session_id", "name"}
    assert fresh["session_id"] != primed["session_id"]

    store = client.app.state.runtime.store  # type: ignore[attr-defined]
    new = add(store, "Hook timeout raised", day=5, type="change", project="wb")
    rebuilt = client.post("/api/corpus/wb/rebuild").json()
    assert rebuilt["added"] == 1
    assert rebuilt["stats"]["observation_count"] == 4
    assert rebuilt["session_id"] is None  # cleared, not re-primed
    assert rebuilt["primed"] is False
    again = client.post("/api/corpus/wb/query", json={"question": "hook timeout?"}).json()
    assert again["citations"][0] == new
    assert again["auto_primed"] is True

    bad = client.post("/api/corpus/wb/query", json={"question": ""})
    assert bad.status_code == 400
    extra = client.post("/api/corpus/wb/query", json={"question": "x", "model": "y"})
    assert extra.status_code == 400


# ----- a real service, restarted mid-conversation -----------------------------------------------
@pytest.mark.slow
def test_conversations_survive_a_service_restart(
    make_service: Any, fake_anthropic: FakeAnthropic
) -> None:
    env = {
        "WORKBENCH_ANTHROPIC_API_KEY": "test-key",
        "WORKBENCH_ANTHROPIC_BASE_URL": fake_anthropic.base_url,
        "WORKBENCH_LLM_MAX_RETRIES": "0",
        "WORKBENCH_LLM_TIMEOUT_S": "10",
        "WORKBENCH_COMPRESSOR": "offline",
    }
    first: Service = make_service(**env)
    for text in ("The spool replays hook events after a restart.", "Hooks always exit 0."):
        status, _ = first.post("/api/memory/save", {"text": text, "project": "wb"})
        assert status == 200
    status, built = first.post("/api/corpus", {"name": "hooks", "project": "wb"})
    assert status == 200, built
    fake_anthropic.queue_text("READY")
    status, primed = first.post("/api/corpus/hooks/prime")
    assert status == 200, primed
    fake_anthropic.queue_text("It replays the spool.", cache_read_input_tokens=500)
    status, one = first.post("/api/corpus/hooks/query", {"question": "What happens on restart?"})
    assert status == 200, one
    assert one["session_id"] == primed["session_id"]
    assert one["usage"]["cache_read_input_tokens"] == 500
    first.stop()

    second: Service = make_service(port=first.port, **env)
    fake_anthropic.queue_text("They exit 0.")
    status, two = second.post("/api/corpus/hooks/query", {"question": "And the hooks?"})
    assert status == 200, two
    assert two["session_id"] == primed["session_id"]
    assert two["reprimed"] is False
    assert two["turn"] == 2
    assert fake_anthropic.last_request.body["messages"] == [
        {"role": "user", "content": "What happens on restart?"},
        {"role": "assistant", "content": "It replays the spool."},
        {"role": "user", "content": "And the hooks?"},
    ]
    assert fake_anthropic.last_request.body["system"][1]["cache_control"] == {"type": "ephemeral"}


# ----- the CLI, against a real service ---------------------------------------------------------
def cli(svc: Service, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        env=base_env(svc.data_dir, svc.port),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.slow
def test_cli_corpus_and_agent_commands(service: Service) -> None:
    service.post(
        "/api/memory/save", {"text": "Corpus files are written atomically.", "project": "wb"}
    )
    service.post("/api/memory/save", {"text": "The worker drains the queue.", "project": "wb"})

    built = cli(service, "corpus", "build", "notes", "--project", "wb", "--limit", "10", "--json")
    assert built.returncode == 0, built.stderr
    assert json.loads(built.stdout)["stats"]["observation_count"] == 2

    listed = cli(service, "corpus", "list")
    assert listed.returncode == 0, listed.stderr
    assert "notes" in listed.stdout

    shown = cli(service, "corpus", "show", "notes", "--markdown")
    assert shown.stdout.startswith("# Corpus: notes")
    assert "written atomically" in shown.stdout

    asked = cli(service, "agent", "ask", "notes", "how are corpus files written?", "--json")
    assert asked.returncode == 0, asked.stderr
    answer = json.loads(asked.stdout)
    assert answer["agent"] == "offline-extractive"
    assert answer["citations"]
    table = cli(service, "agent", "ask", "notes", "and the worker?")
    assert table.returncode == 0, table.stderr
    assert "extractive" in table.stdout

    assert cli(service, "corpus", "rebuild", "notes").returncode == 0
    bad = cli(service, "corpus", "build", " bad ")
    assert bad.returncode == 1
    assert "^[A-Za-z0-9._-]+$" in bad.stderr
    missing = cli(service, "corpus", "show", "nope")
    assert missing.returncode == 1
    assert "available corpora: notes" in missing.stderr
    assert cli(service, "corpus", "rm", "notes").returncode == 0
    assert not (service.data_dir / "corpora" / "notes.corpus.json").exists()


# ----- the MCP tools, against a real service ------------------------------------------------------
def test_mcp_corpus_tools(service: Service, tmp_path: Path) -> None:
    from tests.test_mcp import params, run_session, text_of

    service.post("/api/memory/save", {"text": "MCP tools call the HTTP API.", "project": "wb"})

    async def script(session: Any) -> dict[str, Any]:
        names = {tool.name for tool in (await session.list_tools()).tools}
        out: dict[str, Any] = {"tools": names}
        calls = [
            ("build", "build_corpus", {"name": "mcp", "project": "wb"}),
            ("list", "list_corpora", {}),
            ("prime", "prime_corpus", {"name": "mcp"}),
            ("query", "query_corpus", {"name": "mcp", "question": "What do MCP tools call?"}),
            ("rebuild", "rebuild_corpus", {"name": "mcp"}),
            ("reprime", "reprime_corpus", {"name": "mcp"}),
            ("bad", "prime_corpus", {"name": "a/b"}),
        ]
        for key, tool, arguments in calls:
            result = await session.call_tool(tool, arguments)
            out[key] = (result.is_error, text_of(result))
        return out

    log = run_session(params(service.data_dir, service.port), script, tmp_path / "mcp.err")
    assert {
        "build_corpus",
        "list_corpora",
        "prime_corpus",
        "query_corpus",
        "rebuild_corpus",
        "reprime_corpus",
    } <= log["tools"]
    for key in ("build", "list", "prime", "query", "rebuild", "reprime"):
        assert log[key][0] is False, log[key]
    assert json.loads(log["build"][1])["stats"]["observation_count"] == 1
    assert json.loads(log["list"][1])["count"] == 1
    answer = json.loads(log["query"][1])
    assert answer["session_id"] == json.loads(log["prime"][1])["session_id"]
    assert answer["citations"]
    assert log["bad"][0] is True
    assert "^[A-Za-z0-9._-]+$" in log["bad"][1]
