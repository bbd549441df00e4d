"""The Claude knowledge agent: the Messages API, the corpus cached in the system prompt.

Why it is built this way:
- **Prompt caching.** ``system`` is two blocks, the instructions and the fenced corpus, the
  second marked ``cache_control: ephemeral`` (``render.system_blocks``). Priming writes the
  cache once; every follow-up sends the same prefix and pays for the corpus at the cache-read
  rate. The usage returned says exactly what was paid (input, cache read, cache write, output).
- **Stateless API, persisted history.** The Messages API keeps no conversation, so the whole
  history (every earlier question and answer) is replayed on each follow-up, after the cached
  prefix.
- **No tools.** The model is given none: a corpus is untrusted data, and an injected
  instruction it happened to follow could then only change words, never act.
- **An unusable conversation** (the API answers 400 ``invalid_request_error``: history that
  no longer validates, a conversation grown past the context window…) raises
  ``ConversationRejected``, which the facade answers by re-priming once. Every other failure
  is an ``AgentError`` whose message says what to do; the classification is the one shared
  with the compressor (``workbench.anthropic_api``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.anthropic_api import ApiProblem, build_client, classify
from workbench.errors import WorkbenchError
from workbench.knowledge.prompts import PRIME_MESSAGE, cited_ids
from workbench.knowledge.render import system_blocks
from workbench.settings import Settings

if TYPE_CHECKING:
    from workbench.knowledge.conversations import Turn
    from workbench.knowledge.corpus import Corpus

ANSWER_MAX_TOKENS = 2_048
PRIME_MAX_TOKENS = 8
USAGE_FIELDS = (
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
)


class AgentError(WorkbenchError):
    """The knowledge agent could not answer; the message says why and what to do."""

    status_code = 502
    code = "AGENT_FAILED"


class ConversationRejected(Exception):
    """The API refused the conversation as sent; re-priming may fix it."""

    def __init__(self, problem: ApiProblem) -> None:
        super().__init__(problem.said)
        self.problem = problem


@dataclass
class Reply:
    """An agent's answer to one question."""

    answer: str
    citations: list[int]
    usage: dict[str, int] = field(default_factory=dict)


def zero_usage() -> dict[str, int]:
    return dict.fromkeys(USAGE_FIELDS, 0)


class ClaudeAgent:
    """Answers questions about a corpus with Claude, one persisted conversation at a time."""

    def __init__(self, client: Any, model: str, *, max_tokens: int = ANSWER_MAX_TOKENS) -> None:
        self.client = client
        self.model = model
        self.max_tokens = max_tokens

    @classmethod
    def from_settings(cls, settings: Settings) -> ClaudeAgent:
        """An agent for ``settings`` (the key must be set; see ``settings.api_key()``)."""
        return cls(build_client(settings, max_retries=settings.llm_max_retries), settings.model)

    @property
    def name(self) -> str:
        return f"claude:{self.model}"

    def close(self) -> None:
        close = getattr(self.client, "close", None)
        if callable(close):
            close()

    def prime(self, corpus: Corpus) -> dict[str, int]:
        """Load the corpus into the prompt cache (one tiny request); returns its usage.

        The acknowledgement is not kept in the history: the conversation is the questions.
        """
        message = self._create(
            corpus, [{"role": "user", "content": PRIME_MESSAGE}], PRIME_MAX_TOKENS
        )
        return _usage(getattr(message, "usage", None))

    def ask(self, corpus: Corpus, turns: list[Turn], question: str) -> Reply:
        """Answer ``question`` after replaying ``turns``; citations limited to the corpus."""
        history: list[dict[str, Any]] = []
        for turn in turns:
            history.append({"role": "user", "content": turn.question})
            history.append({"role": "assistant", "content": turn.answer})
        history.append({"role": "user", "content": question})
        message = self._create(corpus, history, self.max_tokens)
        text = "".join(
            getattr(block, "text", "") or ""
            for block in getattr(message, "content", None) or []
            if getattr(block, "type", "") == "text"
        ).strip()
        if not text:
            stop = getattr(message, "stop_reason", None)
            text = f"(the model returned no text; stop reason: {stop})"
        return Reply(text, cited_ids(text, corpus.ids()), _usage(getattr(message, "usage", None)))

    def _create(self, corpus: Corpus, messages: list[dict[str, Any]], max_tokens: int) -> Any:
        import anthropic

        try:
            return self.client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=system_blocks(corpus),
                messages=messages,
            )
        except anthropic.AnthropicError as exc:
            problem = classify(exc)
            if problem.status == 400 and problem.error_type == "invalid_request_error":
                if problem.reason == "bad_request":  # not billing, which is also a 400
                    raise ConversationRejected(problem) from exc
            raise agent_error(problem, self.model) from exc


def agent_error(problem: ApiProblem, model: str) -> AgentError:
    """The person-facing error for an API failure (someone is waiting for an answer)."""
    said = problem.said
    key_fix = (
        "Set a valid key in ANTHROPIC_API_KEY (or WORKBENCH_ANTHROPIC_API_KEY) and restart the "
        "service, or unset both to use the offline extractive agent."
    )
    messages = {
        "timeout": "the Anthropic API did not answer in time; ask again (or raise "
        "WORKBENCH_LLM_TIMEOUT_S for large corpora).",
        "connection": f"could not reach the Anthropic API ({problem.detail}). Check the network "
        "or WORKBENCH_ANTHROPIC_BASE_URL, then ask again.",
        "quota": f"Anthropic refused the request for billing reasons {said}. Add credit at "
        "https://console.anthropic.com/settings/billing, or unset the key to use the offline "
        "extractive agent.",
        "auth": f"Anthropic rejected the API key {said}. {key_fix}",
        "forbidden": f"the API key may not use model {model!r} {said}. Set WORKBENCH_MODEL to a "
        "model it can use.",
        "rate_limit": f"Anthropic rate limit reached {said}"
        + (
            f"; ask again in {problem.retry_after_s:g} s."
            if problem.retry_after_s is not None
            else "; ask again in a minute."
        ),
        "overloaded": f"the Anthropic API is overloaded {said}; ask again shortly.",
        "server": f"the Anthropic API had a server error {said}; ask again shortly.",
        "not_found": f"Anthropic does not know model {model!r} {said}. Set WORKBENCH_MODEL to a "
        "valid model name (e.g. claude-haiku-4-5).",
        "bad_request": f"Anthropic rejected the request {said}. If the corpus is very large, "
        "build it again with a smaller --limit; otherwise check WORKBENCH_MODEL (now "
        f"{model!r}).",
    }
    text = messages.get(problem.reason, f"the Anthropic client failed: {problem.detail}")
    error = AgentError(f"knowledge agent: {text}", kind=problem.reason, retryable=problem.retryable)
    if problem.retry_after_s is not None:
        error.details["retry_after_s"] = problem.retry_after_s
    return error


def _usage(usage: Any) -> dict[str, int]:
    """The four usage counts (a count the API left out is 0)."""
    out = zero_usage()
    for name in USAGE_FIELDS:
        value = getattr(usage, name, None) if usage is not None else None
        if isinstance(value, int):
            out[name] = value
    return out
