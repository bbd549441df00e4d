"""Issue 9, items 1 and 2: text at the boundary, and refusals that are parked, not lost.

- A lone UTF-16 surrogate (a tool output cut mid-emoji) becomes U+FFFD wherever text enters:
  in the hook before it posts or spools, and in the service on every route (values and keys),
  so nothing answers 5xx and no event is lost.
- NaN / Infinity / an overflowing number are refused with a 422 naming the field.
- A refused event is parked in ``spool/rejected/`` (by the hook on a 4xx, by replay for a bad
  spool file), counted in ``/api/health`` and ``workbench status``, never retried forever.
- A spool write that fails (the disk is full) leaves no ``.tmp`` and the hook still prints ``{}``.

Real parts only: hook subprocesses, the real service, a real data dir.
"""

from __future__ import annotations

import json
import resource
import signal
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HOOKS_DIR, ROOT, Service, base_env, free_port, seeded_service
from tests.hook_harness import load_payload, run_hook
from workbench import redact, spool

CUT_EMOJI = b'"x \\ud83d"'  # JSON text of a string cut after the high half of an emoji
REPLACED = "x \ufffd"


def raw_post(service: Service, path: str, body: bytes, method: str = "POST") -> tuple[int, Any]:
    """Send ``body`` byte for byte (json.dumps could not write NaN/1e400/surrogates for us)."""
    req = urllib.request.Request(service.url + path, data=body, method=method)
    req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            status, raw = resp.status, resp.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode("utf-8", "replace")


@pytest.fixture(scope="module")
def refusing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One real service for the tests whose every request is refused (issue 23: a start-up
    each cost more than the test). Nothing they send is stored, and each checks that on the
    store it shares. Full text only, as the ``service`` fixture is."""
    data = tmp_path_factory.mktemp("refusing") / "data"
    data.mkdir()
    with seeded_service(data, lambda store: None, WORKBENCH_EMBEDDER="none") as svc:
        yield svc


def payloads(data_dir: Path) -> list[dict[str, Any]]:
    with sqlite3.connect(f"file:{data_dir / 'workbench.db'}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT payload FROM events ORDER BY id").fetchall()
    return [json.loads(r[0]) for r in rows]


def tool_stdin(stdout_json: bytes, tool_input_json: bytes = b'{"command": "cat log"}') -> bytes:
    payload = load_payload("post_tool_use_bash_pytest_fail")
    payload["tool_response"] = {"stdout": "@STDOUT@", "stderr": ""}
    payload["tool_input"] = "@INPUT@"
    text = json.dumps(payload).encode()
    return text.replace(b'"@STDOUT@"', stdout_json).replace(b'"@INPUT@"', tool_input_json)


def leftovers(data_dir: Path) -> list[Path]:
    return sorted((data_dir / "spool").rglob("*.tmp")) if (data_dir / "spool").exists() else []


# ----- item 1: the hook ------------------------------------------------------------------------


def test_hook_delivers_a_tool_output_cut_mid_emoji(data_dir: Path, service: Service) -> None:
    stdin = tool_stdin(CUT_EMOJI, b'{"\\udc00key": "v \\ud83d"}')
    assert run_hook("post_tool_use", stdin, service.env).output() == {}
    (payload,) = [p for p in payloads(data_dir) if "tool_name" in p]
    assert payload["tool_response"]["stdout"] == REPLACED
    assert payload["tool_input"] == {"\ufffdkey": "v \ufffd"}
    assert spool.pending(data_dir / "spool") == []
    assert leftovers(data_dir) == []


def test_hook_spools_a_cut_emoji_when_the_service_is_down(data_dir: Path) -> None:
    env = base_env(data_dir, free_port())
    # Raw UTF-8-encoded surrogate bytes (json.loads decodes bytes with surrogatepass) and a
    # truncated multi-byte character: both become U+FFFD, and the event is spooled.
    stdin = tool_stdin(b'"a \xed\xa0\xbd b \xe2\x82"', b'{"k": "\\uD83D"}')
    assert run_hook("post_tool_use", stdin, env).output() == {}
    (path,) = spool.pending(data_dir / "spool")
    envelope = spool.Envelope.from_json(path.read_text("utf-8"))
    assert envelope.body["tool_response"]["stdout"].startswith("a \ufffd")
    assert "\ufffd" in envelope.body["tool_response"]["stdout"][-2:]
    assert envelope.body["tool_input"] == {"k": "\ufffd"}
    assert leftovers(data_dir) == []


def test_stop_hook_sends_an_answer_cut_mid_emoji(tmp_path: Path, data_dir: Path) -> None:
    transcript = tmp_path / "cut.jsonl"
    line = b'{"type": "assistant", "message": {"id": "m1", "content": "done \\ud83d"}}\n'
    transcript.write_bytes(line)
    payload = load_payload("stop")
    payload["transcript_path"] = str(transcript)
    assert run_hook("stop", payload, base_env(data_dir, free_port())).output() == {}
    (path,) = spool.pending(data_dir / "spool")
    body = spool.Envelope.from_json(path.read_text("utf-8")).body
    assert body["last_assistant_message"] == "done \ufffd"


def _disk_full_hook(script: str, stdin: bytes, env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run a hook whose file writes fail with EFBIG past 64 bytes: a disk that is full."""

    def limit() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of a killing signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64))

    return subprocess.run(
        [sys.executable, str(HOOKS_DIR / f"{script}.py")],
        input=stdin,
        env=env,
        capture_output=True,
        timeout=60,
        preexec_fn=limit,  # noqa: PLW1509 - a test-only resource limit, no threads involved
        cwd=ROOT,
    )


