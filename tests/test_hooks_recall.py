"""The recall side of the hooks, as Claude Code runs them: real subprocesses, real payloads.

- SessionStart against the real service prints the block of ``/api/context/inject`` and the
  injection lands in the ledger under the payload's session id;
- PreToolUse (Read) against the real service prints the file history as
  ``additionalContext`` only (never a ``permissionDecision``: the user's permission rules
  stay in charge of the Read), and ``{}`` for each gate: small file, changed after the
  newest observation, subagent, directory, missing file, no observations, another tool,
  service down (never spooled); the local gates make no request at all (a recording peer);
- UserPromptSubmit makes its second request only when ``prompt_injection`` is on (env or
  settings.json) and the redacted prompt is long enough, and always posts the prompt first.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from pydantic import ValidationError

from hooks import pre_tool_use_read, user_prompt_submit
from tests.conftest import Service, base_env, free_port, http_json
from tests.hook_harness import SECRET, Recorder, load_payload, run_hook, spooled
from workbench import locate
from workbench.clock import now_ms
from workbench.models import ObservationDraft
from workbench.settings import load_settings
from workbench.store import observations, sessions
from workbench.store.connection import atomic
from workbench.store.database import Store

DAY_MS = 86_400_000
BIG = "x = 1  # a line of code\n" * 100  # 2,400 bytes
FILE_TEXT = "Earlier sessions that touched this file"


class Checkout:
    """A git checkout ``proj`` with files in every state the gates care about."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.src = root / "src"
        (root / ".git").mkdir(parents=True)
        (root / "src" / "pkg").mkdir(parents=True)
        self.old_ms = now_ms() - DAY_MS
        self.obs_ms = now_ms() - 3_600_000
        for name, text in {
            "auth.py": BIG,  # big, history, unchanged since: injected
            "small.py": "x = 1\n",  # history, but small
            "changed.py": BIG,  # history, but changed after it
            "untouched.py": BIG,  # big, no history
        }.items():
            path = self.src / name
            path.write_text(text, encoding="utf-8")
            os.utime(path, ns=(self.old_ms * 1_000_000, self.old_ms * 1_000_000))
        later = (self.obs_ms + 60_000) * 1_000_000
        os.utime(self.src / "changed.py", ns=(later, later))

    def path(self, name: str) -> str:
        return str(self.src / name)

    def seed(self, db: Path) -> None:
        with Store(db) as store, atomic(store.conn):
            for i, (title, kind, modified, read) in enumerate(
                [
                    ("Read auth.py: token checks", "discovery", [], ["src/auth.py"]),
                    ("Fixed the expiry check in auth.py", "bugfix", ["src/auth.py"], []),
                    ("Tuned small.py", "change", ["src/small.py"], []),
                    ("Changed changed.py", "change", ["src/changed.py"], []),
                    ("Looked at the pkg folder", "discovery", [], ["src/pkg"]),
                ]
            ):
                # Sessions of this checkout, keyed as a hook in it keys them (m012).
                sessions.ensure(
                    store.conn,
                    f"earlier-{i}",
                    "proj",
                    at_ms=self.obs_ms,
                    project_key=locate.project_key_from_cwd(str(self.root)),
                )
                observations.insert(
                    store.conn,
                    ObservationDraft(
                        type=kind, title=title, files_read=read, files_modified=modified
                    ),
                    content_session_id=f"earlier-{i}",
                    project="proj",
                    discovery_tokens=500,
                    created_ms=self.obs_ms + i,
                )


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Checkout:
    return Checkout(tmp_path_factory.mktemp("checkout") / "proj")


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, checkout: Checkout) -> Iterator[Service]:
    """One real service for this module, on a store seeded before it starts."""
    data = tmp_path_factory.mktemp("live") / "data"
    data.mkdir()
    checkout.seed(data / "workbench.db")
    port = free_port()
    # Module-scoped, so set up before the autouse env fixture: say "full text only" here.
    env = base_env(data, port, WORKBENCH_EMBEDDER="none")
    svc = Service(data_dir=data, port=port, env=env).start()
    yield svc
    svc.stop()


def injections(svc: Service, kind: str) -> list[dict[str, Any]]:
    with Store(svc.data_dir / "workbench.db", readonly=True) as ro:
        rows = ro.conn.execute("SELECT * FROM injections WHERE kind = ? ORDER BY id", (kind,))
        return [dict(r) for r in rows]


