"""The replies' contract (issue 13, item 1): documented in /openapi.json, and kept by the service.

Covered so far: the routes in ``MODELLED`` (sessions and the hook routes, prompts,
observations with delete/forget/injections, summaries, search, timeline, projects, health,
analytics, queue, index, corpora, the knowledge agent, settings, memory, export/import), that
is every JSON route. For each:
- its 2xx response in ``/openapi.json`` has a schema that names its fields (a ``$ref`` to a
  model or a typed array), not a bare ``object``;
- on a real service, seeded through the real hook routes and worker, its reply validates
  against the same ``workbench.api_models`` class, and carries no key the model does not
  declare (so the document cannot fall behind the wire).
The text routes (``/api/context/*``) and the event stream (``/stream``) document their
media type instead (``TEXT_OR_STREAM``); the viewer's page and assets are not in the schema
(``tests/test_routes_layout.py`` says why). ``test_every_documented_route_is_covered`` keeps
the lists complete.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from pydantic import BaseModel, TypeAdapter

from tests.conftest import Service, http_json
from workbench.api_models.agent import Answer, Primed
from workbench.api_models.analytics import Report, StoreOverview
from workbench.api_models.corpora import (
    CorpusBuilt,
    CorpusDeleted,
    CorpusInfo,
    CorpusList,
    CorpusRebuilt,
)
from workbench.api_models.forget import Deleted, Forgotten
from workbench.api_models.health import Health, Readiness
from workbench.api_models.index import IndexStatus, ReindexQueued
from workbench.api_models.ingest import IngestReply, MemorySaved
from workbench.api_models.ledger import InjectionHistory
from workbench.api_models.observations import ObservationsByFile, ObservationView
from workbench.api_models.pages import Page
from workbench.api_models.projects import Projects
from workbench.api_models.queue import FailedEvents, Recompressed, Requeued, SpoolReplay
from workbench.api_models.search import SearchReply, Timeline
from workbench.api_models.settings import SettingsChanged, SettingsView
from workbench.api_models.stale import StaleReply
from workbench.api_models.team import TeamObservationReply, TeamObservationsBatch
from workbench.api_models.transcripts import TranscriptImported
from workbench.api_models.transfer import ExportDocument, Imported
from workbench.models import Observation, Prompt, Session, Summary

MODELLED: dict[tuple[str, str], Any] = {
    ("GET", "/api/sessions"): Page[Session],
    ("GET", "/api/prompts"): Page[Prompt],
    ("GET", "/api/observations"): Page[Observation],
    ("GET", "/api/observation/{observation_id}"): ObservationView,
    ("POST", "/api/observations/batch"): list[ObservationView],
    ("GET", "/api/observations/by-file"): ObservationsByFile,
    ("GET", "/api/summaries"): Page[Summary],
    ("GET", "/api/search"): SearchReply,
    ("GET", "/api/timeline"): Timeline,
    ("GET", "/api/projects"): Projects,
    ("GET", "/api/health"): Health,
    ("GET", "/api/readiness"): Readiness,
    ("POST", "/api/sessions/init"): IngestReply,
    ("POST", "/api/sessions/observations"): IngestReply,
    ("POST", "/api/sessions/summarize"): IngestReply,
    ("POST", "/api/sessions/end"): IngestReply,
    ("POST", "/api/memory/save"): MemorySaved,
    ("DELETE", "/api/observation/{observation_id}"): Deleted,
    ("POST", "/api/observations/forget"): Forgotten,
    ("GET", "/api/observation/{observation_id}/injections"): InjectionHistory,
    ("GET", "/api/stats"): StoreOverview,
    **{
        ("GET", f"/api/stats/{r}"): Report
        for r in ("economics", "types", "activity", "files", "concepts", "cooccurrence")
    },
    ("GET", "/api/stats/sessions"): Report,
    ("GET", "/api/stats/roi"): Report,
    ("POST", "/api/spool/replay"): SpoolReplay,
    ("GET", "/api/queue/failed"): FailedEvents,
    ("POST", "/api/queue/retry"): Requeued,
    ("POST", "/api/recompress"): Recompressed,
    ("POST", "/api/reindex"): ReindexQueued,
    ("GET", "/api/index/status"): IndexStatus,
    ("POST", "/api/corpus"): CorpusBuilt,
    ("GET", "/api/corpus"): CorpusList,
    ("GET", "/api/corpus/{name}"): CorpusInfo,
    ("POST", "/api/corpus/{name}/rebuild"): CorpusRebuilt,
    ("DELETE", "/api/corpus/{name}"): CorpusDeleted,
    ("POST", "/api/corpus/{name}/prime"): Primed,
    ("POST", "/api/corpus/{name}/reprime"): Primed,
    ("POST", "/api/corpus/{name}/query"): Answer,
    ("GET", "/api/export"): ExportDocument,
    ("POST", "/api/import"): Imported,
    ("POST", "/api/transcripts/import"): TranscriptImported,
    ("POST", "/api/stale"): StaleReply,
    ("GET", "/api/settings"): SettingsView,
    ("PUT", "/api/settings"): SettingsChanged,
    ("GET", "/api/team/observation/{ref}"): TeamObservationReply,
    ("POST", "/api/team/observations/batch"): TeamObservationsBatch,
}
TEXT_OR_STREAM = {
    ("GET", "/api/context/inject"): "text/plain",
    ("GET", "/api/context/prompt"): "text/plain",
    ("GET", "/api/context/file"): "text/plain",
    ("GET", "/stream"): "text/event-stream",
}
PROJECT = "acme-api"
SESSION = "contract-session"
CWD = "/home/dev/code/acme-api"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    from service.app import create_app
    from workbench.settings import load_settings

    return create_app(load_settings(tmp_path_factory.mktemp("contract")), pid_lock=False)


def success_schema(spec: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    responses = spec["paths"][path][method.lower()]["responses"]
    code = next(c for c in responses if c.startswith("2"))
    return responses[code]["content"]["application/json"]["schema"]


def names_its_fields(schema: dict[str, Any]) -> bool:
    if "$ref" in schema:
        return True
    if schema.get("type") == "array":
        return names_its_fields(schema.get("items", {}))
    return bool(schema.get("properties"))


@pytest.mark.parametrize(("method", "path"), sorted(MODELLED), ids=lambda v: str(v))
def test_the_reply_is_documented_with_its_fields(app: FastAPI, method: str, path: str) -> None:
    schema = success_schema(app.openapi(), method, path)
    assert names_its_fields(schema), schema


def test_a_bare_object_is_not_documentation() -> None:
    """The check above is not vacuous: a reply shaped by hand (``dict[str, Any]``) fails it."""
    from fastapi import APIRouter

    probe = FastAPI()
    router = APIRouter()

    @router.get("/probe")
    def shaped_by_hand() -> dict[str, Any]:
        return {}

    probe.include_router(router)
    assert not names_its_fields(success_schema(probe.openapi(), "GET", "/probe"))


def test_every_documented_route_is_covered(app: FastAPI) -> None:
    documented = {
        (method.upper(), path)
        for path, operations in app.openapi()["paths"].items()
        for method in operations
    }
    assert documented - {("GET", "/openapi.json")} == set(MODELLED) | set(TEXT_OR_STREAM)


@pytest.mark.parametrize(("method", "path"), sorted(TEXT_OR_STREAM), ids=lambda v: str(v))
def test_text_and_stream_routes_document_their_media_type(
    app: FastAPI, method: str, path: str
) -> None:
    responses = app.openapi()["paths"][path][method.lower()]["responses"]
    assert TEXT_OR_STREAM[(method, path)] in responses["200"]["content"]


# ----- the real service keeps the contract --------------------------------------------------


def undeclared_keys(model: type[BaseModel], data: dict[str, Any]) -> set[str]:
    """Top-level keys of ``data`` that ``model`` has no field (or alias) for."""
    known = {f.alias or name for name, f in model.model_fields.items()} | set(model.model_fields)
    return set(data) - known


def check(shape: Any, body: Any) -> None:
    TypeAdapter(shape).validate_python(body)
    model = shape if isinstance(shape, type) and issubclass(shape, BaseModel) else None
    if model is not None:
        assert undeclared_keys(model, body) == set()
        for name, field in model.model_fields.items():
            value = body.get(field.alias or name)
            item_type = getattr(field.annotation, "__args__", (None,))[0]
            if isinstance(value, list) and value and isinstance(value[0], dict):
                if isinstance(item_type, type) and issubclass(item_type, BaseModel):
                    assert undeclared_keys(item_type, value[0]) == set(), name


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A real service whose rows came through the hook routes and the worker."""
    from tests.conftest import base_env, free_port

    data_dir = tmp_path_factory.mktemp("contract-data")
    port = free_port()
    svc = Service(data_dir=data_dir, port=port, env=base_env(data_dir, port)).start()
    try:
        init = {"contentSessionId": SESSION, "project": PROJECT, "prompt": "fix the token bug"}
        status, reply = svc.post("/api/sessions/init", init)
        assert status == 200
        check(IngestReply, reply)
        for path in ("/src/acme/auth.py", "/src/acme/tokens.py"):
            status, reply = svc.post(
                "/api/sessions/observations",
                {
                    "contentSessionId": SESSION,
                    "tool_name": "Read",
                    "tool_input": {"file_path": f"{CWD}{path}"},
                    "tool_response": {"type": "text", "file": {"filePath": path, "content": "x"}},
                    "cwd": CWD,
                },
            )
            assert status == 200
            check(IngestReply, reply)
        summarize = {"contentSessionId": SESSION, "last_assistant_message": "fixed the token"}
        status, reply = svc.post("/api/sessions/summarize", summarize)
        assert status == 200
        check(IngestReply, reply)
        svc.wait_idle()
        yield svc
    finally:
        svc.stop()