@pytest.mark.parametrize("script", ["post_tool_use", "user_prompt_submit", "session_end"])
def test_disk_full_leaves_no_tmp_and_the_hook_still_prints_json(
    script: str, data_dir: Path
) -> None:
    name = {"post_tool_use": "post_tool_use_read"}.get(script, script)
    stdin = json.dumps(load_payload(name)).encode()
    proc = _disk_full_hook(script, stdin, base_env(data_dir, free_port()))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == {}
    assert proc.stdout.count(b"\n") == 1
    assert leftovers(data_dir) == []
    assert spool.pending(data_dir / "spool") == []


def test_spool_write_that_fails_removes_its_temp_file(tmp_path: Path) -> None:
    folder = tmp_path / "spool"
    bad = spool.Envelope(spool.new_event_key(), "/api/sessions/end", {"reason": "\ud83d"})
    with pytest.raises(UnicodeEncodeError):
        spool.write(folder, bad)
    assert not folder.exists() or list(folder.iterdir()) == []


# ----- item 1: the service ---------------------------------------------------------------------

SURROGATE_BODIES = [
    (
        "POST",
        "/api/sessions/init",
        b'{"contentSessionId": "s1", "project": "p \\ud83d", "prompt": "fix \\ud83d it"}',
    ),
    (
        "POST",
        "/api/sessions/observations",
        b'{"contentSessionId": "s1", "tool_name": "Bash",'
        b' "tool_input": {"\\ud83dk": "\\udc00"}, "tool_response": {"stdout": "x \\ud83d"},'
        b' "cwd": "/w/p \\ud83d"}',
    ),
    (
        "POST",
        "/api/sessions/summarize",
        b'{"contentSessionId": "s1", "last_assistant_message": "done \\ud83d"}',
    ),
    ("POST", "/api/sessions/end", b'{"contentSessionId": "s1", "reason": "other \\ud83d"}'),
    (
        "POST",
        "/api/memory/save",
        b'{"text": "note \\ud83d", "title": "t \\ud83d", "project": "p \\ud83d"}',
    ),
    ("POST", "/api/corpus", b'{"name": "c1", "description": "d \\ud83d", "query": "fix \\ud83d"}'),
    ("POST", "/api/corpus/c1/query", b'{"question": "what \\ud83d?"}'),
    ("POST", "/api/recompress", b'{"project": "p \\ud83d"}'),
    ("PUT", "/api/settings", b'{"excluded_projects": ["secret-\\ud83d"]}'),
    (
        "POST",
        "/api/import",
        b'{"format": "workbench-export", "version": 1, "observations":'
        b' [{"title": "t \\ud83d", "concepts": ["c \\udfff"], "project": "p"}]}',
    ),
    ("POST", "/api/observations/batch", b'{"ids": [1], "project": "p \\ud83d"}'),
]


