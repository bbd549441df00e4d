"""Ingest end to end against a real ``python -m service`` (offline compressor).

Each test starts its own service on its own data dir; the database is inspected by opening
the real file read-only next to the running service (WAL lets a reader in at any time).
Pure validation edge cases (422s) use the in-process app (``client``), built the same way.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from tests.conftest import Service, base_env, free_port
from workbench.settings import load_settings

SECRET = "ABC123"
READ_INPUT = {"file_path": "/work/proj/loader.py"}
READ_RESPONSE = {
    "type": "text",
    "file": {"filePath": "/work/proj/loader.py", "content": "def load():\n    pass\n"},
}
EDIT_INPUT = {
    "file_path": "/work/proj/loader.py",
    "old_string": "pass",
    "new_string": "return cache.get(key)",
}
BASH_INPUT = {"command": "pytest -q tests/test_loader.py"}
BASH_RESPONSE = {"stdout": "3 passed in 0.12s", "stderr": "", "interrupted": False}


# ----- helpers --------------------------------------------------------------------------------
def query(data_dir: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Read the real database file (read-only) beside the running service."""
    conn = sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in conn.execute(sql, params)]
    finally:
        conn.close()


def count(data_dir: Path, table: str, where: str = "", params: tuple[Any, ...] = ()) -> int:
    return int(query(data_dir, f"SELECT count(*) FROM {table} {where}", params)[0][0])


def init(
    svc: Service,
    session: str = "s1",
    project: str = "proj",
    prompt: str = "fix the loader",
    key: str | None = None,
) -> tuple[int, Any]:
    headers = {"Idempotency-Key": key} if key else None
    return svc.post(
        "/api/sessions/init",
        {"contentSessionId": session, "project": project, "prompt": prompt},
        headers=headers,
    )


def observe(
    svc: Service,
    session: str = "s1",
    tool_name: str = "Read",
    tool_input: Any = None,
    tool_response: Any = None,
    cwd: str = "/work/proj",
    tool_use_id: str | None = None,
    key: str | None = None,
) -> tuple[int, Any]:
    body: dict[str, Any] = {
        "contentSessionId": session,
        "tool_name": tool_name,
        "tool_input": READ_INPUT if tool_input is None else tool_input,
        "tool_response": READ_RESPONSE if tool_response is None else tool_response,
        "cwd": cwd,
    }
    if tool_use_id:
        body["tool_use_id"] = tool_use_id
    return svc.post(
        "/api/sessions/observations", body, headers={"Idempotency-Key": key} if key else None
    )


def summarize(svc: Service, session: str = "s1", message: str = "Done.") -> tuple[int, Any]:
    return svc.post(
        "/api/sessions/summarize",
        {"contentSessionId": session, "last_assistant_message": message},
    )


def save(svc: Service, text: str, **extra: Any) -> int:
    status, body = svc.post("/api/memory/save", {"text": text, **extra})
    assert status == 200, body
    return int(body["id"])


def files_containing(folder: Path, needle: bytes) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.fixture
def other_service(tmp_path: Path) -> Iterator[Service]:
    """A second, fresh service on its own data dir (for export → import)."""
    data = tmp_path / "other-data"
    data.mkdir()
    port = free_port()
    svc = Service(data_dir=data, port=port, env=base_env(data, port))
    try:
        yield svc.start()
    finally:
        svc.stop()


@pytest.fixture
def client(data_dir: Path) -> Iterator[TestClient]:
    """The in-process app over this test's own data dir (the lifespan runs)."""
    settings = load_settings(data_dir)
    with TestClient(create_app(settings), base_url=settings.base_url) as test_client:
        yield test_client


# ----- prompts --------------------------------------------------------------------------------
def test_prompt_is_stored_and_listed_with_project_filter(service: Service) -> None:
    status, body = init(service, "s1", "alpha", "add a cache to the loader")
    assert status == 200
    assert body["status"] == "stored"
    assert body["promptNumber"] == 1
    init(service, "s2", "beta", "why is CI red")

    _, page = service.get("/api/prompts")
    assert [p["prompt_text"] for p in page["items"]] == [
        "why is CI red",
        "add a cache to the loader",
    ]
    _, alpha = service.get("/api/prompts?project=alpha")
    assert [
        (p["project"], p["content_session_id"], p["prompt_number"]) for p in alpha["items"]
    ] == [("alpha", "s1", 1)]
    _, none = service.get("/api/prompts?project=nope")
    assert none["items"] == []


