"""Knowledge: analyse the memory (read-only) and compile slices of it for an LLM.

Everything here reads the store; the only writes are corpus files and conversations under
the data dir, never the SQLite memory.

Modules:
- ``stats``     polars statistics: token economics, types, activity, files, concepts,
                co-occurrence, session timelines (for the CLI, HTTP and notebooks)
- ``roi``       memory ROI from the injection ledger (cost, injections, later fetches)
- ``reports``   each statistic by name with its summary: the JSON of ``workbench stats``
                and ``/api/stats/*``
- ``report_worker``   the analytics child process: reports over DuckDB, outside the service
- ``report_process``  the service's side of that child: start, ask, restart, end
- ``corpus_filter``  what a corpus is built from: the filter, its validation, the selection
- ``corpus``    corpora: build from a filter, store as ``<name>.corpus.json``, rebuild; the
  metadata replies (``CorpusInfo``…) the routes and the CLI return
- ``render``    a corpus as readable markdown and as the agent's system prompt
- ``agent``     the knowledge agent: prime / query / reprime over one corpus
- ``agent_claude``   the Messages API agent, the corpus cached in the system prompt
- ``agent_offline``  the offline agent: answers by retrieval and quotation, no model
- ``conversations``  agent conversations, one JSON file each under the data dir
- ``prompts``   prompt text and the fencing of untrusted observation content
- ``atomic``    JSON files written atomically (corpora, conversations)
- ``forget_copies``  forgetting reaches corpora (rewritten) and conversations (redacted)
"""
