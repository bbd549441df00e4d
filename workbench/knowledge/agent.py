"""The knowledge agent: prime, query and reprime a conversation over one corpus.

``KnowledgeAgent`` is what the service's corpus routes call. It picks the engine per call:
``ClaudeAgent`` (``agent_claude``) when an Anthropic key is set, else ``OfflineAgent``
(``agent_offline``), and keeps the conversation in a file (``conversations``) named by the
corpus's ``session_id``, so a restarted service continues where it stopped.

- **prime** starts a conversation with the corpus loaded once (Claude: one tiny request that
  writes the prompt cache) and records its ``session_id`` in the corpus. Priming a corpus
  whose conversation is intact returns that conversation: only ``reprime`` starts over.
- **query** asks in that conversation; follow-ups see every earlier turn. A corpus that was
  never primed (or was rebuilt, which clears the session) is primed automatically by its
  first question, and the response says so (``auto_primed``): friendlier than a 409.
- **A lost or unusable conversation** (file missing or corrupt, or the API refusing it with
  a 400 ``invalid_request_error``) is re-primed automatically at most once per question, and
  transparently: the answer comes from a fresh conversation, marked ``reprimed`` with the
  reason. A conversation created for this very question is not re-primed again.
- **reprime** discards the conversation and starts a fresh one (the Q&A context is gone).

Every read-modify-write of a corpus and its conversation holds the corpus's lock, so two
questions to one corpus are answered one after the other, each seeing the other's turn.
"""

from __future__ import annotations

import threading
from typing import Any

from workbench.clock import iso_from_ms, now_ms
from workbench.errors import InvalidInput
from workbench.knowledge import conversations, corpus
from workbench.knowledge.agent_claude import (
    AgentError,
    ClaudeAgent,
    ConversationRejected,
    agent_error,
)
from workbench.knowledge.agent_offline import OfflineAgent
from workbench.settings import Settings
from workbench.sources.select import SearchFn, default_search

MAX_QUESTION_CHARS = 20_000

__all__ = ["AgentError", "KnowledgeAgent"]


