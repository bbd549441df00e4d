"""The words only a forgotten observation held (``workbench.forget_words``), on a real store.

- Its own words leave the summaries of its session, any case, whole words only; vocabulary
  another observation of the project also uses stays; the summary's source event is
  scrubbed when it held a word (recompress cannot write it again); prompts holding a word are
  reported, not edited.
- Text full of regex metacharacters and non-ASCII letters is matched literally.
"""

from __future__ import annotations

import json
from pathlib import Path

from workbench import forget
from workbench.models import ObservationDraft, SummaryDraft
from workbench.store import events, observations, sessions, summaries
from workbench.store.connection import atomic
from workbench.store.database import Store

AT = 1_780_000_000_000


def _seed(store: Store, titles: list[str], summary: str, prompt: str) -> list[int]:
    conn = store.conn
    ids = []
    with atomic(conn):
        sessions.ensure(conn, "s1", "api", "claude-code", at_ms=AT)
        for i, title in enumerate(titles):
            obs_id, _ = observations.insert(
                conn,
                ObservationDraft(title=title, narrative=title),
                content_session_id="s1",
                project="api",
                prompt_number=1,
                created_ms=AT + i,
            )
            ids.append(obs_id)
        event_id, _ = events.append(
            conn,
            "summarize",
            {"last_assistant_message": summary},
            event_key="stop:s1:1",
            content_session_id="s1",
            project="api",
            prompt_number=1,
            enqueue=False,
        )
        summaries.upsert(
            conn,
            SummaryDraft(request=summary, learned=summary.upper(), files_read=[summary]),
            content_session_id="s1",
            project="api",
            prompt_number=1,
            event_id=event_id,
            created_ms=AT,
        )
        session = sessions.get(conn, "s1")
        assert session is not None
        sessions.record_prompt(conn, session, prompt, at_ms=AT)
    return ids


def test_its_own_words_leave_the_summary_and_its_source(tmp_path: Path) -> None:
    with Store(tmp_path / "workbench.db") as store:
        gone, _ = _seed(
            store,
            ["deploy.internal host uses sk-live-9f2a (c++)* rotated", "deploy rotated timeout"],
            "rotated sk-live-9f2a on deploy.internal (c++)* ; deploy.internalx stays",
            "please rotate sk-live-9f2a",
        )
        report = forget.forget(store.conn, tmp_path / "spool", [gone])
        (row,) = store.conn.execute(
            "SELECT request, learned, files_read, event_id FROM session_summaries"
        ).fetchall()
        (payload,) = store.conn.execute(
            "SELECT payload FROM events WHERE id = ?", (row["event_id"],)
        ).fetchone()

    # Own words: sk-live-9f2a, deploy.internal (not in the other observation).
    # Vocabulary kept: "rotated", "deploy" (the other one uses them); a longer word that
    # merely starts with an own word ("deploy.internalx") is another word.
    assert row["request"] == ("rotated [forgotten] on [forgotten] (c++)* ; deploy.internalx stays")
    assert row["learned"] == "ROTATED [forgotten] ON [forgotten] (C++)* ; DEPLOY.INTERNALX STAYS"
    assert "sk-live" not in row["files_read"]
    assert json.loads(payload) == {"scrubbed": json.loads(payload)["scrubbed"]}
    assert row["event_id"] in report.scrubbed_event_ids
    copies = report.to_json()["copies"]
    assert copies["words"] == len(report.words) >= 2
    assert "sk-live-9f2a" not in json.dumps(report.to_json())  # the report never echoes them
    assert [c["place"] for c in copies["cleaned"]] == [
        "summaries",
        "search index and database file",
    ]
    (prompts,) = copies["notCleaned"]
    assert prompts["place"] == "prompts"
    assert prompts["items"]
    assert prompts["howToRemove"]


def test_non_ascii_words_are_matched_whole_and_shared_ones_kept(tmp_path: Path) -> None:
    with Store(tmp_path / "workbench.db") as store:
        gone, _ = _seed(
            store,
            ["ÜBERGRÖSSE Zürich.cfg [a-z]+ secret", "Zürich.cfg read again"],
            "übergrösse and Zürich.cfg and [a-z]+ and ÜBERGRÖSSE2",
            "nothing here",
        )
        report = forget.forget(store.conn, tmp_path / "spool", [gone])
        (row,) = store.conn.execute("SELECT request FROM session_summaries").fetchall()
    # ÜBERGRÖSSE is its own (any case); Zürich.cfg the other one uses; "[a-z]+" is no word
    # and no pattern; ÜBERGRÖSSE2 is another word.
    assert row["request"] == "[forgotten] and Zürich.cfg and [a-z]+ and ÜBERGRÖSSE2"
    assert report.to_json()["copies"]["notCleaned"] == []
