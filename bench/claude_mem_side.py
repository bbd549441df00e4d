"""Issue 21's search-path figures side by side with the real claude-mem, at 100k, in one run.

Issue 21 asks for the search path "with full vectors at 100k and in one run with claude-mem".
``bench/search_targets.py`` compares two checkouts of ours; this runs claude-mem's own worker
service next to ours on the same 100k observations and times both, interleaved query by query:

1. copies the seeded data dir (``--seeded``, default ``/tmp/i21lat/seeded100k_v2``: 100k
   observations with a vector for each; the original is never written) and starts our service
   on the copy with MiniLM, waiting until its index holds every vector;
2. starts claude-mem's worker (``plugin/scripts/worker-service.cjs --daemon`` under bun) once on
   an empty data dir so it creates its own schema and migrations, stops it, copies our
   sessions, observations, summaries and prompts into its tables (its insert triggers fill its
   FTS5 tables ``observations_fts``, ``session_summaries_fts``, ``user_prompts_fts``), then
   starts it again on that store. Chroma is off (``CLAUDE_MEM_CHROMA_ENABLED=false``: its
   vector side needs ``uvx chroma-mcp`` from outside, unreachable here), so its
   ``/api/search`` is its FTS5 keyword path, the one it falls back to without Chroma;
3. per scenario (quiet, then ``--burners N`` CPU burners each), for every query, in
   alternating order, times through keep-alive HTTP:

   - full text: ours ``/api/search?mode=fts``, theirs ``/api/search`` (FTS5);
   - hybrid: ours ``/api/search`` (full vectors), theirs ``/api/search`` again (what it
     answers a search with here; a new variant of the text, so neither side repeats a query);
   - timeline by query: ours ``/api/timeline?query=``, theirs ``/api/timeline/by-query``;

   and counts the replies that found something: claude-mem quotes the whole query as one FTS5
   phrase (``SessionSearch.searchObservations``), so a multi-word question mostly finds
   nothing, which is fast; the hit column keeps the ratio honest. The "one word" rows send
   one word of the seeded vocabulary (``bench.search.word``), which its phrase search
   matches too, so both sides do the work of finding something. The replies differ in size:
   its search answers a markdown table of up to 50 observations, 50 sessions and 20 prompts,
   ours its default page;
4. prints ms p50 / p95 per route and side, the ratio claude-mem ÷ workbench, the same for
   each service's CPU per request (its threads' scheduler counters, ``scheduled_ns``: unlike
   the wall clock, it holds on a loaded box), and each service's RSS (ours: the service and
   its embedding worker, if one is alive; theirs: the bun process and any children).

Figures, never assertions; the box may be loaded by other programs: the load average is
printed next to each scenario.

Installing claude-mem and bun (never project dependencies; the bench takes their paths)::

    mkdir -p /work/data-sets/cm-runtime && cd /work/data-sets/cm-runtime
    npm pack claude-mem@13.25.3 @oven/bun-linux-x64@1.4.5   # (npm install loops resolving
    mkdir claude-mem bun                                     #  claude-mem's better-auth deps;
    tar xzf claude-mem-13.25.3.tgz -C claude-mem             #  the worker bundle needs none)
    tar xzf oven-bun-linux-x64-1.4.5.tgz -C bun

Usage::

    .venv/bin/python bench/claude_mem_side.py \\
        --bun /work/data-sets/cm-runtime/bun/package/bin/bun \\
        --claude-mem /work/data-sets/cm-runtime/claude-mem/package \\
        [--seeded /tmp/i21lat/seeded100k_v2] [--queries 100] [--burners 2]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import burners, free_port, progress, stop_service  # noqa: E402
from bench.search import queries, word  # noqa: E402
from bench.search_targets import (  # noqa: E402
    Side,
    children,
    get_ok,
    memory,
    rss_mb,
    scheduled_ns,
    start,
)

SEEDED = Path("/tmp/i21lat/seeded100k_v2")
WORKER_SCRIPT = Path("plugin/scripts/worker-service.cjs")
CPU = ", CPU"
NO_HITS = (b"No results found", b"No observations found")
ROUTES = (
    "full text",
    "full text, one word",
    "hybrid / its search",
    "timeline by query",
    "timeline, one word",
)


def ours(route: str, q: str, w: str) -> tuple[str, dict[str, object]]:
    """Our request for ``route``: query ``q``, or the one vocabulary word ``w``, which
    claude-mem's phrase search can match too."""
    if route == "full text":
        return "/api/search", {"query": q, "mode": "fts"}
    if route == "full text, one word":
        return "/api/search", {"query": w, "mode": "fts"}
    if route == "timeline, one word":
        return "/api/timeline", {"query": w}
    if route == "hybrid / its search":
        return "/api/search", {"query": f"{q} hybrid"}
    return "/api/timeline", {"query": f"{q} around"}


