"""Issue 9, item 7: private text never reaches the disk, whichever field or route carries it.

A numbered marker inside ``<private>…</private>`` goes through every field of every write
route (hook routes, memory/save, import, settings, corpus build/query, batch, recompress, the
ledger-writing GETs, the Idempotency-Key header; values, dict keys, list items, plain and
JSON-escaped) and through every hook script's stdin (service down, so it spools; then up).
Then the raw bytes of everything in the data dir (DB, -wal, -shm, spool incl. processed/ and
rejected/, logs, corpora, settings, index) and of the service log are scanned, case-folded
(FTS stores lowercase tokens), for the marker: none may be found, and a failure names the
fields that leaked.
"""

from __future__ import annotations

import json
import shutil
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from hooks import _runtime, post_tool_use, session_end, stop, user_prompt_submit
from hooks.adapters import PLATFORMS
from tests.conftest import FIXTURES, Service, base_env, free_port
from tests.fuzz_strategies import WIDE_ENCODINGS
from tests.hook_harness import TRANSCRIPT, load_payload, run_hook
from tests.test_hardening_text import raw_post
from workbench import spool
from workbench.store import transfer

FIELDS: list[str] = []  # marker number -> where it was sent


def secret(where: str) -> str:
    """A fresh ``<private>`` block whose marker says where it was sent."""
    FIELDS.append(where)
    return f"<private>PRIVMARK{len(FIELDS) - 1:03d}Z</private>"


def p(where: str, text: str = "") -> str:
    """``text`` with a private block inside (so the visible part survives redaction)."""
    return f"{text}{secret(where)}{text and '-'}ok"


def leaks(*roots: Path) -> list[str]:
    found = []
    for root in roots:
        files = [root] if root.is_file() else sorted(f for f in root.rglob("*") if f.is_file())
        for path in files:
            data = path.read_bytes().lower()
            start = data.find(b"privmark")
            while start >= 0:
                number = data[start + 8 : start + 11]
                where = FIELDS[int(number)] if number.isdigit() else "?"
                found.append(f"{where} in {path}")
                start = data.find(b"privmark", start + 1)
    return sorted(set(found))


def hook_payloads(tmp_path: Path, tag: str) -> list[tuple[str, dict[str, Any]]]:
    """Every hook script with a marker in every stdin field it reads."""
    transcript = tmp_path / f"transcript-{tag}.jsonl"
    shutil.copyfile(TRANSCRIPT, transcript)
    with transcript.open("a", encoding="utf-8") as fh:
        answer = f"Done {secret(f'{tag} transcript answer')} here."
        fh.write(json.dumps({"type": "assistant", "message": {"id": "z", "content": answer}}))
        fh.write("\n")
    session = p(f"{tag} session_id", f"sess-{tag}")
    cwd = "/home/dev/code/" + p(f"{tag} cwd", "acme")
    out = []
    prompt = load_payload("user_prompt_submit")
    prompt.update(session_id=session, cwd=cwd, prompt=p(f"{tag} prompt", "fix it"))
    out.append(("user_prompt_submit", prompt))
    for name in ("post_tool_use_read", "post_tool_use_edit", "post_tool_use_bash_pytest_fail"):
        tool = load_payload(name)
        tool.update(
            session_id=session,
            cwd=cwd,
            tool_use_id=p(f"{tag} {name} tool_use_id", "toolu"),
            agent_type=p(f"{tag} {name} agent_type", "general"),
        )
        tool["tool_input"][secret(f"{tag} {name} tool_input key")] = 1
        tool["tool_input"]["nested"] = {p(f"{tag} {name} nested key"): [p(f"{tag} list item")]}
        tool["tool_response"] = {
            p(f"{tag} {name} tool_response key", "k"): p(f"{tag} {name} tool_response", "v")
        }
        out.append(("post_tool_use", tool))
    refused = load_payload("post_tool_use_read")
    refused.update(session_id=session, cwd=cwd)
    refused["tool_input"] = {p(f"{tag} refused event key", "t"): float("nan")}
    out.append(("post_tool_use", refused))
    stop = load_payload("stop")
    stop.update(session_id=session, cwd=cwd, transcript_path=str(transcript))
    out.append(("stop", stop))
    end = load_payload("session_end")
    end.update(session_id=session, reason=p(f"{tag} reason", "other"))
    out.append(("session_end", end))
    return out


