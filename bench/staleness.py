"""Staleness (issue 22, item 5): how often memories go stale, and what it costs. Prints figures.

Three parts, all through the product's own ``workbench.staleness`` (capture and check), with
real files and the real ``git`` binary:

1. **Demo repos**: each of the demo's five projects (``data/scenarios``) replayed as a real
   git repository in a temp dir: every Read/Edit/Write of its sessions applied to the files
   (an Edit replaces its old text, a Write writes its content, a Read of a file not yet there
   creates it with what the Read showed), one observation per call captured right after it
   (as the worker does after PostToolUse), one commit per session. After each commit every
   observation so far is checked; the first commit at which it is stale is kept.
2. **A real repository's history** (``--repo``, a git directory; default the claude-mem
   snapshot the ``fetch`` tool leaves under /work/.mirror): a local clone (no network), its
   last ``--commits`` first-parent commits checked out one by one; at each, one observation
   per commit citing the files the commit touched (at most ``MAX_CITED``; its subject is the
   claim), captured after the checkout; then every observation so far checked. A sample of
   stale observations is printed with the commit that outdated them and the diff, for a
   person to judge whether the claim was in fact outdated.
3. **Cost**: capture per observation (the worker), ``check`` for a search page (20 and 100
   hits) and a SessionStart block (50 rows) in this long-lived process (cache warm) and from
   a new process (the cold hook: no cache), and the cold SessionStart block built from a
   store with and without evidence rows (``cold_context.session_context``).

"Stale per 100 commits" = observations that turned stale / commits replayed × 100. The box is
shared with other helpers' benches (2 cores): times are wall clock, compare only one run's.

Usage: python bench/staleness.py [--repo GITDIR] [--commits 300] [--sample 8] [--seed 7]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "data"))

from workbench.staleness import capture, check  # noqa: E402
from workbench.store import schema  # noqa: E402
from workbench.store.connection import atomic, connect  # noqa: E402

DEFAULT_REPO = Path("/work/.mirror/thedotmack+claude-mem/repo")
MAX_CITED = 10
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV, "HOME": str(repo.parent)}
    done = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, capture_output=True, check=True, timeout=120
    )
    return done.stdout.decode("utf-8", errors="replace")


@dataclass
class Memory:
    """One synthesized observation: its claim, what it cites, when it turned stale."""

    id: int
    claim: str
    commit_index: int
    cited: list[str]
    stale_at: int | None = None
    changed: list[str] = field(default_factory=list)
    capture_ms: float = 0.0


class Ledger:
    """Observations in a real store (the product's tables), checked with the product's code."""

    def __init__(self, folder: Path) -> None:
        self.conn = connect(folder / "bench.db")
        schema.apply(self.conn, "bench.db")
        self.memories: list[Memory] = []

    def add(self, claim: str, commit_index: int, paths: list[str], cwd: Path) -> Memory:
        started = time.perf_counter()
        evidence = capture.capture(paths, str(cwd))
        took = (time.perf_counter() - started) * 1000
        memory = Memory(len(self.memories) + 1, claim, commit_index, paths, capture_ms=took)
        with atomic(self.conn):
            self.conn.execute(
                "INSERT INTO observations (id, project, type, title, created_at,"
                " created_at_epoch, content_hash) VALUES (?, 'bench', 'change', ?, '', 0, ?)",
                (memory.id, claim[:200], f"h{memory.id}"),
            )
            capture.record(self.conn, memory.id, evidence)
        self.memories.append(memory)
        return memory

    def check_all(self, commit_index: int) -> None:
        open_ones = [m for m in self.memories if m.stale_at is None]
        verdicts = check.check(self.conn, [m.id for m in open_ones])
        for memory in open_ones:
            verdict = verdicts.get(memory.id)
            if verdict is not None and verdict.stale:
                memory.stale_at = commit_index
                memory.changed = list(verdict.changed)


# ----- part 1: the demo repos -------------------------------------------------------------------
def apply_call(cwd: Path, call: dict[str, Any]) -> list[str]:
    """Apply one tool call to the files; the paths it cites (relative to ``cwd``)."""
    name = call.get("tool_name")
    tool_input = call.get("tool_input") or {}
    path = tool_input.get("file_path")
    if name not in ("Read", "Edit", "Write") or not isinstance(path, str):
        return []
    rel = os.path.relpath(path, str(cwd_of(call, cwd)))
    if rel.startswith(".."):
        return []
    target = cwd / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if name == "Read":
        if not target.exists():
            response = call.get("tool_response") or {}
            text = (
                (response.get("file") or {}).get("content", "")
                if isinstance(response, dict)
                else ""
            )
            target.write_text(str(text))
    elif name == "Write":
        target.write_text(str(tool_input.get("content", "")))
    else:
        old, new = str(tool_input.get("old_string", "")), str(tool_input.get("new_string", ""))
        text = target.read_text() if target.exists() else ""
        target.write_text(text.replace(old, new, 1) if old and old in text else text + new + "\n")
    return [rel]


def cwd_of(call: dict[str, Any], fallback: Path) -> str:
    return str(call.get("_cwd") or fallback)


def demo_repos(folder: Path) -> list[tuple[str, int, list[Memory]]]:
    from scenarios import all_stories

    results = []
    for project, sessions in all_stories().items():
        repo = folder / "demo" / project
        repo.mkdir(parents=True)
        git(repo, "init", "-q", "-b", "main")
        store = folder / "demo" / f"{project}-store"
        store.mkdir()
        ledger = Ledger(store)
        commits = 0
        for session in sessions:
            for turn in session["turns"]:
                for call in turn.get("tools", []):
                    call = {**call, "_cwd": session["cwd"]}
                    cited = apply_call(repo, call)
                    if cited:
                        claim = f"{session['title']}: {call['tool_name']} {cited[0]}"
                        ledger.add(claim, commits, cited, repo)
            git(repo, "add", "-A")
            git(repo, "commit", "-q", "--allow-empty", "-m", session["title"])
            commits += 1
            ledger.check_all(commits)
        results.append((project, commits, ledger.memories))
        ledger.conn.close()
    return results


# ----- part 2: a real repository's history --------------------------------------------------------
def real_history(
    gitdir: Path, folder: Path, count: int
) -> tuple[Path, list[str], list[Memory], list[Memory]]:
    """Replay; the commit-level memories and the one-file memories (one per file touched)."""
    clone = folder / "real"
    subprocess.run(
        ["git", "clone", "-q", "--no-checkout", "--no-hardlinks", str(gitdir), str(clone)],
        check=True,
        capture_output=True,
        timeout=600,
        env={**os.environ, **GIT_ENV},
    )
    order = git(clone, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    order = order[-(count + 1) :]
    ledger = Ledger(folder)
    (folder / "per-file").mkdir()
    per_file = Ledger(folder / "per-file")
    git(clone, "checkout", "-q", "--detach", order[0])
    for index, commit in enumerate(order[1:], start=1):
        git(clone, "checkout", "-q", "--detach", commit)
        subject = git(clone, "log", "-1", "--format=%s", commit).strip()
        touched = [
            p
            for p in git(
                clone,
                "diff-tree",
                "--no-commit-id",
                "--name-only",
                "-r",
                "--no-renames",
                f"{commit}^1",
                commit,
            ).splitlines()
            if p and (clone / p).is_file()
        ]
        if touched:
            ledger.add(f"{commit[:10]} {subject}", index, touched[:MAX_CITED], clone)
            for path in touched[:MAX_CITED]:
                per_file.add(f"{commit[:10]} {path}", index, [path], clone)
        ledger.check_all(index)
        per_file.check_all(index)
    ledger.conn.close()
    per_file.conn.close()
    return clone, order, ledger.memories, per_file.memories


def outdating_commit(order: list[str], memory: Memory) -> str | None:
    """The commit (of the replay) at which ``memory`` turned stale."""
    if memory.stale_at is None:
        return None
    return order[memory.stale_at]


def print_sample(clone: Path, order: list[str], memories: list[Memory], k: int, seed: int) -> None:
    stale = [m for m in memories if m.stale_at is not None]
    chosen = random.Random(seed).sample(stale, min(k, len(stale)))
    print(f"\n### A sample of {len(chosen)} stale observations (seed {seed}), for hand-checking\n")
    for memory in sorted(chosen, key=lambda m: m.id):
        made = order[memory.commit_index]
        later = outdating_commit(order, memory) or ""
        subject = git(clone, "log", "-1", "--format=%h %s", later).strip()
        print(f'- observation #{memory.id}, captured at {made[:10]}: claim "{memory.claim}"')
        print(f"  cites: {', '.join(memory.cited)}")
        print(
            f"  stale {memory.stale_at - memory.commit_index} commits later, at {subject}; "
            f"changed: {', '.join(memory.changed)}"
        )
        for path in memory.changed[:1]:
            diff = git(clone, "diff", "--no-color", "--stat", made, later, "--", path).strip()
            body = git(clone, "diff", "--no-color", "-U1", made, later, "--", path).splitlines()
            hunk = [ln for ln in body if not ln.startswith(("diff ", "index ", "--- ", "+++ "))]
            print(f"  {diff.splitlines()[0] if diff else path}")
            for line in hunk[:14]:
                print(f"    {line[:140]}")
            if len(hunk) > 14:
                print(f"    … ({len(hunk) - 14} more diff lines)")


def is_bookkeeping(path: str) -> bool:
    """Files a release rewrites whatever the change: changelogs, manifests, lock files."""
    name = os.path.basename(path).lower()
    return is_changelog(path) or name in {
        "package.json",
        "package-lock.json",
        "bun.lock",
        "bun.lockb",
        "yarn.lock",
        "pnpm-lock.yaml",
        "plugin.json",
        "marketplace.json",
        "pyproject.toml",
        "cargo.toml",
        "cargo.lock",
    }


def is_changelog(path: str) -> bool:
    return os.path.basename(path).upper().startswith(("CHANGELOG", "CHANGES", "HISTORY"))


# ----- figures ------------------------------------------------------------------------------------
def rates(commits: int, memories: list[Memory]) -> dict[str, float]:
    stale = [m for m in memories if m.stale_at is not None]
    lags = [m.stale_at - m.commit_index for m in stale if m.stale_at is not None]
    within = {
        n: sum(1 for m in memories if m.stale_at is not None and m.stale_at - m.commit_index <= n)
        for n in (1, 10, 100)
    }
    return {
        "commits": commits,
        "observations": len(memories),
        "stale": len(stale),
        "stale_pct": 100 * len(stale) / max(1, len(memories)),
        "per100": 100 * len(stale) / max(1, commits),
        "lag_median": statistics.median(lags) if lags else 0.0,
        "within1": 100 * within[1] / max(1, len(memories)),
        "within10": 100 * within[10] / max(1, len(memories)),
        "within100": 100 * within[100] / max(1, len(memories)),
    }


def print_rates(rows: Iterable[tuple[str, dict[str, float]]]) -> None:
    print(
        "| history | commits | observations | stale at the end | stale per 100 commits "
        "| median commits to stale | stale within 1 / 10 / 100 commits |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        print(
            f"| {name} | {r['commits']:.0f} | {r['observations']:.0f} | {r['stale']:.0f} "
            f"({r['stale_pct']:.0f}%) | {r['per100']:.1f} | {r['lag_median']:.0f} | "
            f"{r['within1']:.0f}% / {r['within10']:.0f}% / {r['within100']:.0f}% |"
        )


def timed(fn: Any, runs: int) -> tuple[float, float]:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(0.95 * (len(samples) - 1))]


def cost(folder: Path, clone: Path, memories: list[Memory]) -> None:
    db = folder / "bench.db"
    conn = sqlite3.connect(db)
    ids = [m.id for m in memories][-100:]
    print("\n### Cost (wall clock, box loaded by other helpers' benches)\n")
    print("| what | p50 ms | p95 ms |")
    print("|---|---|---|")
    captures = sorted(m.capture_ms for m in memories)
    print(
        f"| capture, one observation (worker; {statistics.mean(len(m.cited) for m in memories):.1f}"
        f" files avg; HEAD moved since the last one: one git rev-parse) "
        f"| {statistics.median(captures):.2f} | "
        f"{captures[int(0.95 * (len(captures) - 1))]:.2f} |"
    )
    last = memories[-1]
    p50, p95 = timed(lambda: capture.capture(last.cited, str(clone)), 50)
    print(
        f"| capture again, same {len(last.cited)} files, HEAD unchanged (cached: no git "
        f"process) | {p50:.2f} | {p95:.2f} |"
    )
    for n in (20, 50, 100):
        p50, p95 = timed(lambda n=n: check.check(conn, ids[-n:]), 200)
        print(f"| check {n} observations, warm process | {p50:.2f} | {p95:.2f} |")
    code = (
        "import sqlite3,sys,time; sys.path.insert(0, sys.argv[2]);"
        "from workbench.staleness import check;"
        "c=sqlite3.connect(sys.argv[1]); ids=[r[0] for r in c.execute("
        "'SELECT DISTINCT observation_id FROM observation_evidence ORDER BY 1 DESC LIMIT 50')];"
        "t=time.perf_counter(); check.check(c, ids); print((time.perf_counter()-t)*1000)"
    )
    cold = sorted(
        float(
            subprocess.run(
                [sys.executable, "-S", "-c", code, str(db), str(ROOT)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
        for _ in range(20)
    )
    print(
        f"| check 50 observations, new process (cold hook) | {statistics.median(cold):.2f} "
        f"| {cold[int(0.95 * (len(cold) - 1))]:.2f} |"
    )
    conn.close()
    session_start_cost(folder, clone)


def session_start_cost(folder: Path, clone: Path) -> None:
    """The cold SessionStart block from a store of 50 observations with evidence, and without."""
    from workbench import locate
    from workbench.recall import cold_context

    stores: dict[bool, Path] = {}
    for with_evidence in (True, False):
        data = folder / f"cold-{with_evidence}"
        data.mkdir()
        conn = connect(data / "workbench.db")
        schema.apply(conn, "workbench.db")
        project, key = locate.project_identity(str(clone))
        files = [p for p in git(clone, "ls-files").splitlines() if (clone / p).is_file()][:100]
        with atomic(conn):
            for i in range(1, 51):
                conn.execute(
                    "INSERT INTO observations (id, project, project_key, type, title, created_at,"
                    " created_at_epoch, content_hash) VALUES (?, ?, ?, 'change', ?, '', ?, ?)",
                    (i, project, key, f"memory {i}", i * 1000, f"c{i}"),
                )
                if with_evidence:
                    cited = files[(2 * i) % len(files) : (2 * i) % len(files) + 2]
                    capture.record(conn, i, capture.capture(cited, str(clone)))
        conn.close()
        stores[with_evidence] = data
    # Interleaved, so a burst of load from other benches hits both variants alike.
    samples: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(40):
        for variant, data in stores.items():
            started = time.perf_counter()
            cold_context.session_context(data, str(clone))
            samples[variant].append((time.perf_counter() - started) * 1000)
    for variant, values in samples.items():
        values.sort()
        label = "with evidence (2 files each)" if variant else "without evidence"
        print(
            f"| cold SessionStart block, 50 rows, {label} | {statistics.median(values):.2f} "
            f"| {values[int(0.95 * (len(values) - 1))]:.2f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=DEFAULT_REPO, help="a git dir to replay")
    parser.add_argument("--commits", type=int, default=300)
    parser.add_argument("--sample", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-staleness-"))
    try:
        print("## Staleness\n")
        demo = demo_repos(folder)
        rows = [(f"demo: {name}", rates(commits, mems)) for name, commits, mems in demo]
        all_demo = [m for _, _, mems in demo for m in mems]
        rows.append(("demo: all five", rates(sum(c for _, c, _ in demo), all_demo)))
        clone, order, memories, single = real_history(args.repo, folder, args.commits)
        name = args.repo.parent.name.replace("+", "/")
        commits = len(order) - 1
        rows.append(
            (f"real: {name}, last {commits} first-parent commits", rates(commits, memories))
        )
        # Append-mostly files (a changelog gains an entry per release) outdate every memory
        # citing them while their claims still hold: the same history without those.
        prose = [m for m in memories if not any(is_changelog(p) for p in m.cited)]
        rows.append((f"real: {name}, observations citing no CHANGELOG", rates(commits, prose)))
        rows.append((f"real: {name}, one observation per file touched", rates(commits, single)))
        bookkeeping = [m for m in single if not any(is_bookkeeping(p) for p in m.cited)]
        rows.append(
            (
                f"real: {name}, one per file, no changelog/package/lock files",
                rates(commits, bookkeeping),
            )
        )
        print_rates(rows)
        print_sample(clone, order, memories, args.sample, args.seed)
        cost(folder, clone, memories)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
