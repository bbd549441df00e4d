"""Property-based fuzzing of the hooks' stdin (issue 9, "a standing guard").

Claude Code hands each hook one JSON object, and a real session produces hostile ones: a tool
output cut mid-emoji (a lone ``\\ud83d``), ``NaN`` in a tool input, ``1e400``, 2**70, keys of
every shape, wrong types, 990 levels of nesting, or not JSON at all. For every hook script:

- it exits 0 and prints exactly one JSON object on one line (nothing else: stdout is read into
  the agent's context), whatever stdin held;
- every event it accepted is accounted for (``fuzz_harness`` defines it): stored (the 2xx names
  an ``eventId`` whose row is in the log), skipped or a duplicate with a stated reason, refused
  with a 4xx JSON error, or spooled under its idempotency key. Hooks talk to the real service
  through ``Relay``, which records what each hook sent and what it was told;
- spooled events replay: after ``POST /api/spool/replay`` none is left pending for another
  round (a refused one is parked in ``spool/rejected``), and ``PRAGMA integrity_check`` is ok.

Most examples run a hook's ``main()`` in-process behind the same fail-open boundary as its
``__main__`` block (fast: no interpreter start); a few run the scripts as real subprocesses,
which adds exit status and stderr. The pure parts (``parse_input``, ``redact``) get the most.
"""

from __future__ import annotations

import io
import json
import os
import runpy
import shutil
import sys
import tempfile
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hooks import (
    _runtime,
    context_file,
    post_tool_use,
    pre_tool_use_read,
    session_end,
    session_start,
    stop,
    user_prompt_submit,
)
from hooks.adapters import PLATFORMS
from hooks.adapters import cursor as cursor_adapter
from hooks.adapters import gemini as gemini_adapter
from tests.conftest import FIXTURES, HOOKS_DIR, Service, base_env
from tests.fuzz_harness import (
    Answer,
    Ledger,
    Relay,
    budget,
    integrity,
    missing_events,
    scoped_env,
    send,
    server_fault,
    spooled_keys,
    start_service,
)
from tests.fuzz_strategies import (
    MARKER,
    TAG_ESCAPINGS,
    Request,
    atoms,
    escaped_block,
    json_objects,
    json_values,
    keys,
    nested_tags,
    raw_bodies,
    render,
    texts,
)
from workbench import own_tools, redact
from workbench.platforms import PLATFORM_SOURCES

pytestmark = pytest.mark.slow

HOOK_FIXTURES = FIXTURES / "hooks"
SCRIPTS: dict[str, ModuleType] = {
    "session_start": session_start,
    "user_prompt_submit": user_prompt_submit,
    "pre_tool_use_read": pre_tool_use_read,
    "post_tool_use": post_tool_use,
    "stop": stop,
    "session_end": session_end,
}
FIXTURES_FOR = {
    "session_start": ["session_start_startup"],
    "user_prompt_submit": ["user_prompt_submit", "user_prompt_submit_private"],
    "pre_tool_use_read": ["pre_tool_use_read"],
    "post_tool_use": [
        "post_tool_use_edit",
        "post_tool_use_bash_pytest_fail",
        "post_tool_use_grep",
        "post_tool_use_read",
        "post_tool_use_todowrite",
    ],
    "stop": ["stop", "stop_hook_active", "stop_subagent"],
    "session_end": ["session_end"],
}
LEDGER = Ledger()
REFUSED: list[str] = []  # hook events the service refused with a 4xx (listed, not failures)
HOOK_SETTINGS = {
    "deadline": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


def _load(name: str) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads((HOOK_FIXTURES / f"{name}.json").read_text("utf-8"))
    return payload


# ----- the parts: one service, a relay in front of it, a data dir for the hooks ----------------


class Bench:
    """Everything a hook example needs; a plain class, so Hypothesis prints its short repr."""

    def __init__(self, service: Service, relay: Relay, root: Path, transcripts: Path) -> None:
        self.service = service
        self.relay = relay
        self.root = root  # the hooks' data dir: their spool lands here
        self.transcripts = transcripts

    def __repr__(self) -> str:
        return f"Bench(root={str(self.root)!r})"

    @property
    def env(self) -> dict[str, str]:
        return {"WORKBENCH_DATA_DIR": str(self.root), "WORKBENCH_PORT": str(self.relay.port)}


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bench]:
    base = tmp_path_factory.mktemp("fuzz-hooks")
    svc = start_service(base / "service-data")
    relay = Relay(svc.port)
    (base / "transcripts").mkdir()
    shutil.copyfile(FIXTURES / "transcript.jsonl", base / "transcripts" / "real.jsonl")
    (base / "transcripts" / "big-file.py").write_text("x = 1\n" * 1000, "utf-8")
    for i in range(4):  # sessions with an ordinary prompt, so Stop and SessionEnd are stored
        init = {"contentSessionId": f"fuzz-work-{i}", "project": "acme-api", "prompt": "fix it"}
        LEDGER.record(f"seed init {i}", svc.post("/api/sessions/init", init))
    try:
        yield Bench(svc, relay, base / "hooks-data", base / "transcripts")
    finally:
        relay.close()
        svc.stop()


# ----- stdin strategies -------------------------------------------------------------------------

_transcript_lines = st.one_of(
    st.builds(
        lambda text, mid: render(
            {
                "type": "assistant",
                "message": {"id": mid, "content": [{"type": "text", "text": text}]},
            }
        ).encode("ascii"),
        st.one_of(texts, st.text(max_size=30)),
        st.sampled_from(["m1", "m2", None]),
    ),
    st.builds(lambda v: render({"type": "assistant", "message": v}).encode("ascii"), json_values),
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
)


@st.composite
def transcript_path(draw: st.DrawFn, folder: Path) -> Any:
    """A real transcript, one written now with hostile lines, a missing file, a directory, or
    any value at all (paths under /dev and /proc are left out: a hook may read what it names)."""
    choice = draw(st.integers(0, 5))
    if choice == 0:
        return str(folder / "real.jsonl")
    if choice <= 2:
        lines = draw(st.lists(_transcript_lines, min_size=1, max_size=6))
        path = folder / f"t-{draw(st.integers(0, 10**9))}.jsonl"
        path.write_bytes(b"\n".join(lines) + draw(st.sampled_from([b"", b"\n"])))
        return str(path)
    if choice == 3:
        return draw(st.sampled_from([str(folder / "missing.jsonl"), str(folder), ""]))
    value = draw(st.one_of(texts, atoms))
    if isinstance(value, str) and value.lstrip("/").startswith(("dev", "proc", "sys")):
        return ""
    return value


