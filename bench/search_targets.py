"""Issue 21's search-path targets at 100k with FULL vectors, two checkouts side by side.

``bench/search.py --before-ref main`` (or ``--root DIR --root DIR``) runs this part. One run:

1. seeds N observations (``bench.search.seed``) and a vector for every one of them straight
   into the embeddings cache (``bench.search_vectors.seed_vectors``: the real MiniLM of the
   service, run once on a sample of the texts, clustered copies of those for the rest), so
   full vectors exist at once and no embedding worker has to catch up first;
2. copies that data dir once per side and starts each side's real service on its copy
   (``WORKBENCH_EMBEDDER=minilm``, the default index kind), waiting until its index holds all
   N vectors; the services stay up for the whole run. ``--also KEY=VALUE`` adds a side: this
   tree with that setting in its ``settings.json`` (e.g. ``vector_index=hnsw_fp16``);
3. per scenario (quiet, then ``--burners N`` CPU burners in sessions of their own), times
   through keep-alive HTTP, alternating the sides query by query so load hits both alike:
   ``/api/search?mode=fts``, ``/api/search`` (hybrid; text, and ``format=json``, which also
   counts ``totalResults``), ``/api/timeline?query=…``; every
   query is new to both services (no query-embedding cache hit), the same text on each side,
   but for "timeline after its search" (the query the hybrid route has just searched);
   under each route, the service's CPU per request and the time its threads queued for a CPU
   meanwhile (``scheduled_ns``: the first holds on a loaded box, the second is the load's);
   and whether every side answered the request byte for byte alike (the sides serve copies
   of one store: a change that only makes search faster must not change a reply);
4. times ``workbench search <words>`` as a fresh process of each side's code against its
   service (p50 of ``--cli-runs``), and reads each service's RSS and its embedding worker's
   (children of the service), now and at peak (VmHWM).

Figures, never assertions. The machine may be loaded by others: the load average is printed
next to every scenario.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import (  # noqa: E402
    burners,
    free_port,
    hook_env,
    progress,
    settings_spec,
    start_service,
    stop_service,
    tree_at,
)
from service.idle_trim import IDLE_S  # noqa: E402

# (scenario, target p50 ms, target p95 ms or None): issue 21, with full vectors at 100k.
TARGETS: dict[str, tuple[float, float | None]] = {
    "full text": (5.0, None),
    "hybrid": (20.0, 40.0),
    "timeline by query": (10.0, None),
    "workbench search (process)": (300.0, None),
}
RSS_TARGET_MB = 300.0
# Under each HTTP measure: the service's own CPU for the request, and how long its threads
# queued for a CPU meanwhile (``scheduled_ns``).
CPU_ROW = "service CPU"
WAIT_ROW = "queued for a CPU"
CLI_SOURCE = "from workbench.cli.main import run; run()"


@dataclass
class Side:
    name: str
    root: Path
    data: Path
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    conn: http.client.HTTPConnection | None = None
    samples: dict[str, list[float]] = field(default_factory=dict)

    def get(self, path: str, params: dict[str, Any]) -> bytes:
        assert self.conn is not None
        return get_ok(self.conn, path, params, self.name)


def get_ok(conn: http.client.HTTPConnection, path: str, params: dict[str, Any], who: str) -> bytes:
    """The body of ``GET path?params`` on ``conn``; any reply but a 200 raises, naming ``who``."""
    url = f"{path}?{urllib.parse.urlencode(params)}"
    try:
        conn.request("GET", url)
        response = conn.getresponse()
    except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
        # uvicorn (and claude-mem's worker) close a keep-alive connection left idle (while the
        # other side started): open a new one, once.
        conn.close()
        conn.request("GET", url)
        response = conn.getresponse()
    body = response.read()
    if response.status != 200:
        raise RuntimeError(f"{who}: {path} answered {response.status}: {body[:300]!r}")
    return body


def scheduled_ns(pid: int) -> tuple[int, int]:
    """``(on CPU, waiting for a CPU)`` in ns, summed over every thread of ``pid`` so far.

    From ``/proc/<pid>/task/*/schedstat`` (the scheduler's own counters, ns precision): the
    difference around one request is the service's CPU for it (its background threads are
    idle once the index is full) and the time its runnable threads queued behind others'.
    The first does not depend on the machine's load, so before/after compare fairly on a
    busy box; the second is what load adds.
    """
    run = wait = 0
    for task in Path(f"/proc/{pid}/task").glob("*/schedstat"):
        try:
            fields = task.read_text(encoding="utf-8").split()
        except OSError:
            continue  # a thread that ended between the listing and the read
        run, wait = run + int(fields[0]), wait + int(fields[1])
    return run, wait