def test_lone_surrogates_never_cause_a_5xx(data_dir: Path, service: Service) -> None:
    answers = {
        path: raw_post(service, path, body, method) for method, path, body in SURROGATE_BODIES
    }
    for path, (status, reply) in answers.items():
        assert status < 500, (path, status, reply)
    for path in ("/api/sessions/init", "/api/sessions/observations", "/api/memory/save"):
        assert answers[path][0] == 200, answers[path]
    service.wait_idle()
    stored = json.dumps(payloads(data_dir), ensure_ascii=False)
    assert "fix \ufffd it" in stored
    assert '"\ufffdk": "\ufffd"' in stored
    assert "other \ufffd" in stored
    for query in ("/api/search?query=x%ED%A0%BD", "/api/context/inject?projects=%ED%A0%BD"):
        status, reply = service.get(query)
        assert status < 500, (query, status, reply)
    # A JSON array in a query value can spell a surrogate with an escape (the fuzz suite's find).
    escaped = "%5B%22%5Cud83d%22%5D"  # ["\ud83d"]
    for query in (
        f"/api/context/inject?projects={escaped}",
        f"/api/context/inject?project={escaped}",
        f"/api/search?query=x&projects={escaped}",
        f"/api/search?query=x&concepts={escaped}",
        f"/api/search?query=x&files={escaped}",
    ):
        status, reply = service.get(query)
        assert status == 200, (query, status, reply)


# ----- item 2: non-finite numbers --------------------------------------------------------------


@pytest.mark.parametrize(
    ("number", "field"),
    [
        (b"NaN", "tool_input.t"),
        (b"Infinity", "tool_input.t"),
        (b"-Infinity", "tool_input.t"),
        (b"1e400", "tool_input.t"),
    ],
)
def test_non_finite_numbers_are_refused_naming_the_field(
    number: bytes, field: str, refusing: Service
) -> None:
    body = (
        b'{"contentSessionId": "s1", "tool_name": "Bash", "tool_input": {"t": '
        + number
        + b'}, "tool_response": {"items": [1, 2]}}'
    )
    status, reply = raw_post(refusing, "/api/sessions/observations", body)
    assert status == 422, reply
    assert field in reply["message"], reply
    nested = b'{"contentSessionId": "s1", "tool_name": "Bash", "tool_response": {"items": [1, ' + (
        number + b"]}}"
    )
    status, reply = raw_post(refusing, "/api/sessions/observations", nested)
    assert status == 422, reply
    assert "tool_response.items.1" in reply["message"], reply
    # The whole field a bare number (the fuzz suite's find): refused too, naming the field.
    bare = b'{"contentSessionId": "s1", "tool_name": "Bash", "tool_response": ' + number + b"}"
    status, reply = raw_post(refusing, "/api/sessions/observations", bare)
    assert status == 422, reply
    assert "tool_response" in reply["message"], reply
    assert [p for p in payloads(refusing.data_dir) if "tool_name" in p] == []


def test_non_finite_numbers_are_refused_on_other_routes_too(refusing: Service) -> None:
    for method, path, body in [
        ("PUT", "/api/settings", b'{"spool_retention_days": NaN}'),
        ("POST", "/api/corpus", b'{"name": "c2", "limit": Infinity}'),
        ("POST", "/api/import", b'{"observations": [{"title": "t", "discovery_tokens": NaN}]}'),
        ("POST", "/api/memory/save", b'{"text": "x", "extra": NaN}'),
    ]:
        status, reply = raw_post(refusing, path, body, method)
        assert status == 422, (path, status, reply)


