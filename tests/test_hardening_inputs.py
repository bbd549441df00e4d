"""Inputs the fuzz suite found faulting, one regression test per kind (issue 9, "a standing
guard"; the fuzz suite keeps guarding, these pin each finding down by name).

- A: integers SQLite cannot hold (≥ 2**63 or < -2**63) in ids, offsets, epoch dates and
  timeline anchors were a 500 ``OverflowError``; now a 4xx naming the parameter.
- B: a ``cwd`` the file system refuses (a component over 255 bytes, a NUL byte, no access)
  was an ``OSError`` 500 on three routes, a silent hook, and a spooled event retried forever;
  now it is "no git root here", and the project is the folder's name cut to 200 characters.
- C: ``"¹"`` passes ``str.isdigit()`` but not ``int()``: a 500 on every stats route, and the
  same guard elsewhere (hook HTTP client, SSE ``Last-Event-ID``, corpus limit, CLI ids, PID
  file).
- D: a missing, mistyped or blank ``prompt`` was sent as ``""``, which the service reads as "an
  entirely private prompt", so the rest of the session was skipped.
- E: an optional field over its length limit (``tool_use_id``, a SessionEnd ``reason``) made
  the service refuse a real session's event with a 422, and the hook dropped it.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import socket
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from typer.testing import CliRunner

from hooks import _runtime
from service.routes.stream import parse_last_event_id
from tests.conftest import Service, base_env, free_port, http_json
from tests.hook_harness import load_payload, run_hook
from workbench import spool
from workbench.cli.main import app
from workbench.errors import InvalidInput
from workbench.knowledge.corpus_filter import parse_limit
from workbench.knowledge.reports import REPORTS
from workbench.locate import project_from_cwd
from workbench.pidfile import read_pid
from workbench.recall.search import MAX_OFFSET

TOO_BIG = [2**63, -(2**63) - 1, 2**70]
LONG_NAME = "x" * 300  # one path component over the 255-byte NAME_MAX
STATS_ROUTES = list(REPORTS)  # every /api/stats/<report>


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """One real service for the module; every test uses its own session ids."""
    data = tmp_path_factory.mktemp("inputs") / "data"
    data.mkdir()
    port = free_port()
    # Explicit: a module fixture starts before the autouse one that sets it for each test.
    env = base_env(data, port, WORKBENCH_EMBEDDER="none")
    service = Service(data_dir=data, port=port, env=env)
    yield service.start()
    service.stop()


def call(svc: Service, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    return http_json(method, svc.url + path, body)


def rows(svc: Service, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(f"file:{svc.data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def assert_refused(status: int, body: Any, names: str) -> None:
    """A 4xx with the JSON error shape whose message names ``names``."""
    assert 400 <= status < 500, (status, body)
    assert isinstance(body, dict), body
    assert body.get("error"), body
    assert names in body["message"], body


def hook_env(svc: Service) -> dict[str, str]:
    return base_env(svc.data_dir, svc.port, WORKBENCH_EMBEDDER="none")


# ----- A: integers beyond SQLite's 64 bits -------------------------------------------------------


@pytest.mark.parametrize("value", TOO_BIG)
@pytest.mark.parametrize(
    ("method", "template"),
    [
        ("GET", "/api/observation/{}"),
        ("DELETE", "/api/observation/{}"),
        ("GET", "/api/observation/{}/injections"),
    ],
)
def test_an_id_beyond_64_bits_in_the_path_is_a_422(
    svc: Service, method: str, template: str, value: int
) -> None:
    status, body = call(svc, method, template.format(value))
    assert status == 422, body
    assert_refused(status, body, "observation_id")


@pytest.mark.parametrize("route", ["observations", "prompts", "sessions", "summaries"])
@pytest.mark.parametrize("param", ["offset", "limit"])
def test_list_routes_refuse_a_page_beyond_64_bits(svc: Service, route: str, param: str) -> None:
    status, body = call(svc, "GET", f"/api/{route}?{param}={2**63}")
    assert status == 422, body
    assert_refused(status, body, param)
    status, _ = call(svc, "GET", f"/api/{route}?offset={2**63 - 1}")
    assert status == 200  # the largest offset SQLite holds is simply past the end


def test_search_offset_is_bounded(svc: Service) -> None:
    for query in ("query=token&", "project=acme&"):  # ranked, and a listing by date
        for offset in (2**63, MAX_OFFSET + 1):
            status, body = call(svc, "GET", f"/api/search?{query}format=json&offset={offset}")
            assert_refused(status, body, "offset")
        status, _ = call(svc, "GET", f"/api/search?{query}format=json&offset={MAX_OFFSET}")
        assert status == 200


@pytest.mark.parametrize(
    "param", ["since", "until", "dateStart", "dateEnd", "date_start", "date_end"]
)
@pytest.mark.parametrize("value", [str(2**63), str(2**70), "99999999999999999999"])
def test_search_dates_beyond_the_calendar_are_a_400_naming_them(
    svc: Service, param: str, value: str
) -> None:
    """The message names the spelling that was sent (issue 13: old spellings still work)."""
    status, body = call(svc, "GET", f"/api/search?project=acme&format=json&{param}={value}")
    assert_refused(status, body, param)


def test_the_last_day_of_the_calendar_is_still_a_date(svc: Service) -> None:
    """``dateEnd=9999-12-31`` means "through that whole day", which used to overflow."""
    status, body = call(svc, "GET", "/api/search?project=acme&format=json&dateEnd=9999-12-31")
    assert status == 200, body
    status, body = call(svc, "GET", "/api/stats/types?dateEnd=9999-12-31&dateStart=0001-01-01")
    assert status == 200, body


@pytest.mark.parametrize(
    "anchor",
    [str(2**63), f"%23{2**63}", f"S{2**63}", "9999-12-31T23:59:59-01:00", "0001-01-01T00:00+01:00"],
)
def test_timeline_anchor_out_of_range_is_a_400(svc: Service, anchor: str) -> None:
    status, body = call(svc, "GET", f"/api/timeline?anchor={quote(anchor, safe='%')}")
    assert_refused(status, body, "anchor")


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/observations/batch", {"ids": [2**63]}, "ids"),
        ("/api/observations/batch", {"ids": f"1,{2**63}"}, "ids"),
        ("/api/observations/forget", {"ids": [2**63]}, "ids"),
        ("/api/queue/retry", {"eventIds": [2**63]}, "eventIds"),
    ],
)
def test_ids_in_bodies_beyond_64_bits_are_a_422(
    svc: Service, path: str, body: dict[str, Any], field: str
) -> None:
    status, answer = call(svc, "POST", path, body)
    assert status == 422, answer
    assert_refused(status, answer, field)


def test_file_context_mtime_beyond_the_calendar_is_a_422(svc: Service) -> None:
    status, body = call(svc, "GET", f"/api/context/file?path=/tmp/a.py&mtime={2**63}")
    assert_refused(status, body, "mtime")


NOBODY = 65534  # the uid the lookup runs as when the suite runs as root

# ----- B: a cwd the file system refuses ----------------------------------------------------------


def test_project_from_an_unreadable_cwd_is_its_folder_name(tmp_path: Path) -> None:
    repo = tmp_path / "acme-repo"
    (repo / ".git").mkdir(parents=True)
    # The git root above a component the kernel refuses (ENAMETOOLONG) is still found.
    assert project_from_cwd(str(repo / LONG_NAME / "src")) == "acme-repo"
    # No git root: the folder's own name, cut to the 200 characters the API accepts.
    assert project_from_cwd(f"/tmp/{LONG_NAME}") == "x" * 200
    assert project_from_cwd("/tmp/nul\x00byte") == "nul\x00byte"


def test_project_from_a_cwd_without_access_is_its_folder_name() -> None:
    """EACCES on the way up to a git root. Root reads folders whatever their mode, and CI runs
    as root, so there the lookup runs in a forked child that became ``nobody`` (a skip would
    never run in CI; a fresh interpreter as nobody could not read root's Python)."""
    top = Path(tempfile.mkdtemp(prefix="wb-locked-"))
    try:
        top.chmod(0o755)  # nobody must reach the locked folder to be refused by it
        (top / ".git").mkdir()
        locked = top / "locked"
        (locked / "inner").mkdir(parents=True)
        locked.chmod(0)
        # EACCES from ``locked`` down: the git root above it is still found, as for a
        # component too long; without one, the folder's own name.
        assert project_as_nobody(str(locked / "inner" / "work")) == top.name
        (top / ".git").rmdir()
        assert project_as_nobody(str(locked / "inner" / "work")) == "work"
    finally:
        (top / "locked").chmod(0o700)
        shutil.rmtree(top)


def project_as_nobody(cwd: str) -> str:
    """``project_from_cwd(cwd)`` in a forked child that dropped root (as is, when not root)."""
    if os.geteuid() != 0:
        return project_from_cwd(cwd)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no pytest teardown, no return
        code = 1
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            os.write(write, project_from_cwd(cwd).encode("utf-8"))
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        project = answer.read().decode("utf-8")
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    return project


def test_routes_take_a_cwd_with_an_overlong_component(svc: Service) -> None:
    cwd = f"/tmp/{LONG_NAME}"
    status, body = call(
        svc,
        "POST",
        "/api/sessions/observations",
        {"contentSessionId": "s-long-cwd", "tool_name": "Bash", "cwd": cwd},
    )
    assert status == 200, body
    assert isinstance(body.get("eventId"), int), body
    assert rows(svc, "SELECT project FROM sessions WHERE content_session_id = 's-long-cwd'") == [
        ("x" * 200,)
    ]
    status, body = call(svc, "GET", f"/api/observations/by-file?path=a.py&cwd={cwd}")
    assert status == 200, body
    assert body["project"] == "x" * 200
    status, body = call(svc, "GET", f"/api/context/file?path=a.py&cwd={cwd}")
    assert status == 200, body


def test_hooks_print_their_json_for_a_cwd_with_an_overlong_component(svc: Service) -> None:
    env = hook_env(svc)
    cwd = f"/tmp/{LONG_NAME}"
    start = {**load_payload("session_start_startup"), "session_id": "s-long-hook", "cwd": cwd}
    assert run_hook("session_start", start, env).output() is not None
    prompt = {**load_payload("user_prompt_submit"), "session_id": "s-long-hook", "cwd": cwd}
    assert run_hook("user_prompt_submit", prompt, env).output() == {}
    found = rows(svc, "SELECT project FROM sessions WHERE content_session_id = 's-long-hook'")
    assert found == [("x" * 200,)]


def test_a_spooled_event_with_an_overlong_cwd_replays(svc: Service) -> None:
    key = spool.new_event_key()
    body = {"contentSessionId": "s-long-spool", "tool_name": "Bash", "cwd": f"/tmp/{LONG_NAME}"}
    envelope = spool.Envelope(
        key, "/api/sessions/observations", body, hook="PostToolUse", spooled_at_ns=time.time_ns()
    )
    spool.write(svc.data_dir / "spool", envelope)
    status, report = call(svc, "POST", "/api/spool/replay", {})
    assert status == 200, report
    assert list((svc.data_dir / "spool").glob("*.json")) == [], report
    assert rows(svc, "SELECT count(*) FROM events WHERE event_key = ?", key) == [(1,)]


# ----- C: "¹" is a digit to str.isdigit(), not to int() ------------------------------------------


@pytest.mark.parametrize("route", STATS_ROUTES)
def test_stats_dates_that_only_look_like_digits_are_a_400(svc: Service, route: str) -> None:
    for param in ("dateStart", "dateEnd"):
        status, body = call(svc, "GET", f"/api/stats/{route}?{param}=%C2%B9")
        assert_refused(status, body, param)


def test_search_dates_that_only_look_like_digits_are_a_400(svc: Service) -> None:
    status, body = call(svc, "GET", "/api/search?project=acme&dateStart=%C2%B9")
    assert_refused(status, body, "dateStart")


def _read(raw: bytes) -> _runtime.Reply:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        theirs.sendall(raw)
        theirs.shutdown(socket.SHUT_WR)
        return _runtime.read_response(ours, time.monotonic() + 2)


@pytest.mark.parametrize(
    ("raw", "error"),
    [
        ("HTTP/1.1 200 OK\r\nContent-Length: ¹\r\n\r\n{}", "not a valid Content-Length"),
        ("HTTP/1.1 ²00 OK\r\nContent-Length: 2\r\n\r\n{}", "not an HTTP status line"),
    ],
)
def test_hook_http_client_names_a_non_ascii_number(raw: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        _read(raw.encode("latin-1"))


def test_a_hook_meeting_a_non_ascii_content_length_still_prints_its_json(
    data_dir: Path,
) -> None:
    """A peer answering ``Content-Length: ¹``: the event is spooled, the hook prints ``{}``."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        server.settimeout(10)
        env = base_env(data_dir, server.getsockname()[1])

        def answer() -> None:
            conn, _ = server.accept()
            with conn:
                conn.recv(65536)
                conn.sendall("HTTP/1.1 200 OK\r\nContent-Length: ¹\r\n\r\n{}".encode("latin-1"))

        peer = threading.Thread(target=answer, daemon=True)
        peer.start()
        payload = load_payload("session_end")
        assert run_hook("session_end", payload, env).output() == {}
        peer.join(10)
    assert len(list((data_dir / "spool").glob("*.json"))) == 1


def test_last_event_id_with_a_non_ascii_number_starts_over() -> None:
    assert parse_last_event_id("abc.¹", "abc") == (False, 0)
    assert parse_last_event_id("abc.12", "abc") == (True, 12)


def test_corpus_limit_that_only_looks_like_digits_is_refused() -> None:
    for value in ("¹", "-¹"):
        with pytest.raises(InvalidInput, match="limit must be a positive integer"):
            parse_limit(value)


def test_show_with_an_id_that_only_looks_like_digits_says_so(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["show", "¹"], env={"WORKBENCH_DATA_DIR": str(tmp_path), "WORKBENCH_PORT": "1"}
    )
    assert result.exit_code == 1, result.exception  # a message, not a ValueError traceback
    assert "is not an observation id" in result.output


def test_a_pid_file_holding_a_non_ascii_digit_reads_as_no_pid(tmp_path: Path) -> None:
    path = tmp_path / "service.pid"
    path.write_text("¹", encoding="utf-8")
    with path.open("r", encoding="utf-8") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)  # a live holder, as a running service would be
        assert read_pid(path) is None


# ----- D: a missing or blank prompt is not a private one -----------------------------------------


@pytest.mark.parametrize(
    ("name", "prompt"),
    [("missing", None), ("empty", ""), ("blank", "   \n"), ("number", 42), ("list", ["x"])],
)
def test_a_missing_or_blank_prompt_keeps_the_session_captured(
    svc: Service, name: str, prompt: Any
) -> None:
    session = f"s-prompt-{name}"
    env = hook_env(svc)
    first = {**load_payload("user_prompt_submit"), "session_id": session}
    assert run_hook("user_prompt_submit", first, env).output() == {}
    blank = {k: v for k, v in first.items() if k != "prompt"}
    if prompt is not None:
        blank["prompt"] = prompt
    assert run_hook("user_prompt_submit", blank, env).output() == {}
    tool = {**load_payload("post_tool_use_grep"), "session_id": session}
    tool.pop("tool_use_id", None)
    assert run_hook("post_tool_use", tool, env).output() == {}

    kinds = rows(svc, "SELECT kind FROM events WHERE content_session_id = ? ORDER BY id", session)
    assert kinds == [("session_init",), ("observation",)]  # the tool call was captured
    prompts = rows(svc, "SELECT prompt_counter FROM sessions WHERE content_session_id = ?", session)
    assert prompts == [(1,)]  # no prompt was counted for the blank one


def test_an_entirely_private_prompt_still_keeps_its_work_out(svc: Service) -> None:
    session = "s-still-private"
    env = hook_env(svc)
    secret = {
        **load_payload("user_prompt_submit"),
        "session_id": session,
        "prompt": "<private>the staging token</private>",
    }
    assert run_hook("user_prompt_submit", secret, env).output() == {}
    tool = {**load_payload("post_tool_use_grep"), "session_id": session}
    tool.pop("tool_use_id", None)
    assert run_hook("post_tool_use", tool, env).output() == {}
    kinds = rows(svc, "SELECT kind FROM events WHERE content_session_id = ?", session)
    assert kinds == [("session_init",)]


def test_session_init_without_a_prompt_opens_the_session_and_counts_nothing(
    svc: Service,
) -> None:
    status, body = call(
        svc, "POST", "/api/sessions/init", {"contentSessionId": "s-no-prompt", "project": "acme"}
    )
    assert status == 200, body
    assert body["status"] == "skipped", body
    assert "no prompt" in body["reason"], body
    status, body = call(
        svc,
        "POST",
        "/api/sessions/observations",
        {"contentSessionId": "s-no-prompt", "tool_name": "Bash", "cwd": "/tmp/acme"},
    )
    assert (status, body["status"]) == (200, "queued"), body
    found = rows(
        svc, "SELECT project, prompt_counter FROM sessions WHERE content_session_id = 's-no-prompt'"
    )
    assert found == [("acme", 0)]


# ----- E: an optional field too long for its limit -----------------------------------------------


def test_an_overlong_tool_use_id_is_stored_and_still_deduplicates(svc: Service) -> None:
    def send(tool_use_id: str) -> dict[str, Any]:
        status, body = call(
            svc,
            "POST",
            "/api/sessions/observations",
            {"contentSessionId": "s-long-id", "tool_name": "Bash", "tool_use_id": tool_use_id},
        )
        assert status == 200, body
        return body

    long_id = "toolu_" + "u" * 600
    first = send(long_id)
    assert isinstance(first.get("eventId"), int), first
    assert send(long_id)["status"] == "duplicate"
    # Same first 500 characters, another call: hashing (not cutting) keeps them apart.
    other = send(long_id[:500] + "v" * 106)
    assert other.get("eventId") not in (None, first["eventId"]), other


def test_an_overlong_session_end_reason_is_cut_not_refused(svc: Service) -> None:
    init = {"contentSessionId": "s-long-reason", "project": "acme", "prompt": "ship it"}
    assert call(svc, "POST", "/api/sessions/init", init)[0] == 200
    status, body = call(
        svc, "POST", "/api/sessions/end", {"contentSessionId": "s-long-reason", "reason": "r" * 900}
    )
    assert status == 200, body
    (payload,) = rows(
        svc,
        "SELECT payload FROM events WHERE content_session_id = 's-long-reason'"
        " AND kind = 'session_end'",
    )[0]
    assert json.loads(payload)["reason"] == "r" * 500


def test_hooks_deliver_overlong_optional_fields(svc: Service) -> None:
    env = hook_env(svc)
    tool = {**load_payload("post_tool_use_grep"), "session_id": "s-long-hook-e"}
    tool["tool_use_id"] = "toolu_" + "u" * 600
    assert run_hook("post_tool_use", tool, env).output() == {}
    end = {**load_payload("session_end"), "session_id": "s-long-hook-e", "reason": "z" * 600}
    assert run_hook("session_end", end, env).output() == {}
    kinds = rows(
        svc, "SELECT kind FROM events WHERE content_session_id = 's-long-hook-e' ORDER BY id"
    )
    assert kinds == [("observation",), ("session_end",)]
    assert list((svc.data_dir / "spool").glob("*.json")) == []


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/sessions/observations", {"contentSessionId": "", "tool_name": "Bash"}, "Id"),
        ("/api/sessions/observations", {"contentSessionId": "s", "tool_name": ""}, "tool_name"),
        ("/api/sessions/end", {"contentSessionId": ""}, "contentSessionId"),
    ],
)
def test_empty_required_ids_are_still_refused(
    svc: Service, path: str, body: dict[str, Any], field: str
) -> None:
    status, answer = call(svc, "POST", path, body)
    assert status == 422, answer
    assert_refused(status, answer, field)