def rss_mb(pid: int, key: str = "VmRSS") -> float:
    """``VmRSS`` (now) or ``VmHWM`` (peak) of ``pid`` in MiB; 0 when it is gone."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text(encoding="utf-8").splitlines()
    except OSError:
        return 0.0
    for line in lines:
        if line.startswith(f"{key}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def children(pid: int) -> list[int]:
    """The children of ``pid`` (listed per thread: the indexer thread starts the worker)."""
    kids: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            kids += [int(k) for k in task.read_text(encoding="utf-8").split()]
        except OSError:
            continue
    return kids


def wait_indexed(side: Side, n: int, timeout: float = 900.0) -> float:
    """Seconds until the side's vector index holds ``n`` vectors (from the cache)."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        emb = json.loads(side.get("/api/health", {}))["embeddings"]
        if emb.get("state") == "ready" and emb.get("indexed", 0) >= n:
            return time.perf_counter() - started
        if emb.get("state") in ("unavailable", "disabled", "error"):
            raise RuntimeError(f"{side.name}: embeddings {emb}")
        time.sleep(0.5)
    raise RuntimeError(f"{side.name}: index not full after {timeout:.0f} s")


def start(side: Side, n: int) -> float:
    side.port = free_port()
    log = side.data.parent / f"service-{side.name}.log"
    side.proc = start_service(
        side.data,
        side.port,
        root=side.root,
        log=log,
        wait_s=300.0,
        WORKBENCH_COMPRESSOR="offline",
        WORKBENCH_EMBEDDER="minilm",
    )
    side.conn = http.client.HTTPConnection("127.0.0.1", side.port, timeout=120)
    took = wait_indexed(side, n)
    wait_prefiltered(side)
    wait_words_kept(side)
    return took


def wait_prefiltered(side: Side, most_s: float = 30.0) -> None:
    """Until the side's indexer has built its vector prefilter (``prefiltered``: ~2 s of its
    thread after the index fills at 100k), so no side is timed half-built. A checkout without
    one (no such field) is done at once; a side with it off gives up after ``most_s``."""
    wait_status(side, "prefiltered", most_s)


def wait_words_kept(side: Side, most_s: float = 120.0) -> None:
    """Until the side's indexer has made every memory's words for the second stage
    (``wordsKept``: ~10 s of its thread at 100k after a start on an older store), so no side
    is timed half-made. A checkout without them (no such field) is done at once."""
    wait_status(side, "wordsKept", most_s)


def wait_status(side: Side, field_name: str, most_s: float) -> None:
    """Until ``/api/index/status`` says anything but false for ``field_name`` (absent or null
    count as done), at most ``most_s``."""
    until = time.perf_counter() + most_s
    while time.perf_counter() < until:
        found = json.loads(side.get("/api/index/status", {})).get(field_name, True)
        if found is not False:
            return
        time.sleep(0.5)