# SessionStart's ``source``: the known values, any text, huge, private, or not text at all.
session_sources = st.one_of(
    st.sampled_from(["startup", "resume", "clear", "compact", "fork", " Resume ", ""]),
    st.sampled_from(["<private>resume</private>", "resume<private>x</private>", "<private>"]),
    texts,
    st.text(min_size=60, max_size=5000),
    atoms,
)


@st.composite
def hook_stdin(draw: st.DrawFn, script: str, folder: Path) -> bytes:
    """What Claude Code might write to ``script``'s stdin: usually a real payload of its event
    with hostile values and keys swapped in, sometimes any JSON object, sometimes not JSON."""
    choice = draw(st.integers(0, 11))
    if choice == 0:
        return draw(raw_bodies)
    if choice == 1:
        return render(draw(json_objects)).encode("ascii")
    payload = dict(_load(draw(st.sampled_from(FIXTURES_FOR[script]))))
    # Prompts get sessions of their own: a private prompt makes the service skip the rest of
    # its session, and the other hooks' events should reach the store, not a skip rule.
    group = "prompt" if script == "user_prompt_submit" else "work"
    payload["session_id"] = f"fuzz-{group}-{draw(st.integers(0, 3))}"
    payload["transcript_path"] = draw(transcript_path(folder))
    if script == "session_start" and draw(st.booleans()):
        payload["source"] = draw(session_sources)  # issue 20 item 4: the service reads it
    if script == "pre_tool_use_read" and draw(st.booleans()):
        payload["tool_input"] = {"file_path": str(folder / "big-file.py")}
    for _ in range(draw(st.integers(0, 3))):
        name = draw(st.one_of(st.sampled_from(sorted(payload)), keys))
        payload[name] = draw(st.one_of(texts, atoms, json_values))
    for name in ("tool_input", "tool_response"):
        if name in payload and draw(st.booleans()):
            inner = payload[name] if isinstance(payload[name], dict) else {}
            payload[name] = {**inner, draw(keys): draw(json_values)}
    return render(payload).encode("ascii")


# ----- running a hook ---------------------------------------------------------------------------


@dataclass
class Outcome:
    stdout: bytes
    returncode: int = 0
    stderr: bytes = b""


def run_in_process(
    script: str, raw: bytes, env: dict[str, str], platform: str = "claude"
) -> Outcome:
    """The script's own ``__main__`` block (its fail-open boundary included), run in this
    process by ``runpy`` with ``raw`` on stdin: the subprocess run minus interpreter start-up.
    ``--platform`` is on the script's command line, as the agent's hook command has it."""
    out = io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    saved = sys.stdin, sys.stdout, sys.argv
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    sys.stdout = stdout
    sys.argv = [str(HOOKS_DIR / f"{script}.py"), "--platform", platform]
    code: object = 0
    try:
        with scoped_env(**env):
            try:
                runpy.run_path(str(HOOKS_DIR / f"{script}.py"), run_name="__main__")
            except SystemExit as exc:
                code = exc.code
    finally:
        sys.stdin, sys.stdout, sys.argv = saved
    stdout.flush()
    printed = out.getvalue()
    stdout.detach()  # so collecting the wrapper does not close ``out`` under a later reader
    return Outcome(printed, code if isinstance(code, int) else 0 if code is None else 1)


def diagnose(script: str, raw: bytes, env: dict[str, str], platform: str = "claude") -> str:
    """What escapes ``main()`` for this stdin (the boundary hides it): run it once more, bare."""
    saved = sys.stdin, sys.stdout, sys.argv
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    sys.argv = [str(HOOKS_DIR / f"{script}.py"), "--platform", platform]
    try:
        with scoped_env(**env):
            SCRIPTS[script].main()
    except BaseException:  # noqa: BLE001 - reporting what the boundary swallowed
        return traceback.format_exc(limit=-3)[-1500:]
    finally:
        sys.stdin, sys.stdout, sys.argv = saved
    return ""


def run_subprocess(
    script: str, raw: bytes, env: dict[str, str], args: tuple[str, ...] = ()
) -> Outcome:
    import subprocess

    proc = subprocess.run(
        [sys.executable, str(HOOKS_DIR / f"{script}.py"), *args],
        input=raw,
        env=env,
        capture_output=True,
        timeout=60,
    )
    return Outcome(proc.stdout, proc.returncode, proc.stderr)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def assert_one_json_line(outcome: Outcome) -> None:
    """Exactly one line, holding one strict JSON object (no NaN), and nothing else."""
    text = outcome.stdout.decode("utf-8")
    lines = text.split("\n")
    assert len(lines) == 2, f"stdout must be one JSON line, got {text[:300]!r}"
    assert lines[1] == "", f"stdout must end after its one line, got {text[:300]!r}"
    value = json.loads(lines[0], parse_constant=_reject_constant)
    assert isinstance(value, dict), text[:300]


def due(module: ModuleType, raw: bytes, platform: str = _runtime.DEFAULT_PLATFORM) -> bool:
    """True when the hook accepted an event it must deliver (or spool).

    ``parse_input`` accepting the payload and ``build_body`` not declining it (a task
    notification, a subagent's Stop) make the event due. A ``build_body`` that raises is a
    crash on an accepted event: still due."""
    builder = getattr(module, "build_body", None)
    event = _runtime.parse_input(raw, platform)
    if builder is None or event is None:
        return False
    try:
        return builder(event) is not None
    except Exception:
        return True


def account(
    module: ModuleType,
    raw: bytes,
    bench: Bench,
    mark: int,
    before: set[str],
    platform: str = _runtime.DEFAULT_PLATFORM,
) -> None:
    """The hook's event is stored, skipped with a reason, refused with a 4xx, or spooled."""
    if not due(module, raw, platform):
        return
    route = module.ROUTE
    posts = [e for e in bench.relay.since(mark) if e.method == "POST" and e.path == route]
    new_spool = spooled_keys(bench.root) - before
    assert len(posts) <= 1, f"{len(posts)} posts for one event"
    if not posts:
        assert new_spool, (
            f"an accepted event was neither sent nor spooled (silently gone) for stdin "
            f"{raw[:300]!r}"
        )
        return
    exchange = posts[0]
    if exchange.status is not None and 200 <= exchange.status < 300:
        problem = LEDGER.account(
            f"{route} {raw[:200]!r}", Answer(exchange.status, exchange.reply, "")
        )
        assert problem is None, problem
        event_id = (exchange.json() or {}).get("eventId")
        if isinstance(event_id, int):
            db = bench.service.data_dir / "workbench.db"
            assert missing_events(db, [event_id]) == [], f"event {event_id} answered, not stored"
        return
    status = exchange.status
    if status is not None and 400 <= status < 500 and status not in _runtime.RETRYABLE_4XX:
        REFUSED.append(f"{route} {status} {exchange.reply[:200]!r} for stdin {raw[:200]!r}")
        return
    assert exchange.key in new_spool, (
        f"{route} answered {status} {exchange.reply[:200]!r} and the event was not spooled "
        f"(silently gone) for stdin {raw[:300]!r}"
    )