def test_second_prompt_of_a_session_is_numbered_two(service: Service) -> None:
    init(service, prompt="first question")
    status, body = init(service, prompt="second question")
    assert (status, body["status"], body["promptNumber"]) == (200, "stored", 2)
    assert query(service.data_dir, "SELECT prompt_counter FROM sessions") == [(2,)]


# ----- tool calls → observations → summary ----------------------------------------------------
def test_tool_calls_become_observations_then_a_summary(service: Service) -> None:
    init(service, prompt="fix the loader")
    replies = [
        observe(service, tool_name="Read", tool_use_id="t1"),
        observe(
            service,
            tool_name="Edit",
            tool_input=EDIT_INPUT,
            tool_response={"filePath": "/work/proj/loader.py"},
            tool_use_id="t2",
        ),
        observe(
            service,
            tool_name="Bash",
            tool_input=BASH_INPUT,
            tool_response=BASH_RESPONSE,
            tool_use_id="t3",
        ),
    ]
    assert [(s, b["status"], b["promptNumber"]) for s, b in replies] == [(200, "queued", 1)] * 3

    health = service.wait_idle()
    assert health["queue"]["done"] == 3
    assert health["queue"]["failed"] == 0

    _, page = service.get("/api/observations")
    items = sorted(page["items"], key=lambda o: o["id"])
    assert [o["type"] for o in items] == ["discovery", "change", "discovery"]
    assert items[0]["title"] == "Read loader.py"
    assert items[0]["files_read"] == ["loader.py"]
    assert items[1]["title"] == "Edited loader.py"
    assert items[1]["files_modified"] == ["loader.py"]
    assert "pytest" in items[2]["title"]
    for obs, (_, reply) in zip(items, replies, strict=True):
        assert obs["event_id"] == reply["eventId"]
        assert (obs["content_session_id"], obs["project"], obs["prompt_number"]) == (
            "s1",
            "proj",
            1,
        )
        assert obs["generated_by"] == "offline"
        assert obs["discovery_tokens"] > 0

    status, body = summarize(service, message="Fixed the loader. Next steps: add a test.")
    assert (status, body["status"]) == (200, "queued")
    service.wait_idle()
    _, summaries = service.get("/api/summaries")
    [summary] = summaries["items"]
    assert (summary["content_session_id"], summary["prompt_number"]) == ("s1", 1)
    assert summary["request"] == "fix the loader"
    assert "Edited loader.py" in summary["completed"]
    assert summary["files_edited"] == ["loader.py"]


def test_session_end_completes_the_session(service: Service) -> None:
    init(service)
    status, body = service.post("/api/sessions/end", {"contentSessionId": "s1", "reason": "exit"})
    assert (status, body["status"]) == (200, "stored")
    _, page = service.get("/api/sessions")
    [session] = page["items"]
    assert session["status"] == "completed"
    assert session["completed_at"] is not None

    # A new prompt in the same session makes it active again.
    init(service, prompt="one more thing")
    _, page = service.get("/api/sessions")
    assert page["items"][0]["status"] == "active"


def test_end_and_summarize_of_an_unknown_session_are_skipped(service: Service) -> None:
    _, end = service.post("/api/sessions/end", {"contentSessionId": "ghost"})
    _, summary = summarize(service, "ghost")
    assert (end["status"], end["reason"]) == ("skipped", "unknown session")
    assert summary["status"] == "skipped"
    assert "unknown session" in summary["reason"]
    assert count(service.data_dir, "events") == 0
    assert count(service.data_dir, "sessions") == 0


# ----- dedup ----------------------------------------------------------------------------------
def test_same_idempotency_key_twice_is_one_event(service: Service) -> None:
    init(service)
    first = observe(service, key="hook-key-1")
    second = observe(service, key="hook-key-1")
    assert first[1]["status"] == "queued"
    assert second[1] == {
        "status": "duplicate",
        "reason": "event already received",
        "eventId": first[1]["eventId"],
    }
    assert count(service.data_dir, "events", "WHERE kind = 'observation'") == 1
    assert count(service.data_dir, "queue") == 1


def test_same_idempotency_key_on_init_is_one_prompt(service: Service) -> None:
    init(service, key="init-key")
    _, again = init(service, prompt="a different text, same key", key="init-key")
    assert again["status"] == "duplicate"
    assert count(service.data_dir, "user_prompts") == 1


def test_same_tool_use_id_twice_is_one_event(service: Service) -> None:
    init(service)
    observe(service, tool_use_id="toolu_01")
    _, again = observe(service, tool_use_id="toolu_01")
    assert again["status"] == "duplicate"
    assert count(service.data_dir, "events", "WHERE kind = 'observation'") == 1


