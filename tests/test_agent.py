"""The knowledge agent: Claude against the fake Messages API server, and the offline agent.

The Claude agent is built the production way (``settings`` with a key and
``anthropic_base_url`` pointing at the fake, ``llm_max_retries=0``), so the client, the
request it sends (system blocks, cache_control, replayed history) and its error handling are
all the real ones.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_anthropic import FakeAnthropic
from tests.test_corpus import add
from workbench.errors import InvalidInput
from workbench.knowledge import conversations, corpus
from workbench.knowledge.agent import AgentError, KnowledgeAgent
from workbench.knowledge.corpus_filter import parse_filter
from workbench.settings import Settings, load_settings
from workbench.store.database import Store

MODEL = "claude-haiku-4-5"
USAGE_KEYS = {
    "input_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "output_tokens",
}


@pytest.fixture
def claude_settings(data_dir: Path, fake_anthropic: FakeAnthropic) -> Settings:
    return load_settings(
        data_dir,
        anthropic_api_key="test-key",
        anthropic_base_url=fake_anthropic.base_url,
        llm_max_retries=0,
        llm_timeout_s=5.0,
        model=MODEL,
    )


@pytest.fixture
def store(data_dir: Path) -> Iterator[Store]:
    with Store(load_settings(data_dir).db_path) as opened:
        yield opened


@pytest.fixture
def ids(store: Store) -> list[int]:
    return [
        add(
            store, "Queue claim race", day=0, type="bugfix", narrative="Two workers claimed a row."
        ),
        add(store, "Use BEGIN IMMEDIATE", day=1, type="decision", narrative="Take the lock early."),
        add(
            store, "Retry backoff", day=2, type="feature", narrative="Exponential, capped at 300 s."
        ),
    ]


@pytest.fixture
def agent(claude_settings: Settings, store: Store, ids: list[int]) -> Iterator[KnowledgeAgent]:
    corpus.build(store.conn, claude_settings, "queue", parse_filter({}), "the queue")
    knowledge = KnowledgeAgent(claude_settings, store_or_conn=store)
    yield knowledge
    knowledge.close()


def messages(fake: FakeAnthropic, index: int) -> list[dict[str, Any]]:
    return fake.requests[index].body["messages"]


# ----- Claude ----------------------------------------------------------------------------------
def test_prime_loads_the_corpus_once_in_a_cached_system_block(
    agent: KnowledgeAgent, fake_anthropic: FakeAnthropic, ids: list[int], claude_settings: Settings
) -> None:
    fake_anthropic.queue_text("READY", cache_creation_input_tokens=900, input_tokens=12)
    primed = agent.prime("queue")
    assert primed["name"] == "queue"
    assert primed["session_id"].startswith("kc_")
    assert primed["agent"] == f"claude:{MODEL}"
    assert primed["usage"]["cache_creation_input_tokens"] == 900
    assert corpus.load(claude_settings, "queue").session_id == primed["session_id"]

    [request] = fake_anthropic.requests
    body = request.body
    assert body["model"] == MODEL
    assert "tools" not in body  # the model is given no tools
    instructions, corpus_block = body["system"]
    assert "cache_control" not in instructions
    assert "untrusted historical data" in instructions["text"]
    assert corpus_block["cache_control"] == {"type": "ephemeral"}
    assert corpus_block["text"].startswith('<untrusted-data source="corpus:queue">')
    for obs_id in ids:
        assert f"## [#{obs_id}]" in corpus_block["text"]
    assert request.headers["authorization"] == "Bearer test-key"

    # Priming again keeps the intact conversation and calls nothing.
    again = agent.prime("queue")
    assert again["session_id"] == primed["session_id"]
    assert again["already_primed"] is True
    assert len(fake_anthropic.requests) == 1


def test_query_answers_with_usage_and_only_real_citations(
    agent: KnowledgeAgent, fake_anthropic: FakeAnthropic, ids: list[int]
) -> None:
    agent.prime("queue")
    fake_anthropic.queue_text(
        f"Two workers raced [#{ids[0]}]; the fix took the lock early [#{ids[1]}, #{ids[0]}]. "
        "See also [#999999].",
        input_tokens=20,
        cache_read_input_tokens=850,
        cache_creation_input_tokens=0,
        output_tokens=40,
    )
    answer = agent.query("queue", "Why did the queue claim race happen?")
    assert set(answer) >= {"answer", "session_id", "citations", "usage"}
    assert answer["citations"] == [ids[0], ids[1]]  # 999999 is not in the corpus
    assert answer["usage"] == {
        "input_tokens": 20,
        "cache_read_input_tokens": 850,
        "cache_creation_input_tokens": 0,
        "output_tokens": 40,
    }
    assert answer["agent"] == f"claude:{MODEL}"
    assert [s["id"] for s in answer["sources"]] == [ids[0], ids[1]]
    assert answer["reprimed"] is False
    assert answer["auto_primed"] is False
    request = fake_anthropic.last_request
    assert request.body["system"][1]["cache_control"] == {"type": "ephemeral"}
    assert messages(fake_anthropic, 1) == [
        {"role": "user", "content": "Why did the queue claim race happen?"}
    ]


def test_follow_ups_replay_the_whole_history(
    agent: KnowledgeAgent, fake_anthropic: FakeAnthropic
) -> None:
    agent.prime("queue")
    fake_anthropic.queue_text("Because two workers claimed one row.")
    fake_anthropic.queue_text("BEGIN IMMEDIATE fixed it.")
    first = agent.query("queue", "Why did it race?")
    second = agent.query("queue", "And how was it fixed?")
    assert second["session_id"] == first["session_id"]
    assert second["turn"] == 2
    assert messages(fake_anthropic, 2) == [
        {"role": "user", "content": "Why did it race?"},
        {"role": "assistant", "content": "Because two workers claimed one row."},
        {"role": "user", "content": "And how was it fixed?"},
    ]
    # Every request sends the identical cached prefix, so follow-ups read it from the cache.
    systems = [json.dumps(r.body["system"]) for r in fake_anthropic.requests]
    assert len(set(systems)) == 1


def test_reprime_starts_a_fresh_conversation(
    agent: KnowledgeAgent, fake_anthropic: FakeAnthropic, claude_settings: Settings
) -> None:
    first = agent.prime("queue")
    agent.query("queue", "Why did it race?")
    fresh = agent.reprime("queue")
    assert fresh["session_id"] != first["session_id"]
    assert fresh["turns"] == 0
    folder = claude_settings.conversations_dir
    assert conversations.load(folder, first["session_id"]) is None  # discarded
    agent.query("queue", "What changed?")
    assert messages(fake_anthropic, 3) == [{"role": "user", "content": "What changed?"}]


def test_a_refused_conversation_is_reprimed_exactly_once(
    agent: KnowledgeAgent, fake_anthropic: FakeAnthropic
) -> None:
    primed = agent.prime("queue")
    fake_anthropic.queue_text("first answer")
    agent.query("queue", "first question")
    fake_anthropic.queue_error(
        400, "invalid_request_error", "messages: unexpected role sequence in conversation"
    )
    fake_anthropic.queue_text("answer from a fresh conversation", input_tokens=7)
    answer = agent.query("queue", "second question")
    assert answer["answer"] == "answer from a fresh conversation"
    assert answer["reprimed"] is True
    assert "invalid_request_error" in answer["reprime_reason"]
    assert answer["session_id"] != primed["session_id"]
    assert answer["usage"]["input_tokens"] == 7
    # prime, first question, the refused request, then the retry with a fresh history.
    assert len(fake_anthropic.requests) == 4
    assert len(messages(fake_anthropic, 2)) == 3
    assert messages(fake_anthropic, 3) == [{"role": "user", "content": "second question"}]
    # The fresh conversation is the corpus's now, and follow-ups continue it.
    follow = agent.query("queue", "third question")
    assert follow["session_id"] == answer["session_id"]
    assert follow["reprimed"] is False


def test_a_conversation_refused_twice_is_an_error_not_a_loop(
    agent: KnowledgeAgent, fake_anthropic: FakeAnthropic
) -> None:
    agent.prime("queue")
    for _ in range(3):
        fake_anthropic.queue_error(400, "invalid_request_error", "prompt is too long")
    with pytest.raises(AgentError) as caught:
        agent.query("queue", "anything?")
    assert len(fake_anthropic.requests) == 3  # prime + the request + one re-primed retry
    assert caught.value.status_code == 502
    assert "prompt is too long" in caught.value.message
    assert "--limit" in caught.value.message


@pytest.mark.parametrize("damage", ["delete", "corrupt"])
def test_a_lost_conversation_is_reprimed_transparently(
    agent: KnowledgeAgent,
    fake_anthropic: FakeAnthropic,
    claude_settings: Settings,
    damage: str,
) -> None:
    primed = agent.prime("queue")
    path = claude_settings.conversations_dir / f"{primed['session_id']}.json"
    if damage == "delete":
        path.unlink()
    else:
        path.write_text("{not json", encoding="utf-8")
    fake_anthropic.queue_text("still answered")
    answer = agent.query("queue", "Are you there?")
    assert answer["answer"] == "still answered"
    assert answer["reprimed"] is True
    assert "missing or unreadable" in answer["reprime_reason"]
    assert answer["session_id"] != primed["session_id"]
    assert corpus.load(claude_settings, "queue").session_id == answer["session_id"]


def test_a_query_before_prime_primes_automatically(
    agent: KnowledgeAgent, fake_anthropic: FakeAnthropic, claude_settings: Settings
) -> None:
    fake_anthropic.queue_text("answer")
    answer = agent.query("queue", "What is in here?")
    assert answer["auto_primed"] is True
    assert answer["reprimed"] is False
    assert corpus.load(claude_settings, "queue").session_id == answer["session_id"]
    assert len(fake_anthropic.requests) == 1  # the question itself loads the corpus


@pytest.mark.parametrize(
    ("status", "error_type", "message", "hint"),
    [
        (401, "authentication_error", "invalid x-api-key", "ANTHROPIC_API_KEY"),
        (400, "invalid_request_error", "Your credit balance is too low", "billing"),
        (429, "rate_limit_error", "slow down", "ask again"),
        (529, "overloaded_error", "Overloaded", "overloaded"),
        (404, "not_found_error", "model: nope", "WORKBENCH_MODEL"),
    ],
)
def test_api_errors_say_what_to_do_and_are_not_reprimed(
    agent: KnowledgeAgent,
    fake_anthropic: FakeAnthropic,
    status: int,
    error_type: str,
    message: str,
    hint: str,
) -> None:
    fake_anthropic.queue_error(status, error_type, message)
    with pytest.raises(AgentError) as caught:
        agent.query("queue", "anything?")
    assert hint in caught.value.message
    assert message in caught.value.message
    assert len(fake_anthropic.requests) == 1


def test_a_new_agent_continues_the_persisted_conversation(
    agent: KnowledgeAgent, fake_anthropic: FakeAnthropic, claude_settings: Settings, store: Store
) -> None:
    fake_anthropic.queue_text("first answer")
    first = agent.query("queue", "first question")
    restarted = KnowledgeAgent(claude_settings, store_or_conn=store)  # nothing in memory
    second = restarted.query("queue", "second question")
    restarted.close()
    assert second["session_id"] == first["session_id"]
    assert messages(fake_anthropic, 1)[:2] == [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
    ]


@pytest.mark.parametrize("question", ["", "   ", None, 5, "x" * 20_001])
def test_bad_questions_are_refused(agent: KnowledgeAgent, question: Any) -> None:
    with pytest.raises(InvalidInput):
        agent.query("queue", question)


# ----- offline --------------------------------------------------------------------------------
@pytest.fixture
def offline(data_dir: Path, store: Store) -> KnowledgeAgent:
    settings = load_settings(data_dir)
    assert settings.api_key() is None
    return KnowledgeAgent(settings, store_or_conn=store)


def test_offline_agent_cites_only_corpus_ids_and_says_it_is_extractive(
    offline: KnowledgeAgent, store: Store
) -> None:
    settings = offline.settings
    inside = add(
        store,
        "Refund charged twice",
        day=1,
        type="bugfix",
        project="pay",
        narrative="The refund webhook was retried, so refunds were charged twice.",
    )
    add(store, "Logging setup", day=2, type="feature", project="pay", narrative="structlog.")
    outside = add(
        store,
        "Refund charged twice again",
        day=3,
        type="bugfix",
        project="other",
        narrative="Another refund charged twice, in another project.",
    )
    corpus.build(store.conn, settings, "pay", parse_filter({"project": "pay"}))

    primed = offline.prime("pay")
    assert primed["agent"] == "offline-extractive"
    assert set(primed["usage"].values()) == {0}
    answer = offline.query("pay", "Why were refunds charged twice?")
    in_corpus = corpus.load(settings, "pay").ids()
    assert answer["agent"] == "offline-extractive"
    assert answer["citations"][0] == inside
    assert set(answer["citations"]) <= in_corpus
    assert outside not in answer["citations"]
    assert "extractive" in answer["answer"].lower()
    assert "no language model" in answer["answer"]
    assert f"[#{inside}]" in answer["answer"]
    assert "refunds were charged twice" in answer["answer"]
    assert set(answer["usage"]) == USAGE_KEYS
    assert set(answer["usage"].values()) == {0}
    assert answer["session_id"] == primed["session_id"]


def test_offline_follow_ups_read_the_previous_question(
    offline: KnowledgeAgent, store: Store
) -> None:
    retry = add(store, "Retry backoff", day=1, narrative="Exponential backoff, capped at 300 s.")
    add(store, "Logging setup", day=2, narrative="structlog everywhere.")
    corpus.build(store.conn, offline.settings, "c", parse_filter({}))
    offline.query("c", "How does the retry backoff work?")
    follow = offline.query("c", "and why?")
    assert follow["turn"] == 2
    assert follow["citations"][0] == retry
    assert "follow-up" in follow["answer"]


def test_offline_agent_on_nothing_matching_and_on_an_empty_corpus(
    data_dir: Path, store: Store
) -> None:
    settings = load_settings(data_dir)
    bare = KnowledgeAgent(settings)  # no store: the corpus's own text only
    add(store, "Retry backoff", day=1)
    corpus.build(store.conn, settings, "c", parse_filter({}))
    corpus.build(store.conn, settings, "empty", parse_filter({"project": "none"}))
    miss = bare.query("c", "quantum chromodynamics")
    assert miss["citations"] == []
    assert "No observation" in miss["answer"]
    empty = bare.query("empty", "anything")
    assert empty["citations"] == []
    assert "empty" in empty["answer"]