def exercise(
    script: str, raw: bytes, bench: Bench, *, subprocess: bool, platform: str = "claude"
) -> dict[str, Any]:
    """Run one hook on ``raw``, check the contract and the accounting; return what it printed."""
    module = SCRIPTS[script]
    mark = bench.relay.mark()
    before = spooled_keys(bench.root)
    stragglers = set((bench.root / "spool").glob("*.tmp"))
    if subprocess:
        env = base_env(bench.root, bench.relay.port, WORKBENCH_EMBEDDER="none")
        outcome = run_subprocess(script, raw, env)
        assert outcome.stderr == b"", outcome.stderr.decode(errors="replace")
    else:
        outcome = run_in_process(script, raw, bench.env, platform)
    assert outcome.returncode == 0, f"exit status {outcome.returncode}"
    try:
        assert_one_json_line(outcome)
        account(module, raw, bench, mark, before, platform)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{diagnose(script, raw, bench.env, platform)}") from None
    left = set((bench.root / "spool").glob("*.tmp")) - stragglers
    assert not left, f"a temp spool file was left behind for stdin {raw[:300]!r}"
    printed: dict[str, Any] = json.loads(outcome.stdout)
    return printed


# ----- the properties ---------------------------------------------------------------------------


@settings(max_examples=budget(500), **HOOK_SETTINGS)
@given(raw=st.one_of(raw_bodies, json_values.map(lambda v: render(v).encode("ascii"))))
def test_parse_input_accepts_or_declines_any_bytes(raw: bytes) -> None:
    event = _runtime.parse_input(raw)
    if event is not None:
        assert isinstance(event.session_id, str)
        assert isinstance(event.prompt, str)
        assert isinstance(event.stop_hook_active, bool)


@settings(max_examples=budget(400), **HOOK_SETTINGS)
@given(doc=json_objects, key=keys, text=texts)
def test_redact_value_leaves_no_private_text_in_values_or_keys(
    doc: dict[str, Any], key: str, text: str
) -> None:
    """Issue 9 item 7: every string, keys included, loses its ``<private>`` blocks."""
    secret = f"<private>{MARKER}</private>"
    doc = {**doc, f"{key}{secret}": {"inner": f"{text}{secret}", secret: [secret]}}
    cleaned = redact.redact_value(doc)
    assert MARKER not in render(cleaned)
    assert render(redact.redact_value(cleaned)) == render(cleaned)  # idempotent (NaN-safe)


@settings(max_examples=budget(300), **HOOK_SETTINGS)
@given(
    doc=json_objects,
    key=keys,
    text=texts,
    tag=st.sampled_from(redact.STRIPPED_TAGS),
    escaping=st.sampled_from(sorted(TAG_ESCAPINGS)),
    platform=st.sampled_from(PLATFORMS),
)
def test_escaped_blocks_leave_no_text_in_values_or_keys(
    doc: dict[str, Any], key: str, text: str, tag: str, escaping: str, platform: str
) -> None:
    """Issue 20, item 10: a stripped block whose ``<``/``>`` come back escaped (HTML
    entities, numeric, JSON-escaped, twice, mixed) goes like a plain one, from what a hook
    parses and from any value the service redacts; idempotent."""
    block = escaped_block(tag, escaping)
    doc = {**doc, f"{key}{block}": {"prompt": f"{text}{block}{text}", block: [block]}}
    cleaned = redact.redact_value(doc)
    assert MARKER not in render(cleaned)
    assert render(redact.redact_value(cleaned)) == render(cleaned)
    payload = {"hook_event_name": "UserPromptSubmit", "prompt": f"{text}{block}", "x": doc}
    event = _runtime.parse_input(render(payload).encode("ascii"), platform)
    assert event is not None
    assert MARKER not in event.prompt


@settings(max_examples=budget(300), **HOOK_SETTINGS)
@given(
    content=st.one_of(json_values, st.lists(st.fixed_dictionaries({"text": texts}), max_size=4)),
    display=json_values,
    error=json_values,
    tool=st.one_of(st.sampled_from(["list_directory", "mcp_github_search", "read_file"]), keys),
)
def test_gemini_tool_responses_of_any_shape_are_read_or_kept(
    content: Any, display: Any, error: Any, tool: str
) -> None:
    """Issue 20, item 11: ``{"llmContent": …, "returnDisplay": …}`` of any shape becomes the
    text the model saw (a string) or is kept as it came; the hook never fails on it."""
    response = {"llmContent": content, "returnDisplay": display, "error": error}
    flat = gemini_adapter.tool_response(response)
    assert isinstance(flat, str) or flat == response
    payload = {"hook_event_name": "AfterTool", "tool_name": tool, "tool_response": response}
    event = _runtime.parse_input(render(payload).encode("ascii"), "gemini")
    assert event is not None
    assert isinstance(event.tool_response, (str, dict))


@settings(max_examples=budget(100), **HOOK_SETTINGS)
@given(doc=json_objects, key=keys, depth=st.integers(0, 5000), as_key=st.booleans())
def test_adversarial_tag_nesting_leaves_no_private_text(
    doc: dict[str, Any], key: str, depth: int, as_key: bool
) -> None:
    """Issue 19, item 4: nested tags that re-form as each block goes (up to ~125 KB here,
    which the old loop took minutes over) leave no private text in any value or key."""
    text = nested_tags(depth)
    doc = {**doc, text: 1} if as_key else {**doc, key: {"stdout": text}}
    payload = render({**doc, "hook_event_name": "PostToolUse"}).encode("ascii")
    event = _runtime.parse_input(payload)
    assert event is not None
    assert MARKER not in render(redact.redact_value(doc))


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@settings(max_examples=budget(100), **HOOK_SETTINGS)
@given(data=st.data())
def test_hook_in_process_prints_one_json_object_and_loses_nothing(
    script: str, bench: Bench, data: st.DataObject
) -> None:
    raw = data.draw(hook_stdin(script, bench.transcripts), label="stdin")
    exercise(script, raw, bench, subprocess=False)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@settings(max_examples=budget(5), **HOOK_SETTINGS)
