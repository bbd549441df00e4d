"""What naming a cwd's project costs a hook: ``workbench.locate.project_identity`` uncached.

Every hook that names the project calls it once per process (the cache helps only the
service), so the figure is one cold call: walk up for ``.git``, read a worktree's ``gitdir``
and ``commondir`` files, resolve the root's real path. Cases (built in a temporary folder
with real ``git``): a folder three levels inside a repository, the same inside a worktree of
it, a folder outside git, and a hostile 40 KB cwd (the old walk was quadratic in it).
Figures, not assertions (STYLE lesson 20).

Usage: ``.venv/bin/python bench/project_identity.py [--runs 300]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workbench import locate  # noqa: E402


def _git(*args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", *args],
        check=True,
        capture_output=True,
    )


def _cases(base: Path) -> dict[str, str]:
    repo = base / "clientA" / "api"
    (repo / "src" / "a" / "b").mkdir(parents=True)
    _git("init", "-q", str(repo))
    _git("-C", str(repo), "commit", "-q", "--allow-empty", "-m", "init")
    _git("-C", str(repo), "worktree", "add", "-q", str(base / "wt"))
    (base / "wt" / "src" / "a" / "b").mkdir(parents=True)
    (base / "plain" / "a" / "b").mkdir(parents=True)
    return {
        "repository, 3 below its root": str(repo / "src" / "a" / "b"),
        "worktree, 3 below its root": str(base / "wt" / "src" / "a" / "b"),
        "outside git": str(base / "plain" / "a" / "b"),
        "hostile 40 KB cwd": "/a" * 20_000,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=300, help="cold calls per case")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for label, cwd in _cases(Path(tmp)).items():
            times = []
            for _ in range(args.runs):
                locate.project_identity.cache_clear()
                started = time.perf_counter()
                identity = locate.project_identity(cwd)
                times.append(time.perf_counter() - started)
            print(
                f"{label:30} median {statistics.median(times) * 1e6:9.1f} µs"
                f"  max {max(times) * 1e6:9.1f} µs  -> {identity.name!r}"
            )


if __name__ == "__main__":
    main()