def live_only_hooks(tmp_path: Path) -> list[tuple[str, dict[str, Any]]]:
    """The read-only hooks (they query; session_start would spawn a service when down)."""
    big = tmp_path / "big.py"
    big.write_text("x = 1\n" * 400, encoding="utf-8")
    start = load_payload("session_start_startup")
    start.update(session_id=p("session_start session_id", "s"), cwd=p("session_start cwd", "/w"))
    read = load_payload("pre_tool_use_read")
    read.update(session_id=p("pre_tool_use session_id", "s"), cwd=p("pre_tool_use cwd", "/w"))
    read["tool_input"] = {"file_path": str(big), secret("pre_tool_use key"): 1}
    return [("session_start", start), ("pre_tool_use_read", read)]


def http_bodies() -> list[tuple[str, str, Any]]:
    """(method, path, JSON body) with a marker in every field of every write route."""
    s = p("http contentSessionId", "http-sess")
    return [
        (
            "POST",
            "/api/sessions/init",
            {
                "contentSessionId": s,
                "project": p("init project", "proj"),
                "prompt": p("init prompt", "hello"),
                "platformSource": p("init platformSource", "cli"),
            },
        ),
        (
            "POST",
            "/api/sessions/observations",
            {
                "contentSessionId": s,
                "tool_name": p("obs tool_name", "Bash"),
                "tool_input": {p("obs tool_input key", "k"): {p("obs deep key"): [p("obs item")]}},
                "tool_response": {"stdout": p("obs tool_response", "out")},
                "cwd": "/w/" + p("obs cwd", "proj"),
                "tool_use_id": p("obs tool_use_id", "tu"),
                "agentId": p("obs agentId", "a"),
                "agentType": p("obs agentType", "t"),
            },
        ),
        (
            "POST",
            "/api/sessions/summarize",
            {"contentSessionId": s, "last_assistant_message": p("summarize message", "done")},
        ),
        ("POST", "/api/sessions/end", {"contentSessionId": s, "reason": p("end reason", "x")}),
        (
            "POST",
            "/api/memory/save",
            {
                "text": p("memory text", "note"),
                "title": p("memory title", "title"),
                "project": p("memory project", "proj"),
            },
        ),
        ("POST", "/api/import", import_document()),
        (
            "PUT",
            "/api/settings",
            {
                "excluded_projects": [p("settings excluded_projects", "zz-none")],
                "skipped_tools": [p("settings skipped_tools", "NoSuchTool")],
            },
        ),
        (
            "POST",
            "/api/corpus",
            {
                "name": "c" + secret("corpus name"),
                "description": p("corpus description", "d"),
                "project": p("corpus project", "proj"),
                "concepts": [p("corpus concept", "c")],
                "query": p("corpus query", "fix"),
            },
        ),
        ("POST", "/api/corpus/c/query", {"question": p("corpus question", "what")}),
        (
            "POST",
            "/api/observations/batch",
            {
                "ids": [1, 2],
                "project": p("batch project", "proj"),
                "source": p("batch source", "mcp"),
                "contentSessionId": p("batch session", "s"),
            },
        ),
        ("POST", "/api/recompress", {"project": p("recompress project", "proj")}),
    ]