def test_same_prompt_within_ten_seconds_is_a_duplicate(service: Service) -> None:
    init(service, prompt="run the tests")
    status, body = init(service, prompt="run the tests")
    assert status == 200
    assert (body["status"], body["reason"], body["promptNumber"]) == (
        "duplicate",
        "same prompt within 10 s",
        1,
    )
    assert count(service.data_dir, "user_prompts") == 1
    assert query(service.data_dir, "SELECT prompt_counter FROM sessions") == [(1,)]
    # The same text in another session is not a duplicate.
    _, other = init(service, session="s2", prompt="run the tests")
    assert other["status"] == "stored"


def test_identical_observation_content_is_stored_once(service: Service) -> None:
    init(service)
    observe(service, tool_use_id="toolu_a")
    observe(service, tool_use_id="toolu_b")  # another call, the very same content
    service.wait_idle()
    assert count(service.data_dir, "events", "WHERE kind = 'observation'") == 2
    assert count(service.data_dir, "queue", "WHERE status = 'done'") == 2
    assert count(service.data_dir, "observations") == 1


# ----- skip rules -----------------------------------------------------------------------------
def test_skipped_tool_is_not_stored(service: Service) -> None:
    init(service)
    status, body = observe(
        service,
        tool_name="TodoWrite",
        tool_input={"todos": [{"content": "x", "status": "pending"}]},
    )
    assert status == 200
    assert body == {"status": "skipped", "reason": "tool 'TodoWrite' is skipped"}
    assert count(service.data_dir, "events", "WHERE kind = 'observation'") == 0
    assert count(service.data_dir, "queue") == 0


def test_excluded_projects_glob_from_env(make_service: Any) -> None:
    svc = make_service(WORKBENCH_EXCLUDED_PROJECTS="secret-*,*/clients/*")
    _, prompt = init(svc, session="s1", project="secret-app", prompt="look at this")
    assert prompt == {"status": "skipped", "reason": "project 'secret-app' is excluded"}
    _, by_name = observe(svc, session="s1", cwd="/home/me/secret-app")
    assert by_name == {"status": "skipped", "reason": "project 'secret-app' is excluded"}
    _, by_cwd = observe(svc, session="s2", cwd="/home/me/clients/acme")
    assert by_cwd == {"status": "skipped", "reason": "project 'acme' is excluded"}
    _, summary = summarize(svc, "s1")
    assert summary["status"] == "skipped"
    for table in ("events", "sessions", "user_prompts", "queue"):
        assert count(svc.data_dir, table) == 0, table

    # The rule excludes only what matches.
    _, public = init(svc, session="s3", project="public-app", prompt="hello")
    assert public["status"] == "stored"


# ----- privacy --------------------------------------------------------------------------------
def test_private_prompt_and_its_work_are_never_stored(make_service: Any) -> None:
    svc = make_service()
    data = svc.data_dir
    status, body = init(svc, prompt=f"<private>my secret token {SECRET}</private>")
    assert status == 200
    assert body["status"] == "skipped"
    assert body["reason"] == "private prompt: nothing stored"
    assert count(data, "user_prompts") == 0

    _, obs = observe(
        svc,
        tool_name="Bash",
        tool_input={"command": f"echo {SECRET}"},
        tool_response={"stdout": SECRET},
    )
    assert (obs["status"], obs["reason"]) == ("skipped", "belongs to a private prompt")
    _, summary = summarize(svc, message=f"I used {SECRET}")
    assert (summary["status"], summary["reason"]) == ("skipped", "belongs to a private prompt")
    assert count(data, "events", "WHERE kind IN ('observation', 'summarize')") == 0

    # The next, public prompt is recorded again; private parts of its tool calls are stripped.
    _, public = init(svc, prompt="now a public question")
    assert (public["status"], public["promptNumber"]) == ("stored", 2)
    _, queued = observe(
        svc,
        tool_name="Bash",
        tool_input={"command": f"deploy --token <private>{SECRET}</private>"},
        tool_response={"stdout": "deployed"},
    )
    assert queued["status"] == "queued"
    svc.wait_idle()
    assert count(data, "observations") == 1

    running = files_containing(data, SECRET.encode())
    svc.stop()
    stopped = files_containing(data, SECRET.encode())
    logged = SECRET in svc.log_path.read_text(encoding="utf-8", errors="replace")
    assert running == []
    assert stopped == []
    assert not logged
    assert (data / "workbench.db").stat().st_size > 0
    assert not (data / "workbench.db-wal").exists()  # a clean stop checkpoints the WAL


