"""Where a forgotten memory is still found after ``workbench forget``, per checkout. Prints figures.

Per ``--root`` (a checkout; each on a fresh data dir and a fresh git project), one real service
with MiniLM and folder memory files on records a session whose edit names a unique marker
(the offline compressor puts the file name in the observation's title), embeds it, saves its
vector index; ``marimo export html`` runs the checkout's corpus builder (as notebooks/README
showed). Then ``workbench forget`` of the marker's observations, a few seconds for the
indexer's pass, the service stopped. Printed, per place, what still holds the memory:

- data dir files holding the marker's bytes, or a 48-byte piece of its float32 vector;
- the saved vector index: the highest cosine of any slot, dead or live, to that vector
  (≥ 0.99: it holds it);
- the embeddings cache rows of its text;
- the project's folder memory files naming the marker;
- marimo's snapshots (``notebooks/__marimo__/session``) naming the marker.

Figures, not assertions (``tests/test_vectors_forget.py`` and its neighbours assert them).
Usage: python bench/forget_copies.py --root A [--root B]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import free_port, health, service_env, start_service, stop_service  # noqa: E402

MARKER = "qjvbenchforgotten"


def post(port: int, path: str, body: dict[str, Any]) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        data = json.dumps(body).encode()
        conn.request("POST", path, data, {"Content-Type": "application/json"})
        reply = conn.getresponse()
        return reply.status, json.loads(reply.read() or b"null")
    finally:
        conn.close()


def record(port: int, project: Path) -> None:
    """One session: a prompt, reads and edits of files (one named by the marker), a Stop."""
    from workbench.locate import project_identity

    session = "bench-forget-1"
    identity = project_identity(str(project))
    post(port, "/api/sessions/init", {"contentSessionId": session, "project": identity.name,
                                      "projectKey": identity.key, "prompt": "tidy the helpers",
                                      "platformSource": "claude-code"})  # fmt: skip
    files = [f"src/util/{MARKER}.py", "src/util/helpers.py", "src/app.py"]
    for n, rel in enumerate(files):
        path = str(project / rel)
        post(port, "/api/sessions/observations", {
            "contentSessionId": session, "tool_name": "Edit", "cwd": str(project),
            "tool_input": {"file_path": path, "old_string": "x = 1", "new_string": "x = 2"},
            "tool_response": {"filePath": path, "oldString": "x = 1", "newString": "x = 2"},
            "tool_use_id": f"toolu_bench_{n}",
        })  # fmt: skip
    done = {"contentSessionId": session, "last_assistant_message": "Tidied the helpers."}
    post(port, "/api/sessions/summarize", done)


def wait(port: int, ready: Any, seconds: float = 180.0) -> dict[str, Any]:
    deadline = time.monotonic() + seconds
    found: dict[str, Any] = {}
    while time.monotonic() < deadline:
        found = health(port, timeout=5) or {}
        if found and ready(found):
            return found
        time.sleep(0.5)
    raise SystemExit(f"the service never got there: {found}")


def saved_count(data: Path) -> int | None:
    """How many vectors the saved index declares (its meta), None before the first save."""
    for meta in data.glob("index/observations.*.json"):
        if not meta.name.endswith(".ids.json"):
            return int(json.loads(meta.read_text(encoding="utf-8"))["count"])
    return None


def read(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def one(root: Path, work: Path) -> dict[str, str]:
    import numpy as np

    from workbench.recall import vectors

    data, project = work / "data", work / "proj"
    for folder in ("src/util", "docs"):
        (project / folder).mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    for rel in (f"src/util/{MARKER}.py", "src/util/helpers.py", "src/app.py"):
        (project / rel).write_text("x = 1\n", encoding="utf-8")
    port = free_port()
    extra = {"WORKBENCH_EMBEDDER": "minilm", "WORKBENCH_FOLDER_MEMORY_FILES": "1"}
    proc = start_service(data, port, root=root, **extra)
    db = data / "workbench.db"
    try:
        record(port, project)
        wait(port, lambda h: h["queue"]["pending"] + h["queue"]["claimed"] == 0)
        count = int(read(db, "SELECT count(*) FROM observations")[0][0])
        wait(port, lambda h: h["embeddings"].get("indexed") == count)
        ids = [int(r[0]) for r in read(db, "SELECT id FROM observations WHERE instr(title, ?)",
                                       (MARKER,))]  # fmt: skip
        rows = read(db, "SELECT title, subtitle, narrative, facts, concepts FROM observations"
                        " WHERE id = ?", (ids[0],))  # fmt: skip
        names = ("title", "subtitle", "narrative", "facts", "concepts")
        text_hash = vectors.text_hash(vectors.embed_text(dict(zip(names, rows[0], strict=True))))
        blob = read(db, "SELECT vector FROM embeddings WHERE text_hash = ?", (text_hash,))[0][0]
        deadline = time.monotonic() + 90  # the indexer saves at most every 30 s
        while saved_count(data) != count:
            if time.monotonic() > deadline:
                raise SystemExit("the service never saved its vector index")
            time.sleep(0.5)
        env = service_env(data, port, root=root, **extra)
        subprocess.run(
            [sys.executable, "-m", "marimo", "export", "html",
             str(root / "notebooks" / "corpus_builder.py"), "-o", str(work / "out.html"), "-f",
             "--", "--data-dir", str(data)],
            cwd=root, env=env, capture_output=True, timeout=300, check=False,
        )  # fmt: skip
        forgot = subprocess.run(
            [sys.executable, "-m", "workbench", "forget", *map(str, ids), "--json"],
            cwd=root, env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        if forgot.returncode != 0:
            raise SystemExit(forgot.stderr)
        time.sleep(5)  # the indexer's next pass
    finally:
        stop_service(proc)
    vector = np.frombuffer(blob, dtype="<f4")
    pieces = [blob[start : start + 48] for start in range(0, len(blob) - 48, 256)]
    marked, vectored = [], []
    for path in sorted(p for p in data.rglob("*") if p.is_file()):
        raw = path.read_bytes()
        if MARKER.encode() in raw:
            marked.append(path.name)
        if any(piece in raw for piece in pieces):
            vectored.append(path.name)
    best = 0.0
    import faiss

    for saved in data.glob("index/observations.*.faiss"):
        index = faiss.read_index(str(saved))
        inner = faiss.downcast_index(index.storage) if hasattr(index, "storage") else index
        rows = inner.reconstruct_n(0, int(inner.ntotal))
        norms = np.linalg.norm(rows, axis=1)
        cos = (rows @ vector) / np.where(norms == 0, 1, norms)
        best = max(best, float(cos.max()) if len(cos) else 0.0)
    held = read(db, "SELECT count(*) FROM embeddings WHERE text_hash = ?", (text_hash,))
    cached = int(held[0][0])
    folders = [
        str(p.relative_to(project))
        for p in project.rglob("CLAUDE.md")
        if MARKER in p.read_text(encoding="utf-8")
    ]
    snapshots = [
        p.name
        for p in (root / "notebooks" / "__marimo__" / "session").glob("*.json")
        if MARKER in p.read_text(encoding="utf-8")
    ]
    return {
        "data dir files with the marker": ", ".join(marked) or "none",
        "data dir files with its vector's bytes": ", ".join(vectored) or "none",
        "saved index: best cosine to its vector": f"{best:.3f}",
        "embeddings cache rows of its text": str(cached),
        "folder memory files naming it": ", ".join(folders) or "none",
        "marimo snapshots naming it": ", ".join(snapshots) or "none",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", action="append", type=Path, required=True)
    args = parser.parse_args()
    found = []
    for n, root in enumerate(args.root):
        with tempfile.TemporaryDirectory(prefix=f"wb-forget-{n}-") as work:
            found.append(one(root.resolve(), Path(work)))
    labels = [str(r) for r in args.root]
    width = max(len(v) for v in [*labels, *(v for f in found for v in f.values())]) + 2
    print("after workbench forget of one memory (a marker in its title), what still holds it")
    print(f"{'place':<42}" + "".join(f"{label:>{width}}" for label in labels))
    for place in found[0]:
        print(f"{place:<42}" + "".join(f"{f[place]:>{width}}" for f in found))
    print(f"(load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
