"""Search latency at 10,000 and 100,000 observations, through HTTP and in-process. Prints figures.

1. seeds N observations (plus sessions, prompts and summaries) straight into a temporary data
   dir through the store layer, in one transaction (realistic varied text drawn from a
   vocabulary of code/dev terms with a Zipf-like skew, so some terms are common);
2. starts the real service on it and times ``GET /api/search`` (FTS, hybrid, filtered) and
   ``GET /api/timeline`` over keep-alive HTTP, and ``SearchEngine`` directly in-process;
3. prints p50/p95 per scenario next to the targets of issue 3.

Hybrid here is whatever the service's vector ranker gives: with ``--embedder none`` (the
default, so seeding 100k needs no embedding) hybrid degrades to full text, and its figure is
FTS plus the fusion path's overhead. Vector figures (index build, embedding throughput,
vector and true-hybrid latency) go in ``vector_figures`` (R2's slot).

With ``--before-ref REF`` (or ``--root DIR`` twice) it measures issue 21's targets instead,
at ``--n`` (100k) with a vector for every observation, two checkouts side by side in one run
(``bench/search_targets.py``): full text, hybrid, timeline by query, ``workbench search`` as
a process, service + worker RSS; quiet and with ``--burners N`` CPU burners.

Usage: python bench/search.py [--sizes 10000,100000] [--queries 200] [--embedder none]
       [--skip-vectors]
       python bench/search.py --before-ref main [--n 100000] [--queries 200] [--cli-runs 20]
       [--burners 4]
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import free_port, progress, start_service, stop_service  # noqa: E402
from workbench.clock import iso_from_ms, now_ms  # noqa: E402
from workbench.models import OBSERVATION_TYPES  # noqa: E402
from workbench.recall.filters import SearchFilters  # noqa: E402
from workbench.recall.search import SearchEngine  # noqa: E402
from workbench.store.connection import atomic  # noqa: E402
from workbench.store.database import Store  # noqa: E402

# (scenario, target p50 ms, target p95 ms) at 100k through HTTP, from issue 3.
TARGETS = {"http fts": (5.0, 20.0), "http hybrid": (20.0, 40.0)}
PROJECTS = ["payments-api", "webapp", "infra", "data-pipeline", "mobile", "cli-tools"]

# Real dev text is long-tailed: a few hundred everyday words (components, tools, problems)
# plus thousands of project-specific names (modules, services, products). The vocabulary below
# is those words plus generated names, drawn with a Zipf-Mandelbrot skew (1 / (rank + 10)), so
# the commonest content word is in ~15% of observations and most are in well under 1%.
BASE_WORDS = """auth session cookie token refresh login oauth payments refunds invoices ledger
billing checkout cart orders inventory catalog search index cache queue worker scheduler cron
webhook notifier email sms parser lexer router middleware handler controller serializer
migration schema model repository client sdk adapter plugin config settings logger metrics
tracing dashboard report export import upload download storage bucket backup restore deploy
pipeline build bundler linter formatter tests fixtures mocks gateway proxy balancer
websocket stream socket thread pool connection transaction lock semaphore timeout race leak
deadlock crash hang slowdown latency retry duplicate rounding encoding timezone drift stale
injection xss csrf permission certificate python fastapi django flask sqlite postgres mysql
redis kafka rabbitmq celery docker kubernetes helm terraform aws gcp nginx react typescript
vite webpack node rust grpc graphql json yaml toml protobuf pytest jest playwright sentry
prometheus grafana opentelemetry faiss numpy pandas polars duckdb memory cpu disk network
regression flaky overflow null pagination batch debounce throttle validation sanitise
""".split()
SYLLABLES = "ka zu lo mi ter vex dra no qui bel sar tin mor pax ju len rho sei cal dun fi".split()
VERBS = """fix add refactor remove optimise document investigate rewrite split merge rename
cache validate retry batch stream paginate index migrate upgrade pin""".split()
FILLER = """the request now returns early when the value is missing and the caller
retries with backoff after the first failure so the job completes within the deadline
because the previous version held it while waiting on the call""".split()
QUESTIONS = [
    "why does the {a} {b} fail",
    "how did we fix the {a} in {b}",
    "where is the {a} {b} config",
    "what changed in {a} after the {b} {c}",
    "{v} {a} {b}",
    "{a} {b}",
    "{a} {b} {c} {d}",
    "when did {a} start using {b}",
]


def vocabulary(size: int = 1800) -> list[str]:
    rng = random.Random(42)
    names: set[str] = set()
    while len(names) < size - len(BASE_WORDS):
        names.add("".join(rng.choices(SYLLABLES, k=rng.randint(2, 3))))
    words = BASE_WORDS + sorted(names)
    rng.shuffle(words)
    return words


VOCAB = vocabulary()
_CUM: list[float] = []
for _rank in range(len(VOCAB)):
    _CUM.append((_CUM[-1] if _CUM else 0.0) + 1 / (_rank + 11))


def word(rng: random.Random) -> str:
    return rng.choices(VOCAB, cum_weights=_CUM)[0]


def observation_text(rng: random.Random) -> tuple[str, str, str, list[str], list[str]]:
    w = rng.choices(VOCAB, cum_weights=_CUM, k=9)
    title = f"{rng.choice(VERBS).capitalize()} {w[0]} {w[1]} in {w[2]}"
    subtitle = f"{w[3]} {w[4]}"
    sentences = [
        f"The {w[2]} {w[0]} showed {w[5]} under load with {w[6]}.",
        " ".join(rng.sample(FILLER, 12)) + ".",
        f"We changed the {w[7]} and added a test for the {w[8]}.",
    ]
    facts = [f"{w[2]} uses {w[6]}", f"{w[0]} reproduced in {w[7]}"]
    return title, subtitle, " ".join(sentences[: rng.randint(2, 3)]), facts, [w[0], w[2], w[6]]


def seed(db_path: Path, n: int, rng: random.Random) -> float:
    """Write n observations (and n/50 sessions, n/10 prompts and summaries); seconds taken."""
    started = time.perf_counter()
    store = Store(db_path)
    conn = store.conn
    end = now_ms()
    span = 365 * 24 * 3600 * 1000
    n_sessions = max(1, n // 50)
    with atomic(conn):
        sessions = []
        for s in range(n_sessions):
            ms = end - span + s * (span // n_sessions)
            sessions.append((f"bench-{s}", PROJECTS[s % len(PROJECTS)], ms))
        conn.executemany(
            "INSERT INTO sessions (content_session_id, project, platform_source, status,"
            " started_at, started_at_epoch, prompt_counter) VALUES (?, ?, ?, 'completed', ?, ?, 5)",
            [
                (sid, project, "cursor" if i % 7 == 0 else "claude-code", iso_from_ms(ms), ms)
                for i, (sid, project, ms) in enumerate(sessions)
            ],
        )
        rows = []
        for i in range(n):
            sid, project, _ = sessions[i * n_sessions // n]
            ms = end - span + i * (span // n)
            title, subtitle, narrative, facts, concepts = observation_text(rng)
            path = f"/home/dev/src/{project}/src/{word(rng)}/{word(rng)}.py"
            digest = hashlib.sha256(f"{sid}\x1f{title}\x1f{narrative}\x1f{i}".encode()).hexdigest()
            rows.append(
                (
                    sid,
                    project,
                    1 + (i % 5),
                    rng.choice(OBSERVATION_TYPES),
                    title,
                    subtitle,
                    narrative,
                    json.dumps(facts),
                    json.dumps(concepts),
                    json.dumps([path]),
                    json.dumps([path] if i % 3 == 0 else []),
                    rng.randint(200, 4000),
                    iso_from_ms(ms),
                    ms,
                    digest,
                )
            )
        conn.executemany(
            "INSERT INTO observations (content_session_id, project, prompt_number, type, title,"
            " subtitle, narrative, facts, concepts, files_read, files_modified,"
            " discovery_tokens, created_at, created_at_epoch, content_hash)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            rows,
        )
        extra = []
        for j in range(n // 10):
            sid, project, _ = sessions[j * n_sessions // max(1, n // 10)]
            ms = end - span + j * (span // max(1, n // 10)) + 1
            extra.append((sid, project, 1 + j % 5, ms, *observation_text(rng)[:3]))
        conn.executemany(
            "INSERT OR IGNORE INTO user_prompts (session_id, content_session_id, project,"
            " prompt_number, prompt_text, created_at, created_at_epoch) VALUES"
            " ((SELECT id FROM sessions WHERE content_session_id = ?1), ?1, ?2, ?3, ?5, ?7, ?4)",
            [
                (sid, p, num, ms, title, sub, iso_from_ms(ms))
                for sid, p, num, ms, title, sub, _ in extra
            ],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO session_summaries (content_session_id, project, prompt_number,"
            " request, learned, completed, created_at, created_at_epoch)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (sid, p, num, title, narr, sub, iso_from_ms(ms + 5), ms + 5)
                for sid, p, num, ms, title, sub, narr in extra
            ],
        )
    store.close()
    return time.perf_counter() - started


def queries(count: int, rng: random.Random) -> list[str]:
    return [
        rng.choice(QUESTIONS).format(
            a=word(rng), b=word(rng), c=word(rng), d=word(rng), v=rng.choice(VERBS)
        )
        for _ in range(count)
    ]


@dataclass
class Figure:
    scenario: str
    n: int
    p50_ms: float
    p95_ms: float
    note: str = ""
    cpu_p50_ms: float | None = None  # in-process only: CPU time, immune to other load
    cpu_p95_ms: float | None = None


def timed(
    label: str, n: int, calls: list[Callable[[], object]], note: str = "", *, cpu: bool = False
) -> Figure:
    progress(f"{label} ({n:,})")
    for call in calls[:20]:  # warm the page cache and the connection
        call()
    samples, cpu_samples = [], []
    for call in calls:
        start, start_cpu = time.perf_counter(), time.process_time()
        call()
        cpu_samples.append((time.process_time() - start_cpu) * 1000)
        samples.append((time.perf_counter() - start) * 1000)
    cuts = statistics.quantiles(samples, n=100)
    figure = Figure(label, n, statistics.median(samples), cuts[94], note)
    if cpu:
        figure.cpu_p50_ms = statistics.median(cpu_samples)
        figure.cpu_p95_ms = statistics.quantiles(cpu_samples, n=100)[94]
    return figure


def http_figures(port: int, n: int, qs: list[str], project: str) -> list[Figure]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)

    def call(path: str, params: dict[str, object]) -> Callable[[], object]:
        url = f"{path}?{urllib.parse.urlencode(params)}"

        def run() -> object:
            conn.request("GET", url)
            response = conn.getresponse()
            body = response.read()
            assert response.status == 200, body[:300]
            return body

        return run

    first = json.loads(call("/api/search", {"query": qs[0], "format": "json"})())
    hybrid_note = "degraded to FTS (no vector ranker)" if first.get("degraded") else ""
    return [
        timed("http fts", n, [call("/api/search", {"query": q, "mode": "fts"}) for q in qs]),
        timed(
            "http fts json",
            n,
            [call("/api/search", {"query": q, "mode": "fts", "format": "json"}) for q in qs],
        ),
        timed(
            "http fts project filter",
            n,
            [call("/api/search", {"query": q, "mode": "fts", "project": project}) for q in qs],
        ),
        timed("http hybrid", n, [call("/api/search", {"query": q}) for q in qs], hybrid_note),
        timed(
            "http timeline",
            n,
            [call("/api/timeline", {"anchor": 1 + (i * 7919) % n}) for i in range(len(qs))],
        ),
    ]


def inprocess_figures(db_path: Path, n: int, qs: list[str], project: str) -> list[Figure]:
    store = Store(db_path, readonly=True)
    engine = SearchEngine(store, None)
    filters = SearchFilters(project=project)
    figures = [
        timed(
            "in-process fts", n, [lambda q=q: engine.search(q, mode="fts") for q in qs], cpu=True
        ),
        timed(
            "in-process fts observations",
            n,
            [lambda q=q: engine.search(q, types=["observations"], mode="fts") for q in qs],
            cpu=True,
        ),
        timed(
            "in-process fts project filter",
            n,
            [lambda q=q: engine.search(q, filters, mode="fts") for q in qs],
            cpu=True,
        ),
        timed(
            "in-process hybrid (no ranker)", n, [lambda q=q: engine.search(q) for q in qs], cpu=True
        ),
    ]
    store.close()
    return figures


def vector_figures(data_dir: Path, n: int, qs: list[str]) -> list[Figure]:
    """R2's slot: FAISS build time and memory, embedding throughput, vector/hybrid latency.

    Lives in ``bench/search_vectors.py`` (it seeds the embeddings cache, then measures).
    """
    from bench.search_vectors import vector_figures as measure

    figures: list[Figure] = measure(data_dir, n, qs, fig=Figure)
    return figures


def print_table(figures: list[Figure], seeding: dict[int, float]) -> None:
    from rich.console import Console
    from rich.table import Table

    grid = Table(title="search latency (ms)", title_justify="left", header_style="bold")
    for column in ("scenario", "observations", "p50", "p95", "cpu p50/p95", "target @100k"):
        grid.add_column(column)
    grid.add_column("note", max_width=40)
    for fig in figures:
        target = TARGETS.get(fig.scenario)
        goal = ""
        if target:
            ok = fig.p50_ms <= target[0] and fig.p95_ms <= target[1]
            verdict = "ok" if ok else "MISSED"
            goal = f"≤{target[0]:g} / ≤{target[1]:g} {verdict if fig.n >= 100_000 else ''}"
        cpu = (
            f"{fig.cpu_p50_ms:.2f} / {fig.cpu_p95_ms:.2f}"
            if fig.cpu_p50_ms is not None and fig.cpu_p95_ms is not None
            else ""
        )
        grid.add_row(
            fig.scenario,
            f"{fig.n:,}",
            f"{fig.p50_ms:.2f}",
            f"{fig.p95_ms:.2f}",
            cpu,
            goal,
            fig.note,
        )
    console = Console(width=max(Console().width, 140))
    console.print(grid)
    load = os.getloadavg()
    console.print(
        f"load average now {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} on {os.cpu_count()} "
        "cores: wall-clock figures include waiting for the CPU when that exceeds the core count"
    )
    for n, seconds in seeding.items():
        console.print(f"seeded {n:,} observations (+ prompts, summaries, FTS) in {seconds:.1f} s")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--embedder", default="none", help="WORKBENCH_EMBEDDER for the service")
    parser.add_argument("--keep", action="store_true", help="keep the temporary data dirs")
    parser.add_argument(
        "--skip-vectors", action="store_true", help="full-text and HTTP figures only (fast)"
    )
    parser.add_argument(
        "--before-ref", help="side by side with this git ref, full vectors (issue 21 targets)"
    )
    parser.add_argument(
        "--root", action="append", help="a checkout to measure side by side (give it twice)"
    )
    parser.add_argument("--n", type=int, default=100_000, help="observations (side by side)")
    parser.add_argument("--cli-runs", type=int, default=20, help="workbench search processes")
    parser.add_argument(
        "--burners", type=int, nargs="*", default=[], help="busy scenarios: CPU burners each"
    )
    parser.add_argument("--sample", type=int, default=2000, help="texts MiniLM embeds for real")
    parser.add_argument("--seeded", help="side by side: reuse a data dir seeded by a --keep run")
    parser.add_argument(
        "--also",
        action="append",
        help="side by side: a side of this tree with KEY=VALUE set (several: K=V&K2=V2)",
    )
    args = parser.parse_args(argv)
    if args.before_ref or args.root:
        from bench.search_targets import run

        return run(args)
    figures: list[Figure] = []
    seeding: dict[int, float] = {}
    for n in (int(s) for s in args.sizes.split(",")):
        rng = random.Random(n)
        root = Path(tempfile.mkdtemp(prefix=f"wb-bench-search-{n}-"))
        data_dir = root / "data"
        data_dir.mkdir()
        progress(f"seeding {n:,} observations in {data_dir}")
        seeding[n] = seed(data_dir / "workbench.db", n, rng)
        qs = queries(args.queries, rng)
        port = free_port()
        progress("starting the service")
        proc = start_service(
            data_dir,
            port,
            wait_s=120.0,
            WORKBENCH_COMPRESSOR="offline",
            WORKBENCH_EMBEDDER=args.embedder,
        )
        try:
            figures += http_figures(port, n, qs, PROJECTS[1])
        finally:
            stop_service(proc)
        figures += inprocess_figures(data_dir / "workbench.db", n, qs, PROJECTS[1])
        if not args.skip_vectors:
            figures += vector_figures(data_dir, n, qs)
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
        else:
            print(f"kept {data_dir}")
    print_table(figures, seeding)
    return 0


if __name__ == "__main__":
    sys.exit(main())
