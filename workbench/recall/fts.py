"""Full-text ranking with FTS5 BM25: user text → a safe, porter-stemmed OR of phrases and terms.

User text is never passed raw to MATCH. FTS5 has its own query language, in which ``foo-bar``,
an unbalanced ``"`` or ``(``, a bare ``*``, ``AND``/``OR``/``NOT`` or ``NEAR(`` are syntax (or
syntax errors). ``match_expression`` rebuilds the query from words only:

1. split on whitespace; expand each chunk as the index expands text (a CamelCase word is
   followed by its parts, ``store.identifiers``), and take its runs of letters/digits
   (``[^\\W_]+``, the same runs the ``unicode61`` tokenizer indexes, so ``snake_case``,
   ``foo-bar`` and ``src/a.py`` split the same way);
2. drop English stopwords from the terms, so a question ("why were refunds charged twice?")
   ranks on its content words; if nothing is left, use every word; if there are no words at
   all, there is nothing to search (no results, not an error);
3. phrases first (exact-phrase boost): the whole query (up to MAX_PHRASE_WORDS words, so an
   exact title is one rare phrase even when each of its words is common), each run of
   consecutive content words across chunks, each compound chunk (``foo-bar`` → ``"foo bar"``,
   so an exact compound ranks above its parts) and each CamelCase word's parts
   (``BuildWorker`` → ``"build worker"``); then the terms, the whole identifier and its parts.
   Every piece is quoted (inner quotes doubled); ``word*`` (3+ letters) stays a prefix query;
4. join with OR: natural-language questions match on any term and BM25 rewards documents
   that match more of them (one exact phrase of the whole question alone recalls ~0%; see
   issue 3). bm25 sums over the pieces, so a row holding a phrase also gets that phrase's
   (high, because rare) IDF on top of its terms': contiguous words rank above scattered ones.

``rank`` then bounds how many matches bm25 scores (see "bounded ranking" below), so a query
of common words stays a few milliseconds at 100,000 rows instead of 100+.

Porter stemming comes from the tables' tokenizer (``porter unicode61``), which FTS5 applies to
the quoted strings too. Scores are ``-bm25()`` (SQLite's bm25 is lower-is-better), weighted so
a hit in the title counts more than one in the narrative or facts.
"""

from __future__ import annotations

import math
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from workbench.errors import InvalidInput
from workbench.recall.filters import Kind, SearchFilters
from workbench.store import identifiers
from workbench.store.identifiers import split_identifiers

MAX_QUERY_CHARS = 2000
MAX_TERMS = 32
MAX_PHRASES = 8  # phrases come first; the rest of MAX_TERMS is left for the words
MAX_PHRASE_WORDS = 12  # a longer query is a question, never a verbatim title: no whole phrase
WORD = re.compile(r"[^\W_]+")

