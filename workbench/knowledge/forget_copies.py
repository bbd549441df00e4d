"""Forgetting reaches corpora and knowledge-agent conversations.

A corpus is a frozen copy of observations and a conversation quotes them, so both keep a
forgotten memory's words after the store lets them go (``workbench.forget``). Run after the
store's forget, with the forgotten ids and their own words (``workbench.forget_words``):

- **corpora**: every corpus file that holds a forgotten id or any of the words is rewritten
  (atomically, under the corpus's lock) without those observations, the words replaced by
  ``[forgotten]`` in what remains (a summary quoted in a narrative, the description), its
  stats and instructions computed again. Its conversation id is kept: the conversation is
  cleaned below, not thrown away.
- **conversations**: decided to *redact*, not drop: every turn keeps its place, the words are
  replaced in the question and the answer, and citations of forgotten ids are removed. A
  follow-up still reads a coherent history, and nothing the person asked about other
  memories is lost.

A file that cannot be read or written is reported as not cleaned, with its path, so the
person can delete it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from workbench.errors import WorkbenchError
from workbench.forget import Copy, ForgetReport
from workbench.forget_words import pattern, redact
from workbench.knowledge import atomic, conversations, corpus
from workbench.settings import Settings


@dataclass
class Scrubbed:
    corpora: list[str] = field(default_factory=list)
    conversations: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)  # paths we could not clean


def scrub(settings: Settings, forgotten_ids: list[int], words: list[str]) -> Scrubbed:
    """Clean every corpus and conversation of the forgotten ids and words."""
    found = Scrubbed()
    regex = pattern(words)
    ids = set(forgotten_ids)
    if not ids and regex is None:
        return found
    for name in corpus.names(settings):
        _scrub_corpus(settings, name, ids, regex, found)
    folder = settings.conversations_dir
    if folder.is_dir():
        for path in sorted(folder.glob("kc_*.json")):
            _scrub_conversation(settings, path, ids, regex, found)
    return found


def _holds(path: Path, ids: set[int], regex: re.Pattern[str] | None) -> bool:
    """A cheap look at the raw file before parsing it: any word, or any id as a JSON id."""
    text = path.read_text(encoding="utf-8")
    if regex is not None and regex.search(text):
        return True
    return any(re.search(rf'"id":{i}[,}}]', text) for i in ids)


def _scrub_corpus(
    settings: Settings,
    name: str,
    ids: set[int],
    regex: re.Pattern[str] | None,
    found: Scrubbed,
) -> None:
    path = corpus.path_for(settings, name)
    with corpus.lock(settings, name):
        try:
            if not _holds(path, ids, regex):
                return
            current = corpus.load(settings, name)
        except (OSError, ValueError, WorkbenchError):
            found.unreadable.append(str(path))
            return
        kept = [
            o.model_dump() for o in current.observations if not (o.author is None and o.id in ids)
        ]
        for row in kept:
            for key, value in row.items():
                if isinstance(value, str):
                    row[key] = redact(value, regex)
                elif isinstance(value, list):
                    row[key] = [redact(v, regex) if isinstance(v, str) else v for v in value]
        rebuilt = corpus.assemble(
            name,
            redact(current.description, regex),
            current.filter,
            kept,
            created_at=current.created_at,
            updated_at=current.updated_at,
        )
        rebuilt.session_id = current.session_id
        corpus.save(settings, rebuilt)
    found.corpora.append(name)


def _scrub_conversation(
    settings: Settings,
    path: Path,
    ids: set[int],
    regex: re.Pattern[str] | None,
    found: Scrubbed,
) -> None:
    try:
        if not _holds(path, set(), regex) and not _cites(path, ids):
            return
        conversation = conversations.Conversation.model_validate(atomic.read_json(path))
    except (OSError, ValueError, ValidationError):
        found.unreadable.append(str(path))
        return
    for turn in conversation.turns:
        turn.question = redact(turn.question, regex)
        turn.answer = redact(turn.answer, regex)
        turn.citations = [i for i in turn.citations if i not in ids]
    try:
        # The corpus's lock: the agent appends turns under it (``agent.query``).
        with corpus.lock(settings, corpus.validate_name(conversation.corpus)):
            conversations.save(settings.conversations_dir, conversation)
    except (OSError, ValueError, WorkbenchError):
        found.unreadable.append(str(path))
        return
    found.conversations.append(conversation.session_id)


def _cites(path: Path, ids: set[int]) -> bool:
    if not ids:
        return False
    text = path.read_text(encoding="utf-8")
    return any(re.search(rf"\[#{i}\]", text) for i in ids)


EXPORTS = (
    "files written by `workbench export`, `sql --csv/--parquet` results, copies of the data "
    "dir and backups are outside workbench's reach: delete them, or export again"
)
AGENT_LOGS = (
    "each agent keeps its own session logs, and they hold the context workbench gave it at "
    "session start and what its memory tools returned (Claude Code: "
    "~/.claude/projects/<project>/<session>.jsonl; Gemini CLI, Codex, Cursor, Windsurf and "
    "OpenCode keep theirs in their own folders): delete those sessions there"
)
TEAM_LAKE = (
    "the current snapshot drops it at the next `workbench publish` (the service's publisher "
    "asks for one now when publishing is on); older snapshots and their files keep it until "
    "`workbench team maintain --older-than 0s`; colleagues' team mirrors drop it at their next "
    "refresh, and what they copied out of the lake themselves is theirs to delete"
)


def record(report: ForgetReport, settings: Settings) -> None:
    """Clean corpora and conversations for ``report``'s forgotten ids and words, and add to it
    what was cleaned and what no forget can reach (each with how to remove it)."""
    found = scrub(settings, [d.id for d in report.deleted], report.words)
    if found.corpora:
        report.cleaned.append(Copy("corpora", found.corpora))
    if found.conversations:
        report.cleaned.append(Copy("conversations", found.conversations))
    if found.unreadable:
        report.not_cleaned.append(
            Copy("unreadable files", found.unreadable, "delete these files (derived state)")
        )
    if settings.team_catalog:
        report.not_cleaned.append(Copy("team lake", [], TEAM_LAKE))
    report.not_cleaned.append(Copy("exports and backups", [], EXPORTS))
    report.not_cleaned.append(Copy("agent session logs", [], AGENT_LOGS))
