"""The ``learned`` second stage (issue 21): a shipped learning-to-rank model.

A real store, the vector ranker at the protocol level (fixed similarities, as in
``test_rerank``) and MaxSim over the word pieces of the real static model that ``workbench
models build`` distils from the shipped MiniLM (what ``make install`` runs; the
``installed_static_model`` fixture reads the one it built into this venv). With the method on,
the memory holding the query's words and identifier comes first although fusion put a vaguer
one first; the same ids come back; hits say ``learned``. It needs no ``workbench rerank build``
table (i21-learned: before, it needed one that ``make install`` does not build). Without the
static model the search keeps the fused order and says why. No candidate falls more than the
shipped demotion cap below its fused place (the coding set's paraphrase loss, issue 21). A
weights file this code cannot read is refused, and the search keeps the fused order.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from tests.conftest import SimilarityRanker, store_of_titles, store_of_turns
from tests.relevance_set import QUERIES as RELEVANCE_QUERIES
from tests.relevance_set import seed
from tests.test_rerank import MEMORIES, QUERY, SIMILARITY, VECTOR_LED
from tests.test_search import KeywordRanker
from workbench.recall import fusion, rerank_learned
from workbench.recall.filters import SearchFilters
from workbench.recall.search import SearchEngine
from workbench.settings import Settings, load_settings
from workbench.store.database import Store


@pytest.fixture
def pieces(installed_static_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """What ``make install`` leaves: the static model, and no ``workbench rerank build`` table."""
    monkeypatch.setenv("WORKBENCH_STATIC_MODEL_DIR", str(installed_static_model))
    monkeypatch.setenv("WORKBENCH_RERANK_TOKENS_DIR", str(tmp_path / "never-built"))
    return installed_static_model


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with store_of_titles(tmp_path / "workbench.db", MEMORIES) as s:
        yield s


# test_rerank's similarities with the vaguer memory (2) a little less close: fusion still puts
# it first (0.8 · 0.62 = 0.496 against the exact answer's 0.48), by a margin the learned model
# (fused-dominant, ``rerank_learned.json``) overturns on word and MaxSim evidence.
CLOSE = {**SIMILARITY, 2: 0.62}


def search(store: Store, settings: object, limit: int = 5, offset: int = 0) -> Any:
    engine = SearchEngine(store, settings, SimilarityRanker(CLOSE))
    return engine.search(QUERY, types="observations", limit=limit, offset=offset)


def ids(result: Any) -> list[int]:
    return [h.id for h in result.observations]


def learned(where: Path, **extra: object) -> Settings:
    return load_settings(
        where, search_rerank=True, search_rerank_method="learned", **VECTOR_LED, **extra
    )


def test_the_memory_holding_the_query_words_comes_first(
    store: Store, tmp_path: Path, pieces: Path
) -> None:
    off = load_settings(tmp_path / "off", search_rerank=False, **VECTOR_LED)
    assert ids(search(store, off))[:2] == [2, 1]  # fusion alone: the vaguer memory first
    result = search(store, learned(tmp_path / "on"))
    assert ids(result)[:2] == [1, 2]
    assert {h.rerank for h in result.observations} == {"learned"}
    assert result.degraded is None
    assert result.observations[0].rankers == ["fts", "vector"]  # contract fields unchanged


def test_without_the_static_model_it_keeps_the_fused_order_and_says_why(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The token table of ``workbench rerank build`` is there (the venv's, when built): the
    learned stage does not read it, so only the static model's absence stops it."""
    monkeypatch.setenv("WORKBENCH_STATIC_MODEL_DIR", str(tmp_path / "never-built"))
    result = search(store, learned(tmp_path / "on"))
    assert ids(result)[:2] == [2, 1]
    assert all(h.rerank is None for h in result.observations)
    assert result.degraded is not None
    assert "workbench models build" in result.degraded