# A small built-in list: question words, auxiliaries, pronouns, articles, prepositions, and the
# fragments contractions leave behind (``don't`` → ``don`` + ``t``).
STOPWORDS = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them
    themselves then there these they this those through to too under until up very was we were
    what when where which while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve don doesn didn isn wasn aren weren won wouldn shouldn couldn hasn haven
    hadn let lets us also get got please tell show find any anything something
    """.split()
)

# FTS table, its column weights (in column order), and the canonical table it indexes.
_TABLES: dict[str, tuple[str, str, tuple[float, ...]]] = {
    # title, subtitle, narrative, facts, concepts
    "observations": ("observations_fts", "observations", (5.0, 2.0, 1.0, 1.0, 2.0)),
    # request, investigated, learned, completed, next_steps, notes
    "sessions": ("summaries_fts", "session_summaries", (3.0, 1.0, 2.0, 2.0, 1.0, 1.0)),
    # prompt_text
    "prompts": ("prompts_fts", "user_prompts", (1.0,)),
}


def tables_of(kind: Kind) -> tuple[str, str]:
    """``(FTS table, canonical table)`` for one kind of record."""
    fts_table, table, _ = _TABLES[kind]
    return fts_table, table


def quote(term: str) -> str:
    """An FTS5 string literal: ``"term"`` with inner quotes doubled."""
    return '"' + term.replace('"', '""') + '"'


def query_pieces(text: str | None) -> list[str]:
    """The quoted FTS5 strings (phrases, then terms) for user ``text``; [] when no words.

    Within a ``one_search`` block each text is taken apart once (a search asks for its
    pieces per kind, for coverage and for each total: up to seven times).

    Each chunk is expanded as the index expands text (``store.identifiers``), so a phrase built
    from the query lines up with the indexed tokens, and a CamelCase word brings its parts.
    Phrases, best first: the whole query (exact-title and exact-sentence boost), each run of
    two or more consecutive content words, each compound chunk, each CamelCase word's parts.
    """
    if not text:
        return []
    memo = _memo()
    key = ("", "pieces", text)
    if memo is not None and key in memo:
        return list(memo[key])
    pieces = _pieces(text)
    if memo is not None:
        memo[key] = tuple(pieces)
    return pieces


def _pieces(text: str) -> list[str]:
    sequence: list[str] = []  # every word of the expanded query, in order (stopwords too)
    runs: list[list[tuple[int, str]]] = [[]]  # consecutive content words, with their chunk
    compounds: list[str] = []
    terms: dict[str, bool] = {}  # lowercased term -> is a prefix query
    for index, chunk in enumerate(text[:MAX_QUERY_CHARS].split()):
        originals = WORD.findall(chunk)
        if not originals:
            continue
        words = [w.lower() for w in WORD.findall(str(split_identifiers(chunk)))]
        sequence.extend(words)
        content = [w for w in words if w not in STOPWORDS]
        if len(originals) > 1 and len(content) >= 2:
            compounds.append(" ".join(words))
        for original in originals:
            cut = identifiers.parts(original)
            if len(cut) > 1:
                compounds.append(" ".join(p.lower() for p in cut))
        for word in words:
            if word in STOPWORDS:
                runs.append([])
            else:
                runs[-1].append((index, word))
        prefix_last = (
            chunk.endswith("*") and chunk[:-1].endswith(originals[-1]) and len(originals[-1]) > 2
        )
        for word in content:
            is_prefix = prefix_last and word == originals[-1].lower()
            terms[word] = terms.get(word, False) or is_prefix
    if not terms:
        # Trigger: every word is a stopword ("what is this", "how do I").
        # Why: searching nothing would answer nothing; the words are all we were given.
        # Outcome: rank on every word, still quoted and OR-ed.
        terms = dict.fromkeys(sequence, False)
    phrases: list[str] = []
    if 1 < len(sequence) <= MAX_PHRASE_WORDS and len(set(sequence)) > 1:
        phrases.append(" ".join(sequence))
    # A run within one chunk is that chunk's compound phrase already.
    phrases += [
        " ".join(w for _, w in run)
        for run in runs
        if len({i for i, _ in run}) > 1
        and len({w for _, w in run}) > 1
        and len(run) <= MAX_PHRASE_WORDS
    ]
    phrases += compounds
    pieces = [quote(p) for p in dict.fromkeys(phrases)][:MAX_PHRASES]
    pieces += [quote(t) + ("*" if is_prefix else "") for t, is_prefix in terms.items()]
    return pieces[:MAX_TERMS]


def match_expression(text: str | None) -> str | None:
    """The safe MATCH expression for user ``text`` (OR of its pieces), or None."""
    pieces = query_pieces(text)
    return " OR ".join(pieces) if pieces else None


# -- bounded ranking ---------------------------------------------------------------------------
# bm25() costs ~2 µs per matching row, plus one pass over each phrase's whole doclist to count
# it (its IDF), while merely matching costs ~0.05 µs a row. An OR of common words matches half
# of a 100k-row table: 100+ ms to score. So ranking bounds what bm25 sees, in tiers:
# 0. a piece in more than UBIQUITOUS of the rows is dropped: FTS5 gives a term in over half
#    the rows an IDF of ~0, and one in a quarter of them very little, yet its IDF pass is the
#    costliest (a corpus-specific stopword, like "using" in a code memory);
# 1. a piece in more than COMMON_DF rows is *common*. The rare pieces are matched first (the
#    rarest, up to MAX_SCORED rows in all), scored among themselves;
# 2. then, when two or more pieces are common, the newest WINDOW rows matching *all* of them;
# 3. then the newest WINDOW rows matching *any* piece (rowid order is insert order).
# A tier runs only when the ones before found fewer rows than asked for; its scores are scaled
# below theirs, so the list stays best first. When all the matches fit in MAX_SCORED (any table
# of up to ~400 rows), there is one plain OR of every piece: exact BM25 over every match.
# Large document frequencies (> COMMON_DF) are cached per database for DF_TTL_S: they are the
# costly ones to count, they drift slowly, and a growing table keeps a common piece common, so
# a stale one only changes which tier a row comes from. Small counts are recounted whenever the
# database may have changed, so a word stored a second ago is found at once: each thread keeps
# its connection's small counts while ``PRAGMA data_version`` (others' commits) and
# ``total_changes`` (its own writes) stay as they were (``_unchanged``), the counts a recount
# would give again. Within one search (``one_search``) every count is taken once, whatever its
# size. A phrase holding a word no row holds matches no row (``frequencies``): it is not counted.
COMMON_DF = 400
MAX_SCORED = 400
WINDOW = 100
UBIQUITOUS = 0.25
DF_TTL_S = 300.0
_DF_CACHE_MAX = 50_000
_df_cache: dict[tuple[str, str, str], tuple[float, int]] = {}
_df_changes = 0  # ``df_generation``


_search_local = threading.local()


@contextmanager
def one_search() -> Iterator[None]:
    """Within the block, this thread takes each count, each database's name and each query's
    pieces (``query_pieces``) once.

    Why: one hybrid search asks for the same document frequencies twice (the BM25 tiers, then
    ``fusion.coverage``) and the database's name before each, and a small count is otherwise
    recounted every time (see above). The memo lives for the block only, so the next search
    still sees a word stored a moment ago. Nested blocks share the outer one's memo.
    """
    if getattr(_search_local, "memo", None) is not None:
        yield
        return
    _search_local.memo = {}
    try:
        yield
    finally:
        _search_local.memo = None


def _memo() -> dict[tuple[str, str, str], Any] | None:
    memo: dict[tuple[str, str, str], Any] | None = getattr(_search_local, "memo", None)
    return memo


def search_memo(key: tuple[str, str, str]) -> dict[Any, Any] | None:
    """A dict kept under ``key`` for the current ``one_search`` block (None outside one):
    other stages of one search keep what they read there, so a later stage need not read it
    again. Like the counts, it is forgotten when the block ends."""
    memo = _memo()
    if memo is None:
        return None
    held: dict[Any, Any] | None = memo.get(key)
    if held is None:
        held = memo[key] = {}
    return held


def _db_key(conn: sqlite3.Connection) -> str:
    memo = _memo()
    # The connection stays open for the whole block, so its id names it there.
    key = ("", "database", str(id(conn)))
    if memo is not None and key in memo:
        return str(memo[key])
    row = conn.execute("PRAGMA database_list").fetchone()
    name = str(row[2]) or f"memory:{id(conn)}"
    if memo is not None:
        memo[key] = name
    return name


def _cached(
    key: tuple[str, str, str],
    compute: Callable[[], int],
    *,
    floor: int = -1,
    conn: sqlite3.Connection | None = None,
) -> int:
    """``compute()``, remembered for DF_TTL_S when the value is above ``floor``, for the
    current ``one_search`` block whatever it is, and (given ``conn``, in such a block) at or
    below ``floor`` while ``conn``'s database is unchanged (``_unchanged``)."""
    memo = _memo()
    if memo is not None and key in memo:
        return int(memo[key])
    small = _unchanged(conn) if conn is not None and memo is not None else None
    if small is not None and key in small:
        value = small[key]
    else:
        value = _cached_for_ttl(key, compute, floor=floor)
        if small is not None and value <= floor:
            if len(small) >= _DF_CACHE_MAX:
                small.clear()
            small[key] = value
    if memo is not None:
        memo[key] = value
    return value