def import_document() -> dict[str, Any]:
    s = p("import content_session_id", "imp")
    return {
        "format": "workbench-export",
        "version": 1,
        "sessions": [
            {
                "content_session_id": s,
                "project": p("import session project", "proj"),
                "platform_source": p("import platform_source", "claude"),
                "status": p("import status", "completed"),
            }
        ],
        "prompts": [
            {
                "content_session_id": s,
                "project": p("import prompt project", "proj"),
                "prompt_number": 1,
                "prompt_text": p("import prompt_text", "hi"),
            }
        ],
        "observations": [
            {
                "content_session_id": s,
                "project": p("import obs project", "proj"),
                "type": "discovery",
                "title": p("import title", "t"),
                "subtitle": p("import subtitle", "s"),
                "narrative": p("import narrative", "n"),
                "facts": [p("import fact", "f")],
                "concepts": [p("import concept", "c")],
                "files_read": [p("import files_read", "a.py")],
                "files_modified": [p("import files_modified", "b.py")],
                "generated_by": p("import generated_by", "import"),
                "agent_id": p("import agent_id", "a"),
                "agent_type": p("import agent_type", "t"),
            }
        ],
        "summaries": [
            {
                "content_session_id": s,
                "project": p("import summary project", "proj"),
                "prompt_number": 1,
                **{f: p(f"import summary {f}", f) for f in ("request", "investigated", "learned")},
                **{f: p(f"import summary {f}", f) for f in ("completed", "next_steps", "notes")},
                "files_read": [p("import summary files_read", "a.py")],
                "files_edited": [p("import summary files_edited", "b.py")],
                "generated_by": p("import summary generated_by", "import"),
            }
        ],
    }


def escaped(body: dict[str, Any]) -> bytes:
    """The body as JSON with every ``<`` and ``>`` escaped (``\\u003c``), as some encoders do."""
    return json.dumps(body).replace("<", "\\u003c").replace(">", "\\u003e").encode()


def entity_escaped(body: dict[str, Any]) -> bytes:
    """The body with every ``<`` and ``>`` in its text as HTML entities (issue 20, item 10:
    Gemini CLI hands hook context back so)."""
    return json.dumps(body).replace("<", "&lt;").replace(">", "&gt;").encode()


def ledger_gets() -> list[str]:
    q = urllib.parse.quote
    s = q(p("GET contentSessionId", "s"))
    return [
        f"/api/context/inject?projects={q(p('GET inject project', 'proj'))}&contentSessionId={s}",
        f"/api/context/prompt?query={q(p('GET prompt query', 'fix it now please'))}"
        f"&project={q(p('GET prompt project', 'proj'))}&contentSessionId={s}",
        f"/api/context/file?path={q('/w/' + p('GET file path', 'a.py'))}&contentSessionId={s}",
        f"/api/search?query={q(p('GET search query', 'fix'))}",
    ]


def test_no_private_marker_reaches_the_disk(
    tmp_path: Path, data_dir: Path, make_service: Any
) -> None:
    port = free_port()
    down = base_env(data_dir, port)
    # 1. The service is down: every delivering hook spools (redacted before it is written).
    for script, payload in hook_payloads(tmp_path, "down"):
        assert run_hook(script, payload, down).output() is not None
    assert spool.pending(data_dir / "spool"), "the hooks should have spooled"
    # An old hook's spool file that still holds a private block: replay must not keep it.
    old = data_dir / "spool" / f"{spool.new_event_key()}.json"
    old.write_text(
        spool.Envelope(
            old.stem,
            "/api/sessions/end",
            {"contentSessionId": "old", "reason": p("old spool file reason", "x")},
        ).to_json(),
        encoding="utf-8",
    )
    # 2. Start: the spool replays into processed/ (and rejected/).
    svc: Service = make_service(port)
    _, health = svc.get("/api/health")
    assert health["spool"]["pending"] == 0, health
    # 3. Live: every hook, then every write route by HTTP, plainly and JSON-escaped.
    for script, payload in hook_payloads(tmp_path, "live") + live_only_hooks(tmp_path):
        assert run_hook(script, payload, svc.env).output() is not None
    for method, path, body in http_bodies():
        status, reply = raw_post(svc, path, json.dumps(body).encode(), method)
        assert status < 500, (path, status, reply)
    for method, path, body in http_bodies():
        status, reply = raw_post(svc, path, escaped(body), method)
        assert status < 500, (path, status, reply)
    for method, path, body in http_bodies():
        status, reply = raw_post(svc, path, entity_escaped(body), method)
        assert status < 500, (path, status, reply)
    status, reply = svc.post(
        "/api/memory/save",
        {"text": "a memory saved under a header key"},
        headers={"Idempotency-Key": "k-" + secret("Idempotency-Key header")},
    )
    assert (status, reply["status"]) == (200, "stored")
    for target in ledger_gets():
        status, reply = svc.get(target)
        assert status < 500, (target, status, reply)
    svc.wait_idle()
    assert leaks(data_dir, svc.log_path) == []  # DB, -wal, -shm while running
    svc.stop()
    assert leaks(data_dir, svc.log_path) == []  # after the WAL checkpoint too
    assert (data_dir / "spool" / "processed").is_dir()
    assert (data_dir / "spool" / "rejected").is_dir()
    assert len(FIELDS) > 100  # the test really sent what it claims