def test_a_search_looks_for_the_stage_model_once_and_says_it_is_missing(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rerank.problem`` stats the static model's files (~0.25 ms at 100k): a search asks
    once (``rerank_or_fused`` returns the reason), not again for its ``degraded`` text, and
    still says why; so does the training engine, which skips the stage on purpose."""
    from workbench.recall import rerank_tokens
    from workbench.recall.rerank_train import CollectingEngine

    monkeypatch.setenv("WORKBENCH_STATIC_MODEL_DIR", str(tmp_path / "never-built"))
    looks: list[str | None] = []
    real = rerank_tokens.static_problem

    def counted(where: Path | None = None) -> str | None:
        looks.append(reason := real(where))
        return reason

    monkeypatch.setattr(rerank_tokens, "static_problem", counted)
    settings = learned(tmp_path / "on")
    result = search(store, settings)
    assert len(looks) == 1
    assert result.degraded == f"rerank skipped, results in fused order: {looks[0]}"
    assert "workbench models build" in result.degraded
    looks.clear()
    engine = SearchEngine(store, settings, SimilarityRanker(CLOSE))
    top = engine.top_observation(QUERY, SearchFilters())
    assert top is not None
    assert top.id == 2  # the fused first
    assert len(looks) == 1
    collecting = CollectingEngine(store, settings, SimilarityRanker(CLOSE))
    kept = collecting.search(QUERY, types="observations")
    assert kept.degraded == result.degraded
    assert ids(kept) == ids(result)


def test_no_candidate_falls_further_below_its_fused_place_than_the_cap() -> None:
    """A model that reverses the list (its only weight on 1/fused rank, negative) would put the
    fused first last; with the cap at 2 it keeps every candidate within 2 places below its
    fused place, and still lifts the fused last as far as the cap lets it."""
    fused = [10, 11, 12, 13, 14, 15]
    rows = [
        [1.0 / n if f == "fused_rr" else 0.0 for f in rerank_learned.FEATURES] for n in range(1, 7)
    ]
    reverse = tuple(-1.0 if f == "fused_rr" else 0.0 for f in rerank_learned.FEATURES)
    free = rerank_learned.Weights(reverse, 30, None)
    assert rerank_learned.ranked(free, fused, rows) == fused[::-1]
    capped = rerank_learned.ranked(rerank_learned.Weights(reverse, 30, 2), fused, rows)
    assert sorted(capped) == fused
    assert all(capped.index(i) <= n + 2 for n, i in enumerate(fused))
    assert capped[0] == 15  # the model's first choice still leads
    assert rerank_learned.weights().demotion is not None  # the shipped model is capped


def rows_of(cosines: list[float], fts_first: int | None) -> list[list[float]]:
    """Feature rows in fused order: each candidate's cosine (the first the vector ranker's
    first), 1/fused rank, and full text's first at place ``fts_first`` (None: no full-text hit)."""
    out = []
    for n, cosine in enumerate(cosines):
        value = {
            "fused_rr": 1.0 / (n + 1),
            "cosine": cosine,
            "vector_rr": 1.0 / (n + 1),
            "fts_rr": 1.0 if n == fts_first else 0.0,
            "fts": 1.0 if n == fts_first else 0.0,
        }
        out.append([value.get(f, 0.0) for f in rerank_learned.FEATURES])
    return out


def test_a_confident_vector_first_stays_first() -> None:
    """The coding set's loss (issue 21): a paraphrase shares no word with its answer, so the
    word evidence demotes the vector ranker's clear first. With ``pin_gap``, a fused first that
    is the vector's first with a cosine lead of at least the gap, and that full text does not
    contradict (its first is no other candidate), keeps first place; the rest is the model's."""
    fused = [10, 11, 12, 13]
    reverse = tuple(-1.0 if f == "fused_rr" else 0.0 for f in rerank_learned.FEATURES)
    pinned = rerank_learned.Weights(reverse, 30, None, pin_gap=0.05)
    clear = rows_of([0.60, 0.50, 0.40, 0.30], fts_first=None)
    assert rerank_learned.ranked(pinned, fused, clear) == [10, 13, 12, 11]
    agreed = rows_of([0.60, 0.50, 0.40, 0.30], fts_first=0)  # full text's first too
    assert rerank_learned.ranked(pinned, fused, agreed) == [10, 13, 12, 11]
    close = rows_of([0.60, 0.58, 0.40, 0.30], fts_first=None)
    assert rerank_learned.ranked(pinned, fused, close) == fused[::-1]  # lead below the gap
    contradicted = rows_of([0.60, 0.50, 0.40, 0.30], fts_first=2)
    assert rerank_learned.ranked(pinned, fused, contradicted) == fused[::-1]
    unpinned = rerank_learned.Weights(reverse, 30, None)
    assert rerank_learned.ranked(unpinned, fused, clear) == fused[::-1]
    assert rerank_learned.weights().pin_gap is not None  # the shipped model pins