# ----- item 2: refusals are parked where a person sees them ------------------------------------


def test_a_hook_event_the_service_refuses_is_parked_and_counted(
    data_dir: Path, service: Service
) -> None:
    stdin = tool_stdin(b'"ok"', b'{"t": NaN}')
    assert run_hook("post_tool_use", stdin, service.env).output() == {}
    assert spool.pending(data_dir / "spool") == []
    (parked,) = sorted((data_dir / "spool" / "rejected").iterdir())
    envelope = spool.Envelope.from_json(parked.read_text("utf-8"))
    assert envelope.path == "/api/sessions/observations"
    assert envelope.reason.startswith("HTTP 422")
    assert "tool_input.t" in envelope.reason
    _, health = service.get("/api/health")
    assert health["spool"]["rejected"] == 1
    status = subprocess.run(
        [sys.executable, "-m", "workbench", "status", "--json"],
        env=service.env,
        capture_output=True,
        timeout=60,
        cwd=ROOT,
    )
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    assert shown["health"]["spool"]["rejected"] == 1
    assert shown["spool"]["rejected"] == 1  # the row the status table prints


def _spool_raw(data_dir: Path, body_json: bytes) -> Path:
    """A spool file as an old hook (or a hand) could have written it, bytes as given."""
    folder = data_dir / "spool"
    folder.mkdir(parents=True, exist_ok=True)
    key = spool.new_event_key()
    path = folder / f"{key}.json"
    path.write_bytes(
        b'{"envelope_version": 1, "event_key": "' + key.encode() + b'", "path": '
        b'"/api/sessions/observations", "hook": "PostToolUse", "spooled_at_ns": 1, "body": '
        + body_json
        + b"}"
    )
    return path


def test_replay_parks_a_refused_spool_file_and_stores_a_surrogate_one(
    data_dir: Path, make_service: Any
) -> None:
    nan = _spool_raw(
        data_dir,
        b'{"contentSessionId": "s9", "tool_name": "Bash", "tool_input": {"t": NaN}}',
    )
    cut = _spool_raw(
        data_dir,
        b'{"contentSessionId": "s9", "tool_name": "Bash", "tool_response": "x \\ud83d"}',
    )
    svc = make_service()  # replays the spool as it starts
    _, health = svc.get("/api/health")
    assert health["spool"]["pending"] == 0
    assert health["spool"]["rejected"] == 1
    assert (data_dir / "spool" / "rejected" / nan.name).exists()
    assert (data_dir / "spool" / "processed" / cut.name).exists()
    (payload,) = [p for p in payloads(data_dir) if "tool_name" in p]
    assert payload["tool_response"] == REPLACED
    status, report = svc.post("/api/spool/replay")
    assert status == 200
    assert report["rejected"] == 0
    assert report["pending"] == 0


@pytest.mark.parametrize(
    "script", ["session_start", "user_prompt_submit", "post_tool_use", "stop", "session_end"]
)
def test_a_hook_that_fails_midway_still_prints_one_json_object(script: str, tmp_path: Path) -> None:
    """The data dir is a regular file: session_start cannot even create it. Still ``{}``."""
    not_a_dir = tmp_path / "data"
    not_a_dir.write_text("", encoding="utf-8")
    name = {
        "session_start": "session_start_startup",
        "post_tool_use": "post_tool_use_read",
    }.get(script, script)
    env = base_env(not_a_dir, free_port())
    assert run_hook(script, load_payload(name, tmp_path), env).output() == {}


