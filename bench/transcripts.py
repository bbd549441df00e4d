"""Transcript import throughput through the real service. Prints figures, asserts nothing.

The transcript is real: one session of the real Claude Code CLI (npm, pinned; a ``Read`` of a
file, answered by the suite's local fake model, ``tests/real_transcripts.py``). It is copied
into ``--files`` files of ``--sessions`` sessions each, every copy with its own session id and
line ids (so every event is new), then each file is given to the service
(``POST /api/transcripts/import``, what ``workbench import-transcripts`` sends):

1. first pass: lines, MB, events imported, seconds, lines/s and MB/s;
2. second pass: the same files again (nothing new: offsets and head hashes only);
3. the worker's drain: until every imported event is compressed (offline compressor).

Usage: python bench/transcripts.py [--files 20] [--sessions 25]
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, progress, start_service, stop_service  # noqa: E402


def post(port: int, path: str, body: Any) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    reply = json.loads(conn.getresponse().read())
    conn.close()
    return reply


def get(port: int, path: str) -> Any:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", path)
    reply = json.loads(conn.getresponse().read())
    conn.close()
    return reply


def real_transcript(root: Path) -> bytes:
    """One real Claude Code session's transcript (the real CLI, a local fake model)."""
    from tests.real_transcripts import claude_session
    from tests.real_world import open_world

    with open_world(root) as world:
        (world.project / "notes.md").write_text("The widget is 42 mm wide.\n", "utf-8")
        return claude_session(world, f"READ {world.project / 'notes.md'}").read_bytes()


def copy_of(template: bytes) -> bytes:
    """The session again under a new session id, each line with a new uuid and tool id."""
    text = template.decode("utf-8")
    first = json.loads(text.splitlines()[0])
    text = text.replace(first["sessionId"], str(uuid.uuid4()))
    for line in template.decode("utf-8").splitlines():
        record = json.loads(line)
        for old in (record.get("uuid"),):
            if isinstance(old, str):
                text = text.replace(old, str(uuid.uuid4()))
    return text.replace("toolu_", f"toolu_{uuid.uuid4().hex[:8]}_").encode("utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--sessions", type=int, default=25, help="sessions per file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        progress("running the real Claude Code once for a transcript")
        (root / "world").mkdir()
        template = real_transcript(root / "world")
        folder = root / "transcripts"
        folder.mkdir()
        files = []
        for n in range(args.files):
            path = folder / f"session-{n}.jsonl"
            path.write_bytes(b"".join(copy_of(template) for _ in range(args.sessions)))
            files.append(path)
        size = sum(p.stat().st_size for p in files)
        port = free_port()
        proc = start_service(root / "data", port, WORKBENCH_EMBEDDER="none")
        try:
            rows = []
            for label in ("first pass", "second pass"):
                started = time.perf_counter()
                reports = [post(port, "/api/transcripts/import", {"path": str(p)}) for p in files]
                seconds = time.perf_counter() - started
                lines = sum(r["lines"] for r in reports)
                imported = sum(r["imported"] for r in reports)
                rows.append((label, lines, imported, seconds))
            started = time.perf_counter()
            while True:
                queue = get(port, "/api/health")["queue"]
                if queue["pending"] + queue["claimed"] == 0:
                    break
                time.sleep(0.2)
            drained = time.perf_counter() - started
        finally:
            stop_service(proc)
    print(f"{args.files} files x {args.sessions} sessions, {size / 1e6:.1f} MB of real "
          "Claude Code transcript lines (box shared with other helpers' benches)")  # fmt: skip
    print(f"{'pass':12} {'lines':>8} {'events':>7} {'seconds':>8} {'lines/s':>9} {'MB/s':>6}")
    for label, lines, imported, seconds in rows:
        rate = lines / seconds if seconds else 0.0
        mb = size / 1e6 / seconds if label == "first pass" and seconds else 0.0
        print(f"{label:12} {lines:8d} {imported:7d} {seconds:8.2f} {rate:9.0f} {mb:6.1f}")
    print(f"worker drain after the first pass: {drained:.1f} s (offline compressor)")


if __name__ == "__main__":
    main()
