"""Over HTTP: each search hit says which rankers found it, and prompt injection has a floor.

- ``GET /api/search?format=json``: every hit carries ``rankers`` (``["fts"]``, ``["vector"]``
  or ``["fts", "vector"]``); the text index (what the MCP ``search`` tool returns) tags
  hybrid hits ``[fts+vector]``. Full text only (``WORKBENCH_EMBEDDER=none``): ``["fts"]``.
- UserPromptSubmit, as Claude Code runs it (the real hook, a real payload): with
  ``prompt_injection`` on, a prompt about something remembered gets the memory; a prompt
  about something new gets nothing, although the vector ranker still has nearest hits for
  it: they are below ``prompt_injection_min_similarity``.

The MiniLM service (~6 s of model load) is shared by the module's MiniLM tests.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.conftest import Service, api_search, base_env, free_port
from tests.hook_harness import load_payload, run_hook
from workbench.settings import Settings

PROJECT = "acme-api"  # the project of the user_prompt_submit fixture's cwd
MEMORIES = [
    (
        "Expired tokens passed the login check",
        "test_expired_token_rejected failed after the token refactor: check_token compared "
        "the expiry in local time. It now compares UTC timestamps.",
    ),
    (
        "Refunds issued twice on webhook retries",
        "The payment provider re-sent refund webhooks after a timeout; idempotency keys stop "
        "the duplicate refunds.",
    ),
    ("Dark palette follows the operating system", "The UI switches colours with the OS theme."),
    ("Docker image shrunk with a multi-stage build", "The image went from 1.2 GB to 180 MB."),
    ("Nightly backup job moved to 02:00", "Backups overlapped the report export at midnight."),
]
NEW_TOPIC = "Write a short limerick about penguins skating on a frozen lake, please."


def save_all(svc: Service) -> dict[str, int]:
    ids = {}
    for title, text in MEMORIES:
        status, body = svc.post(
            "/api/memory/save", {"title": title, "text": text, "project": PROJECT}
        )
        assert status == 200, body
        ids[title] = int(body["id"])
    return ids


def test_full_text_hits_say_fts(make_service: Any) -> None:
    svc = make_service()  # WORKBENCH_EMBEDDER=none
    ids = save_all(svc)
    body = api_search(svc, "expired login token", format="json")
    assert body["mode"] == "fts"
    assert body["observations"][0]["id"] == ids[MEMORIES[0][0]]
    hits = body["observations"] + body["sessions"] + body["prompts"]
    assert hits
    assert all(hit["rankers"] == ["fts"] for hit in hits)


@pytest.fixture(scope="module")
def semantic(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, dict[str, int]]]:
    data = tmp_path_factory.mktemp("semantic") / "data"
    data.mkdir()
    port = free_port()
    # Module-scoped, so set up before the autouse env fixture: say everything here.
    env = base_env(data, port, WORKBENCH_EMBEDDER="minilm", WORKBENCH_PROMPT_INJECTION="true")
    svc = Service(data_dir=data, port=port, env=env).start()
    try:
        ids = save_all(svc)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            _, health = svc.get("/api/health")
            embeddings = health["embeddings"]
            if embeddings["state"] == "ready" and embeddings["indexed"] >= len(MEMORIES):
                break
            time.sleep(0.2)
        else:
            raise AssertionError(f"the memories were never indexed: {health['embeddings']}")
        yield svc, ids
    finally:
        svc.stop()


@pytest.mark.slow
def test_hybrid_hits_say_which_rankers_found_them(semantic: tuple[Service, dict[str, int]]) -> None:
    svc, ids = semantic
    body = api_search(svc, "expired login token", format="json", type="observations")
    assert body["mode"] == "hybrid", body
    by_id = {hit["id"]: hit["rankers"] for hit in body["observations"]}
    assert body["observations"][0]["id"] == ids[MEMORIES[0][0]]
    assert by_id[ids[MEMORIES[0][0]]] == ["fts", "vector"]  # both found it
    assert by_id[ids["Dark palette follows the operating system"]] == ["vector"]  # no shared word
    text = api_search(svc, "expired login token", type="observations")
    assert isinstance(text, str)
    assert "Expired tokens passed the login check  [fts+vector]  (~" in text
    assert "Dark palette follows the operating system  [vector]  (~" in text
    single = api_search(svc, "expired login token", format="json", mode="vector")
    assert {tuple(hit["rankers"]) for hit in single["observations"]} == {("vector",)}


def test_prompt_injection_skips_memories_below_the_similarity_floor(
    semantic: tuple[Service, dict[str, int]],
) -> None:
    svc, ids = semantic
    payload = load_payload("user_prompt_submit")  # about the expired-token test failing
    output = run_hook("user_prompt_submit", payload, svc.env).output()
    assert output is not None
    context = output["hookSpecificOutput"]["additionalContext"]
    assert f"#{ids[MEMORIES[0][0]]} " in context
    assert "Expired tokens passed the login check" in context

    # Something new: the ranker still has nearest memories, but none is similar enough.
    nearest = api_search(svc, NEW_TOPIC, format="json", mode="vector", type="observations")
    assert len(nearest["observations"]) == len(MEMORIES)
    floor = Settings.model_fields["prompt_injection_min_similarity"].default
    assert all(hit["score"] < floor for hit in nearest["observations"]), nearest
    other = {**payload, "session_id": "b7c1d2e3-0000-4000-8000-000000000001", "prompt": NEW_TOPIC}
    assert run_hook("user_prompt_submit", other, svc.env).output() == {}