def _unchanged(conn: sqlite3.Connection) -> dict[tuple[str, str, str], int]:
    """This thread's small counts on ``conn``, kept while its database is unchanged.

    Why: a search recounted every piece in at most COMMON_DF rows (most of a query's phrases
    and rarer words, up to a dozen statements a search). Those counts change only when the
    database does: ``PRAGMA data_version`` changes when another connection commits, and
    ``conn.total_changes`` when this one writes (a rolled-back write too: that only
    recounts). So while both hold, a recount would give the same numbers, and a word stored a
    second ago is still found at once. One connection per thread is kept (a service thread
    uses one), held by reference so a new connection is never taken for an old one.
    Within a ``one_search`` block the stamp is read once.
    """
    memo = _memo()
    key = ("", "stamp", str(id(conn)))  # the connection stays open for the whole block
    stamp: tuple[int, int] | None = memo.get(key) if memo is not None else None
    if stamp is None:
        version = int(conn.execute("PRAGMA data_version").fetchone()[0])
        stamp = (version, conn.total_changes)
        if memo is not None:
            memo[key] = stamp
    held = getattr(_search_local, "small", None)
    if held is None or held[0] is not conn or held[1] != stamp:
        held = (conn, stamp, {})
        _search_local.small = held
    counts: dict[tuple[str, str, str], int] = held[2]
    return counts


