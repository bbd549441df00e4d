"""The CLI reads the service's replies through the same models the service declares (issue 13).

- ``workbench search|timeline|show --json`` print what validates as ``SearchReply``,
  ``Timeline`` and ``list[Observation]``, whether the service answered or (service down) the
  CLI read the store itself: one contract for both paths.
- ``checked`` hands a valid reply back unchanged and refuses a broken one with a
  ``ReplyMismatch`` that names the field and says what to do.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import TypeAdapter

from tests.conftest import Service, run_workbench
from workbench.api_models.check import ReplyMismatch, checked
from workbench.api_models.search import SearchReply, Timeline
from workbench.models import Observation

pytestmark = pytest.mark.slow

PROJECT = "acme-api"
CWD = "/home/dev/code/acme-api"


def seed(svc: Service) -> None:
    sid = "clients-session"
    init = {"contentSessionId": sid, "project": PROJECT, "prompt": "fix the token bug"}
    assert svc.post("/api/sessions/init", init)[0] == 200
    for path in ("/src/acme/auth.py", "/src/acme/tokens.py"):
        status, _ = svc.post(
            "/api/sessions/observations",
            {
                "contentSessionId": sid,
                "tool_name": "Read",
                "tool_input": {"file_path": f"{CWD}{path}"},
                "tool_response": {"type": "text", "file": {"filePath": path, "content": "x"}},
                "cwd": CWD,
            },
        )
        assert status == 200
    svc.wait_idle()


def cli_json(svc: Service, *args: str) -> Any:
    done = run_workbench(svc.env, *args, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_cli_json_validates_through_the_models_served_and_local(make_service: Any) -> None:
    svc = make_service()
    seed(svc)
    _, page = svc.get("/api/observations")
    first = page["items"][-1]["id"]
    commands: list[tuple[Any, tuple[str, ...]]] = [
        (SearchReply, ("search", "auth", "--project", PROJECT)),
        (Timeline, ("timeline", str(first))),
        (list[Observation], ("show", str(first))),
    ]
    served = [cli_json(svc, *args) for _, args in commands]
    svc.stop()
    local = [cli_json(svc, *args) for _, args in commands]
    for (shape, args), a, b in zip(commands, served, local, strict=True):
        TypeAdapter(shape).validate_python(a)
        TypeAdapter(shape).validate_python(b)
        assert a, args
        assert b, args
    assert [o["id"] for o in served[2]] == [o["id"] for o in local[2]] == [first]


def test_checked_hands_back_a_valid_reply_unchanged() -> None:
    reply = {
        "anchor": {"kind": "time", "created_at": "2026-12-01T00:00:00Z", "created_at_epoch": 1},
        "items": [],
        "extra": "kept",
    }
    assert checked(Timeline, reply, "timeline") is reply


def test_checked_refuses_a_broken_reply_and_says_what_to_do() -> None:
    with pytest.raises(ReplyMismatch) as caught:
        checked(list[Observation], [{"id": "not a number"}], "show")
    assert "show answered a reply" in caught.value.message
    assert "(0.title: Field required)" in caught.value.message
    assert "workbench stop && workbench serve --detach" in caught.value.message