def test_the_main_get_routes_answer_what_their_models_declare(seeded: Service) -> None:
    status, page = seeded.get(f"/api/observations?project={PROJECT}")
    assert status == 200
    check(Page[Observation], page)
    assert len(page["items"]) == 2
    first = page["items"][0]["id"]
    status, one = seeded.get(f"/api/observation/{first}")
    assert status == 200
    check(ObservationView, one)
    assert undeclared_keys(ObservationView, one) == set()
    for path, shape in [
        ("/api/sessions", Page[Session]),
        ("/api/prompts", Page[Prompt]),
        ("/api/summaries", Page[Summary]),
        (f"/api/observations/by-file?path={CWD}/src/acme/auth.py&cwd={CWD}", ObservationsByFile),
        ("/api/search?query=token&format=json", SearchReply),
        (f"/api/search?project={PROJECT}&format=json", SearchReply),
        (f"/api/timeline?anchor={first}", Timeline),
        ("/api/projects", Projects),
        ("/api/health", Health),
        ("/api/readiness", Readiness),
    ]:
        status, body = seeded.get(path)
        assert status == 200, (path, body)
        check(shape, body)
        assert body, path


def test_the_list_pages_are_not_empty_so_the_check_saw_rows(seeded: Service) -> None:
    for path in ("/api/sessions", "/api/prompts", "/api/summaries", "/api/projects"):
        status, body = seeded.get(path)
        assert status == 200
        assert body.get("items") or body.get("projects"), path