def test_the_learned_stage_needs_only_what_models_build_writes(
    store: Store, tmp_path: Path, pieces: Path
) -> None:
    result = search(store, learned(tmp_path / "on"))
    assert result.degraded is None
    assert {h.rerank for h in result.observations} == {"learned"}


def test_it_only_reorders_and_pages_see_one_order(
    store: Store, tmp_path: Path, pieces: Path
) -> None:
    off = ids(search(store, load_settings(tmp_path / "off", **VECTOR_LED), limit=50))
    on = learned(tmp_path / "on", search_rerank_depth=3)
    ranked = ids(search(store, on, limit=50))
    assert sorted(ranked) == sorted(off)
    assert len(set(ranked)) == len(MEMORIES)
    assert ranked[3:] == off[3:]  # beyond the depth: the fused order
    labels = [h.rerank for h in search(store, on, limit=50).observations]
    assert labels == ["learned"] * 3 + [None] * (len(MEMORIES) - 3)
    pages = [ids(search(store, on, limit=2, offset=o)) for o in (0, 2, 4)]
    assert [i for page in pages for i in page] == ranked


def shipped() -> dict[str, Any]:
    doc = json.loads(rerank_learned.WEIGHTS_FILE.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    return doc


@pytest.mark.parametrize(
    "spoil",
    [
        lambda d: d.update(features=d["features"][:-1]),  # written for other features
        lambda d: d["weights"].update(fused="heavy"),  # not a number
        lambda d: d["weights"].update(fused=float("nan")),  # not finite
        lambda d: d["weights"].pop("maxsim"),  # half a file
        lambda d: d.update(depth=1),  # nothing to reorder
        lambda d: d.update(depth=True),
        lambda d: d.pop("depth"),
        lambda d: d.update(demotion=-1),
        lambda d: d.update(demotion="3"),
        lambda d: d.update(demotion=True),
        lambda d: d.update(pin_gap=-0.1),
        lambda d: d.update(pin_gap=1.5),
        lambda d: d.update(pin_gap="0.02"),
        lambda d: d.update(pin_gap=True),
        lambda d: d.update(pin_gap=float("nan")),
    ],
)
def test_a_weights_file_this_code_cannot_read_is_refused(spoil: Any) -> None:
    doc = shipped()
    assert len(rerank_learned.parse(doc).values) == len(rerank_learned.FEATURES)
    spoil(doc)
    with pytest.raises((ValueError, KeyError, TypeError)):
        rerank_learned.parse(doc)


def test_an_unreadable_weights_file_gives_the_fused_order(
    store: Store, tmp_path: Path, pieces: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bad = tmp_path / "rerank_learned.json"
    bad.write_text('{"features": ["fused"]}', encoding="utf-8")
    monkeypatch.setattr(rerank_learned, "WEIGHTS_FILE", bad)
    rerank_learned.weights.cache_clear()
    try:
        result = search(store, learned(tmp_path / "on"))
    finally:
        rerank_learned.weights.cache_clear()
    assert ids(result)[:2] == [2, 1]
    assert all(h.rerank is None for h in result.observations)


def test_the_learned_method_is_a_setting(tmp_path: Path) -> None:
    assert learned(tmp_path).search_rerank_method == "learned"
    with pytest.raises(ValidationError) as err:
        load_settings(tmp_path, search_rerank_method="learnt")
    assert "search_rerank_method" in str(err.value)


@pytest.mark.parametrize(
    "spoil",
    [
        lambda b: b[:5],  # cut inside the header's length
        lambda b: (10**9).to_bytes(8, "little") + b[8:],  # a header longer than the file
        lambda b: b[: len(b) // 2],  # the embeddings cut short
        lambda b: b"\x00" * len(b),  # no header at all
    ],
)
def test_a_spoilt_static_model_is_reported_naming_the_fix(
    installed_static_model: Path, tmp_path: Path, spoil: Any
) -> None:
    """What the learned stage reads of the static model is checked before a search uses it:
    a broken file gives a reason naming the rebuild (the search keeps the fused order)."""
    from workbench.recall import rerank_tokens

    copy = tmp_path / "static"
    copy.mkdir()
    for name in ("tokenizer.json", "config.json", "manifest.json"):
        (copy / name).write_bytes((installed_static_model / name).read_bytes())
    (copy / "model.safetensors").write_bytes(
        spoil((installed_static_model / "model.safetensors").read_bytes())
    )
    reason = rerank_tokens.static_problem(copy)
    assert reason is not None
    assert "workbench models build" in reason
    assert rerank_tokens.static_problem(installed_static_model) is None


def test_the_faster_stage_scores_as_the_plain_computation(installed_static_model: Path) -> None:
    """The stage's speed-ups (each distinct word piece scored once; a memory's identifiers and
    word positions cached) give what the plain computation gives: MaxSim piece by piece, the
    longest run by a scan of every start, the identifier regex run afresh."""
    import re

    import numpy as np

    from workbench.recall import rerank_features, rerank_maxsim, rerank_tokens

    table = rerank_tokens.load_static(installed_static_model)
    texts = [*MEMORIES, MEMORIES[0] + " " + MEMORIES[2], ""]
    got = rerank_maxsim.scores(table, QUERY, texts)
    query_ids, *docs = rerank_maxsim.content_pieces(table, [QUERY, *texts])
    unit = np.asarray(table.vectors, dtype=np.float32)
    unit = unit / np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-9)
    holding = [sum(t in set(d) for d in docs) for t in query_ids]
    idf = np.log((len(docs) + 1) / (1 + np.asarray(holding, dtype=np.float32))) + 1.0
    for doc, score in zip(docs, got, strict=True):
        if not doc:
            assert score == 0.0
            continue
        best = (unit[query_ids] @ unit[doc].T).max(axis=1)
        assert score == pytest.approx(float(idf @ best / idf.sum()), abs=1e-5)

    def plain_run(query: list[str], text: list[str]) -> int:
        return max(
            (
                k
                for i in range(len(query))
                for j in range(len(text))
                for k in range(1, len(query) - i + 1)
                if j + k <= len(text) and query[i : i + k] == text[j : j + k]
            ),
            default=0,
        )

    rerank_features.clear_cache()
    for text in [*MEMORIES, "bump cypress bump TimelineScheduler cypress", ""]:
        for query in (QUERY, "cypress bump the timeline", ""):
            q, t = rerank_features.query_words(query), rerank_features.words(text)
            for _ in range(2):  # afresh, then from the cache
                assert rerank_features.longest_run(q, t) == plain_run(q, t)
                plain = {
                    m.group(0).lower()
                    for m in re.finditer(
                        r"[A-Za-z0-9]+(?:[_\-./][A-Za-z0-9]+)+|[A-Za-z]*[a-z][A-Z][A-Za-z0-9]*",
                        text,
                    )
                }
                assert rerank_features.identifiers(text) == plain


class EveryNeighbour(SearchEngine):
    """The real engine, smoothing over every hit's neighbours as it did before the second
    stage read only the head it reorders (``rerank.reach``)."""

    def _head_with_neighbours(
        self,
        fused: list[tuple[int, float]],
        filters: SearchFilters,
        weight: float,
        n: int,
        lift: fusion.Lift,
    ) -> list[tuple[int, float]]:
        return self._with_neighbours(fused, filters, weight, lift)


@pytest.mark.parametrize(
    "filters",
    [SearchFilters(), SearchFilters(project="payments-api")],
    ids=["all", "payments"],
)
def test_the_stage_reads_only_the_head_it_reorders(
    pieces: Path, tmp_path: Path, filters: SearchFilters
) -> None:
    """With the stage on, hybrid looks up the neighbours of only the hits that could be in the
    head it reorders (``rerank.reach``), and the timeline's anchor skips the stage when the
    pin rule keeps the fused first (``first_only``): every query's page (ids, order, scores,
    who placed each hit) and anchor are those of the engine that smooths over every hit's
    neighbours and reorders the whole head."""
    store = Store(tmp_path / "workbench.db")
    seed(store)
    settings = load_settings(tmp_path, search_rerank=True, search_rerank_method="learned")
    ranker = KeywordRanker(store)
    fast, full = SearchEngine(store, settings, ranker), EveryNeighbour(store, settings, ranker)
    placed = 0
    for query in [*RELEVANCE_QUERIES, "refund webhook retry", "zzzz-nothing-matches-this"]:
        for depth in (1, 5, 20):
            got = fast.search(query, filters, types=["observations"], limit=depth)
            want = full.search(query, filters, types=["observations"], limit=depth)
            assert got.to_json() == want.to_json(), query
        top = fast.top_observation(query, filters)
        page = want.observations
        assert (top.id if top else None) == (page[0].id if page else None), query
        if top is not None:
            assert (top.score, top.rerank) == (page[0].score, page[0].rerank), query
        placed += top is not None and top.rerank == "learned"
    assert placed  # the stage ran (its model was there), so both paths were taken
    store.close()


def test_content_pieces_are_the_plain_filter_of_every_piece(installed_static_model: Path) -> None:
    """The meaning of each word-piece id, decided once per table, keeps the pieces the plain
    filter (no stop word, some letter or digit, piece by piece) keeps, in order."""
    from workbench.recall import rerank_maxsim, rerank_tokens

    table = rerank_tokens.load_static(installed_static_model)
    texts = [*MEMORIES, QUERY, "the and of", "!!! ---", "", "naïve café ☃ 日本語 x" * 40]
    rerank_maxsim.clear_cache()
    for _ in range(2):  # afresh, then from the cache
        got = rerank_maxsim.content_pieces(table, texts)
        for text, kept in zip(texts, got, strict=True):
            found = table.tokenizer.encode(text, add_special_tokens=False)
            ids, strings = found.ids[: rerank_maxsim.MAX_PIECES], found.tokens
            plain = [
                i
                for i, piece in zip(ids, strings, strict=False)
                if piece not in rerank_maxsim._STOP and any(c.isalnum() for c in piece)
            ]
            assert kept == (plain or ids), text


def test_one_session_holds_at_most_the_session_cap_of_the_first_page() -> None:
    """A multi-hop question's evidence spans sessions (issue 21): when one session's turns
    fill the top 10, the second evidence session gets no slot. With ``session_cap`` the first
    ``PAGE`` places hold at most that many of one session's candidates; the ones over it come
    just below the page in the model's order, and a candidate without a known session is
    never held back. When the other sessions cannot fill the page, the held back fill it."""
    fused = list(range(20, 40))  # 20–31 session "a", 32–38 a session each, 39 unknown
    session_of = dict.fromkeys(range(20, 32), "a") | {i: f"s{i}" for i in range(32, 39)}
    rows = [
        [1.0 / n if f == "fused_rr" else 0.0 for f in rerank_learned.FEATURES]
        for n in range(1, len(fused) + 1)
    ]
    keep = tuple(1.0 if f == "fused_rr" else 0.0 for f in rerank_learned.FEATURES)
    free = rerank_learned.Weights(keep, 30, None)
    assert rerank_learned.ranked(free, fused, rows, session_of) == fused  # no cap: as fused
    cap = rerank_learned.Weights(keep, 30, None, session_cap=3)
    out = rerank_learned.ranked(cap, fused, rows, session_of)
    assert sorted(out) == fused
    assert out[: rerank_learned.PAGE] == [20, 21, 22, *range(32, 39)]
    assert out[rerank_learned.PAGE :] == [*range(23, 32), 39]  # held back, in order
    assert rerank_learned.ranked(cap, fused, rows) == fused  # no sessions known: unchanged
    few = fused[:14]  # 12 of "a" and two others: the held back fill the page
    out = rerank_learned.ranked(cap, few, rows[:14], session_of)
    assert out == [20, 21, 22, 32, 33, *range(23, 32)]


def test_the_weights_file_reads_a_session_cap_and_refuses_a_bad_one() -> None:
    doc = json.loads(rerank_learned.WEIGHTS_FILE.read_text(encoding="utf-8"))
    assert rerank_learned.parse({**doc, "session_cap": 4}).session_cap == 4
    assert rerank_learned.parse({**doc, "session_cap": None}).session_cap is None
    for bad in (0, -1, 11, 2.5, True, "3"):
        with pytest.raises(ValueError, match="session_cap"):
            rerank_learned.parse({**doc, "session_cap": bad})


def test_the_stage_and_the_static_tier_share_one_tokenizer(installed_static_model: Path) -> None:
    """Both read the static model's ``tokenizer.json``: one parsed copy per process, not two
    (each copy is ~8 MiB of the service's RSS, issue 21), and it tokenizes as a fresh one."""
    from tokenizers import Tokenizer

    from workbench.recall import rerank_tokens
    from workbench.recall.embed import StaticEmbedder

    table = rerank_tokens.load_static(installed_static_model)
    embedder = StaticEmbedder(installed_static_model)
    assert table.tokenizer is embedder._tokenizer
    fresh = Tokenizer.from_file(str(installed_static_model / "tokenizer.json"))
    fresh.no_padding()  # the file pads to 128 (the embedder's setting): pieces are the text's
    fresh.no_truncation()
    for text in [*MEMORIES, QUERY, "naïve café ☃ 日本語 " * 60]:
        assert (
            table.tokenizer.encode(text, add_special_tokens=False).ids
            == fresh.encode(text, add_special_tokens=False).ids
        )


MAPS_PROBE = """
import sys
from pathlib import Path
from workbench.recall import rerank_maxsim, rerank_tokens
where = Path(sys.argv[1])
table = rerank_tokens.load_static(where)
got = rerank_maxsim.scores(table, sys.argv[2], sys.argv[3:])
resident, block = 0, False  # kB of the model file's pages this process holds
for line in Path("/proc/self/smaps").read_text(encoding="utf-8").splitlines():
    head = line.split()
    if head and not head[0].endswith(":"):  # a mapping's first line: range perms ... path
        block = line.endswith(str((where / "model.safetensors").resolve()))
    elif block and head[0] == "Rss:":
        resident += int(head[1])
print(repr(got))
print(resident)
"""


def test_the_stage_keeps_no_page_of_the_model_file_resident(
    installed_static_model: Path, tmp_path: Path
) -> None:
    """A process that ran the stage holds no page of ``model.safetensors`` afterwards (a plain
    mapping keeps every row page a search touched resident: ~21 MiB of the service's RSS
    after a few hundred searches, issue 21), and its scores are those of the whole table."""
    import ast
    import subprocess
    import sys

    import numpy as np

    from workbench.recall import rerank_maxsim, rerank_tokens

    texts = [*MEMORIES, "Zebra quokka xylophone 12345 ü", ""]
    done = subprocess.run(
        [sys.executable, "-c", MAPS_PROBE, str(installed_static_model), QUERY, *texts],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    scores_line, resident = done.stdout.strip().splitlines()
    assert resident == "0"
    table = rerank_tokens.load_static(installed_static_model)
    whole = np.asarray(table.vectors, dtype=np.float32)
    header = (installed_static_model / "model.safetensors").read_bytes()
    size = int.from_bytes(header[:8], "little")
    start = 8 + size + json.loads(header[8 : 8 + size])["embeddings"]["data_offsets"][0]
    mapped_rows = np.memmap(
        installed_static_model / "model.safetensors",
        dtype="<f4",
        mode="r",
        offset=start,
        shape=whole.shape,
    )
    assert np.array_equal(whole, mapped_rows)
    ids = [5, 5, 0, whole.shape[0] - 1, 7, 6, 300, 8]
    assert np.array_equal(table.vectors[ids], mapped_rows[ids])
    assert ast.literal_eval(scores_line) == rerank_maxsim.scores(table, QUERY, texts)


def test_the_pieces_cache_keeps_neither_the_text_nor_python_ints(
    installed_static_model: Path,
) -> None:
    """A cached text costs its pieces at 2 bytes each and a fixed few hundred bytes, not the
    text and a tuple of Python ints (~2.5 KB a memory: ~10 MiB of RSS at 4096, issue 21);
    and what the cache gives back is what tokenizing gives."""
    import gc
    import tracemalloc

    from workbench.recall import rerank_maxsim, rerank_tokens

    table = rerank_tokens.load_static(installed_static_model)
    words = " ".join(MEMORIES).split()
    texts = [
        " ".join(words[(k + j) % len(words)] for j in range(40)) + f" build {k} of {k * 7919}"
        for k in range(1200)
    ]
    rerank_maxsim.clear_cache()
    fresh = [rerank_maxsim.content_pieces(table, [t])[0] for t in texts[:50]]
    rerank_maxsim.clear_cache()
    # The texts' chunks are kept apart (``rerank_maxsim._CHUNKS``, bounded on its own:
    # tests/test_rerank_maxsim_chunks.py): seen before the count, so it counts this cache.
    rerank_maxsim.content_pieces(table, texts)
    rerank_maxsim._CACHE.clear()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for first in range(0, len(texts), 30):
            rerank_maxsim.content_pieces(table, texts[first : first + 30])
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    pieces = sum(len(p) for p in rerank_maxsim.content_pieces(table, texts))
    assert held / len(texts) < 300 + 2 * pieces / len(texts)
    assert rerank_maxsim.content_pieces(table, texts[:50]) == fresh  # from the cache
    rerank_maxsim.clear_cache()


def test_the_session_cap_never_holds_back_memories_without_a_session(
    installed_static_model: Path, tmp_path: Path
) -> None:
    """``spread``'s rule through the whole stage: a memory without a session is no session's,
    so the cap never holds it back, however many of them one project holds; the turns of a
    real session are still capped. The model keeps the fused order, so any change is the
    cap's. (Six turns of session ``s``, then twelve memories without one, cap 3.)"""
    from tests.conftest import store_of_turns
    from workbench.recall import rerank_tokens
    from workbench.recall.rerank_features import Candidates

    turns = [("s", f"payments retry turn {n}") for n in range(6)]
    turns += [(None, f"payments retry note {n}") for n in range(12)]
    keep = tuple(1.0 if f == "fused_rr" else 0.0 for f in rerank_learned.FEATURES)
    cap = rerank_learned.Weights(keep, 30, None, session_cap=3)
    table = rerank_tokens.load_static(installed_static_model)
    fused = [(i, 1.0 / i) for i in range(1, 19)]
    with store_of_turns(tmp_path / "workbench.db", turns) as store:
        got = rerank_learned.order(store.conn, "payments retry", Candidates(fused), 30, table, cap)
    # The page: three of session s, then the sessionless in their fused order; below it the
    # session's held-back turns, then the rest.
    assert [i for i, _ in got] == [1, 2, 3, *range(7, 14), 4, 5, 6, *range(14, 19)]


# Session "a" holds the fused places 1-5 and 11-20, "e" (the evidence) 6-10, no turn holds
# the query's word (full text finds nothing: the fused order is the vector ranker's).
KEEP_TURNS = [("a", f"alpha turn {n}") for n in range(5)]
KEEP_TURNS += [("e", f"echo turn {n}") for n in range(5)]
KEEP_TURNS += [("a", f"alpha later turn {n}") for n in range(10)]
KEEP_SIMILARITY = {i: 0.9 - i / 100 for i in range(1, len(KEEP_TURNS) + 1)}


def crowding_weights(where: Path, session_keep: int | None) -> Path:
    """A weights file whose model keeps the fused order but lifts the turns of the session
    with the most candidates (``session_share``) over everything: what friends' lost
    questions showed (issue 21, ``bench/relevance_session_keep.py``), turns lifted from below
    the page, of a session the page already holds. The shipped demotion cap (5), no pin."""
    doc = shipped()
    doc["weights"] = dict.fromkeys(rerank_learned.FEATURES, 0.0) | {
        "fused_rr": 1.0,
        "session_share": 10.0,
    }
    doc.update(demotion=5, pin_gap=None, session_cap=None, session_keep=session_keep)
    where.write_text(json.dumps(doc), encoding="utf-8")
    return where


def test_the_evidence_session_of_the_fused_head_keeps_a_place_on_the_page(
    pieces: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Friends' loss (issue 21): the evidence session's turns sit at fused places 6-10, the
    stage lifts ten turns of another session (already on the page) from below it, and the
    demotion cap of 5 lets the evidence fall to 11-15: session hit@10 below full text alone.
    With ``session_keep`` 7 every session of the fused top 7 keeps a place on the first 10:
    the evidence session's best-placed turn takes the last place, the rest is the stage's."""
    from tests.conftest import store_of_turns

    settings = load_settings(
        tmp_path / "on",
        search_rerank=True,
        search_rerank_method="learned",
        **(VECTOR_LED | {"search_neighbour_weight": 0.0}),
    )
    off = load_settings(tmp_path / "off", search_rerank=False, **VECTOR_LED)
    evidence = set(range(6, 11))
    question = "zygote"
    with store_of_turns(tmp_path / "workbench.db", KEEP_TURNS) as store:
        ranker = SimilarityRanker(KEEP_SIMILARITY)

        def page(chosen: Settings) -> list[int]:
            found = SearchEngine(store, chosen, ranker).search(
                question, types="observations", limit=10
            )
            return ids(found)

        assert page(off) == list(range(1, 11))  # fused: "a" 1-5, then "e" 6-10
        got: dict[int | None, list[int]] = {}
        for keep in (None, 7):
            monkeypatch.setattr(
                rerank_learned, "WEIGHTS_FILE", crowding_weights(tmp_path / f"w{keep}.json", keep)
            )
            rerank_learned.weights.cache_clear()
            try:
                got[keep] = page(settings)
            finally:
                rerank_learned.weights.cache_clear()
    assert not evidence & set(got[None])  # without the rule: the evidence session is gone
    assert got[None] == [*range(1, 6), *range(11, 16)]
    assert got[7] == [*range(1, 6), *range(11, 15), 6]  # with it: its best turn, last place


def test_the_weights_file_reads_a_session_keep_and_refuses_a_bad_one() -> None:
    doc = shipped()
    assert rerank_learned.parse({**doc, "session_keep": 4}).session_keep == 4
    assert rerank_learned.parse({**doc, "session_keep": None}).session_keep is None
    for bad in (0, -1, 11, 2.5, True, "3"):
        with pytest.raises(ValueError, match="session_keep must be null or a whole number"):
            rerank_learned.parse({**doc, "session_keep": bad})
    assert rerank_learned.weights().session_keep is not None  # the shipped stage keeps them


# Three turns, each of its own session (no neighbour evidence). 2 and 3 hold the same words;
# only their speaker differs. Every ranker puts Melanie's turn (3) above Caroline's (2): the
# vector is slightly closer, and full text ties them and takes the newer. The question names
# Caroline as the one who went.
TURNS = (
    ("a", "Caroline: the adoption agency called back about the interview on Friday"),
    ("b", "Caroline: Melanie and I went hiking up to the lake on Sunday"),
    ("c", "Melanie: Caroline and I went hiking up to the lake on Sunday"),
)
TURN_SIMILARITY = {1: 0.80, 2: 0.548, 3: 0.55}


def test_the_turn_of_the_speaker_the_question_names_is_lifted(tmp_path: Path, pieces: Path) -> None:
    """The ``speaker`` feature: of two turns that hold the same words, the one whose speaker
    label (``"Caroline: …"``) names the person the question asks about goes above the one that
    only mentions them. The shipped model weighs it (refitted on the eight relevance sets,
    issue 21). Any short label opening a memory counts: the weight is the fit's to choose."""
    query = "where did Caroline go hiking"
    with store_of_turns(tmp_path / "workbench.db", TURNS) as store:

        def melanie_first(settings: Settings) -> bool:
            engine = SearchEngine(store, settings, SimilarityRanker(TURN_SIMILARITY))
            found = ids(engine.search(query, types="observations", limit=3))
            assert sorted(found) == [1, 2, 3]
            return found.index(3) < found.index(2)

        assert melanie_first(load_settings(tmp_path / "off", search_rerank=False, **VECTOR_LED))
        assert not melanie_first(learned(tmp_path / "on"))
    assert rerank_learned.speaker_words(TURNS[2][1]) == {"melanie"}
    assert rerank_learned.speaker_words("Ross and Rachel: we were on a break") == {"ross", "rachel"}
    assert rerank_learned.speaker_words("went hiking: the lake") == {"went", "hiking"}
    assert rerank_learned.speaker_words("no label here") == frozenset()
    assert rerank_learned.weights().values[rerank_learned.FEATURES.index("speaker")] > 0