class KnowledgeAgent:
    """prime / query / reprime for the corpora of one data dir.

    ``store_or_conn`` (a ``Store`` or a connection) and ``ranker`` (the service's vector
    ranker) feed the store's hybrid search, used to select query corpora and by the offline
    agent; without them the offline agent ranks the corpus's own text. ``claude`` injects a
    ready ``ClaudeAgent`` (tests point one at a fake API); otherwise one is built from the
    settings the first time a key is seen.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store_or_conn: Any = None,
        ranker: Any = None,
        claude: ClaudeAgent | None = None,
    ) -> None:
        self.settings = settings
        self.store_or_conn = store_or_conn
        self.ranker = ranker
        self._claude = claude
        self._lock = threading.Lock()

    # ----- engines -------------------------------------------------------------------------------
    def engine(self) -> ClaudeAgent | OfflineAgent:
        """Claude when a key is set (or a Claude agent was injected), else offline."""
        if self._claude is not None:
            return self._claude
        if self.settings.api_key():
            with self._lock:
                if self._claude is None:
                    self._claude = ClaudeAgent.from_settings(self.settings)
                return self._claude
        return OfflineAgent(self._corpus_search if self.store_or_conn is not None else None)

    def selection_search(self) -> SearchFn | None:
        """The search that selects a corpus's ``query`` (hybrid when the service has vectors)."""
        if self.store_or_conn is None:
            return None
        return default_search(self._conn(), self.settings, self.ranker)

    def close(self) -> None:
        if self._claude is not None:
            self._claude.close()

    # ----- the three operations ------------------------------------------------------------------
    def prime(self, name: str) -> dict[str, Any]:
        """Start (or keep) the conversation of corpus ``name``: ``{name, session_id, …}``."""
        with corpus.lock(self.settings, name):
            current = corpus.load(self.settings, name)
            existing = conversations.load(self.settings.conversations_dir, current.session_id)
            if existing is not None:
                return self._primed(current.name, existing, already=True)
            return self._primed(current.name, self._start(current), already=False)

    def reprime(self, name: str) -> dict[str, Any]:
        """A fresh conversation on the same corpus; the earlier Q&A is discarded."""
        with corpus.lock(self.settings, name):
            current = corpus.load(self.settings, name)
            return self._primed(current.name, self._start(current), already=False)

    def query(self, name: str, question: object) -> dict[str, Any]:
        """Ask in the corpus's conversation: ``{answer, session_id, citations, usage, …}``."""
        text = _question(question)
        with corpus.lock(self.settings, name):
            current = corpus.load(self.settings, name)
            engine = self.engine()
            folder = self.settings.conversations_dir
            conversation = conversations.load(folder, current.session_id)
            auto_primed = current.session_id is None
            reason: str | None = None
            if conversation is None:
                # Trigger: never primed, rebuilt, or the conversation file is gone/corrupt.
                # Why: a person asking a question wants an answer, not a "prime first".
                # Outcome: a new conversation; the lost case is reported as a re-prime.
                if not auto_primed:
                    reason = "the conversation file was missing or unreadable"
                conversation = conversations.new(current.name, engine.name)
            fresh = auto_primed or reason is not None  # made for this question: no re-prime
            try:
                reply = engine.ask(current, conversation.turns, text)
            except ConversationRejected as exc:
                if fresh:
                    raise agent_error(exc.problem, getattr(engine, "model", "")) from None
                reason = f"the API refused the conversation {exc.problem.said}"
                conversation = conversations.new(current.name, engine.name)
                try:
                    reply = engine.ask(current, [], text)
                except ConversationRejected as again:
                    raise agent_error(again.problem, getattr(engine, "model", "")) from None
            conversation.agent = engine.name
            conversation.turns.append(
                conversations.Turn(
                    question=text,
                    answer=reply.answer,
                    citations=reply.citations,
                    usage=reply.usage,
                    agent=engine.name,
                    at=iso_from_ms(now_ms()),
                )
            )
            conversations.save(folder, conversation)
            if conversation.session_id != current.session_id:
                corpus.set_session(self.settings, current.name, conversation.session_id)
                conversations.discard(folder, current.session_id)
        by_id = {o.id: o for o in current.observations}
        return {
            "answer": reply.answer,
            "session_id": conversation.session_id,
            "citations": reply.citations,
            "usage": reply.usage,
            "agent": engine.name,
            "name": current.name,
            "turn": len(conversation.turns),
            "auto_primed": auto_primed,
            "reprimed": reason is not None,
            "reprime_reason": reason,
            "sources": [
                {
                    "id": i,
                    "type": by_id[i].type,
                    "title": by_id[i].title,
                    "created_at": by_id[i].created_at,
                }
                for i in reply.citations
                if i in by_id
            ],
        }

    # ----- internals ---------------------------------------------------------------------------
    def _start(self, current: corpus.Corpus) -> conversations.Conversation:
        """A new primed conversation, recorded in the corpus; the old one is discarded."""
        engine = self.engine()
        conversation = conversations.new(current.name, engine.name)
        try:
            conversation.prime_usage = engine.prime(current)
        except ConversationRejected as exc:  # a brand-new conversation: nothing to retry
            raise agent_error(exc.problem, getattr(engine, "model", "")) from None
        folder = self.settings.conversations_dir
        conversations.save(folder, conversation)
        corpus.set_session(self.settings, current.name, conversation.session_id)
        conversations.discard(folder, current.session_id)
        return conversation

    def _primed(
        self, name: str, conversation: conversations.Conversation, *, already: bool
    ) -> dict[str, Any]:
        return {
            "name": name,
            "session_id": conversation.session_id,
            "agent": conversation.agent,
            "already_primed": already,
            "turns": len(conversation.turns),
            "usage": conversation.prime_usage,
        }

    def _conn(self) -> Any:
        source = self.store_or_conn
        return source.conn if hasattr(source, "conn") else source

    def _corpus_search(self, question: str, current: corpus.Corpus) -> list[int]:
        """The store's hybrid search under the corpus's own filter (the caller keeps its ids)."""
        from workbench.recall.search import SearchEngine

        engine = SearchEngine(self.store_or_conn, self.settings, self.ranker)
        result = engine.search(
            question,
            current.filter.search_filters(),
            types="observations",
            mode="hybrid",
            limit=100,
        )
        return [hit.id for hit in result.observations]


def _question(value: object) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput('question must be non-empty text, e.g. {"question": "why did X fail?"}')
    if len(value) > MAX_QUESTION_CHARS:
        raise InvalidInput(
            f"question is {len(value)} characters; at most {MAX_QUESTION_CHARS} are allowed"
        )
    return value.strip()
