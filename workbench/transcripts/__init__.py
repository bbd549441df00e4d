"""Agents' own session transcripts read into the same ingest as the hooks.

Claude Code writes every session to ``~/.claude/projects/<folder>/<session>.jsonl`` and Codex
to ``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``. ``workbench import-transcripts`` reads
the history a user had before installing; the service's optional watcher
(``transcript_watch``) tails them for agents or sessions without hooks. Both go through
``workbench.ingest.Ingestor``: the same event kinds, redaction and skip rules as hook events.

Modules:
- ``lines``    whole lines from a byte offset: a last line still being written is left for
               later, a line over the size limit is skipped without being held in memory
- ``records``  the transcript event type, and a line's bytes to a JSON object (or why not)
- ``claude``   Claude Code's line format to events (prompts, tool calls, turn ends)
- ``codex``    Codex's rollout line format to events
- ``pending_calls`` tool calls waiting for their result across reads, restored and bounded
- ``offsets``  the persisted read position of each file (``transcript_offsets``, m013)
- ``importer`` one file: resume at its offset, parse, ingest, save the offset; the report
- ``paths``    the default globs under HOME, and PATH arguments expanded to files
- ``watch``    the service's watcher thread (off by default)

Hooks and transcripts never store one thing twice: a tool call's key is its ``tool_use_id``
(the hooks' key too), and a session for which the log holds any hook-delivered prompt, turn
end or session end is left to the hooks entirely (``importer.hook_session``).
"""