def theirs(route: str, q: str, w: str) -> tuple[str, dict[str, object]]:
    """claude-mem's request for ``route`` (its routes as its MCP server calls them)."""
    if route == "full text":
        return "/api/search", {"query": q}
    if route == "full text, one word":
        return "/api/search", {"query": w}
    if route == "timeline, one word":
        return "/api/timeline/by-query", {"query": w}
    if route == "hybrid / its search":
        return "/api/search", {"query": f"{q} hybrid"}
    return "/api/timeline/by-query", {"query": f"{q} around"}


@dataclass
class ClaudeMem:
    """claude-mem's worker service: bun running its bundled worker on a data dir of its own."""

    bun: Path
    package: Path
    home: Path
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    conn: http.client.HTTPConnection | None = None
    samples: dict[str, list[float]] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)

    @property
    def data(self) -> Path:
        return self.home / "data"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLAUDE")}
        env.update(
            HOME=str(self.home),
            CLAUDE_MEM_DATA_DIR=str(self.data),
            CLAUDE_MEM_WORKER_PORT=str(self.port),
            CLAUDE_MEM_CHROMA_ENABLED="false",
            CLAUDE_MEM_TRANSCRIPTS_ENABLED="false",
            CLAUDE_MEM_TELEGRAM_ENABLED="false",
            DO_NOT_TRACK="1",
        )
        return env

    def start(self, wait_s: float = 120.0) -> None:
        self.port = free_port()
        log = (self.home / "worker.log").open("ab")
        try:
            self.proc = subprocess.Popen(
                [str(self.bun), str(self.package / WORKER_SCRIPT), "--daemon"],
                env=self.env(),
                cwd=self.home,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        finally:
            log.close()
        self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"claude-mem exited {self.proc.returncode}: {self.log_tail()}")
            try:
                health = json.loads(self.get("/api/health", {}))
                if health.get("initialized"):
                    return
            except (OSError, http.client.HTTPException, RuntimeError, ValueError):
                self.conn.close()
            time.sleep(0.5)
        raise RuntimeError(f"claude-mem did not answer in {wait_s:.0f} s: {self.log_tail()}")

    def stop(self) -> None:
        if self.conn is not None:
            self.conn.close()
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def log_tail(self) -> str:
        path = self.home / "worker.log"
        return path.read_text(encoding="utf-8", errors="replace")[-2000:] if path.exists() else ""

    def get(self, path: str, params: dict[str, object]) -> bytes:
        assert self.conn is not None
        return get_ok(self.conn, path, params, "claude-mem")

    def rss(self) -> tuple[float, float]:
        """(now, peak) MiB of bun and its children (the worker spawns none with Chroma off)."""
        assert self.proc is not None
        pids = [self.proc.pid, *children(self.proc.pid)]
        return sum(rss_mb(p) for p in pids), sum(rss_mb(p, "VmHWM") for p in pids)