@given(data=st.data())
def test_hook_subprocess_exits_0_with_one_json_object_and_loses_nothing(
    script: str, bench: Bench, data: st.DataObject
) -> None:
    raw = data.draw(hook_stdin(script, bench.transcripts), label="stdin")
    exercise(script, raw, bench, subprocess=True)


KNOWN_HOSTILE_STDIN = [
    b'{"session_id":"s-known","tool_name":"Bash","cwd":"/tmp","tool_input":{"command":"x"},'
    b'"tool_response":{"stdout":"x \\ud83d"}}',
    b'{"session_id":"s-known","tool_name":"Bash","cwd":"/tmp","tool_input":{"t":NaN}}',
    b'{"session_id":"s-known","tool_name":"Bash","cwd":"/tmp","tool_input":{"t":1e400}}',
    b'{"session_id":"s-known","tool_name":"Bash","cwd":"/tmp","tool_input":{"\\ud83d":1}}',
    b'{"session_id":"s-known","tool_name":"Bash","cwd":"/tmp","tool_input":{"n":'
    + str(2**70).encode()
    + b"}}",
    b'{"session_id":"s-known","prompt":"cut \\ud83d","cwd":"/tmp"}',
    b'{"session_id":"s-known","reason":"\\ud83d","cwd":"/tmp"}',
    b'{"session_id":"s-known","cwd":"' + b"x" * 3000 + b'","tool_name":"Bash"}',
    b'{"session_id":"s-known","tool_name":"Bash","tool_use_id":"' + b"u" * 600 + b'"}',
    b'{"session_id":"s-known","tool_name":"Bash","tool_input":' + b"[" * 990 + b"]" * 990 + b"}",
]


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_known_hostile_stdin(script: str, bench: Bench) -> None:
    """Deterministic: the inputs issue 9 names, through every hook, every run."""
    cut = bench.transcripts / "cut-mid-emoji.jsonl"
    cut.write_bytes(
        b'{"type":"assistant","message":{"id":"m1","content":[{"type":"text",'
        b'"text":"done \\ud83d"}]}}\n'
    )
    stop_payload = {"session_id": "fuzz-work-1", "transcript_path": str(cut), "cwd": "/tmp"}
    failures = []
    inputs = [*KNOWN_HOSTILE_STDIN, render(stop_payload).encode("ascii")]
    if script == "user_prompt_submit":  # its empty prompts would mark s-known private, and
        inputs = [raw.replace(b"s-known", b"s-prompt") for raw in inputs]  # skip the rest
    for raw in inputs:
        try:
            exercise(script, raw, bench, subprocess=False)
        except AssertionError as exc:
            failures.append(f"stdin {raw[:120]!r}:\n{str(exc)[:600]}")
    assert not failures, f"{len(failures)} failing inputs:\n\n" + "\n\n".join(failures)


CURSOR_FIXTURES = {
    "user_prompt_submit": ["before_submit_prompt"],
    "post_tool_use": [
        "after_shell_execution",
        "after_mcp_execution",
        "after_file_edit",
        "after_file_edit_multi",
    ],
    "stop": ["stop"],
}
# JSON strings Cursor might put in tool_input / result_json that hurt once parsed.
CURSOR_HOSTILE_JSON = [
    '{"text": "cut mid-emoji \\ud83d"}',
    '{"\\ud83d": 1}',
    '{"t": NaN, "u": 1e400, "n": ' + str(2**70) + "}",
    "[" * 990 + "]" * 990,
    '{"a": ' * 200 + "1" + "}" * 200,
    '{"k": "<private>secret</private>"}',
    "{not json",
]


@st.composite
def cursor_stdin(draw: st.DrawFn, script: str) -> bytes:
    """What Cursor might write to ``script``'s stdin: a real payload of one of its events with
    hostile values swapped in (its own fields first), sometimes any object, or not JSON."""
    choice = draw(st.integers(0, 9))
    if choice == 0:
        return draw(raw_bodies)
    if choice == 1:
        return render(draw(json_objects)).encode("ascii")
    name = draw(st.sampled_from(CURSOR_FIXTURES[script]))
    payload = json.loads((HOOK_FIXTURES / "cursor" / f"{name}.json").read_text("utf-8"))
    group = "prompt" if script == "user_prompt_submit" else "work"
    payload["conversation_id"] = f"fuzz-{group}-{draw(st.integers(0, 3))}"
    for key in ("tool_input", "result_json"):
        if key in payload and draw(st.booleans()):
            payload[key] = draw(st.one_of(st.sampled_from(CURSOR_HOSTILE_JSON), texts))
    payload.update(draw(cursor_fields))
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.one_of(st.sampled_from(sorted(payload)), keys))
        payload[key] = draw(st.one_of(texts, atoms, json_values))
    return render(payload).encode("ascii")


@pytest.mark.parametrize("script", sorted(CURSOR_FIXTURES))
@settings(max_examples=budget(100), **HOOK_SETTINGS)
@given(data=st.data())
def test_cursor_payloads_print_cursors_answer_and_lose_nothing(
    script: str, bench: Bench, data: st.DataObject
) -> None:
    """Issue 11: Cursor's events through the scripts (``--platform cursor``), real service."""
    raw = data.draw(cursor_stdin(script), label="stdin")
    printed = exercise(script, raw, bench, subprocess=False, platform="cursor")
    assert printed == ({"continue": True} if script == "user_prompt_submit" else {})


def test_spooled_events_replay_or_are_parked_and_the_store_is_intact(bench: Bench) -> None:
    """Run last (file order). Whatever the hooks spooled is handed to the service's replay:
    nothing is left pending for another round, and the store is intact."""
    if REFUSED:  # not a failure: the service told the hook why; listed for the reader (-s)
        kinds = sorted({line.split(" for stdin ")[0][:220] for line in REFUSED})
        print(f"{len(REFUSED)} hook events refused with a 4xx:", *kinds, sep="\n  ")  # noqa: T201
    spool = bench.root / "spool"
    pending = sorted(spool.glob("*.json")) if spool.is_dir() else []
    target = bench.service.data_dir / "spool"
    target.mkdir(parents=True, exist_ok=True, mode=0o700)
    for path in pending:
        shutil.copyfile(path, target / path.name)
    answer = send(bench.service.port, Request("POST", "/api/spool/replay", b"{}"))
    assert not server_fault(answer), answer
    report = answer.json()
    left = sorted(target.glob("*.json"))
    log = bench.service.log_path.read_text("utf-8", errors="replace")
    why = [line[-300:] for line in log.splitlines() if "will retry" in line][-5:]
    heads = [p.read_bytes()[:300] for p in left[:5]]
    assert left == [], (
        f"{len(left)} spooled events left to be retried forever: {report}\n"
        f"envelopes: {heads}\nservice log: {why}"
    )
    ids = sorted(LEDGER.stored)
    db = bench.service.data_dir / "workbench.db"
    assert missing_events(db, ids) == []
    assert integrity(db) == ["ok"]