def test_batch_answers_a_list_of_observations(seeded: Service) -> None:
    _, page = seeded.get("/api/observations")
    ids = [o["id"] for o in page["items"]]
    status, found = seeded.post("/api/observations/batch", {"ids": ids})
    assert status == 200
    check(list[ObservationView], found)
    assert {o["id"] for o in found} == set(ids)
    assert all(undeclared_keys(ObservationView, o) == set() for o in found)


def test_analytics_queue_index_settings_and_ledger_answer_their_models(seeded: Service) -> None:
    _, page = seeded.get("/api/observations")
    first = page["items"][0]["id"]
    for path, shape in [
        ("/api/stats", StoreOverview),
        ("/api/stats/types", Report),
        ("/api/stats/activity", Report),
        ("/api/stats/economics", Report),
        ("/api/queue/failed", FailedEvents),
        ("/api/settings", SettingsView),
        (f"/api/observation/{first}/injections", InjectionHistory),
        ("/api/index/status", IndexStatus),
    ]:
        status, body = seeded.get(path)
        assert status == 200, (path, body)
        check(shape, body)
    status, body = seeded.post("/api/spool/replay", {})
    assert status == 200
    check(SpoolReplay, body)


def test_corpus_routes_answer_their_models(seeded: Service) -> None:
    status, built = seeded.post("/api/corpus", {"name": "contract", "project": PROJECT})
    assert status == 200, built
    check(CorpusBuilt, built)
    for path, shape in [("/api/corpus", CorpusList), ("/api/corpus/contract", CorpusInfo)]:
        status, body = seeded.get(path)
        assert status == 200, (path, body)
        check(shape, body)
    status, rebuilt = seeded.post("/api/corpus/contract/rebuild", {})
    assert status == 200, rebuilt
    check(CorpusRebuilt, rebuilt)
    for step, shape, body in [
        ("prime", Primed, {}),
        ("query", Answer, {"question": "what was wrong with the token?"}),
        ("reprime", Primed, {}),
    ]:
        status, reply = seeded.post(f"/api/corpus/contract/{step}", body)
        assert status == 200, (step, reply)
        check(shape, reply)
    status, gone = http_json("DELETE", seeded.url + "/api/corpus/contract")
    assert status == 200, gone
    check(CorpusDeleted, gone)


def test_save_and_forget_answer_their_models(seeded: Service) -> None:
    ids = []
    for text in ("a memory to delete", "another memory to forget"):
        status, saved = seeded.post(
            "/api/memory/save", {"text": text, "title": text, "project": "scratch"}
        )
        assert status == 200
        check(MemorySaved, saved)
        ids.append(saved["id"])
    status, deleted = http_json("DELETE", seeded.url + f"/api/observation/{ids[0]}")
    assert status == 200, deleted
    check(Deleted, deleted)
    status, forgotten = seeded.post("/api/observations/forget", {"ids": ids})
    assert status == 200, forgotten
    check(Forgotten, forgotten)
    assert forgotten["alreadyDeleted"] == [ids[0]]


def test_recompress_and_retry_answer_their_models(seeded: Service) -> None:
    status, body = seeded.post("/api/recompress", {})
    assert status == 200, body
    check(Recompressed, body)
    status, body = seeded.post("/api/queue/retry", {})
    assert status == 200, body
    check(Requeued, body)


def test_export_and_import_answer_their_models(seeded: Service) -> None:
    status, document = seeded.get(f"/api/export?project={PROJECT}")
    assert status == 200
    check(ExportDocument, document)
    assert document["observations"]
    status, imported = seeded.post("/api/import", document)
    assert status == 200, imported
    check(Imported, imported)
    assert imported["imported"]["observations"]["skipped"] == len(document["observations"])