def routes(q: str, project: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """The three timed routes for one query text (each gets its own variant of the text)."""
    return {
        "full text": ("/api/search", {"query": q, "mode": "fts"}),
        "hybrid": ("/api/search", {"query": f"{q} hybrid"}),
        # The text index (above) counts no totals since issue 21; json still counts them.
        "hybrid, format=json": ("/api/search", {"query": f"{q} json", "format": "json"}),
        "timeline by query": ("/api/timeline", {"query": f"{q} around"}),
        # The three-layer workflow: the timeline of the query the hybrid route just searched
        # (its embedding and its candidates' word pieces are warm; the anchor is recomputed).
        "timeline after its search": ("/api/timeline", {"query": f"{q} hybrid"}),
        "hybrid in a project": ("/api/search", {"query": f"{q} here", "project": project}),
    }


def measure_http(
    sides: list[Side], qs: list[str], project: str, warm: list[str]
) -> dict[str, tuple[int, int]]:
    """Every route for every query, the sides alternating (first one, then the other).

    Returns, per route, ``(replies identical on every side, replies compared)``: the sides
    serve copies of one store, so a change that only makes search faster must answer every
    request byte for byte as before (the same hits, scores, order and totals).
    """
    for q in warm:
        for side in sides:
            for path, params in routes(q, project).values():
                side.get(path, params)
    same: dict[str, tuple[int, int]] = {}
    for k, q in enumerate(qs):
        order = sides if k % 2 == 0 else sides[::-1]
        for label, (path, params) in routes(q, project).items():
            bodies: set[bytes] = set()
            for side in order:
                assert side.proc is not None
                run, wait = scheduled_ns(side.proc.pid)
                started = time.perf_counter()
                bodies.add(side.get(path, params))
                took = (time.perf_counter() - started) * 1000
                run_after, wait_after = scheduled_ns(side.proc.pid)
                side.samples.setdefault(label, []).append(took)
                cpu, queued = (run_after - run) / 1e6, (wait_after - wait) / 1e6
                side.samples.setdefault(f"  {label}: {CPU_ROW}", []).append(cpu)
                side.samples.setdefault(f"  {label}: {WAIT_ROW}", []).append(queued)
            equal, compared = same.get(label, (0, 0))
            same[label] = (equal + (len(bodies) == 1), compared + 1)
    return same


def measure_cli(sides: list[Side], qs: list[str]) -> None:
    """``workbench search <q>`` as a fresh process of each side's code, against its service."""
    for k, q in enumerate(qs):
        order = sides if k % 2 == 0 else sides[::-1]
        for side in order:
            env = hook_env(side.data, side.port, PYTHONPATH=str(side.root))
            started = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", CLI_SOURCE, "search", f"{q} cli"],
                env=env,
                cwd=side.data.parent,
                capture_output=True,
                text=True,
            )
            took = (time.perf_counter() - started) * 1000
            if done.returncode != 0 or "not running" in done.stderr:
                raise RuntimeError(f"{side.name}: workbench search failed: {done.stderr[-500:]}")
            side.samples.setdefault("workbench search (process)", []).append(took)


def memory(side: Side) -> dict[str, float]:
    assert side.proc is not None
    pid = side.proc.pid
    kids = children(pid)
    return {
        "service": rss_mb(pid),
        "service peak": rss_mb(pid, "VmHWM"),
        "worker": sum(rss_mb(k) for k in kids),
        "worker peak": sum(rss_mb(k, "VmHWM") for k in kids),
        "workers": float(len(kids)),
    }


def memory_rows(sides: list[Side]) -> list[str]:
    """One line per side: service and worker RSS now (and their peaks), against the target."""
    lines = []
    for side in sides:
        mem = memory(side)
        total = mem["service"] + mem["worker"]
        verdict = "ok" if total <= RSS_TARGET_MB else "MISSED"
        lines.append(
            f"  {side.name:28} service {mem['service']:6.0f} (peak {mem['service peak']:.0f})"
            f"  worker x{mem['workers']:.0f} {mem['worker']:6.0f}"
            f" (peak {mem['worker peak']:.0f})  total {total:6.0f} {verdict}"
        )
    return lines