# ----- the platform adapters (issue 11) ----------------------------------------------------------

ADAPTER_EVENTS = [
    *("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"),
    *("BeforeAgent", "AfterTool", "AfterAgent", "BeforeTool"),
    *("session.created", "chat.message", "tool.execute.after", "session.idle", "session.deleted"),
    *("beforeSubmitPrompt", "afterShellExecution", "afterMCPExecution", "afterFileEdit", "stop"),
]
# Cursor's own fields (tests/fixtures/hooks/cursor/README.md): JSON strings that may or may
# not parse, edits of any shape, workspace roots of any type.
cursor_json_strings = st.one_of(texts, json_values.map(lambda v: render(v)))
cursor_fields = st.fixed_dictionaries(
    {},
    optional={
        "conversation_id": json_values,
        "workspace_roots": st.one_of(json_values, st.lists(st.one_of(texts, json_values))),
        "command": json_values,
        "output": json_values,
        "tool_input": st.one_of(cursor_json_strings, json_values),
        "result_json": st.one_of(cursor_json_strings, json_values),
        "file_path": json_values,
        "edits": st.one_of(
            json_values,
            st.lists(
                st.one_of(
                    json_values,
                    st.fixed_dictionaries({"old_string": json_values, "new_string": json_values}),
                )
            ),
        ),
        "loop_count": json_values,
    },
)
ADAPTER_TOOLS = [
    *("read_file", "replace", "run_shell_command", "write_file", "Bash", "Read"),
    *("read", "edit", "bash", "glob", "grep", "task"),
]


@pytest.mark.parametrize("platform", PLATFORMS)
@settings(max_examples=budget(200), **HOOK_SETTINGS)
@given(
    doc=json_objects,
    event=st.one_of(st.sampled_from(ADAPTER_EVENTS), json_values),
    tool=st.one_of(st.sampled_from(ADAPTER_TOOLS), json_values),
    response=st.one_of(
        json_values, st.fixed_dictionaries({"llmContent": json_values, "error": json_values})
    ),
    answer=json_values,
    cursor=cursor_fields,
)
def test_every_adapter_normalises_any_payload(
    platform: str,
    doc: dict[str, Any],
    event: Any,
    tool: Any,
    response: Any,
    answer: Any,
    cursor: dict[str, Any],
) -> None:
    """Whatever a platform sends, the normalised input is well typed and the bodies are built."""
    payload = {
        **doc,
        **cursor,
        "hook_event_name": event,
        "tool_name": tool,
        "tool_response": response,
        "prompt_response": answer,
        "last_assistant_message": answer,
        "stop_hook_active": answer,
    }
    parsed = _runtime.parse_input(render(payload).encode("ascii"), platform)
    if parsed is None:  # nested deeper than the redactor walks: declined, a no-op
        return
    assert isinstance(parsed.tool_name, str)
    assert isinstance(parsed.hook_event_name, str)
    assert parsed.last_assistant_message is None or isinstance(parsed.last_assistant_message, str)
    assert parsed.platform_source in PLATFORM_SOURCES
    for kind in ("SessionStart", "UserPromptSubmit", "Stop"):
        assert isinstance(parsed.answer_event(kind), str)
    for module in (user_prompt_submit, post_tool_use, session_end):
        body = module.build_body(parsed)
        assert body is None or body["contentSessionId"] == parsed.session_id
    if parsed.last_assistant_message is not None:  # no transcript read for these platforms
        body = stop.build_body(parsed)
        assert body is None or body["last_assistant_message"] == parsed.last_assistant_message
    # What a hook posts or spools must encode as UTF-8 (Cursor's parsed JSON strings too).
    json.dumps(post_tool_use.build_body(parsed), ensure_ascii=False).encode("utf-8")
    for kind in ("UserPromptSubmit", "PostToolUse", "Stop"):
        assert isinstance(_runtime.answer(kind, {}, parsed), dict)


@settings(max_examples=budget(100), **HOOK_SETTINGS)
@given(context=texts, name=st.sampled_from(["before_submit_prompt", "stop"]))
def test_any_context_text_makes_a_whole_rules_file(context: str, name: str) -> None:
    """Cursor's rules file: front matter first, the context after it, valid UTF-8, atomic."""
    with tempfile.TemporaryDirectory() as folder:
        payload = json.loads((HOOK_FIXTURES / "cursor" / f"{name}.json").read_text("utf-8"))
        payload["workspace_roots"] = [folder]
        event = _runtime.parse_input(json.dumps(payload).encode("utf-8"), "cursor")
        assert event is not None
        path = context_file.target(event.adapter, event.cwd)
        assert path is not None
        assert context_file.write_atomically(path, event.adapter.context_document(context))
        written = Path(path).read_bytes().decode("utf-8")
        assert written.startswith(cursor_adapter.CONTEXT_HEADER)
        assert written.endswith("\n")
        assert os.listdir(os.path.dirname(path)) == ["workbench-context.mdc"]


@settings(max_examples=budget(200), **HOOK_SETTINGS)
@given(argv=st.lists(st.one_of(texts, st.sampled_from(["--platform", "--platform=gemini"]))))
def test_any_hook_command_line_picks_a_known_adapter(argv: list[str]) -> None:
    assert _runtime.platform_from_argv(argv) in PLATFORMS


WINDSURF_ACTIONS = [
    "pre_user_prompt",
    "post_read_code",
    "post_write_code",
    "post_run_command",
    "post_mcp_tool_use",
    "post_cascade_response",
]
WINDSURF_KEYS = [
    "user_prompt",
    "file_path",
    "edits",
    "command_line",
    "cwd",
    "mcp_server_name",
    "mcp_tool_name",
    "mcp_tool_arguments",
    "mcp_result",
    "response",
]
edit_lists = st.lists(
    st.one_of(
        st.fixed_dictionaries({"old_string": json_values, "new_string": json_values}), json_values
    ),
    max_size=3,
)


