"""Folder memory files: what ``generate`` and ``clean`` cost as history grows. Prints figures.

For each size (default 1,000 / 10,000 / 50,000 observations of one project, spread over 200
folders of a real tmp project, three files each), the store is seeded directly, then timed
in-process, as the service's runner and ``workbench folder-memory`` run them:

- plan: read the project's observations (read-only connection) and group them by folder;
- first write: every folder's CLAUDE.md created (one atomic write each, fsync included);
- again: the same plan when nothing changed (no write);
- clean: every section taken out, the files deleted.

The runner does this off the hook path (a thread of its own, after a summary), so the figure
to watch is that it stays well under a second at the sizes a project reaches. The box is
shared with other helpers' benches: compare only figures from the same run.

Usage: python bench/folder_memory.py [--sizes 1000,10000,50000] [--folders 200]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workbench.folder_memory import apply, plan  # noqa: E402
from workbench.locate import project_identity  # noqa: E402
from workbench.models import OBSERVATION_TYPES, ObservationDraft  # noqa: E402
from workbench.store import observations  # noqa: E402
from workbench.store.connection import atomic, connect  # noqa: E402
from workbench.store.database import Store  # noqa: E402

T0 = 1_764_000_000_000


def make_project(root: Path, folders: int) -> list[str]:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    files = []
    for n in range(folders):
        folder = root / f"pkg{n % 20}" / f"mod{n}"
        folder.mkdir(parents=True)
        for k in range(3):
            (folder / f"f{k}.py").write_text("x = 1\n")
            files.append(f"pkg{n % 20}/mod{n}/f{k}.py")
    return files


def seed(db: Path, root: Path, files: list[str], count: int) -> None:
    rng = random.Random(7)
    key = project_identity(str(root)).key
    with Store(db) as store, atomic(store.conn):
        for i in range(count):
            touched = rng.sample(files, 2)
            observations.insert(
                store.conn,
                ObservationDraft(
                    type=OBSERVATION_TYPES[i % len(OBSERVATION_TYPES)],
                    title=f"Observation {i}: how {touched[0]} handles retries",
                    narrative="The timeout applies per attempt. " * 4,
                    facts=["three retries"],
                    files_read=touched[:1],
                    files_modified=touched[1:] if i % 3 == 0 else [],
                ),
                content_session_id=None,
                project=root.name,
                project_key=key,
                created_ms=T0 + i * 60_000,
            )


def timed(fn: Callable[[], list[plan.Planned]]) -> tuple[float, list[plan.Planned]]:
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1000, result


def run_one(size: int, folders: int) -> str:
    """One table row: seed ``size`` observations, then time plan, write, again, clean."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "proj"
        root.mkdir()
        files = make_project(root, folders)
        db = Path(tmp) / "workbench.db"
        seed(db, root, files, size)
        conn = connect(db, readonly=True)

        def planned() -> list[plan.Planned]:
            return plan.generate(conn, root, "CLAUDE.md", 20, [])

        plan_ms, items = timed(planned)
        write_ms, done = timed(lambda: apply.carry_out(items))
        written = sum(1 for d in done if d.action in ("create", "update"))
        again_ms, _ = timed(lambda: apply.carry_out(planned()))
        clean_ms, _ = timed(lambda: apply.carry_out(plan.clean(root, "CLAUDE.md")))
        conn.close()
    return (
        f"| {size:,} | {folders} | {plan_ms:.0f} | {write_ms:.0f} | {written} "
        f"| {again_ms:.0f} | {clean_ms:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--folders", type=int, default=200)
    args = parser.parse_args()
    print("| observations | folders | plan ms | first write ms | files | again ms | clean ms |")
    print("|---|---|---|---|---|---|---|")
    for size in [int(s) for s in args.sizes.split(",")]:
        print(run_one(size, args.folders))


if __name__ == "__main__":
    main()