def test_private_part_of_a_prompt_is_stripped_before_storing(service: Service) -> None:
    _, body = init(service, prompt=f"deploy with <private>{SECRET}</private> please")
    assert body["status"] == "stored"
    assert query(service.data_dir, "SELECT prompt_text FROM user_prompts") == [
        ("deploy with  please",)
    ]
    payloads = " ".join(r[0] for r in query(service.data_dir, "SELECT payload FROM events"))
    assert SECRET not in payloads


def test_task_notification_prompt_is_skipped(service: Service) -> None:
    _, body = init(service, prompt="<task-notification>agent 3 finished</task-notification>")
    assert body == {"status": "skipped", "reason": "task notification, not a user prompt"}
    assert count(service.data_dir, "sessions") == 0


# ----- pagination -----------------------------------------------------------------------------
def test_observation_pages_are_newest_first_with_edges(service: Service) -> None:
    ids = [save(service, f"memory number {n}") for n in range(5)]
    newest_first = ids[::-1]

    def page(query_string: str) -> dict[str, Any]:
        status, body = service.get(f"/api/observations?{query_string}")
        assert status == 200, body
        assert set(body) == {"items", "hasMore", "offset", "limit"}
        return body

    first = page("limit=2")
    assert (
        [o["id"] for o in first["items"]],
        first["hasMore"],
        first["offset"],
        first["limit"],
    ) == (newest_first[:2], True, 0, 2)
    second = page("limit=2&offset=2")
    assert ([o["id"] for o in second["items"]], second["hasMore"]) == (newest_first[2:4], True)
    last = page("limit=2&offset=4")
    assert ([o["id"] for o in last["items"]], last["hasMore"]) == (newest_first[4:], False)
    past = page("limit=2&offset=5")
    assert (past["items"], past["hasMore"], past["offset"]) == ([], False, 5)
    exact = page("limit=5")
    assert ([o["id"] for o in exact["items"]], exact["hasMore"]) == (newest_first, False)
    default = page("")
    assert (len(default["items"]), default["limit"], default["offset"]) == (5, 20, 0)


@pytest.mark.parametrize(
    ("query_string", "field"),
    [("limit=0", "limit"), ("limit=101", "limit"), ("offset=-1", "offset"), ("limit=ten", "limit")],
)
def test_page_parameters_out_of_range_are_a_422(
    client: TestClient, query_string: str, field: str
) -> None:
    for route in ("/api/observations", "/api/prompts", "/api/summaries", "/api/sessions"):
        response = client.get(f"{route}?{query_string}")
        assert response.status_code == 422, (route, response.text)
        body = response.json()
        assert body["errors"][0]["field"] == f"query.{field}"
        assert field in body["message"]


def test_prompt_pages_with_project_filter(service: Service) -> None:
    for n in range(3):
        init(service, session=f"a{n}", project="alpha", prompt=f"alpha prompt {n}")
    init(service, session="b0", project="beta", prompt="beta prompt")
    _, body = service.get("/api/prompts?project=alpha&limit=2")
    assert [p["prompt_text"] for p in body["items"]] == ["alpha prompt 2", "alpha prompt 1"]
    assert body["hasMore"] is True
    _, rest = service.get("/api/prompts?project=alpha&limit=2&offset=2")
    assert ([p["prompt_text"] for p in rest["items"]], rest["hasMore"]) == (
        ["alpha prompt 0"],
        False,
    )


# ----- one observation, many observations -----------------------------------------------------
def test_get_one_observation_and_404(service: Service) -> None:
    obs_id = save(service, "the staging URL is https://staging.example", title="Staging URL")
    status, body = service.get(f"/api/observation/{obs_id}")
    assert status == 200
    assert (body["id"], body["title"], body["project"]) == (obs_id, "Staging URL", "manual")

    status, missing = service.get("/api/observation/999999")
    assert status == 404
    assert missing["error"] == "NOT_FOUND"
    assert "no observation with id 999999" in missing["message"]
    status, _ = service.get("/api/observation/abc")
    assert status == 422


