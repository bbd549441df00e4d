"""The viewer's page and APIs against a real service: assets and CSP, delete, settings, history.

- The page: served at ``/`` with a strict CSP; assets with their content types; nothing
  outside ``service/static/`` reachable; no inline script, style or handler in the HTML, and
  no ``innerHTML``-style sink in the script (stored memories are untrusted text).
- ``DELETE /api/observation/{id}``: gone from the API, from full-text search, from vectors,
  never derived again by ``recompress`` (tombstone), and named corpora drop it on rebuild.
- ``GET``/``PUT /api/settings``: bounds and types refused with the field's name, nothing
  written on a refusal, live values applied at once (``excluded_projects`` skips the next
  session), restart-only keys and env overrides reported.
- Writes from another origin are refused (DELETE and PUT).
- ``GET /api/observation/{id}/injections`` reads the ledger.
"""

from __future__ import annotations

import http.client
import json
import re
import sqlite3
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, Service, base_env, free_port, http_json
from workbench.store import schema
from workbench.store.connection import connect

STATIC = ROOT / "service" / "static"
EVIL = "http://evil.example"


@pytest.fixture(scope="module")
def page_service(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One service for the read-only page and asset tests (a start costs seconds)."""
    data = tmp_path_factory.mktemp("viewer-page") / "data"
    data.mkdir()
    port = free_port()
    svc = Service(data_dir=data, port=port, env=base_env(data, port, WORKBENCH_EMBEDDER="none"))
    yield svc.start()
    svc.stop()


def request(svc: Service, method: str, path: str, body: Any = None, **headers: str):
    return http_json(method, svc.url + path, body, headers=headers)


def raw_get(svc: Service, path: str, **headers: str) -> http.client.HTTPResponse:
    """A GET with the path sent exactly as written (no client-side normalisation)."""
    conn = http.client.HTTPConnection("127.0.0.1", svc.port, timeout=10)
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    response.read()
    conn.close()
    return response


def save(svc: Service, text: str, title: str | None = None, project: str = "viewer") -> int:
    body: dict[str, Any] = {"text": text, "project": project}
    if title:
        body["title"] = title
    status, result = svc.post("/api/memory/save", body)
    assert status == 200, result
    return int(result["id"])


def search_ids(svc: Service, query: str, mode: str = "fts") -> list[int]:
    status, body = svc.get(f"/api/search?query={query}&format=json&mode={mode}&type=observations")
    assert status == 200, body
    return [hit["id"] for hit in body["observations"]]


# ----- the page -------------------------------------------------------------------------------
def test_page_is_served_with_a_strict_content_security_policy(page_service: Service):
    response = raw_get(page_service, "/")
    assert response.status == 200
    assert response.getheader("content-type") == "text/html; charset=utf-8"
    csp = response.getheader("content-security-policy")
    directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["script-src"] == "'self'"
    assert directives["style-src"] == "'self'"
    assert directives["object-src"] == "'none'"
    assert directives["frame-ancestors"] == "'none'"
    assert "unsafe" not in csp
    assert response.getheader("x-content-type-options") == "nosniff"


@pytest.mark.parametrize(
    ("path", "content_type"),
    [
        ("/static/app.js", "text/javascript; charset=utf-8"),
        ("/static/app.css", "text/css; charset=utf-8"),
        ("/static/favicon.svg", "image/svg+xml"),
        ("/favicon.ico", "image/svg+xml"),
    ],
)
def test_assets_have_their_content_types(page_service: Service, path: str, content_type: str):
    response = raw_get(page_service, path)
    assert response.status == 200
    assert response.getheader("content-type") == content_type
    assert "default-src 'self'" in response.getheader("content-security-policy")


def test_assets_revalidate_with_an_etag(page_service: Service):
    first = raw_get(page_service, "/static/app.js")
    etag = first.getheader("etag")
    assert etag
    assert first.getheader("cache-control") == "no-cache"
    assert raw_get(page_service, "/static/app.js", **{"If-None-Match": etag}).status == 304


@pytest.mark.parametrize(
    "path",
    [
        "/static/nope.js",
        "/static/..%2Fapp.py",
        "/static/..%2F..%2Fpyproject.toml",
        "/static/%2e%2e/app.py",
        "/static/../routes/viewer.py",
        "/static/",
    ],
)
def test_nothing_outside_the_static_folder_is_served(page_service: Service, path: str):
    response = raw_get(page_service, path)
    assert response.status == 404


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []
        self.in_script = False
        self.urls: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        handlers = sorted(n for n in names if n.startswith("on"))
        if handlers:
            self.problems.append(f"<{tag}> has inline handlers {handlers}")
        if "style" in names:
            self.problems.append(f"<{tag}> has an inline style")
        if tag == "style":
            self.problems.append("a <style> element")
        if tag == "script":
            if "src" not in names:
                self.problems.append("an inline <script>")
            self.in_script = True
        self.urls += [v for n, v in attrs if n in ("src", "href") and v]

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self.in_script = False

    def handle_data(self, data: str) -> None:
        if self.in_script and data.strip():
            self.problems.append("script content inline")


def test_the_page_has_no_inline_script_style_or_handler():
    parser = _Markup()
    parser.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    assert parser.problems == []
    assert all(url.startswith(("/static/", "#")) for url in parser.urls), parser.urls


def test_the_script_never_writes_markup_and_nothing_loads_from_the_network():
    script = (STATIC / "app.js").read_text(encoding="utf-8")
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
    ):
        assert sink not in script, f"app.js uses {sink}: render memories with textContent"
    for path in STATIC.iterdir():
        text = path.read_text(encoding="utf-8")
        urls = set(re.findall(r"https?://[^\s'\"<>)]+", text)) - {"http://www.w3.org/2000/svg"}
        assert urls == set(), f"{path.name} refers to {urls}: the page must work offline"


# ----- delete ---------------------------------------------------------------------------------
def test_delete_removes_the_observation_from_the_api_and_full_text_search(service: Service):
    keep = save(service, "zebrafish keeper note stays")
    gone = save(service, "zebrafish wrong memory to forget")
    assert set(search_ids(service, "zebrafish")) == {keep, gone}

    status, body = request(service, "DELETE", f"/api/observation/{gone}")
    assert status == 200, body
    assert body["deleted"] is True
    assert body["id"] == gone
    assert body["corpora"] == []
    assert service.get(f"/api/observation/{gone}")[0] == 404
    assert search_ids(service, "zebrafish") == [keep]
    _, page = service.get("/api/observations?limit=100")
    assert gone not in [o["id"] for o in page["items"]]

    status, again = request(service, "DELETE", f"/api/observation/{gone}")
    assert status == 404
    assert "already deleted" in again["message"]
    status, unknown = request(service, "DELETE", "/api/observation/999999")
    assert status == 404
    assert "no observation" in unknown["message"]


def test_a_deleted_observation_is_never_derived_again(service: Service):
    """The events log keeps the tool call; recompress must not resurrect what was deleted."""
    sid = "delete-session"
    service.post(
        "/api/sessions/init",
        {"contentSessionId": sid, "project": "acme-api", "prompt": "look at the auth module"},
    )
    for path in ("/src/acme/auth.py", "/src/acme/tokens.py"):
        status, _ = service.post(
            "/api/sessions/observations",
            {
                "contentSessionId": sid,
                "tool_name": "Read",
                "tool_input": {"file_path": f"/home/dev/code/acme-api{path}"},
                "tool_response": {"type": "text", "file": {"filePath": path, "content": "x = 1\n"}},
                "cwd": "/home/dev/code/acme-api",
            },
        )
        assert status == 200
    service.wait_idle()
    _, page = service.get("/api/observations?project=acme-api")
    assert len(page["items"]) == 2
    victim = next(o for o in page["items"] if "auth.py" in o["title"])

    assert request(service, "DELETE", f"/api/observation/{victim['id']}")[0] == 200
    status, report = service.post("/api/recompress", {})
    assert status == 200, report
    _, page = service.get("/api/observations?project=acme-api")
    titles = [o["title"] for o in page["items"]]
    assert titles == [t for t in titles if "auth.py" not in t]
    assert len(titles) == 1


def test_delete_takes_it_out_of_the_corpora_that_held_it(service: Service):
    obs_id = save(service, "corpus member to delete", project="corpus-p")
    save(service, "corpus member to keep", project="corpus-p")
    status, built = service.post("/api/corpus", {"name": "hygiene", "project": "corpus-p"})
    assert status == 200, built
    assert built["stats"]["observation_count"] == 2

    status, body = request(service, "DELETE", f"/api/observation/{obs_id}")
    assert status == 200
    assert body["corpora"] == []  # none still holds it: forget rewrote the corpus
    assert {"place": "corpora", "items": ["hygiene"], "howToRemove": None} in body["copies"][
        "cleaned"
    ]
    status, shown = service.get("/api/corpus/hygiene")
    assert status == 200, shown
    assert shown["stats"]["observation_count"] == 1
    status, rebuilt = service.post("/api/corpus/hygiene/rebuild", {})
    assert status == 200, rebuilt
    assert rebuilt["stats"]["observation_count"] == 1
    assert rebuilt["removed"] == 0


@pytest.mark.slow
def test_delete_removes_the_vector_and_its_cached_embedding(make_service, data_dir: Path):
    svc = make_service(WORKBENCH_EMBEDDER="minilm")
    keep = save(svc, "the deploy pipeline uploads wheels to the artifact store")
    gone = save(svc, "the staging database password was rotated last week")
    status = _wait_index(svc, lambda s: s["indexed"] == 2)
    if status["state"] != "ready":
        pytest.skip(f"embeddings unavailable here: {status['reason']}")
    assert gone in search_ids(svc, "database%20password%20rotation", mode="vector")

    assert request(svc, "DELETE", f"/api/observation/{gone}")[1]["vectors"] == "removing"
    _wait_index(svc, lambda s: s["indexed"] == 1)
    assert gone not in search_ids(svc, "database%20password%20rotation", mode="vector")
    assert keep in search_ids(svc, "deploy%20wheels", mode="vector")
    # The cached embedding goes in the indexer's pass after the vector's: wait for it (a
    # loaded box once read the count between the two passes).
    assert _embeddings_settle(data_dir / "workbench.db", 1) == 1


def _embeddings_settle(db_path: Path, want: int, timeout: float = 120.0) -> int:
    """The embeddings cache's row count once it is ``want`` (or the last count seen)."""
    deadline = time.monotonic() + timeout
    while True:
        db = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
        try:
            count = int(db.execute("SELECT count(*) FROM embeddings").fetchone()[0])
        finally:
            db.close()
        if count == want or time.monotonic() > deadline:
            return count
        time.sleep(0.1)


def _wait_index(svc: Service, done: Any, timeout: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, status = svc.get("/api/index/status")
        if status["state"] in ("unavailable", "disabled", "error") or (
            status["state"] == "ready" and done(status)
        ):
            return status
        time.sleep(0.1)
    raise AssertionError(f"index did not settle in {timeout}s: {status}")


def test_the_tombstone_table_has_exact_columns_and_keeps_no_text(tmp_path: Path):
    conn = connect(tmp_path / "t.db")
    try:
        schema.apply(conn, "t.db")
        columns = {
            r["name"]: r["type"] for r in conn.execute("PRAGMA table_info(deleted_observations)")
        }
    finally:
        conn.close()
    assert columns == {
        "content_hash": "TEXT",
        "observation_id": "INTEGER",
        "event_id": "INTEGER",
        "content_session_id": "TEXT",
        "project": "TEXT",
        "deleted_at": "TEXT",
        "deleted_at_epoch": "INTEGER",
        "prompt_number": "INTEGER",  # m007: where it came from, to refuse older exports
        "created_at_epoch": "INTEGER",
    }


# ----- cross-origin writes --------------------------------------------------------------------
def test_writes_from_another_origin_are_refused(service: Service, data_dir: Path):
    obs_id = save(service, "a memory another site wants gone")
    status, body = request(service, "DELETE", f"/api/observation/{obs_id}", Origin=EVIL)
    assert status == 403
    assert body["error"] == "FOREIGN_ORIGIN"
    assert service.get(f"/api/observation/{obs_id}")[0] == 200

    status, body = request(
        service, "PUT", "/api/settings", {"excluded_projects": ["*"]}, Origin=EVIL
    )
    assert status == 403
    assert body["error"] == "FOREIGN_ORIGIN"
    assert not (data_dir / "settings.json").exists()

    local = f"http://127.0.0.1:{service.port}"
    assert request(service, "PUT", "/api/settings", {"context_full": 2}, Origin=local)[0] == 200
    assert request(service, "DELETE", f"/api/observation/{obs_id}", Origin=local)[0] == 200


# ----- settings -------------------------------------------------------------------------------
def test_settings_lists_the_editable_keys_with_their_bounds(page_service: Service):
    # Only reads; the page service's settings file is never written (the refusals check it).
    status, body = page_service.get("/api/settings")
    assert status == 200
    fields = {f["name"]: f for f in body["fields"]}
    assert fields["context_observations"] | {"help": "", "label": ""} == {
        "name": "context_observations",
        "group": "Context injection",
        "label": "",
        "help": "",
        "apply": "live",
        "type": "integer",
        "value": 50,
        "default": 50,
        "saved": None,
        "env": None,
        "minimum": 0,
        "maximum": 500,
    }
    assert fields["excluded_projects"]["type"] == "list"
    assert fields["compressor"]["options"] == ["auto", "offline", "claude", "openai_compat"]
    assert fields["compressor"]["apply"] == "restart"
    assert body["settings"]["context_summaries"] == 10
    assert "port" not in fields
    assert "anthropic_api_key" not in fields
    assert body["file"].endswith("settings.json")


@pytest.mark.parametrize(
    ("update", "field", "words"),
    [
        ({"context_observations": 9999}, "context_observations", "less than or equal to 500"),
        ({"context_full": -1}, "context_full", "greater than or equal to 0"),
        ({"context_summaries": True}, "context_summaries", "whole number"),
        ({"context_summaries": "ten"}, "context_summaries", "whole number"),
        ({"context_summaries": 2.5}, "context_summaries", "whole number"),
        ({"prompt_injection": "yes"}, "prompt_injection", "true or false"),
        ({"context_full_field": "poetry"}, "context_full_field", "narrative"),
        ({"excluded_projects": [1, 2]}, "excluded_projects", "list of names"),
        ({"skipped_tools": {"a": 1}}, "skipped_tools", "list of names"),
        ({"excluded_projects": ["x" * 501]}, "excluded_projects", "longer than 500"),
    ],
)
def test_bad_setting_values_are_refused_with_the_rule(
    page_service: Service, update: dict[str, Any], field: str, words: str
):
    service = page_service  # refusals write nothing, so one service serves them all
    data_dir = service.data_dir
    status, body = request(service, "PUT", "/api/settings", {"context_full": 3, **update})
    assert status == 422, body
    assert body["error"] == "INVALID_SETTINGS"
    assert [e["field"] for e in body["errors"]] == [field]
    assert words in body["errors"][0]["message"]
    assert words in body["message"]
    assert not (data_dir / "settings.json").exists()  # nothing written, not even context_full
    assert service.get("/api/settings")[1]["settings"]["context_full"] == 0


@pytest.mark.parametrize("body", [{"port": 1}, {"data_dir": "/tmp/x"}, {}, [1, 2], "text"])
def test_keys_that_are_not_editable_are_refused(page_service: Service, body: Any):
    status, answer = request(page_service, "PUT", "/api/settings", body)
    assert status == 400, answer
    assert answer["error"] == "SETTING_NOT_EDITABLE"
    assert not (page_service.data_dir / "settings.json").exists()


def test_a_live_setting_applies_at_once_and_is_written_to_the_file(
    service: Service, data_dir: Path
):
    status, body = request(
        service,
        "PUT",
        "/api/settings",
        {"excluded_projects": "secret-*, scratch", "context_observations": 30},
    )
    assert status == 200, body
    assert body["saved"] == {
        "excluded_projects": ["secret-*", "scratch"],
        "context_observations": 30,
    }
    assert sorted(body["applied"]) == ["context_observations", "excluded_projects"]
    assert body["restartRequired"] == []
    assert body["overridden"] == {}
    assert json.loads((data_dir / "settings.json").read_text()) == body["saved"]

    status, skipped = service.post(
        "/api/sessions/init",
        {"contentSessionId": "s-secret", "project": "secret-recipes", "prompt": "hello"},
    )
    assert status == 200
    assert skipped["status"] == "skipped"
    assert "exclude" in skipped["reason"]
    assert service.get("/api/settings")[1]["settings"]["context_observations"] == 30


def test_a_restart_only_setting_is_saved_and_reported(service: Service):
    status, body = request(service, "PUT", "/api/settings", {"compressor": "offline"})
    assert status == 200, body
    assert body["restartRequired"] == ["compressor"]
    assert body["applied"] == []
    assert "restart" in body["message"]
    fields = {f["name"]: f for f in service.get("/api/settings")[1]["fields"]}
    assert fields["compressor"]["saved"] == "offline"
    assert fields["compressor"]["value"] == "auto"


def test_an_environment_variable_wins_and_the_answer_says_so(make_service):
    svc = make_service(WORKBENCH_CONTEXT_SUMMARIES="3")
    status, body = request(svc, "PUT", "/api/settings", {"context_summaries": 7})
    assert status == 200, body
    assert body["overridden"] == {"context_summaries": "WORKBENCH_CONTEXT_SUMMARIES"}
    assert "WORKBENCH_CONTEXT_SUMMARIES" in body["message"]
    fields = {f["name"]: f for f in svc.get("/api/settings")[1]["fields"]}
    assert fields["context_summaries"]["value"] == 3
    assert fields["context_summaries"]["env"] == "WORKBENCH_CONTEXT_SUMMARIES"
    assert fields["context_summaries"]["saved"] == 7


# ----- injection history ----------------------------------------------------------------------
def test_injection_history_counts_injections_and_fetches(service: Service):
    obs_id = save(service, "how the ledger counts a memory", project="ledger-p")
    status, empty = service.get(f"/api/observation/{obs_id}/injections")
    assert status == 200
    assert empty["injected"]["count"] == 0
    assert empty["fetched"]["count"] == 0

    for session in ("s-one", "s-two"):
        status, _ = service.get(f"/api/context/inject?projects=ledger-p&contentSessionId={session}")
        assert status == 200
    status, _ = service.post(
        "/api/observations/batch", {"ids": [obs_id], "source": "mcp", "contentSessionId": "s-two"}
    )
    assert status == 200

    status, history = service.get(f"/api/observation/{obs_id}/injections")
    assert status == 200
    injected = history["injected"]
    assert injected["count"] == 2
    assert injected["sessions"] == 2
    assert injected["byKind"] == {"session_start": 2}
    assert [i["contentSessionId"] for i in injected["items"]] == ["s-two", "s-one"]
    assert injected["first"]
    assert injected["last"]
    assert history["fetched"]["count"] == 1
    assert history["fetched"]["items"][0]["source"] == "mcp"
    assert service.get("/api/observation/987654/injections")[0] == 404