def test_import_redacts_every_string_field_in_the_library() -> None:
    """Below the HTTP boundary too: ``transfer.parse`` cleans every field and list item."""
    doc = transfer.parse(import_document())
    assert "PRIVMARK" not in doc.model_dump_json()
    assert doc.observations[0].concepts == ["c-ok"]


def test_import_redacts_entity_escaped_blocks_in_the_library() -> None:
    """Issue 20, item 10: a block whose ``<``/``>`` are HTML entities goes too."""
    doc = transfer.parse(json.loads(entity_escaped(import_document())))
    assert "PRIVMARK" not in doc.model_dump_json()


# ----- issue 19, item 6: bodies that are not UTF-8 ------------------------------------------------
# Every scan of the boundary reads UTF-8 bytes; Starlette's ``json.loads`` also reads UTF-16
# and UTF-32. So those bodies carried private text past it (16 of 114 markers reached
# settings.json, the fetch ledger, corpora, conversations) and 12 of them answered 500.
NOT_UTF8 = {
    **WIDE_ENCODINGS,
    "latin-1": lambda text: text.replace("ok", "ok\u00e9").encode("latin-1", "replace"),
}


def test_a_body_that_is_not_utf8_is_refused_on_every_route_and_nothing_private_is_kept(
    data_dir: Path, make_service: Any
) -> None:
    svc: Service = make_service()
    for method, path, body in http_bodies():
        for name, encode in NOT_UTF8.items():
            status, reply = raw_post(
                svc, path, encode(json.dumps(body, ensure_ascii=False)), method
            )
            assert status == 415, (name, path, status, reply)
            assert reply["error"] == "UNSUPPORTED_ENCODING", reply
            assert "not UTF-8" in reply["message"], reply
            assert "send JSON encoded as UTF-8" in reply["message"], reply
    svc.wait_idle()
    assert leaks(data_dir, svc.log_path) == []
    svc.stop()
    assert leaks(data_dir, svc.log_path) == []


def test_a_utf8_body_with_a_byte_order_mark_is_accepted_and_redacted(
    data_dir: Path, make_service: Any
) -> None:
    """The one BOM that is UTF-8: dropped at the boundary (RFC 8259 lets a parser ignore it),
    and the body is then treated like any other: stored, without its private blocks."""
    svc: Service = make_service()
    body = {"text": p("BOM memory text", "a note"), "title": p("BOM memory title", "t")}
    status, reply = raw_post(svc, "/api/memory/save", b"\xef\xbb\xbf" + json.dumps(body).encode())
    assert (status, reply["status"]) == (200, "stored"), reply
    settings = {"excluded_projects": [p("BOM settings", "zz-none")]}
    status, reply = raw_post(
        svc, "/api/settings", b"\xef\xbb\xbf" + json.dumps(settings).encode(), "PUT"
    )
    assert status == 200, reply
    svc.wait_idle()
    svc.stop()
    assert leaks(data_dir, svc.log_path) == []
    assert b"a note-ok" in (data_dir / "workbench.db").read_bytes()


# ----- issue 19, item 5: redact, then bound ------------------------------------------------------
def long_secret(where: str, before: int, after: int = 300) -> str:
    """A private block opening ``before`` characters in and closing ``after`` later: a field
    cut anywhere between keeps ``<private>PRIVMARK…`` with no closer, which no redaction
    after the cut can find."""
    FIELDS.append(where)
    return f"{'v' * before}<private>PRIVMARK{len(FIELDS) - 1:03d}Z{'w' * after}</private>ok"