def test_batch_accepts_every_id_form_and_options(service: Service) -> None:
    a = save(service, "alpha one", project="alpha")
    b = save(service, "beta one", project="beta")
    c = save(service, "alpha two", project="alpha")

    def batch(body: dict[str, Any]) -> list[int]:
        status, found = service.post("/api/observations/batch", body)
        assert status == 200, found
        return [o["id"] for o in found]

    assert batch({"ids": [a, b, c]}) == [c, b, a]  # date_desc by default
    assert batch({"ids": f"[{a}, {c}]"}) == [c, a]
    assert batch({"ids": f"{a}, {b}"}) == [b, a]
    assert batch({"ids": [a, b, c], "orderBy": "date_asc"}) == [a, b, c]
    assert batch({"ids": [c, a, b], "orderBy": "id_asc"}) == [a, b, c]
    assert batch({"ids": [a, b, c], "limit": 2}) == [c, b]
    assert batch({"ids": [a, b, c], "project": "alpha"}) == [c, a]
    assert batch({"ids": [a, a, 999999]}) == [a]  # duplicates once, unknown ids absent
    assert batch({"ids": []}) == []


@pytest.mark.parametrize(
    ("ids", "words"),
    [
        ("a,b", "ids must be integers, got 'a'"),
        ([1, "x"], "ids must be integers, got 'x'"),
        ([0], "ids must be positive, got 0"),
        ([True], "ids must be integers, got True"),
        ("[1, 2", "is not a valid JSON array"),
        ({"1": 2}, "ids must be an array of integers"),
        (list(range(1, 1002)), "at most 1000 ids per batch"),
    ],
)
def test_batch_bad_ids_are_a_precise_422(client: TestClient, ids: Any, words: str) -> None:
    response = client.post("/api/observations/batch", json={"ids": ids})
    assert response.status_code == 422
    body = response.json()
    assert body["error"] == "INVALID_REQUEST"
    assert body["errors"][0]["field"] == "ids"
    assert words in body["message"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"ids": [1], "orderBy": "random"}, "orderBy"),
        ({"ids": [1], "limit": 0}, "limit"),
        ({"ids": [1], "limit": 1001}, "limit"),
        ({}, "ids"),
    ],
)
def test_batch_rejects_bad_options(client: TestClient, body: dict[str, Any], field: str) -> None:
    response = client.post("/api/observations/batch", json=body)
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == field


# ----- memory/save ----------------------------------------------------------------------------
@pytest.mark.slow
def test_memory_save_returns_an_id_that_can_be_fetched(service: Service) -> None:
    status, body = service.post(
        "/api/memory/save",
        {"text": f"Deploys need the VPN.\n<private>{SECRET}</private>Ask ops.", "project": "ops"},
    )
    assert status == 200
    assert (body["status"], body["success"]) == ("stored", True)
    _, obs = service.get(f"/api/observation/{body['id']}")
    assert obs["title"] == "Deploys need the VPN."
    assert SECRET not in obs["narrative"]
    assert "Ask ops." in obs["narrative"]
    assert (obs["project"], obs["concepts"], obs["generated_by"]) == ("ops", ["manual"], "manual")

    _, again = service.post("/api/memory/save", {"text": obs["narrative"], "project": "ops"})
    assert (again["status"], again["id"]) == ("duplicate", body["id"])


def test_memory_save_of_only_private_text_is_a_422(service: Service) -> None:
    # The request boundary (service/boundary.py) removes the block before the model sees it.
    status, body = service.post("/api/memory/save", {"text": f"<private>{SECRET}</private>"})
    assert status == 422
    assert body["error"] == "INVALID_REQUEST"
    assert "nothing to save" in body["message"]
    assert count(service.data_dir, "observations") == 0
    assert count(service.data_dir, "events") == 0


# ----- stats and projects ---------------------------------------------------------------------
def test_stats_and_projects_shapes(service: Service) -> None:
    init(service, project="alpha")
    observe(service)
    service.wait_idle()
    save(service, "a manual memory", project="alpha")

    status, stats = service.get("/api/stats")
    assert status == 200
    assert set(stats) == {
        "totals",
        "types",
        "platforms",
        "queue",
        "failed",
        "dbSizeBytes",
        "worker",
        "spool",
        "uptimeSeconds",
    }
    assert stats["totals"] == {
        "sessions": 1,
        "prompts": 1,
        "observations": 2,
        "summaries": 0,
        "events": 3,
    }
    assert stats["types"] == {"discovery": 2}
    assert stats["queue"] == {"pending": 0, "claimed": 0, "done": 1, "failed": 0}
    assert stats["failed"] == []
    assert stats["dbSizeBytes"] > 0
    assert stats["worker"] == {"processed": 1, "lastError": None, "compressor": "offline"}
    assert set(stats["spool"]) == {"pending", "rejected", "processed"}

    status, projects = service.get("/api/projects")
    assert status == 200
    assert projects["projects"] == ["alpha"]
    [detail] = projects["details"]
    assert set(detail) == {
        "name",
        "observations",
        "sessions",
        "summaries",
        "lastActivity",
        "folders",
    }
    assert (detail["name"], detail["observations"], detail["sessions"], detail["summaries"]) == (
        "alpha",
        2,
        1,
        0,
    )
    assert detail["lastActivity"].endswith("Z")