def run(args: Any) -> int:
    """The whole side-by-side run; prints one table per scenario and the memory figures."""
    from bench.search import PROJECTS, queries, seed
    from bench.search_vectors import seed_vectors

    roots: list[tuple[str, Path]] = []
    extracted: list[Path] = []
    if args.root:
        for k, given in enumerate(args.root):
            roots.append((f"side{k + 1}:{Path(given).name}", Path(given).resolve()))
    else:
        old = tree_at(args.before_ref)
        extracted.append(old)
        roots = [(f"before ({args.before_ref})", old), ("after (this tree)", ROOT)]
    settings_of: dict[str, dict[str, Any]] = {}
    for setting in args.also or []:
        # A third side: this tree with settings changed (e.g. vector_index=hnsw_fp16; several
        # joined by "&": search_rerank=true&search_rerank_method=learned).
        name = f"after + {setting}"
        roots.append((name, ROOT))
        settings_of[name] = settings_spec(setting)
    n = args.n
    work = Path(tempfile.mkdtemp(prefix=f"wb-bench-targets-{n}-"))
    sides: list[Side] = []
    lines: list[str] = []
    try:
        if args.seeded:
            template = Path(args.seeded)  # a data dir a --keep run seeded (n must match)
            lines.append(f"reused {template} (seeded by an earlier run)")
        else:
            template = work / "template"
            template.mkdir()
            rng = random.Random(n)
            progress(f"seeding {n:,} observations")
            seconds = seed(template / "workbench.db", n, rng)
            progress(f"seeded in {seconds:.0f} s; seeding a vector for each")
            _, rate = seed_vectors(template / "workbench.db", args.sample, rng)
            lines.append(f"seeded {n:,} observations + {n:,} cached vectors (MiniLM {rate:.0f}/s)")
        for k, (name, root) in enumerate(roots):
            data = work / f"side{k}" / "data"
            shutil.copytree(template, data, ignore=shutil.ignore_patterns("index", "*.log"))
            if name in settings_of:
                path = data / "settings.json"
                current = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
                path.write_text(json.dumps({**current, **settings_of[name]}), encoding="utf-8")
            sides.append(Side(name, root, data))
        if not args.seeded:
            shutil.rmtree(template)
        for side in sides:
            progress(f"starting {side.name}")
            ready = start(side, n)
            lines.append(f"{side.name}: index full {ready:.0f} s after the service answered")
        scenarios = [("quiet", 0)] + [(f"busy{b}", b) for b in args.burners]
        gen = random.Random(7)
        for scenario, count in scenarios:
            for side in sides:
                side.samples = {}
            with burners(count):
                load = os.getloadavg()[0]
                progress(f"{scenario}: HTTP, {args.queries} queries per route and side")
                same = measure_http(
                    sides, queries(args.queries, gen), PROJECTS[1], queries(10, gen)
                )
                progress(f"{scenario}: workbench search x {args.cli_runs} per side")
                measure_cli(sides, queries(args.cli_runs, gen))
                load = max(load, os.getloadavg()[0])
            lines += table(scenario, count, load, sides)
            if len(sides) > 1:
                lines.append("replies identical on every side (same hits, scores, order):")
                lines += [f"  {label:40}{n:>6} of {m}" for label, (n, m) in same.items()]
        lines.append("")
        lines.append(f"RSS (MiB) after the runs; target service + worker ≤ {RSS_TARGET_MB:g}")
        lines += memory_rows(sides)
        # The same services once quiet: the service gives the heap's freed pages back after
        # ``IDLE_S`` without a request (service/idle_trim.py). The verdict stays on the figure
        # right after the runs, the higher one.
        time.sleep(IDLE_S + 2)
        lines.append(f"RSS (MiB) once idle ({IDLE_S + 2:g} s later: the service's idle trim ran)")
        lines += memory_rows(sides)
    finally:
        for side in sides:
            if side.proc is not None:
                stop_service(side.proc, timeout=60)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            progress(f"kept {work}")
        for old in extracted:
            shutil.rmtree(old.parent, ignore_errors=True)
        print("\n".join(lines))
    return 0


def table(scenario: str, count: int, load: float, sides: list[Side]) -> list[str]:
    """One scenario's rows: per measure, each side's p50 / p95 and the target's verdict."""
    out = [
        "",
        f"{scenario}: {count} CPU burners, load average up to {load:.1f} on {os.cpu_count()}"
        " cores (wall-clock ms, p50 / p95)",
        f"{'':42}" + "".join(f"{s.name:>34}" for s in sides) + "  target",
    ]
    for label in sides[0].samples:
        cells = ""
        verdicts = []
        for side in sides:
            values = side.samples[label]
            p50 = statistics.median(values)
            p95 = statistics.quantiles(values, n=100)[94] if len(values) > 1 else p50
            cells += f"{f'{p50:.1f} / {p95:.1f}':>34}"
            goal = TARGETS.get(label)
            if goal:
                ok = p50 <= goal[0] and (goal[1] is None or p95 <= goal[1])
                verdicts.append("ok" if ok else "MISSED")
        goal = TARGETS.get(label)
        target = ""
        if goal:
            target = f"≤{goal[0]:g}" + (f" / ≤{goal[1]:g}" if goal[1] else "")
            target += f" ({', '.join(verdicts)})"
        out.append(f"{label:42}{cells}  {target}")
    return out