def bounded_bodies() -> list[tuple[str, dict[str, Any]]]:
    """Every bounded text field of the write routes, with a private block across its bound
    (ids and names 200, free text 500, cwd 4096, a tool payload's strings 20,000, a title
    300, a memory 100,000)."""
    session = long_secret("bounded contentSessionId", 150)
    return [
        (
            "/api/sessions/init",
            {
                "contentSessionId": session,
                "project": long_secret("bounded project", 150),
                "prompt": long_secret("bounded prompt", 400),
            },
        ),
        (
            "/api/sessions/observations",
            {
                "contentSessionId": session,
                "tool_name": long_secret("bounded tool_name", 150),
                "cwd": "/w/" + long_secret("bounded cwd", 4000),
                "tool_use_id": long_secret("bounded tool_use_id", 450),
                "agentId": long_secret("bounded agentId", 450),
                "agentType": long_secret("bounded agentType", 450),
                "tool_input": {"k": long_secret("bounded tool_input", 19_900)},
                "tool_response": long_secret("bounded tool_response", 19_900),
            },
        ),
        (
            "/api/sessions/summarize",
            {
                "contentSessionId": session,
                "last_assistant_message": long_secret("bounded answer", 19_900),
            },
        ),
        (
            "/api/sessions/end",
            {"contentSessionId": session, "reason": long_secret("bounded reason", 450)},
        ),
        (
            "/api/memory/save",
            {
                "text": long_secret("bounded memory text", 99_800),
                "title": long_secret("bounded memory title", 250),
                "project": long_secret("bounded memory project", 150),
            },
        ),
    ]


def test_text_is_redacted_before_it_is_bounded_on_every_route(
    data_dir: Path, make_service: Any
) -> None:
    """A ``reason`` or ``agentType`` over 500 characters was cut first, leaving an unclosed
    ``<private>SECRET…`` in ``events.payload``; an id, name or cwd whose private block made it
    too long was refused. Redacted first, every field fits, is stored, and keeps no secret."""
    svc: Service = make_service()
    for path, body in bounded_bodies():
        status, reply = raw_post(svc, path, json.dumps(body).encode())
        assert status == 200, (path, status, reply)
        assert reply["status"] in {"queued", "stored"}, (path, reply)
    svc.wait_idle()
    assert leaks(data_dir, svc.log_path) == []
    svc.stop()
    assert leaks(data_dir, svc.log_path) == []


PLATFORM_FIXTURES = [("claude", p.stem) for p in sorted((FIXTURES / "hooks").glob("*.json"))] + [
    (platform, p.stem)
    for platform in sorted(PLATFORMS)
    if platform != "claude"
    for p in sorted((FIXTURES / "hooks" / platform).glob("*.json"))
]
STRUCTURAL = {"hook_event_name", "transcript_path", "type", "role"}


def long_leaves(value: Any, where: str) -> Any:
    """``value`` with every string leaf (but the structural ones) a long block across 500."""
    if isinstance(value, dict):
        return {
            k: v if k in STRUCTURAL else long_leaves(v, f"{where}.{k}") for k, v in value.items()
        }
    if isinstance(value, list):
        return [long_leaves(v, f"{where}.{i}") for i, v in enumerate(value)]
    return long_secret(where, 450) if isinstance(value, str) else value


@pytest.mark.parametrize(("platform", "name"), PLATFORM_FIXTURES)
def test_every_field_of_every_platform_payload_is_redacted_before_any_cut(
    platform: str, name: str, tmp_path: Path
) -> None:
    """What each hook script would send for each platform's payload (its adapter, then the
    one redaction of the whole payload, then the body), every field holding a private block
    across the 500-character bound: no marker in any body."""
    raw = json.dumps(long_leaves(load_platform(platform, name), f"{platform}/{name}")).encode()
    event = _runtime.parse_input(raw, platform)
    assert event is not None
    for script in (user_prompt_submit, post_tool_use, stop, session_end):
        body = script.build_body(event)
        assert "PRIVMARK" not in json.dumps(body), (script.__name__, body)


def load_platform(platform: str, name: str) -> dict[str, Any]:
    folder = FIXTURES / "hooks" if platform == "claude" else FIXTURES / "hooks" / platform
    value: dict[str, Any] = json.loads((folder / f"{name}.json").read_text("utf-8"))
    return value
