"""Issue 19 item 8: two repos with the same folder name are two projects; worktrees are one.

Real git repositories (``git init`` in tmp_path), the real hooks as subprocesses, the real
service: ``clientA/api`` and ``clientB/api`` share the short name ``api`` and must never see
each other's memory at SessionStart, while a ``git worktree`` of ``clientA/api`` (in a folder
of another name) sees its repository's memory.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Service
from tests.hook_harness import load_payload, needs_service, run_hook, script_for
from workbench import locate

MARK_A = "zanzibar-ledger-rounding"  # only ever typed in clientA/api
MARK_B = "quokka-webhook-retries"  # only ever typed in clientB/api


def git(*args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        check=True,
        capture_output=True,
    )


@pytest.fixture
def repos(tmp_path: Path) -> dict[str, Path]:
    """``clientA/api`` (with a commit and a worktree ``wt-api``), ``clientB/api``, and a
    folder inside clientA's repository."""
    a, b, wt = tmp_path / "clientA" / "api", tmp_path / "clientB" / "api", tmp_path / "wt-api"
    for repo in (a, b):
        repo.mkdir(parents=True)
        git("init", "-q", str(repo))
    git("-C", str(a), "commit", "-q", "--allow-empty", "-m", "init")
    git("-C", str(a), "worktree", "add", "-q", str(wt))
    (a / "src").mkdir()
    return {"a": a, "b": b, "wt": wt, "a_src": a / "src"}


def _turn(tmp_path: Path, service: Service, cwd: Path, session: str, prompt: str) -> None:
    """One prompt, one edit, the end of the turn: what leaves a summary of the prompt."""
    for name, extra in (
        ("user_prompt_submit", {"prompt": prompt}),
        ("post_tool_use_edit", {}),
        ("stop", {}),
    ):
        payload: dict[str, Any] = {
            **load_payload(name, tmp_path),
            "cwd": str(cwd),
            "session_id": session,
            **extra,
        }
        assert run_hook(script_for(payload), payload, service.env).returncode == 0


def _session_start(service: Service, cwd: Path, session: str) -> str:
    payload = {**load_payload("session_start_startup"), "cwd": str(cwd), "session_id": session}
    output = run_hook("session_start", payload, service.env).output() or {}
    return str(output.get("hookSpecificOutput", {}).get("additionalContext", ""))


@needs_service
def test_same_folder_name_in_two_places_never_shares_memory(
    tmp_path: Path, repos: dict[str, Path], service: Service
) -> None:
    _turn(tmp_path, service, repos["a"], "sess-a", f"Fix the {MARK_A} bug in invoices please")
    _turn(tmp_path, service, repos["b"], "sess-b", f"Add {MARK_B} to the webhook sender now")
    service.wait_idle()

    in_a = _session_start(service, repos["a"], "sess-a2")
    in_b = _session_start(service, repos["b"], "sess-b2")
    assert MARK_A in in_a, in_a  # the memory is there, so its absence below means something
    assert MARK_B in in_b, in_b
    assert MARK_A not in in_b, in_b
    assert MARK_B not in in_a, in_a
    # A subfolder and a worktree of clientA/api are clientA/api.
    assert MARK_A in _session_start(service, repos["a_src"], "sess-a3")
    in_worktree = _session_start(service, repos["wt"], "sess-wt")
    assert MARK_A in in_worktree, in_worktree
    assert MARK_B not in in_worktree

    # For people: one name, two folders told apart; the filter by name still finds both.
    status, listing = service.get("/api/projects")
    assert status == 200
    assert listing["projects"] == ["api"]
    (detail,) = listing["details"]
    assert sorted(f["label"] for f in detail["folders"]) == [
        "api (…/clientA/api)",
        "api (…/clientB/api)",
    ]
    status, prompts = service.get("/api/prompts?project=api")
    assert status == 200
    texts = " ".join(p["prompt_text"] for p in prompts["items"])
    assert MARK_A in texts
    assert MARK_B in texts


@needs_service
def test_the_worktree_writes_into_its_repository(
    tmp_path: Path, repos: dict[str, Path], service: Service
) -> None:
    _turn(tmp_path, service, repos["wt"], "sess-wt", f"Port the {MARK_A} fix to the branch")
    service.wait_idle()
    assert MARK_A in _session_start(service, repos["a"], "sess-a")
    assert MARK_A not in _session_start(service, repos["b"], "sess-b")
    status, prompts = service.get("/api/prompts")
    assert status == 200
    assert [p["project"] for p in prompts["items"]] == ["api"]  # the short name, for people


def test_identity_of_repos_worktrees_and_plain_folders(
    tmp_path: Path, repos: dict[str, Path]
) -> None:
    a = locate.project_identity(str(repos["a"]))
    assert a == locate.project_identity(str(repos["a_src"]))
    assert a == locate.project_identity(str(repos["wt"]))
    assert a.name == "api"
    assert a.key == str(repos["a"].resolve())
    b = locate.project_identity(str(repos["b"]))
    assert (b.name, b.key) == ("api", str(repos["b"].resolve()))
    plain = tmp_path / "notes"
    plain.mkdir()
    assert locate.project_identity(str(plain)) == ("notes", str(plain.resolve()))
    assert locate.project_from_cwd(str(repos["wt"])) == "api"