@settings(max_examples=budget(200), **HOOK_SETTINGS)
@given(
    doc=json_objects,
    action=st.one_of(st.sampled_from(WINDSURF_ACTIONS), json_values),
    trajectory=json_values,
    info=st.one_of(
        json_values,
        st.dictionaries(
            st.sampled_from(WINDSURF_KEYS), st.one_of(json_values, edit_lists), max_size=8
        ),
    ),
)
def test_windsurf_payloads_of_any_shape_normalise(
    doc: dict[str, Any], action: Any, trajectory: Any, info: Any
) -> None:
    """Windsurf's envelope with any ``tool_info``: well-typed input, every body is built."""
    payload = {**doc, "agent_action_name": action, "trajectory_id": trajectory, "tool_info": info}
    parsed = _runtime.parse_input(render(payload).encode("ascii"), "windsurf")
    if parsed is None:  # nested deeper than the redactor walks: declined, a no-op
        return
    assert parsed.platform_source == "windsurf"
    assert isinstance(parsed.session_id, str)
    assert isinstance(parsed.cwd, str)
    assert isinstance(parsed.tool_name, str)
    assert isinstance(parsed.last_assistant_message, str)  # never a transcript to read
    for module in (user_prompt_submit, post_tool_use, stop):
        body = module.build_body(parsed)
        assert body is None or body["contentSessionId"] == parsed.session_id


@settings(max_examples=budget(100), **HOOK_SETTINGS)
@given(context=texts)
def test_windsurf_rule_file_holds_any_context_within_its_limit(
    context: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from hooks.adapters import windsurf

    workspace = tmp_path_factory.mktemp("ws")
    context_file.write_context(windsurf, str(workspace), context)
    path = workspace / windsurf.CONTEXT_FILE
    if not context.strip():
        assert not path.exists()
        return
    text = path.read_text("utf-8")
    assert text.startswith(windsurf.RULE_HEAD + windsurf.CONTEXT_MARK)
    assert len(text) <= windsurf.MAX_RULE_CHARS


@settings(max_examples=budget(100), **HOOK_SETTINGS)
@given(before=texts, after=texts, platform=st.sampled_from(["cursor", "windsurf"]))
def test_a_users_rule_that_quotes_our_marker_anywhere_is_never_overwritten(
    before: str, after: str, platform: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Issue 19, item 12: the marker (or our whole head) quoted in a user's rule, not at the
    very top, leaves the file theirs."""
    import importlib

    adapter = importlib.import_module(f"hooks.adapters.{platform}")
    workspace = tmp_path_factory.mktemp("ws")
    path = workspace / adapter.CONTEXT_FILE
    path.parent.mkdir(parents=True)
    quoted = (before or "x") + adapter.CONTEXT_MARK + after + adapter.CONTEXT_HEAD
    if quoted.startswith(adapter.CONTEXT_HEAD):
        return  # exactly our head at the top: that is our file
    data = quoted.encode("utf-8", "surrogatepass")
    path.write_bytes(data)
    assert not context_file.write_context(adapter, str(workspace), "# memory\n- a row")
    assert path.read_bytes() == data


# ----- OpenCode: what its plugin (hooks/opencode/workbench.js) writes on the hooks' stdin ------

OPENCODE_SCRIPT = {
    "chat.message": "user_prompt_submit",
    "tool.execute.after": "post_tool_use",
    "session.idle": "stop",
    "session.deleted": "session_end",
}
OPENCODE_TOOLS = ["read", "edit", "write", "bash", "grep", "glob", "task", "github_search"]
SECRET = f"<private>{MARKER}</private>"


@st.composite
def opencode_parts(draw: st.DrawFn) -> Any:
    """A message's text parts as the plugin sends them, some private, some synthetic."""
    part = st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "file", "reasoning"]), "text": st.one_of(texts, atoms)},
        optional={"id": texts, "synthetic": st.one_of(st.booleans(), atoms)},
    )
    parts = draw(st.lists(part, max_size=4))
    if parts and draw(st.booleans()):
        parts[0] = {**parts[0], "type": "text", "text": f"{draw(texts)}{SECRET}"}
    return parts if draw(st.integers(0, 9)) else draw(json_values)


@st.composite
def opencode_stdin(draw: st.DrawFn, event: str) -> bytes:
    """The plugin's payload for ``event``, with hostile values and keys swapped in."""
    session = f"ses_fuzz{draw(st.integers(0, 3))}"
    payload: dict[str, Any] = {
        "hook_event_name": event,
        "directory": draw(st.sampled_from(["/home/dev/code/acme-api", "", "/"])),
        "worktree": "/home/dev/code/acme-api",
    }
    if event in ("chat.message", "session.idle"):
        payload.update(sessionID=session, message={"id": "msg_1", "sessionID": session})
        payload["parts"] = draw(opencode_parts())
    elif event == "tool.execute.after":
        payload.update(
            sessionID=session,
            tool=draw(st.one_of(st.sampled_from(OPENCODE_TOOLS), texts, atoms)),
            callID=draw(st.one_of(texts, atoms)),
            args=draw(
                st.one_of(
                    st.fixed_dictionaries(
                        {"filePath": texts, "oldString": texts, "newString": texts}
                    ),
                    st.fixed_dictionaries({"command": texts, "description": texts}),
                    json_values,
                )
            ),
            title=draw(texts),
            output=draw(st.one_of(texts, json_values)),
            metadata=draw(json_values),
        )
        if draw(st.booleans()):
            payload["parentID"] = draw(st.one_of(texts, atoms))
        if draw(st.booleans()):  # an MCP tool's result: text blocks and isError, no output
            del payload["output"]
            block = st.fixed_dictionaries({"type": st.just("text"), "text": texts})
            payload["content"] = draw(st.one_of(st.lists(block, max_size=3), json_values))
            payload["isError"] = draw(st.one_of(st.booleans(), atoms))
    else:
        payload.update(
            reason="deleted", info=draw(st.one_of(json_values, st.just({"id": session})))
        )
    for _ in range(draw(st.integers(0, 2))):
        name = draw(st.one_of(st.sampled_from(sorted(payload)), keys))
        payload[name] = draw(st.one_of(texts, atoms, json_values))
    return render(payload).encode("ascii")


