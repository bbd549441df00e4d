"""i21-context: the context lever reads a memory with its previous one only between two turns.

The report (stop 28, ``bench/relevance_context.py``): ``search_context_weight`` lets a full-text
hit pass a share of its BM25 to the memory saved after it in its session. That wins on
conversations, where the next memory is the reply, and costs the coding set R@10 (0.861 →
0.833, below vector alone), where the next memory is an unrelated tool note. The gate
(``search_context_gate = "turns"``, ``workbench/recall/turn_gate.py``) keeps the lift between
conversation turns (memories that are their text alone) and never lifts a tool note.
These tests run ``SearchEngine`` on real SQLite stores.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.conftest import SimilarityRanker, store_of_turns
from workbench.models import ObservationDraft
from workbench.recall import turn_gate
from workbench.recall.search import SearchEngine
from workbench.recall.session_term import ConversationParams
from workbench.settings import load_settings
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

NOTES = [
    # One coding session: each memory is a tool note about other work than the one before.
    ObservationDraft(
        type="bugfix",
        title="Stripe webhook retries caused duplicate refunds",
        narrative="The webhook handler was not idempotent; retries refunded twice.",
        facts=["refunds keyed by event id now"],
        files_modified=["payments/webhooks.py"],
    ),
    ObservationDraft(
        type="change",
        title="Theme follows prefers-color-scheme",
        narrative="The settings page reads the system theme at start.",
        files_modified=["ui/theme.ts"],
    ),
    ObservationDraft(
        type="feature",
        title="Refund report exported as CSV",
        narrative="Finance asked for a monthly refund export.",
        files_modified=["reports/refunds.py"],
    ),
    ObservationDraft(
        type="discovery",
        title="Dark mode contrast too low on buttons",
        narrative="Buttons use the same grey in both themes.",
        files_read=["ui/buttons.css"],
    ),
]
QUESTION = "why were refunds duplicated by webhook retries"
# The vector ranker likes the refund notes; the theme note after the webhook fix is far off.
COSINES = {1: 0.62, 3: 0.40, 4: 0.10, 2: 0.05}


@pytest.fixture
def coding(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "workbench.db") as store:
        with atomic(store.conn):
            for draft in NOTES:
                observations.insert(store.conn, draft, content_session_id="code-1", project="shop")
        yield store


def order(store: Store, root: Path, **overrides: object) -> list[int]:
    settings = load_settings(root, search_neighbour_weight=0.0, **overrides)
    found = SearchEngine(store, settings, SimilarityRanker(COSINES)).search(
        QUESTION, types="observations"
    )
    return [h.id for h in found.observations]


def test_a_tool_note_is_never_lifted_by_the_note_before_it(coding: Store, tmp_path: Path) -> None:
    plain = order(coding, tmp_path / "plain")
    gated = order(coding, tmp_path / "gated", search_context_weight=1.0)
    ungated = order(coding, tmp_path / "any", search_context_weight=1.0, search_context_gate="any")
    assert plain[:2] == [1, 3]
    # Ungated, the theme note (2) rides on the webhook fix's BM25 past the refund report (3).
    assert ungated.index(2) < ungated.index(3)
    # Gated (the default gate): tool notes read alone, the order is full text + vectors.
    assert gated == plain


def test_turns_are_memories_that_are_their_text_alone(tmp_path: Path) -> None:
    # (tests/test_recall_context.py runs the lever on such turns under the default gate.)
    turns = [
        ("scene-1", "Monica: Joey, where is the engagement ring?"),
        ("scene-1", "Joey: I swear I put it in the fridge next to the jam."),
        ("scene-2", "Chandler: The ring tone on my phone is broken."),
    ]
    with store_of_turns(tmp_path / "workbench.db", turns) as store:
        assert turn_gate.turns_among(store.conn, [1, 2, 3, 99]) == {1, 2, 3}


def test_a_turn_next_to_a_tool_note_is_read_alone(coding: Store) -> None:
    with atomic(coding.conn):
        observations.insert(
            coding.conn,
            ObservationDraft(title="Dana: did the refund fix ship?"),
            content_session_id="code-1",
            project="shop",
        )
    assert turn_gate.turns_among(coding.conn, [1, 2, 3, 4, 5]) == {5}
    beside = {4: (3, 5), 5: (4,)}
    assert turn_gate.gated(beside, {5}) == {4: (), 5: ()}
    assert turn_gate.gated({5: (6,), 6: (5, 7)}, {5, 6}) == {5: (6,), 6: (5,)}


def test_the_gate_is_turns_by_default_and_refuses_other_words(tmp_path: Path) -> None:
    assert ConversationParams.from_settings(load_settings(tmp_path / "a")).context_gate == "turns"
    anyway = load_settings(tmp_path / "b", search_context_gate="any")
    assert ConversationParams.from_settings(anyway).context_gate == "any"
    with pytest.raises(ValidationError) as err:
        load_settings(tmp_path / "c", search_context_gate="sometimes")
    assert "'turns' or 'any'" in str(err.value)