def copy_rows(ours_db: Path, cm_db: Path) -> dict[str, int]:
    """Our sessions, observations, summaries and prompts into claude-mem's tables.

    Our ``content_session_id`` is both its content and memory session id (its observations
    and summaries key on the memory one); its insert triggers index the text in FTS5.
    """
    conn = sqlite3.connect(cm_db)
    conn.execute("ATTACH DATABASE ? AS wb", (f"file:{ours_db}?mode=ro",))
    counts: dict[str, int] = {}
    with conn:
        counts["sessions"] = conn.execute(
            "INSERT INTO sdk_sessions (content_session_id, memory_session_id, project,"
            " platform_source, started_at, started_at_epoch, completed_at, completed_at_epoch,"
            " status, prompt_counter)"
            " SELECT content_session_id, content_session_id, project, 'claude', started_at,"
            " started_at_epoch, completed_at, completed_at_epoch, 'completed', prompt_counter"
            " FROM wb.sessions ORDER BY id"
        ).rowcount
        counts["observations"] = conn.execute(
            "INSERT INTO observations (memory_session_id, project, type, title, subtitle,"
            " narrative, facts, concepts, files_read, files_modified, prompt_number,"
            " created_at, created_at_epoch, discovery_tokens, content_hash)"
            " SELECT content_session_id, project, type, title, subtitle, narrative, facts,"
            " concepts, files_read, files_modified, prompt_number, created_at,"
            " created_at_epoch, discovery_tokens, content_hash FROM wb.observations ORDER BY id"
        ).rowcount
        counts["summaries"] = conn.execute(
            "INSERT INTO session_summaries (memory_session_id, project, request, investigated,"
            " learned, completed, next_steps, notes, files_read, files_edited, prompt_number,"
            " created_at, created_at_epoch, discovery_tokens)"
            " SELECT content_session_id, project, request, investigated, learned, completed,"
            " next_steps, notes, files_read, files_edited, prompt_number, created_at,"
            " created_at_epoch, discovery_tokens FROM wb.session_summaries ORDER BY id"
        ).rowcount
        counts["prompts"] = conn.execute(
            "INSERT INTO user_prompts (session_db_id, content_session_id, prompt_number,"
            " prompt_text, created_at, created_at_epoch)"
            " SELECT s.id, p.content_session_id, p.prompt_number, p.prompt_text, p.created_at,"
            " p.created_at_epoch FROM wb.user_prompts p"
            " LEFT JOIN sdk_sessions s ON s.content_session_id = p.content_session_id"
            " ORDER BY p.id"
        ).rowcount
    conn.execute("DETACH DATABASE wb")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return counts


def found(body: bytes) -> bool:
    """Whether a reply holds a hit (both services answer 200 with a 'nothing found' text)."""
    if any(marker in body for marker in NO_HITS):
        return False
    return b'"results": []' not in body and b'"results":[]' not in body


def measure(
    wb: Side, cm: ClaudeMem, qs: list[tuple[str, str]], warm: list[tuple[str, str]]
) -> dict[str, int]:
    """Every route for every query, the two services alternating who goes first.

    Returns our replies with hits per route (claude-mem's go to ``cm.hits``).
    """
    for q, w in warm:
        for route in ROUTES:
            wb.get(*ours(route, q, w))
            cm.get(*theirs(route, q, w))
    assert wb.proc is not None
    assert cm.proc is not None
    wb_hits: dict[str, int] = {}
    for k, (q, w) in enumerate(qs):
        for route in ROUTES:
            sides = [
                (wb.proc.pid, wb.samples, wb_hits, wb.get, ours(route, q, w)),
                (cm.proc.pid, cm.samples, cm.hits, cm.get, theirs(route, q, w)),
            ]
            for pid, samples, hits, get, (path, params) in sides if k % 2 else sides[::-1]:
                cpu = scheduled_ns(pid)[0]
                started = time.perf_counter()
                body = get(path, params)
                samples.setdefault(route, []).append((time.perf_counter() - started) * 1000)
                samples.setdefault(f"{route}{CPU}", []).append((scheduled_ns(pid)[0] - cpu) / 1e6)
                hits[route] = hits.get(route, 0) + found(body)
    return wb_hits


def cuts(values: list[float]) -> tuple[float, float]:
    return statistics.median(values), statistics.quantiles(values, n=100)[94]