# ----- export / import ------------------------------------------------------------------------
def _totals(svc: Service) -> dict[str, int]:
    _, stats = svc.get("/api/stats")
    return {k: v for k, v in stats["totals"].items() if k != "events"}


@pytest.mark.slow
def test_export_then_import_into_a_fresh_service(service: Service, other_service: Service) -> None:
    init(service, "s1", "alpha", "fix the loader")
    observe(service, "s1", tool_use_id="t1")
    observe(
        service,
        "s1",
        tool_name="Edit",
        tool_input=EDIT_INPUT,
        tool_response={"filePath": "/work/proj/loader.py"},
        tool_use_id="t2",
    )
    service.wait_idle()
    summarize(service, "s1")
    init(service, "s2", "beta", "why is CI red")
    save(service, "remember the staging URL")
    service.wait_idle()
    status, document = service.get("/api/export")
    assert status == 200
    expected = _totals(service)
    assert expected == {"sessions": 2, "prompts": 2, "observations": 3, "summaries": 1}

    status, report = other_service.post("/api/import", document)
    assert status == 200, report
    assert {k: v["imported"] for k, v in report["imported"].items()} == expected
    assert _totals(other_service) == expected
    _, again = other_service.get("/api/export")
    strip = ("exported_at",)
    assert {k: v for k, v in again.items() if k not in strip} == {
        k: v for k, v in document.items() if k not in strip
    }

    status, second = other_service.post("/api/import", document)
    assert status == 200
    assert {k: v["imported"] for k, v in second["imported"].items()} == dict.fromkeys(expected, 0)
    assert {k: v["skipped"] for k, v in second["imported"].items()} == expected
    assert _totals(other_service) == expected


def test_export_of_one_project(service: Service) -> None:
    init(service, "s1", "alpha", "alpha prompt")
    init(service, "s2", "beta", "beta prompt")
    _, document = service.get("/api/export?project=beta")
    assert [p["prompt_text"] for p in document["prompts"]] == ["beta prompt"]


@pytest.mark.parametrize(
    ("document", "words"),
    [
        ({"format": "something-else"}, "unknown import format"),
        ({"version": 99}, "unsupported export version"),
        ([1, 2, 3], "expects a JSON object"),
        (
            {"sessions": [{"content_session_id": "ok"}], "observations": [{"title": ""}]},
            "observations.0.title",
        ),
        (
            {
                "sessions": [{"content_session_id": "ok"}],
                "observations": [{"title": "t", "created_at": "last week"}],
            },
            "observations.0.created_at",
        ),
        (
            {
                "sessions": [{"content_session_id": "ok"}],
                "observations": [{"title": "t", "prompt_number": 2**70}],
            },
            "observations.0.prompt_number",
        ),
    ],
)
def test_malformed_import_is_a_4xx_and_writes_nothing(
    client: TestClient, document: Any, words: str
) -> None:
    response = client.post("/api/import", json=document)
    # A field that breaks a rule is a 422 naming it; a file of the wrong kind is a 400.
    assert response.status_code == (422 if "." in words else 400), response.text
    assert words in response.json()["message"]
    totals = client.get("/api/stats").json()["totals"]
    assert totals == {"sessions": 0, "prompts": 0, "observations": 0, "summaries": 0, "events": 0}


def test_malformed_import_on_the_real_service_writes_nothing(service: Service) -> None:
    init(service, "s1", "alpha", "already here")
    before = _totals(service)
    document = {
        "sessions": [{"content_session_id": "new-session", "project": "p"}],
        "prompts": [
            {"content_session_id": "new-session", "prompt_number": 1, "prompt_text": "would be new"}
        ],
        "observations": [{"title": "t", "discovery_tokens": 2**70}],
    }
    status, body = service.post("/api/import", document)
    assert status == 422, body
    assert "observations.0.discovery_tokens" in body["message"]
    assert _totals(service) == before
    assert count(service.data_dir, "sessions", "WHERE content_session_id = 'new-session'") == 0
