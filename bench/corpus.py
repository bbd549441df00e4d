"""Corpus and knowledge-agent figures on a synthetic store. Prints a rich table.

1. build time for a 2,000-observation corpus, filter only (target < 1 s), and with a
   ``query`` (hybrid search degrades to BM25 here: no embedding model is loaded in-process);
2. the rendered corpus: markdown size, the fenced system block, the token estimate;
3. rebuild time (the stored filter re-run and the file rewritten);
4. offline agent answer latency: the first question (which builds the corpus's BM25 index)
   and warm follow-ups, median and p95.

Usage: python bench/corpus.py [--observations 2000] [--questions 30]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from workbench.knowledge import corpus  # noqa: E402
from workbench.knowledge.agent import KnowledgeAgent  # noqa: E402
from workbench.knowledge.corpus_filter import parse_filter  # noqa: E402
from workbench.knowledge.render import corpus_text, render_markdown  # noqa: E402
from workbench.models import OBSERVATION_TYPES, ObservationDraft  # noqa: E402
from workbench.settings import load_settings  # noqa: E402
from workbench.store import observations  # noqa: E402
from workbench.store.connection import atomic  # noqa: E402
from workbench.store.database import Store  # noqa: E402

SUBJECTS = ["queue", "spool", "hook", "worker", "schema", "search", "vector", "corpus", "cli"]
VERBS = ["fixed", "refactored", "documented", "measured", "decided on", "discovered", "changed"]
DETAILS = [
    "claims were racing under two workers",
    "the retry backoff was capped at 300 s",
    "the FTS5 query needed quoting",
    "the PID file was left behind after kill -9",
    "JSON columns are exposed as lists",
    "the cache prefix must be byte-identical",
]
QUESTIONS = [
    "Why were queue claims racing?",
    "How is the retry backoff capped?",
    "What happened to the PID file after kill -9?",
    "and why?",
    "Which changes touched the spool?",
    "What did we decide about the schema?",
]


def seed(store: Store, count: int, rng: random.Random) -> None:
    start = 1_764_547_200_000
    with atomic(store.conn) as conn:
        for n in range(count):
            subject = rng.choice(SUBJECTS)
            detail = rng.choice(DETAILS)
            draft = ObservationDraft(
                type=rng.choice(OBSERVATION_TYPES),
                title=f"{rng.choice(VERBS).capitalize()} the {subject} ({n})",
                subtitle=f"{subject}: {detail}",
                narrative=(
                    f"While working on the {subject} we found that {detail}. "
                    f"The change touched workbench/{subject}.py and its tests; "
                    f"{rng.choice(DETAILS)} was checked too. " * 2
                ),
                facts=[f"{subject} fact {k}: {rng.choice(DETAILS)}" for k in range(3)],
                concepts=rng.sample(SUBJECTS, 2),
                files_read=[f"/home/dev/workbench/workbench/{subject}.py"],
                files_modified=[f"/home/dev/workbench/tests/test_{subject}.py"] if n % 3 else [],
            )
            observations.insert(
                conn,
                draft,
                content_session_id=f"s{n // 50}",
                project="workbench",
                created_ms=start + n * 60_000,
            )


def timed(fn: object, repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()  # type: ignore[operator]
        out.append(time.perf_counter() - began)
    return out


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--observations", type=int, default=2000)
    parser.add_argument("--questions", type=int, default=30)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(Path(tmp))
        with Store(settings.db_path) as store:
            seed(store, args.observations, rng)
            flt = parse_filter({"project": "workbench", "limit": args.observations})

            def build() -> None:
                corpus.build(store.conn, settings, "bench", flt, "bench corpus")

            build_times = timed(build, 5)
            query_flt = parse_filter({"query": "queue claims racing", "limit": 500})
            query_times = timed(lambda: corpus.build(store.conn, settings, "q", query_flt), 3)
            built = corpus.load(settings, "bench")
            markdown = render_markdown(built)
            fenced = corpus_text(built)
            file_bytes = corpus.path_for(settings, "bench").stat().st_size
            rebuild_times = timed(lambda: corpus.rebuild(store.conn, settings, "bench"), 3)

            agent = KnowledgeAgent(settings, store_or_conn=store)
            agent.reprime("bench")
            began = time.perf_counter()
            first = agent.query("bench", QUESTIONS[0])
            cold = time.perf_counter() - began
            warm = timed(
                lambda: agent.query("bench", rng.choice(QUESTIONS)), max(1, args.questions)
            )

    from rich.console import Console
    from rich.table import Table

    grid = Table(
        title=f"bench/corpus.py ({args.observations:,} observations)",
        title_justify="left",
        header_style="bold",
    )
    grid.add_column("figure")
    grid.add_column("value", justify="right")
    grid.add_column("note")
    ms = 1000.0
    grid.add_row(
        "build, filter only (median of 5)",
        f"{statistics.median(build_times) * ms:.0f} ms",
        f"target < 1000 ms; {built.stats.observation_count:,} observations",
    )
    grid.add_row(
        "build with query (median of 3)",
        f"{statistics.median(query_times) * ms:.0f} ms",
        "hybrid → BM25 here (no embedding model in-process), limit 500",
    )
    grid.add_row("rebuild (median of 3)", f"{statistics.median(rebuild_times) * ms:.0f} ms", "")
    grid.add_row(
        "rendered markdown", f"{len(markdown):,} chars", f"{len(markdown.encode()):,} bytes"
    )
    grid.add_row("fenced system block", f"{len(fenced):,} chars", "what the agent is primed with")
    grid.add_row("corpus file", f"{file_bytes:,} bytes", "<name>.corpus.json")
    grid.add_row(
        "token estimate", f"{built.stats.token_estimate:,}", "ceil(chars / 4), prompt + corpus"
    )
    grid.add_row("offline answer, first", f"{cold * ms:.1f} ms", "includes the BM25 index build")
    grid.add_row(
        f"offline answer, warm (median of {len(warm)})",
        f"{statistics.median(warm) * ms:.1f} ms",
        f"p95 {p95(warm) * ms:.1f} ms; {len(first['citations'])} citations on the first",
    )
    Console().print(grid)


if __name__ == "__main__":
    main()