def read_payload(checkout: Checkout, file_path: str, **extra: Any) -> dict[str, Any]:
    payload = load_payload("pre_tool_use_read")
    return {**payload, "cwd": str(checkout.root), "tool_input": {"file_path": file_path}, **extra}


# ----- SessionStart ------------------------------------------------------------------------------


def test_session_start_prints_the_block_and_it_is_recorded(
    live: Service, checkout: Checkout
) -> None:
    payload = {**load_payload("session_start_startup"), "cwd": str(checkout.root)}
    output = run_hook("session_start", payload, live.env).output()
    status, expected = live.get("/api/context/inject?projects=proj")
    assert status == 200
    assert expected.startswith("<workbench-context>\n# workbench memory · project proj — ")
    assert output == {
        "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": expected}
    }
    first, second = injections(live, "session_start")[-2:]
    assert first["content_session_id"] == payload["session_id"]  # the hook's call
    assert second["content_session_id"] is None  # ours, above
    assert first["tokens"] == second["tokens"] > 0


# ----- PreToolUse (Read) -------------------------------------------------------------------------


def test_read_of_a_file_with_history_gets_it(live: Service, checkout: Checkout) -> None:
    before = len(injections(live, "file"))
    payload = read_payload(checkout, checkout.path("auth.py"))
    output = run_hook("pre_tool_use_read", payload, live.env).output()
    assert output is not None
    context = output["hookSpecificOutput"]["additionalContext"]
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": context,
        }
    }
    assert context.startswith("<workbench-context>\n# workbench memory · file src/auth.py — ")
    assert context.endswith("</workbench-context>")
    lines = [line for line in context.splitlines() if line.startswith("- #")]
    assert len(lines) == 2
    assert " modified 🔴 Fixed the expiry check in auth.py" in lines[0]  # changes first
    assert " read 🔵 Read auth.py: token checks" in lines[1]
    recorded = injections(live, "file")
    assert len(recorded) == before + 1
    assert recorded[-1]["content_session_id"] == payload["session_id"]
    assert recorded[-1]["project"] == "proj"

    relative = run_hook(
        "pre_tool_use_read", read_payload(checkout, "src/auth.py"), live.env
    ).output()
    assert relative == output


def test_read_file_history_ends_with_the_smart_outline_hint(
    live: Service, checkout: Checkout
) -> None:
    """As claude-mem's: a structural map is cheaper than re-reading (issue 22 item 1)."""
    payload = read_payload(checkout, checkout.path("auth.py"))
    output = run_hook("pre_tool_use_read", payload, live.env).output()
    assert output is not None
    body = output["hookSpecificOutput"]["additionalContext"].splitlines()
    assert body[-1] == "</workbench-context>"
    assert body[-2] == (
        'Need a structural map first? MCP `smart_outline("src/auth.py")`: signatures and '
        'line ranges, cheaper than re-reading; `smart_unfold("src/auth.py", "<symbol>")` '
        "for one function."
    )
    assert body[-3].startswith("Details: MCP `get_observations` with ids [")


@pytest.mark.parametrize(
    ("case", "name", "extra"),
    [
        ("small file", "small.py", {}),
        ("changed after the newest observation", "changed.py", {}),
        ("no observations", "untouched.py", {}),
        ("directory", "pkg", {}),
        ("missing file", "gone.py", {}),
        ("subagent", "auth.py", {"agent_id": "a7c41e9b", "agent_type": "Explore"}),
        ("another tool", "auth.py", {"tool_name": "Edit"}),
    ],
)
def test_read_gates_print_an_empty_object(
    case: str, name: str, extra: dict[str, Any], live: Service, checkout: Checkout
) -> None:
    before = len(injections(live, "file"))
    payload = read_payload(checkout, checkout.path(name), **extra)
    assert run_hook("pre_tool_use_read", payload, live.env).output() == {}, case
    assert len(injections(live, "file")) == before  # nothing shown, nothing recorded


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("small.py", {}),
        ("pkg", {}),
        ("gone.py", {}),
        ("auth.py", {"agent_id": "a7c41e9b"}),
        ("auth.py", {"tool_name": "Grep"}),
    ],
)
def test_local_gates_make_no_request(
    name: str, extra: dict[str, Any], checkout: Checkout, tmp_path: Path
) -> None:
    peer = Recorder()
    peer.replies[pre_tool_use_read.ROUTE] = (200, b"history")
    try:
        env = base_env(tmp_path, peer.port)
        payload = read_payload(checkout, checkout.path(name), **extra)
        assert run_hook("pre_tool_use_read", payload, env).output() == {}
        assert peer.requests == []
    finally:
        peer.close()