def _cached_for_ttl(
    key: tuple[str, str, str], compute: Callable[[], int], *, floor: int = -1
) -> int:
    global _df_changes
    now = time.monotonic()
    hit = _df_cache.get(key)
    if hit is not None and now - hit[0] < DF_TTL_S:
        return hit[1]
    value = compute()
    if hit is not None and hit[1] != value:
        _df_changes += 1  # a count searches used until now was stale: rankings may move
    if value <= floor:
        return value
    if len(_df_cache) >= _DF_CACHE_MAX:
        _df_cache.clear()  # crude but bounded; a refill costs one probe per piece
        _df_changes += 1  # the counts dropped may have been stale
    _df_cache[key] = (now, value)
    return value


def df_horizon() -> float:
    """When (``time.monotonic``) the first cached document frequency this ``one_search`` block
    used expires (``inf``: it used none): until then the same search would use the same
    counts, after it may recount one (its value moved since: a ranking may move too).
    """
    memo = _memo()
    if not memo:
        return math.inf
    taken = [_df_cache.get(key) for key in memo if key[0]]
    return min((hit[0] + DF_TTL_S for hit in taken if hit is not None), default=math.inf)


def df_generation() -> int:
    """Changes whenever a cached document frequency that searches used is replaced by another
    value (it expired after DF_TTL_S, or the cache was emptied).

    Why: while an observation write changes ``observation_generation`` at once, a large
    count cached before that write is still used for up to DF_TTL_S, and its refresh may move
    a ranking with no write at that moment. ``recall.anchor_memo`` keys on both.
    """
    return _df_changes


def _table_rows(conn: sqlite3.Connection, db: str, kind: Kind) -> int:
    """Rows in the table (max id: exact without deletes, and an index seek, not a scan)."""
    table = _TABLES[kind][1]
    return _cached(
        (db, table, ""),
        lambda: int(conn.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]),
        floor=COMMON_DF,  # a small table is recounted: its size decides whether tiers apply
        conn=conn,
    )


def _df_key(conn: sqlite3.Connection, kind: Kind, piece: str, cap: int) -> tuple[str, str, str]:
    """The cache and memo key of ``doc_frequency(conn, kind, piece, cap)``: one place, so the
    readers of a count (``known_frequency``) and its writers (``frequencies``) find it."""
    return (_db_key(conn), f"{_TABLES[kind][0]}:{cap}", piece)


def doc_frequency(conn: sqlite3.Connection, kind: Kind, piece: str, cap: int) -> int:
    """Rows matching ``piece``, counted up to ``cap`` (cached for DF_TTL_S)."""
    fts_table = _TABLES[kind][0]
    sql = f"SELECT count(*) FROM (SELECT 1 FROM {fts_table} WHERE {fts_table} MATCH ? LIMIT ?)"
    return _cached(
        _df_key(conn, kind, piece, cap),
        lambda: int(conn.execute(sql, (piece, cap)).fetchone()[0]),
        floor=COMMON_DF,
        conn=conn,
    )