def test_a_body_nested_too_deeply_is_a_422_naming_the_field(refusing: Service) -> None:
    """Every recursive step (redaction, bounds, serialisation) would otherwise answer 500."""
    deep = b"[" * 700 + b'"x"' + b"]" * 700
    cut = b"[" * 700 + b'"x \\ud83d"' + b"]" * 700
    for path, body, field in [
        ("/api/corpus", b'{"name": "deep", "filters": ' + cut + b"}", "filters"),
        (
            "/api/sessions/observations",
            b'{"contentSessionId": "s", "tool_name": "B", "tool_input": ' + cut + b"}",
            "tool_input",
        ),
        (
            "/api/sessions/observations",
            b'{"contentSessionId": "s", "tool_name": "B", "tool_response": {"k": ' + deep + b"}}",
            "tool_response.k",
        ),
    ]:
        status, reply = raw_post(refusing, path, body)
        assert status == 422, (path, status, reply)
        assert field in reply["message"], reply
        assert "nested deeper than" in reply["message"], reply
    _, health = refusing.get("/api/health")
    assert health["status"] == "ok"
    assert payloads(refusing.data_dir) == []  # nothing refused was stored


# ----- a hook payload nested too deeply ----------------------------------------------------------


def _depth_of_containers(value: Any) -> int:
    """How many containers deep ``value`` goes (a scalar is 0), walked without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth + 1)
            children = item.values() if isinstance(item, dict) else item
            stack += [(child, depth + 1) for child in children]
    return deepest


def _elided_leaf(value: Any) -> Any:
    """Follow the only key or item of each level down to the leaf that stands for the rest."""
    while isinstance(value, dict | list):
        value = next(iter(value.values())) if isinstance(value, dict) else value[0]
    return value


@pytest.mark.parametrize("depth", [900, 990])
def test_hook_keeps_a_deeply_nested_tool_response_with_the_deep_part_elided(
    depth: int, data_dir: Path, service: Service
) -> None:
    """Found by the fuzz suite: a tool output nested ~900 deep was neither sent nor spooled.

    Whether it parsed depended on how deep the caller's stack was. Now the event is always
    delivered, its containers cut at the service's own limit (``MAX_DEPTH``), the rest kept.
    """
    nested = b'{"a":' * depth + b'"leaf"' + b"}" * depth
    assert run_hook("post_tool_use", tool_stdin(nested), service.env).output() == {}
    (payload,) = [p for p in payloads(data_dir) if "tool_name" in p]
    stdout = payload["tool_response"]["stdout"]
    # the body sits 2 containers deep (body, tool_response); ours may use the rest
    assert _depth_of_containers(payload) == redact.MAX_DEPTH
    assert "nested deeper than" in _elided_leaf(stdout)
    assert payload["tool_input"] == {"command": "cat log"}
    assert spool.pending(data_dir / "spool") == []


def test_hook_spools_a_deeply_nested_event_when_the_service_is_down(data_dir: Path) -> None:
    env = base_env(data_dir, free_port())
    nested = b"[" * 900 + b'"x"' + b"]" * 900
    assert run_hook("post_tool_use", tool_stdin(nested), env).output() == {}
    (path,) = spool.pending(data_dir / "spool")
    envelope = spool.Envelope.from_json(path.read_text("utf-8"))
    assert _depth_of_containers(envelope.body) <= redact.MAX_DEPTH


def test_parse_input_does_not_depend_on_how_deep_the_caller_is() -> None:
    """The same bytes give the same answer from a shallow stack and from a deep one."""
    from hooks import _runtime

    raw = b'{"session_id": "s", "x": ' + b"[" * 900 + b"1" + b"]" * 900 + b"}"

    def at_depth(n: int) -> Any:
        return _runtime.parse_input(raw) if n == 0 else at_depth(n - 1)

    shallow, deep = at_depth(0), at_depth(300)
    assert shallow is not None
    assert deep is not None
    assert shallow.session_id == deep.session_id == "s"
    too_deep = b'{"x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert _runtime.parse_input(too_deep) is None  # past what any JSON parser here walks