def test_read_asks_with_path_cwd_mtime_and_session(checkout: Checkout, tmp_path: Path) -> None:
    peer = Recorder()
    peer.replies[pre_tool_use_read.ROUTE] = (
        200,
        b"<workbench-context>\nhistory\n</workbench-context>",
    )
    try:
        payload = read_payload(checkout, checkout.path("auth.py"))
        output = run_hook("pre_tool_use_read", payload, base_env(tmp_path, peer.port)).output()
        (request,) = peer.requests
    finally:
        peer.close()
    assert output == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "additionalContext": "<workbench-context>\nhistory\n</workbench-context>",
        }
    }
    assert request.method == "GET"
    target, _, query = request.path.partition("?")
    assert target == pre_tool_use_read.ROUTE
    params = dict(part.split("=", 1) for part in query.split("&"))
    assert params["mtime"] == str(checkout.old_ms)
    assert params["contentSessionId"] == payload["session_id"]
    assert params["path"] == _quoted(checkout.path("auth.py"))
    assert params["cwd"] == _quoted(str(checkout.root))


def _quoted(text: str) -> str:
    return quote(text, safe="")


def test_min_bytes_is_a_setting(live: Service, checkout: Checkout) -> None:
    env = {**live.env, "WORKBENCH_FILE_CONTEXT_MIN_BYTES": "1"}
    payload = read_payload(checkout, checkout.path("small.py"))
    output = run_hook("pre_tool_use_read", payload, env).output()
    assert output is not None
    assert "Tuned small.py" in output["hookSpecificOutput"]["additionalContext"]
    (live.data_dir / "settings.json").write_text('{"file_context_min_bytes": 3}', "utf-8")
    try:
        assert run_hook("pre_tool_use_read", payload, live.env).output() == output
    finally:
        (live.data_dir / "settings.json").unlink()


def test_read_with_the_service_down_prints_empty_and_never_spools(
    checkout: Checkout, tmp_path: Path
) -> None:
    env = base_env(tmp_path, free_port())
    payload = read_payload(checkout, checkout.path("auth.py"))
    assert (
        run_hook("pre_tool_use_read", payload, env).output() == {}
    )  # wall time: bench/worst_cases.py
    assert not (tmp_path / "spool").exists()
    assert list(tmp_path.iterdir()) == []


# ----- UserPromptSubmit --------------------------------------------------------------------------


@pytest.fixture
def peer() -> Iterator[Recorder]:
    rec = Recorder()
    rec.replies[user_prompt_submit.CONTEXT_ROUTE] = (
        200,
        b"<workbench-context>\nrelated\n</workbench-context>",
    )
    yield rec
    rec.close()


def paths(peer: Recorder) -> list[str]:
    return [f"{r.method} {r.path.split('?', 1)[0]}" for r in peer.requests]


def test_prompt_injection_off_makes_no_second_request(peer: Recorder, tmp_path: Path) -> None:
    payload = load_payload("user_prompt_submit")
    assert run_hook("user_prompt_submit", payload, base_env(tmp_path, peer.port)).output() == {}
    assert paths(peer) == ["POST /api/sessions/init"]


@pytest.mark.parametrize("how", ["env", "settings.json"])
def test_prompt_injection_on_posts_first_then_asks(
    how: str, peer: Recorder, tmp_path: Path
) -> None:
    extra = {"WORKBENCH_PROMPT_INJECTION": "true"} if how == "env" else {}
    if how == "settings.json":
        (tmp_path / "settings.json").write_text(json.dumps({"prompt_injection": True}), "utf-8")
    payload = load_payload("user_prompt_submit")
    output = run_hook("user_prompt_submit", payload, base_env(tmp_path, peer.port, **extra))
    assert output.output() == {
        "hookSpecificOutput": {
            "hookEventName": "UserPromptSubmit",
            "additionalContext": "<workbench-context>\nrelated\n</workbench-context>",
        }
    }
    assert paths(peer) == ["POST /api/sessions/init", f"GET {user_prompt_submit.CONTEXT_ROUTE}"]
    query = peer.requests[1].path.split("?", 1)[1]
    params = dict(part.split("=", 1) for part in query.split("&"))
    assert params["query"] == _quoted(payload["prompt"])
    assert params["project"] == "acme-api"
    assert params["contentSessionId"] == payload["session_id"]