_PLAIN_WORD = re.compile(r'"([a-z0-9]+)"')  # a quoted ASCII word: one token or more, no prefix


def frequencies(
    conn: sqlite3.Connection, kind: Kind, pieces: list[str], cap: int
) -> dict[str, int]:
    """``doc_frequency`` of each piece (in ``pieces``' order); a phrase holding a word that
    no row holds is 0 without counting it.

    A row matching the phrase ``"a b c"`` holds each of its words (the same tokenizer splits
    the phrase and the word), so when the word ``"b"`` matches no row neither does the phrase.
    Only plain ASCII words are taken as evidence (each is at least one token, never a prefix).
    The words are counted first; every count is the one ``doc_frequency`` would give, and a
    phrase's 0 is kept for the search as a count would be (``known_frequency`` sees it).
    """
    counts = {p: doc_frequency(conn, kind, p, cap) for p in pieces if " " not in p}
    absent = {
        found.group(1)
        for piece, n in counts.items()
        if n == 0 and (found := _PLAIN_WORD.fullmatch(piece))
    }
    for piece in pieces:
        if piece in counts:
            continue
        words = piece[1:-1].split(" ") if piece.startswith('"') and piece.endswith('"') else []
        if absent.intersection(words):
            counts[piece] = 0
            memo = _memo()
            if memo is not None:
                memo[_df_key(conn, kind, piece, cap)] = 0
        else:
            counts[piece] = doc_frequency(conn, kind, piece, cap)
    return {p: counts[p] for p in pieces}


def known_frequency(conn: sqlite3.Connection, kind: Kind, piece: str) -> int | None:
    """``doc_frequency(piece)`` when this search or the cache already took it, else None.

    Nothing is counted: ``totals.count`` asks which of a query's pieces is likely the
    commonest, and a count it does not already have would cost more than it could save.
    """
    _, cap = df_cap(conn, kind)
    key = _df_key(conn, kind, piece, cap)
    memo = _memo()
    if memo is not None and key in memo:
        return int(memo[key])
    hit = _df_cache.get(key)
    if hit is not None and time.monotonic() - hit[0] < DF_TTL_S:
        return hit[1]
    return None


def df_cap(conn: sqlite3.Connection, kind: Kind) -> tuple[int, int]:
    """``(rows, cap)``: the table's (cached) row count and the cap its document frequencies
    are counted to. One function so every caller of ``doc_frequency`` hits the same cache
    entries: a cap of its own would miss them on a growing store and recount a common word."""
    rows = _table_rows(conn, _db_key(conn), kind)
    return rows, max(COMMON_DF, int(rows * UBIQUITOUS)) + 1


def tiers(conn: sqlite3.Connection, kind: Kind, pieces: list[str]) -> list[tuple[str, bool]]:
    """The MATCH expressions to try in order, each with ``windowed`` (newest rows only)."""
    _, cap = df_cap(conn, kind)
    counts = frequencies(conn, kind, pieces, cap)
    live = [p for p in pieces if counts[p] > 0]
    if not live:
        return []
    if sum(counts[p] for p in live) <= MAX_SCORED:
        return [(" OR ".join(live), False)]
    useful = [p for p in live if counts[p] < cap] or [min(live, key=lambda p: counts[p])]
    plan: list[tuple[str, bool]] = []
    chosen: list[int] = []
    total = 0
    for n, index in sorted((counts[p], i) for i, p in enumerate(useful) if counts[p] <= COMMON_DF):
        if chosen and total + n > MAX_SCORED:
            break
        chosen.append(index)
        total += n
    if chosen:
        plan.append((" OR ".join(useful[i] for i in sorted(chosen)), False))
    common = [p for p in useful if counts[p] > COMMON_DF]
    if len(common) > 1:
        plan.append((" AND ".join(common), True))
    if common or len(chosen) < len(useful):
        plan.append((" OR ".join(useful), True))
    return plan


