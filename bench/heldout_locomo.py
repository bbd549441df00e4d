"""Recall on the held-out public benchmark (LoCoMo), through the real service's HTTP API.

The set is never tuned on: every weight, gate and model of recall is chosen by
cross-validation over the project's own evaluation sets (``bench/relevance_cv.py``); this
script only reports. Data: the public LoCoMo release (repository snap-research/locomo, either
``data/locomo10.json`` or the per-sample files of ``data/locomo10.zip``), given by path; the
project ships none of it.

What it does, for each variant (``--variant NAME=ROOT[,KEY=VALUE...]``: a checkout whose code
runs, and environment for its service; default ``current=.``), on a fresh data dir:

1. imports every conversation through ``POST /api/import``: one observation per turn (title
   ``"<speaker>: <text>"``, plus the shared photo's caption when the turn has one), one project
   per conversation, one session per conversation session, the turn's time = the session's
   date + its index in seconds;
2. waits until the vector index holds every observation (``/api/index/status``: nothing
   ``pending`` at any tier);
3. asks every question with evidence (categories 1-4; the adversarial category 5 has no
   evidence turns) through ``GET /api/search`` with ``type=observations``, the conversation's
   project and ``limit=10``, in modes ``hybrid``, ``vector`` and ``fts``, one pass over the
   questions per mode; the variants' requests are interleaved question by question, so both
   see the same machine. Hybrid's pass comes first and each pass holds more questions than
   the service caches query embeddings for (``--questions`` ≥ 256), so every hybrid and vector
   search embeds its query, as a person's does. Until stop 51 the three modes were asked
   back to back per question, and hybrid reused the embedding its vector twin had just made:
   its p50 was ~2 ms lower than a search pays (the quiet box, 5.9k turns: 20.2 against
   21.6 ms).

Per variant, mode and question class: turn R@5 and R@10 (the share of a question's evidence
turns in the top k, averaged), MRR (1 / rank of the first evidence turn), session R@10 (the
share of its evidence sessions with a turn in the top 10), hit@5 and hit@10 (whether any
evidence turn is in the top 5 / 10), session hit@10 (whether any evidence session has a turn in
the top 10), and the p50 / p95 of the request. The hit figures are the any-of-the-evidence
reading of recall. Issue 21's "where it stands" figures are that reading: its full text 0.669,
hybrid R@10 0.742, R@5 0.654, MRR 0.512 and session R@10 0.933 are, for the fused hybrid of
``bcbf170``, hit@10 0.667 and 0.740, hit@5 0.663, MRR 0.506 and session hit@10 0.921; the share
figures (R@5, R@10, session R@10) are well below them. So both readings are printed.

A variant from another checkout serves the model builds of that checkout's own venv
(``harness.own_models``), or ``WORKBENCH_ONNX_MODEL_DIR`` / ``WORKBENCH_STATIC_MODEL_DIR`` as
its ``KEY=VALUE`` pairs name them: across a model change (the fine-tuned MiniLM of stop 50), a
worktree whose ``.venv`` is a link to this one's must name the old builds (``workbench models
build --base --into DIR --static-into DIR`` makes them), or both variants serve the new model.

Usage: python bench/heldout_locomo.py --data /path/to/locomo [--variant before=/old/checkout]
       [--variant after=.] [--questions N] [--json]
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import sqlite3
import statistics
import sys
import tempfile
import time
import urllib.parse
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.harness import free_port, progress, start_service, stop_service  # noqa: E402

MODES = ("fts", "vector", "hybrid")  # as the table shows them
ASKED = ("hybrid", "vector", "fts")  # as they are asked (``main``)
CLASSES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
TOP = 10
DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m) on (\d{1,2}) (\w+),? (\d{4})", re.I)


@dataclass(frozen=True)
class Question:
    project: str
    cls: str
    text: str
    evidence: frozenset[str]  # "<project>/D<session>:<turn>"


@dataclass
class Variant:
    name: str
    root: Path
    env: dict[str, str]
    data_dir: Path = Path()
    port: int = 0
    proc: Any = None
    conn: http.client.HTTPConnection | None = None
    turn_of: dict[int, str] = field(default_factory=dict)  # observation id -> turn key
    ranked: dict[str, list[list[str]]] = field(default_factory=dict)  # mode -> per question
    seconds: dict[str, list[float]] = field(default_factory=dict)


def samples(path: Path) -> list[dict[str, Any]]:
    """The conversations: ``locomo10.json`` (a list) or a folder of per-sample files."""
    if path.is_file():
        found = json.loads(path.read_text("utf-8"))
        return list(found)
    files = sorted(path.rglob("*.json"), key=lambda p: (len(p.stem), p.stem))
    return [json.loads(f.read_text("utf-8")) for f in files]


def conversation(sample: dict[str, Any]) -> dict[str, Any]:
    return sample.get("conversation", sample)


def session_ms(text: str) -> int:
    found = DATE.search(text)
    if found is None:
        raise ValueError(f"unreadable session date {text!r}")
    hour, minute, half, day, month, year = found.groups()
    hours = int(hour) % 12 + (12 if half.lower() == "pm" else 0)
    when = datetime.strptime(f"{day} {month} {year}", "%d %B %Y").replace(
        hour=hours, minute=int(minute), tzinfo=UTC
    )
    return int(when.timestamp() * 1000)


def document(
    all_samples: list[dict[str, Any]],
) -> tuple[dict[str, Any], dict[tuple[str, int], str]]:
    """The import document, and (project, created ms) -> turn key."""
    sessions: list[dict[str, Any]] = []
    observations: list[dict[str, Any]] = []
    key_of: dict[tuple[str, int], str] = {}
    for n, sample in enumerate(all_samples):
        conv = conversation(sample)
        project = f"locomo-{sample.get('sample_id', n)}"
        numbers = sorted(
            int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k) and conv[k]
        )
        for number in numbers:
            start = session_ms(conv[f"session_{number}_date_time"])
            sid = f"{project}-s{number}"
            sessions.append(
                {"content_session_id": sid, "project": project, "started_at_epoch": start}
            )
            for index, turn in enumerate(conv[f"session_{number}"]):
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                created = start + index * 1000
                key_of[(project, created)] = f"{project}/{turn['dia_id']}"
                observations.append(
                    {
                        "content_session_id": sid,
                        "project": project,
                        "type": "discovery",
                        "title": text,
                        "created_at_epoch": created,
                    }
                )
    doc = {"format": "workbench-export", "version": 1, "sessions": sessions}
    doc["observations"] = observations
    return doc, key_of


def questions(all_samples: list[dict[str, Any]], known: set[str]) -> tuple[list[Question], int]:
    """Questions of categories 1-4 whose evidence names turns that exist; and how many not."""
    found: list[Question] = []
    dropped = 0
    for n, sample in enumerate(all_samples):
        project = f"locomo-{sample.get('sample_id', n)}"
        for qa in sample["qa"]:
            if qa.get("category") not in CLASSES:
                continue
            evidence = frozenset(
                f"{project}/{turn_id(e)}"
                for ev in qa.get("evidence", [])
                for e in re.split(r"[;\s]+", ev)
                if e
            )
            evidence = frozenset(e for e in evidence if e in known)
            if not evidence:
                dropped += 1
                continue
            found.append(Question(project, CLASSES[qa["category"]], qa["question"], evidence))
    return found, dropped


def turn_id(text: str) -> str:
    """An evidence id spelled as the turns are: ``D:11:26`` → ``D11:26``, ``D30:05`` → ``D30:5``."""
    found = re.fullmatch(r"D:?(\d+):0*(\d+)", text.strip())
    return f"D{found.group(1)}:{found.group(2)}" if found else text.strip()


def request(variant: Variant, method: str, path: str, body: Any = None) -> Any:
    for attempt in (1, 2):
        if variant.conn is None:
            variant.conn = http.client.HTTPConnection("127.0.0.1", variant.port, timeout=600)
        try:
            data = None if body is None else json.dumps(body).encode()
            headers = {"Content-Type": "application/json"} if data else {}
            variant.conn.request(method, path, body=data, headers=headers)
            reply = variant.conn.getresponse()
            payload = reply.read()
            if reply.status >= 400:
                raise RuntimeError(f"{method} {path}: {reply.status} {payload[:300]!r}")
            return json.loads(payload)
        except (http.client.HTTPException, ConnectionError):
            variant.conn = None
            if attempt == 2:
                raise
    return None


def pending(status: Any) -> int:
    """Every ``pending`` count in the index status, at any depth (two-tier indexes too)."""
    if isinstance(status, dict):
        own = status.get("pending")
        here = own if isinstance(own, int) else 0
        return here + sum(pending(v) for k, v in status.items() if k != "pending")
    if isinstance(status, list):
        return sum(pending(v) for v in status)
    return 0


def start(variant: Variant, doc: dict[str, Any], key_of: dict[tuple[str, int], str]) -> None:
    variant.data_dir = Path(tempfile.mkdtemp(prefix=f"heldout-{variant.name}-"))
    variant.port = free_port()
    variant.proc = start_service(
        variant.data_dir,
        variant.port,
        root=variant.root,
        log=variant.data_dir / "service.log",
        WORKBENCH_EMBEDDER="minilm",
        **variant.env,
    )
    started = time.monotonic()
    request(variant, "POST", "/api/import", doc)
    progress(f"{variant.name}: imported {len(doc['observations'])} turns")
    total = len(doc["observations"])
    while True:
        status = request(variant, "GET", "/api/index/status")
        if status.get("state") == "error":
            raise RuntimeError(f"{variant.name}: vector index error: {status.get('reason')}")
        if status.get("indexed", 0) >= total and pending(status) == 0:
            break
        time.sleep(2)
    progress(f"{variant.name}: vectors complete in {time.monotonic() - started:.0f} s")
    db = variant.data_dir / "workbench.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        for oid, project, created in conn.execute(
            "SELECT id, project, created_at_epoch FROM observations"
        ):
            variant.turn_of[oid] = key_of[(project, created)]


def ask(variant: Variant, mode: str, question: Question) -> None:
    query = urllib.parse.urlencode(
        {
            "query": question.text,
            "project": question.project,
            "type": "observations",
            "mode": mode,
            "limit": TOP,
            "format": "json",
        }
    )
    began = time.perf_counter()
    reply = request(variant, "GET", f"/api/search?{query}")
    variant.seconds.setdefault(mode, []).append(time.perf_counter() - began)
    hits = [variant.turn_of.get(h["id"], "?") for h in reply["observations"]]
    variant.ranked.setdefault(mode, []).append(hits)


def session_of(turn: str) -> str:
    return turn.split(":")[0]


def score(ranked: list[str], question: Question) -> dict[str, float]:
    gold = question.evidence
    first = next((i for i, t in enumerate(ranked) if t in gold), None)
    sessions = {session_of(t) for t in gold}
    return {
        "R@5": len(gold & set(ranked[:5])) / len(gold),
        "R@10": len(gold & set(ranked[:10])) / len(gold),
        "MRR": 0.0 if first is None else 1.0 / (first + 1),
        "hit@5": float(first is not None and first < 5),
        "hit@10": float(first is not None and first < 10),
        "session R@10": len(sessions & {session_of(t) for t in ranked[:10]}) / len(sessions),
        "session hit@10": float(bool(sessions & {session_of(t) for t in ranked[:10]})),
    }


def table(variant: Variant, qs: list[Question]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for mode in MODES:
        per = [score(r, q) for r, q in zip(variant.ranked[mode], qs, strict=True)]
        rows: dict[str, dict[str, float]] = {}
        for cls in ["all", *CLASSES.values()]:
            mine = [p for p, q in zip(per, qs, strict=True) if cls in ("all", q.cls)]
            if not mine:
                continue
            rows[cls] = {k: round(statistics.fmean(p[k] for p in mine), 3) for k in per[0]}
            rows[cls]["n"] = len(mine)
        ms = sorted(s * 1000 for s in variant.seconds[mode])
        rows["all"]["p50 ms"] = round(ms[len(ms) // 2], 1)
        rows["all"]["p95 ms"] = round(ms[int(len(ms) * 0.95)], 1)
        out[mode] = rows
    return out


def parse_variant(text: str) -> Variant:
    name, _, rest = text.partition("=")
    root, *pairs = rest.split(",")
    env = dict(p.split("=", 1) for p in pairs)
    return Variant(name=name, root=Path(root or ".").resolve(), env=env)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="locomo10.json or its folder")
    parser.add_argument("--variant", action="append", help="NAME=ROOT[,KEY=VALUE...]")
    parser.add_argument("--questions", type=int, default=0, help="only the first N (0: all)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    all_samples = samples(args.data)
    doc, key_of = document(all_samples)
    qs, dropped = questions(all_samples, set(key_of.values()))
    if args.questions:
        qs = qs[: args.questions]
    variants = [parse_variant(v) for v in (args.variant or ["current=."])]
    progress(f"{len(doc['observations'])} turns, {len(qs)} questions ({dropped} without evidence)")
    try:
        for variant in variants:
            start(variant, doc, key_of)
        # One pass per mode, hybrid first: asked right after its vector-mode twin, a hybrid
        # search found the query's embedding in the service's cache (``QUERY_CACHE``: 256
        # texts) and its p50 left out the embedding a person's search pays. A pass of more
        # questions than that cache holds evicts each text before the next pass asks it.
        for mode in ASKED:
            for n, question in enumerate(qs):
                for variant in variants:
                    ask(variant, mode, question)
                if n % 500 == 0:
                    progress(f"{mode}: question {n} of {len(qs)}")
    finally:
        for variant in variants:
            if variant.proc is not None:
                stop_service(variant.proc)
    report = {v.name: table(v, qs) for v in variants}
    if args.json:
        print(json.dumps(report, indent=1))
        return
    print(f"LoCoMo held out: {len(qs)} questions, top {TOP}, one project per conversation")
    head = f"{'variant':<10} {'mode':<7} {'class':<12} {'n':>5} {'R@5':>6} {'R@10':>6} "
    print(
        head + f"{'MRR':>6} {'hit@5':>6} {'hit@10':>6} {'sessR@10':>8} {'sessHit':>7} "
        f"{'p50 ms':>7} {'p95 ms':>7}"
    )
    for name, modes in report.items():
        for mode, rows in modes.items():
            for cls, row in rows.items():
                tail = f"{row.get('p50 ms', ''):>7} {row.get('p95 ms', ''):>7}"
                print(
                    f"{name:<10} {mode:<7} {cls:<12} {row['n']:>5} {row['R@5']:>6.3f} "
                    f"{row['R@10']:>6.3f} {row['MRR']:>6.3f} {row['hit@5']:>6.3f} "
                    f"{row['hit@10']:>6.3f} {row['session R@10']:>8.3f} "
                    f"{row['session hit@10']:>7.3f} {tail}"
                )


if __name__ == "__main__":
    main()