def table(
    scenario: str, load: float, wb: Side, cm: ClaudeMem, wb_hits: dict[str, int], count: int
) -> list[str]:
    out = [
        "",
        f"{scenario}: load average up to {load:.1f} on {os.cpu_count()} cores (box shared with"
        " other programs); wall-clock ms p50 / p95 over keep-alive HTTP",
        f"{'':26}{'workbench':>18}{'claude-mem':>18}{'cm ÷ wb':>16}"
        f"{'replies with hits wb / cm':>30}",
    ]
    for route in [*ROUTES, *(f"{r}{CPU}" for r in ROUTES)]:
        if route == f"{ROUTES[0]}{CPU}":
            out.append(
                "the service's CPU per request (ms, p50 / p95, its threads' scheduler counters:"
                " holds on a loaded box)"
            )
        w50, w95 = cuts(wb.samples[route])
        c50, c95 = cuts(cm.samples[route])
        out.append(
            f"{route:26}{f'{w50:.1f} / {w95:.1f}':>18}{f'{c50:.1f} / {c95:.1f}':>18}"
            f"{f'{c50 / w50:.2f}× / {c95 / w95:.2f}×':>16}"
            + (
                f"{f'{wb_hits[route]} / {cm.hits[route]} of {count}':>30}"
                if CPU not in route
                else ""
            )
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bun", type=Path, required=True, help="the bun binary")
    parser.add_argument(
        "--claude-mem", type=Path, required=True, help="claude-mem's package dir (has plugin/)"
    )
    parser.add_argument("--seeded", type=Path, default=SEEDED, help="our seeded data dir")
    parser.add_argument("--queries", type=int, default=100, help="queries per route and side")
    parser.add_argument("--burners", type=int, nargs="*", default=[], help="busy scenarios")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data dirs")
    args = parser.parse_args(argv)
    worker = args.claude_mem / WORKER_SCRIPT
    for need in (args.bun, worker, args.seeded / "workbench.db"):
        if not need.exists():
            parser.error(f"{need} does not exist (see the docstring for how to install it)")
    work = Path(tempfile.mkdtemp(prefix="wb-bench-cm-"))
    wb = Side("workbench", ROOT, work / "wb" / "data")
    cm = ClaudeMem(args.bun.resolve(), args.claude_mem.resolve(), work / "cm")
    cm.home.mkdir()
    lines: list[str] = []
    try:
        progress(f"copying {args.seeded}")
        shutil.copytree(args.seeded, wb.data, ignore=shutil.ignore_patterns("*.log"))
        n = (
            sqlite3.connect(f"file:{wb.data / 'workbench.db'}?mode=ro", uri=True)
            .execute("SELECT count(*) FROM observations")
            .fetchone()[0]
        )
        progress("claude-mem: creating its schema (first start)")
        cm.start()
        version = json.loads(cm.get("/api/health", {})).get("version", "?")
        cm.stop()
        progress("claude-mem: copying our rows into its tables")
        began = time.perf_counter()
        counts = copy_rows(wb.data / "workbench.db", cm.data / "claude-mem.db")
        lines.append(
            f"claude-mem {version} seeded with "
            + ", ".join(f"{v:,} {k}" for k, v in counts.items())
            + f" in {time.perf_counter() - began:.0f} s (Chroma off: its FTS5 search)"
        )
        progress("claude-mem: starting on the seeded store")
        cm.start()
        progress("workbench: starting, waiting for the full index")
        ready = start(wb, n)
        health = json.loads(wb.get("/api/health", {}))
        emb, vectors = health["embeddings"], health.get("vectors") or {}
        lines.append(
            f"workbench: {n:,} observations, index full {ready:.0f} s after it answered"
            f" ({emb.get('indexed', 0):,} indexed, {vectors.get('behind', '?')} behind)"
        )
        gen = random.Random(21)
        for scenario, count in [("quiet", 0)] + [(f"busy{b}", b) for b in args.burners]:
            wb.samples, cm.samples, cm.hits = {}, {}, {}
            with burners(count):
                load = os.getloadavg()[0]
                progress(f"{scenario}: {args.queries} queries per route and side")
                qs = [(q, word(gen)) for q in queries(args.queries, gen)]
                warm = [(q, word(gen)) for q in queries(10, gen)]
                wb_hits = measure(wb, cm, qs, warm)
                load = max(load, os.getloadavg()[0])
            lines += table(f"{scenario} ({count} CPU burners)", load, wb, cm, wb_hits, args.queries)
        mem = memory(wb)
        cm_now, cm_peak = cm.rss()
        lines += [
            "",
            "RSS (MiB) after the runs",
            f"  workbench   service {mem['service']:.0f} (peak {mem['service peak']:.0f})"
            f" + embedding worker x{mem['workers']:.0f} {mem['worker']:.0f}"
            f" (peak {mem['worker peak']:.0f}) = {mem['service'] + mem['worker']:.0f}",
            f"  claude-mem  bun worker service {cm_now:.0f} (peak {cm_peak:.0f})",
            f"  ratio cm ÷ wb (now): {cm_now / (mem['service'] + mem['worker']):.2f}×",
        ]
    finally:
        cm.stop()
        if wb.proc is not None:
            stop_service(wb.proc, timeout=60)
        if args.keep:
            progress(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