def test_prompt_injection_skips_short_and_private_prompts(peer: Recorder, tmp_path: Path) -> None:
    env = base_env(tmp_path, peer.port, WORKBENCH_PROMPT_INJECTION="1")
    base = load_payload("user_prompt_submit")
    for prompt in ("fix it please", f"<private>{SECRET} and a long private tail</private> ok"):
        assert run_hook("user_prompt_submit", {**base, "prompt": prompt}, env).output() == {}
    assert paths(peer) == ["POST /api/sessions/init"] * 2
    lowered = {**env, "WORKBENCH_PROMPT_INJECTION_MIN_CHARS": "5"}
    run_hook("user_prompt_submit", {**base, "prompt": "fix it please"}, lowered).output()
    assert paths(peer)[-1] == f"GET {user_prompt_submit.CONTEXT_ROUTE}"
    assert all(SECRET not in r.path for r in peer.requests)


def test_prompt_injection_with_the_service_down_spools_the_prompt_only(tmp_path: Path) -> None:
    env = base_env(tmp_path, free_port(), WORKBENCH_PROMPT_INJECTION="1")
    assert run_hook("user_prompt_submit", load_payload("user_prompt_submit"), env).output() == {}
    ((_, envelope),) = spooled(tmp_path)
    assert envelope.path == user_prompt_submit.ROUTE


def test_prompt_injection_on_against_the_real_service(live: Service) -> None:
    """The hook's setting is on, the service's is off: the route answers empty, the hook {}."""
    env = {**live.env, "WORKBENCH_PROMPT_INJECTION": "1"}
    payload = {**load_payload("user_prompt_submit"), "session_id": "prompt-e2e"}
    assert run_hook("user_prompt_submit", payload, env).output() == {}
    status, prompts = http_json("GET", f"{live.url}/api/prompts?project=acme-api")
    assert status == 200
    assert [p["content_session_id"] for p in prompts["items"]] == ["prompt-e2e"]


# ----- the hook-side settings reader agrees with the service's -----------------------------------


@pytest.mark.parametrize(
    "value", ["true", "True", " yes ", "1", "on", "false", "0", "no", "off", "maybe", "", "2"]
)
def test_hook_flag_reads_env_text_as_the_service_does(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_PROMPT_INJECTION", value)
    try:
        service_side: bool | None = load_settings(tmp_path).prompt_injection
    except ValidationError:
        service_side = None  # the service refuses it; the hook falls back to the default
    hook_side = locate.parse_flag(locate.hook_setting(tmp_path, "prompt_injection"), False)
    assert hook_side == (False if service_side is None else service_side)


@pytest.mark.parametrize(
    ("file_value", "expected"), [(True, True), (1, True), (0, False), ("yes", True), (None, False)]
)
def test_hook_flag_reads_settings_json_as_the_service_does(
    file_value: Any, expected: bool, tmp_path: Path
) -> None:
    (tmp_path / "settings.json").write_text(json.dumps({"prompt_injection": file_value}), "utf-8")
    assert load_settings(tmp_path).prompt_injection is expected
    raw = locate.hook_setting(tmp_path, "prompt_injection")
    assert locate.parse_flag(raw, False) is expected


@pytest.mark.parametrize("value", ["1500", " 1500 ", "+1_500", "1500.0", "15.5", "-3", "x", ""])
def test_hook_counts_read_env_text_as_the_service_does(
    value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WORKBENCH_FILE_CONTEXT_MIN_BYTES", value)
    try:
        service_side: int | None = load_settings(tmp_path).file_context_min_bytes
    except ValidationError:
        service_side = None
    raw = locate.hook_setting(tmp_path, "file_context_min_bytes")
    hook_side = locate.parse_count(raw, pre_tool_use_read.DEFAULT_MIN_BYTES)
    assert hook_side == (
        pre_tool_use_read.DEFAULT_MIN_BYTES if service_side is None else service_side
    )