@settings(max_examples=budget(300), **HOOK_SETTINGS)
@given(data=st.data(), event=st.sampled_from(sorted(OPENCODE_SCRIPT)))
def test_opencode_payloads_normalise_without_private_text(event: str, data: st.DataObject) -> None:
    """Whatever the plugin forwards: typed fields, bodies built, no <private> text in them."""
    raw = data.draw(opencode_stdin(event), label="stdin")
    parsed = _runtime.parse_input(raw, "opencode")
    if parsed is None:
        return
    assert parsed.platform_source == "opencode"
    assert isinstance(parsed.session_id, str)
    assert isinstance(parsed.tool_name, str)
    assert isinstance(parsed.cwd, str)
    module = SCRIPTS[OPENCODE_SCRIPT[event]]
    body = module.build_body(parsed)
    assert MARKER not in render(body)
    if body is not None and module is user_prompt_submit:
        # A prompt whose text was all private is still a prompt (""), never "no prompt".
        assert (body["prompt"] is None) == (not parsed.prompt_given)


@pytest.mark.parametrize("event", sorted(OPENCODE_SCRIPT))
@settings(max_examples=budget(5), **HOOK_SETTINGS)
@given(data=st.data())
def test_opencode_hook_subprocess_exits_0_and_loses_nothing(
    event: str, bench: Bench, data: st.DataObject
) -> None:
    """The scripts as the plugin runs them (``--platform opencode``), against the service."""
    raw = data.draw(opencode_stdin(event), label="stdin")
    script = OPENCODE_SCRIPT[event]
    mark, before = bench.relay.mark(), spooled_keys(bench.root)
    env = base_env(bench.root, bench.relay.port, WORKBENCH_EMBEDDER="none")
    outcome = run_subprocess(script, raw, env, ("--platform", "opencode"))
    assert outcome.returncode == 0
    assert outcome.stderr == b"", outcome.stderr.decode(errors="replace")
    assert_one_json_line(outcome)
    account(SCRIPTS[script], raw, bench, mark, before, "opencode")


# ----- hostile cwd folders (issue 19 item 8: a project's identity reads ``.git`` files) --------


def hostile_cwds(base: Path) -> list[str]:
    """Folders whose ``.git`` lies: garbage ``gitdir:``, a FIFO, ``/dev/zero``, a 5 MB file,
    a ``commondir`` that is garbage, a FIFO or a loop; symlink loops; names the kernel refuses.
    """
    base.mkdir(parents=True, exist_ok=True)
    loop = base / "loop"
    loop.mkdir(exist_ok=True)
    for name, other in (("a", "b"), ("b", "a")):
        if not (loop / name).is_symlink():
            (loop / name).symlink_to(loop / other)
    gitdir = base / "gitdir-of-a-worktree"
    gitdir.mkdir(exist_ok=True)
    dot_git_files = {
        "garbage": b"gitdir: \x00\xff\xfe not a path\n",
        "nowhere": b"gitdir: /nonexistent/.git/worktrees/x\n",
        "up-and-out": b"gitdir: " + b"../" * 60 + b"etc\n",
        "empty": b"",
        "binary": bytes(range(256)),
        "huge": b"gitdir: " + b"x" * (5 * 1024 * 1024),
        "commondir-garbage": f"gitdir: {gitdir}\n".encode(),
    }
    (gitdir / "commondir").write_bytes(b"\x00../../" + b"\xff" * 300)
    cwds = []
    for name, content in dot_git_files.items():
        folder = base / name
        (folder / "src").mkdir(parents=True, exist_ok=True)
        (folder / ".git").write_bytes(content)
        cwds.append(str(folder / "src"))
    fifo_dir = base / "fifo"
    fifo_dir.mkdir(exist_ok=True)
    if not (fifo_dir / ".git").exists():
        os.mkfifo(fifo_dir / ".git")
    fifo_common = base / "fifo-commondir"
    (fifo_common / "gd").mkdir(parents=True, exist_ok=True)
    (fifo_common / ".git").write_text(f"gitdir: {fifo_common / 'gd'}\n", "utf-8")
    if not (fifo_common / "gd" / "commondir").exists():
        os.mkfifo(fifo_common / "gd" / "commondir")
    zero = base / "dev-zero"
    zero.mkdir(exist_ok=True)
    if not (zero / ".git").is_symlink():
        (zero / ".git").symlink_to("/dev/zero")
    looped_common = base / "looped-commondir"
    (looped_common / "gd").mkdir(parents=True, exist_ok=True)
    (looped_common / ".git").write_text(f"gitdir: {looped_common / 'gd'}\n", "utf-8")
    (looped_common / "gd" / "commondir").write_text(f"{loop / 'a'}/.git\n", "utf-8")
    return [
        *cwds,
        str(fifo_dir),
        str(fifo_common),
        str(zero),
        str(looped_common),
        str(base / "does" / "not" / "exist"),
        str(loop / "a" / "sub"),
        str(base / ("x" * 300) / "y"),  # a component over NAME_MAX
        "/a" * 3000,  # over PATH_MAX
        "/q" * 200_000,  # 400 KB
        "relative/folder",
        "/tmp/nul\x00byte",
        "/tmp/cut-mid-emoji-\ud83d",
        "",
    ]


def test_hostile_cwd_values_leave_every_hook_whole(bench: Bench) -> None:
    """Every hook that names the project exits 0 with one JSON object and loses nothing,
    whatever the folder's ``.git`` holds; the identity itself never raises or grows unbounded."""
    from workbench import locate

    cwds = hostile_cwds(bench.transcripts.parent / "hostile-cwds")
    failures = []
    for i, cwd in enumerate(cwds):
        identity = locate.project_identity(cwd)
        assert len(identity.name) <= locate.MAX_PROJECT_CHARS
        assert 0 < len(identity.key) <= locate.MAX_PROJECT_KEY_CHARS
        for script, fixture in (
            ("session_start", "session_start_startup"),
            ("user_prompt_submit", "user_prompt_submit"),
            ("post_tool_use", "post_tool_use_edit"),
            ("pre_tool_use_read", "pre_tool_use_read"),
        ):
            payload = {**_load(fixture), "cwd": cwd, "session_id": f"hostile-cwd-{i}"}
            raw = json.dumps(payload).encode("ascii")  # a lone surrogate as its \\u escape
            try:
                exercise(script, raw, bench, subprocess=False)
            except AssertionError as exc:
                failures.append(f"{script} with cwd {cwd[:120]!r}:\n{str(exc)[:600]}")
    assert not failures, f"{len(failures)} failing cwds:\n\n" + "\n\n".join(failures)