def rank(
    conn: sqlite3.Connection,
    kind: Kind,
    query: str | None,
    filters: SearchFilters | None = None,
    *,
    limit: int = 20,
    offset: int = 0,
) -> list[tuple[int, float]]:
    """``(id, score)`` best first for one kind of record; score > 0, higher is better.

    Filtered, the FTS match drives the join (``CROSS JOIN`` fixes that order) and each match
    costs one primary-key probe. See the tiers above for how many matches get scored.
    """
    pieces = query_pieces(query)
    filters = filters or SearchFilters()
    if not pieces or limit <= 0 or not filters.applies_to(kind):
        return []
    need = offset + limit
    results: list[tuple[int, float]] = []
    try:
        for expression, windowed in tiers(conn, kind, pieces):
            # The window grows in whole WINDOW steps so every page of a query sees the same
            # candidates (and the rowid tie-break keeps equal scores in one order).
            window = WINDOW * -(-need // WINDOW) if windowed else None
            found = _score(conn, kind, expression, filters, need + len(results), window)
            results += _below(results, found, need)
            if len(results) >= need:
                break
    except sqlite3.OperationalError as exc:
        # Trigger: FTS5 rejected the expression (or the FTS table is missing/corrupt).
        # Why: query_pieces only emits quoted strings joined by OR/AND, so this should be
        # unreachable; if it happens, the user deserves a sentence, not a 500.
        # Outcome: InvalidInput naming the query and what to try.
        raise InvalidInput(
            f"full-text search could not run the query {query!r} ({exc}); try plain words "
            "without punctuation, and if it persists rebuild the index with `workbench reindex`"
        ) from None
    return results[offset:need]


def _below(
    found: list[tuple[int, float]], more: list[tuple[int, float]], need: int
) -> list[tuple[int, float]]:
    """The rows of a later tier not already ``found``, scored below every row of ``found``."""
    seen = {i for i, _ in found}
    extra = [pair for pair in more if pair[0] not in seen][: need - len(found)]
    if not extra or not found:
        return extra
    ceiling = min(s for _, s in found) * 0.999
    top = max(s for _, s in extra)
    return [(i, s / top * ceiling) for i, s in extra]


def _joined(kind: Kind, filters: SearchFilters) -> tuple[str, str, list[Any]]:
    """``(FROM … , extra WHERE …, params)`` for the FTS table, joined when filters need it."""
    fts_table, table, _ = _TABLES[kind]
    clauses, params = filters.record_sql(kind, "r")
    if not clauses:
        return f"{fts_table} f", "", []
    join = f"{fts_table} f CROSS JOIN {table} r ON r.id = f.rowid"
    return join, " AND " + " AND ".join(clauses), params


def _score(
    conn: sqlite3.Connection,
    kind: Kind,
    expression: str,
    filters: SearchFilters,
    limit: int,
    window: int | None,
) -> list[tuple[int, float]]:
    """bm25 over the rows matching ``expression`` (only the newest ``window`` if given)."""
    fts_table, _, weights = _TABLES[kind]
    score = f"bm25({fts_table}, {', '.join(str(w) for w in weights)})"
    source, where, params = _joined(kind, filters)
    if window is None:
        sql = (
            f"SELECT f.rowid, {score} AS s FROM {source} WHERE {fts_table} MATCH ?{where}"
            " ORDER BY s, f.rowid DESC LIMIT ?"
        )
        rows = conn.execute(sql, [expression, *params, limit]).fetchall()
        return [(int(row[0]), -float(row[1])) for row in rows]
    # One pass: FTS5 walks the matches newest first and stops after ``window`` of them, so
    # bm25 runs for those rows only (and its IDF pass happens once).
    sql = (
        f"SELECT id, s FROM (SELECT f.rowid AS id, {score} AS s FROM {source}"
        f" WHERE {fts_table} MATCH ?{where} ORDER BY f.rowid DESC LIMIT ?)"
        " ORDER BY s, id DESC LIMIT ?"
    )
    rows = conn.execute(sql, [expression, *params, window, limit]).fetchall()
    return [(int(row[0]), -float(row[1])) for row in rows]
