"""Service down: every delivering hook spools exactly one private envelope, in capture order,
never a private text, and runs without site-packages from any cwd or an installed layout.
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from tests.conftest import HOOKS_DIR, ROOT, base_env
from tests.hook_harness import (
    BODY_KEYS,
    DELIVERING,
    ROUTE_FOR_SCRIPT,
    SECRET,
    Recorder,
    all_bytes,
    load_payload,
    run_hook,
    script_for,
    spooled,
)

# ----- service down: the spool -----------------------------------------------------------------


@pytest.mark.parametrize("name", DELIVERING)
def test_service_down_spools_exactly_one_private_envelope(
    name: str, tmp_path: Path, data_dir: Path, down_env: dict[str, str]
) -> None:
    payload = load_payload(name, tmp_path)
    script = script_for(payload)
    assert run_hook(script, payload, down_env).output() == {}

    files = spooled(data_dir)
    assert len(files) == 1
    path, envelope = files[0]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE((data_dir / "spool").stat().st_mode) == 0o700
    assert path.name == f"{envelope.event_key}.json"
    assert envelope.hook == payload["hook_event_name"]
    assert envelope.path == ROUTE_FOR_SCRIPT[script]
    assert set(envelope.body) == BODY_KEYS[envelope.path]
    assert envelope.body["contentSessionId"] == payload["session_id"]
    assert envelope.spooled_at_ns > 0
    assert SECRET.encode() not in path.read_bytes()
    assert [p.name for p in (data_dir / "spool").iterdir()] == [path.name]  # no .tmp left


def test_private_prompt_text_is_never_spooled(data_dir: Path, down_env: dict[str, str]) -> None:
    payload = load_payload("user_prompt_submit_private")
    assert SECRET in payload["prompt"]
    run_hook("user_prompt_submit", payload, down_env).output()
    fully_private = {**payload, "prompt": f"<private>{SECRET}</private>"}
    run_hook("user_prompt_submit", fully_private, down_env).output()
    bash = load_payload("post_tool_use_bash_pytest_fail")
    bash["tool_input"]["command"] = f"deploy --token <private>{SECRET}</private>"
    run_hook("post_tool_use", bash, down_env).output()

    (_, partial), (_, empty), (_, tool) = spooled(data_dir)
    assert partial.body["prompt"] == (
        "Check the staging deploy with this key  and tell me whether /healthz answers."
    )
    # An all-private prompt is still announced, empty, so the service can number and mark it.
    assert empty.body["prompt"] == ""
    assert empty.path == "/api/sessions/init"
    assert tool.body["tool_input"]["command"] == "deploy --token"
    assert SECRET.encode() not in all_bytes(data_dir)
    assert b"PRIVATE" not in all_bytes(data_dir)


def test_task_notification_prompt_sends_nothing(
    data_dir: Path, recorder: Recorder, down_env: dict[str, str]
) -> None:
    payload = {
        **load_payload("user_prompt_submit"),
        "prompt": "<task-notification>\n<task-id>b7f1</task-id>\n<status>completed</status>\n"
        "</task-notification>",
    }
    assert run_hook("user_prompt_submit", payload, down_env).output() == {}
    assert run_hook("user_prompt_submit", payload, base_env(data_dir, recorder.port)).output() == {}
    assert spooled(data_dir) == []
    assert recorder.requests == []


def test_spool_order_is_capture_order(
    tmp_path: Path, data_dir: Path, down_env: dict[str, str]
) -> None:
    order = [
        "user_prompt_submit",
        "post_tool_use_grep",
        "post_tool_use_read",
        "post_tool_use_edit",
        "post_tool_use_bash_pytest_fail",
        "stop",
        "session_end",
    ]
    for name in order:
        payload = load_payload(name, tmp_path)
        run_hook(script_for(payload), payload, down_env).output()
    envelopes = [e for _, e in spooled(data_dir)]
    captured = [(e.hook, e.body.get("tool_name")) for e in envelopes]
    expected = [
        (load_payload(n)["hook_event_name"], load_payload(n).get("tool_name")) for n in order
    ]
    assert captured == expected
    assert [e.event_key for e in envelopes] == sorted(e.event_key for e in envelopes)
    assert len({e.event_key for e in envelopes}) == len(order)


@pytest.mark.parametrize("flags", [("-S",), ("-I",), ("-S", "-E")], ids=" ".join)
def test_runs_without_site_packages_from_any_cwd(
    flags: tuple[str, ...], tmp_path: Path, data_dir: Path, down_env: dict[str, str]
) -> None:
    payload = load_payload("post_tool_use_edit")
    run = run_hook("post_tool_use", payload, down_env, flags=flags, cwd=tmp_path)
    assert run.output() == {}
    assert len(spooled(data_dir)) == 1


def test_runs_from_an_installed_layout_with_only_the_stdlib_modules(
    tmp_path: Path, data_dir: Path, down_env: dict[str, str]
) -> None:
    """hooks/ and the stdlib-only workbench modules they import side by side, nothing else."""
    site = tmp_path / "site-packages"
    shutil.copytree(HOOKS_DIR, site / "hooks", ignore=shutil.ignore_patterns("__pycache__"))
    (site / "workbench").mkdir()
    hook_modules = ("locate.py", "spool.py", "redact.py", "instance.py", "own_tools.py")
    for name in ("__init__.py", *hook_modules):
        shutil.copyfile(ROOT / "workbench" / name, site / "workbench" / name)
    for name in ("user_prompt_submit_private", "post_tool_use_edit", "session_end"):
        payload = load_payload(name)
        run = run_hook(
            script_for(payload),
            payload,
            down_env,
            flags=("-I", "-S"),
            script_path=site / "hooks" / f"{script_for(payload)}.py",
            cwd=tmp_path,
        )
        assert run.output() == {}
    assert len(spooled(data_dir)) == 3