@pytest.mark.parametrize("name", ["fifo", "fifo-commondir", "dev-zero"])
def test_a_git_file_that_never_ends_does_not_hang_a_real_hook(name: str, bench: Bench) -> None:
    """As Claude Code runs it: a subprocess, exit 0, quiet stderr (``run_subprocess`` times out
    after 60 s, so a hook blocked on a FIFO fails here instead of hanging the suite)."""
    base = bench.transcripts.parent / "hostile-cwds"
    hostile_cwds(base)
    for script, fixture in (
        ("session_start", "session_start_startup"),
        ("user_prompt_submit", "user_prompt_submit"),
    ):
        payload = {**_load(fixture), "cwd": str(base / name), "session_id": f"hang-{name}"}
        exercise(script, json.dumps(payload).encode("ascii"), bench, subprocess=True)


@settings(max_examples=budget(300), **HOOK_SETTINGS)
@given(cwd=st.one_of(texts, st.text(max_size=300), st.sampled_from(["/", ".", "..", "//"])))
def test_project_identity_of_any_text_is_bounded_and_never_raises(cwd: str) -> None:
    from workbench import locate

    name, key = locate.project_identity(cwd)
    assert 0 < len(name) <= locate.MAX_PROJECT_CHARS
    assert 0 < len(key) <= locate.MAX_PROJECT_KEY_CHARS
    checkout = locate.checkout_root(cwd)  # the folder-memory root: None or cwd's ancestor
    assert checkout is None or str(Path(cwd)).startswith(str(checkout))


# ----- our own MCP tools, in any agent's spelling (issue 20, item 3) ----------------------------

separators = st.text(alphabet="_-.:/ ", min_size=1, max_size=3)


@st.composite
def own_tool_spellings(draw: st.DrawFn) -> str:
    """``[mcp<sep>]workbench<sep><tool>`` in any case, with any run of separators."""
    tool = draw(st.sampled_from(sorted(own_tools.OWN_TOOLS)))
    words = [*draw(st.sampled_from([[], ["mcp"], ["mcp", "plugin", "workbench"]])), "workbench"]
    words += tool.split("_")
    name = words[0]
    for word in words[1:]:
        name += draw(separators) + word
    return "".join(ch.upper() if draw(st.booleans()) else ch for ch in name)


@settings(max_examples=budget(300), **HOOK_SETTINGS)
@given(name=own_tool_spellings())
def test_any_spelling_of_our_own_tools_is_not_a_memory(name: str) -> None:
    reason = own_tools.skip_reason(name)
    assert reason is not None
    assert "own MCP tool" in reason


@settings(max_examples=budget(300), **HOOK_SETTINGS)
@given(name=st.one_of(texts, st.builds(lambda t: "mcp__other__" + t, texts)))
def test_another_servers_tools_and_any_text_stay_memories(name: str) -> None:
    reason = own_tools.skip_reason(name)
    key = own_tools.key(name)
    if "workbench" not in key and "toolsearch" != key:
        assert reason is None
    assert own_tools.skip_reason("mcp__github__" + name) is None


# ----- SessionStart with the service cold: the store file itself is the input (issue 20) ------


@pytest.fixture(scope="module")
def real_store_bytes(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    """A real store (this code's schema) holding a few memories of the fixtures' project,
    checkpointed into one file: what the hook reads when the service is cold."""
    import sqlite3

    from workbench import locate
    from workbench.models import ObservationDraft
    from workbench.store import observations
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    path = tmp_path_factory.mktemp("cold-store") / "workbench.db"
    project, key = locate.project_identity(_load("session_start_startup")["cwd"])
    with Store(path) as store, atomic(store.conn):
        for n in range(12):
            draft = ObservationDraft(title=f"memory {n} <b>", narrative="n" * 50 * n)
            observations.insert(
                store.conn, draft, content_session_id=f"s{n % 3}", project=project, project_key=key
            )
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return path.read_bytes()


@st.composite
def store_files(draw: st.DrawFn, real: bytes) -> bytes:
    """Random bytes, a real store cut anywhere, or a real store with bytes overwritten."""
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return draw(st.binary(max_size=4096))
    if choice == 1:
        return real[: draw(st.integers(0, len(real)))]
    if choice == 2:
        return b"SQLite format 3\x00" + draw(st.binary(max_size=4096))
    damaged = bytearray(real)
    for _ in range(draw(st.integers(1, 8))):
        damaged[draw(st.integers(0, len(real) - 1))] = draw(st.integers(0, 255))
    return bytes(damaged)


@pytest.mark.parametrize("hook", ["session_start", "context_file"])
@settings(max_examples=budget(200), **HOOK_SETTINGS)
@given(
    data=st.data(),
    source=session_sources.filter(lambda v: isinstance(v, str)),  # the hook's input is text
    session=st.one_of(texts, st.just("s1")),
)
def test_any_store_file_gives_the_block_or_nothing_and_is_never_written(
    hook: str, data: st.DataObject, source: str, session: str, real_store_bytes: bytes
) -> None:
    """The cold path reads whatever file is there: never raises, answers a whole fenced block
    or nothing, and leaves the file's bytes as they were. Cursor's and Windsurf's rules file
    (``context_file``: no session, no source) is then our whole document, or the previous
    one when nothing could be read."""
    from hooks.adapters import windsurf as windsurf_adapter
    from workbench.recall import cold_context

    content = data.draw(store_files(real_store_bytes))
    cwd = _load("session_start_startup")["cwd"]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        db = root / cold_context.DB_NAME
        db.write_bytes(content)
        if hook == "session_start":
            text = session_start.context_from_store(root, cwd, session, source)
        else:
            source = ""
            # SILENT: the service holds the port without answering, so the block is the store's.
            text = session_start.context_for(root, 0, session_start.SILENT, cwd)
            adapter = data.draw(st.sampled_from([cursor_adapter, windsurf_adapter]))
            workspace = root / "acme-api"
            rules = workspace / adapter.CONTEXT_FILE
            rules.parent.mkdir(parents=True)
            previous = adapter.context_document("<workbench-context>\nolder\n</workbench-context>")
            rules.write_text(previous, "utf-8")
            context_file.write_context(adapter, str(workspace), text)
            assert rules.read_text("utf-8") == (
                adapter.context_document(text) if text else previous
            )
        assert text == "" or (
            text.startswith("<workbench-context>\n") and text.endswith("\n</workbench-context>")
        )
        assert db.read_bytes() == content
    if content != real_store_bytes:
        return
    if len(session) > cold_context.MAX_SESSION_CHARS:
        # The route refuses a longer contentSessionId (422), so the warm path has no block
        # for it either; the cold one answers the same (make fuzz drew a 3,013-char id).
        assert text == ""
    elif not source.strip().lower().startswith(("resume", "fork")):
        assert "memory 11" in text
