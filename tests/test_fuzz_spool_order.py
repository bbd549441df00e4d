"""Any interleaving of spooled and live hook events is stored in capture order.

Each event of a random run of sessions is either spooled (its hook found no service) or
posted live; a live one goes the way the hook routes take it (``ReplayAhead``, then the
ingest), through a real ``Ingestor`` on a real SQLite store. Whatever the interleaving, the
events log holds them in the order they were captured, and every tool call and Stop is
numbered with the prompts its session had captured before it.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.replay import ReplayAhead, replay
from service.schemas import HOOK_BODIES
from tests.fuzz_harness import budget
from workbench import spool
from workbench.ingest import Ingestor
from workbench.settings import load_settings
from workbench.store.database import Store

pytestmark = pytest.mark.slow

ROUTES = {
    "init": "/api/sessions/init",
    "observation": "/api/sessions/observations",
    "summarize": "/api/sessions/summarize",
}
KINDS = {"init": "session_init", "observation": "observation", "summarize": "summarize"}


def body_of(kind: str, session: str, n: int) -> dict[str, object]:
    if kind == "init":
        return {"contentSessionId": session, "project": "p", "prompt": f"prompt {n}"}
    if kind == "observation":
        return {
            "contentSessionId": session,
            "tool_name": "Read",
            "tool_input": {"file_path": f"/src/f{n}.py"},
            "tool_response": "x",
            "tool_use_id": f"toolu_{n}",
        }
    return {"contentSessionId": session, "last_assistant_message": f"answer {n}"}


def captured(payload: str) -> int:
    """The capture index ``body_of`` wrote into an event's text."""
    data = json.loads(payload)
    text = data.get("prompt") or data.get("last_assistant_message") or data.get("tool_use_id")
    return int(str(text).rsplit("_", 1)[-1].rsplit(" ", 1)[-1])


EVENTS = st.lists(
    st.tuples(
        st.sampled_from(["init", "observation", "summarize"]),
        st.sampled_from(["a", "b"]),
        st.booleans(),  # spooled (the service was not reachable) or live
    ),
    max_size=12,
)


@settings(max_examples=budget(40), deadline=None)
@given(starts=st.tuples(st.booleans(), st.booleans()), rest=EVENTS)
def test_any_mix_of_spooled_and_live_events_is_stored_in_capture_order(
    starts: tuple[bool, bool], rest: list[tuple[str, str, bool]]
) -> None:
    # Each session's first event is its first prompt (a Stop of a session nobody prompted is
    # skipped, by design); after that, anything in any order, spooled or live.
    run = [("init", "a", starts[0]), ("init", "b", starts[1]), *rest]
    with tempfile.TemporaryDirectory() as folder:
        config = load_settings(Path(folder), compressor="offline")
        with Store(config.db_path) as store:
            ingestor = Ingestor(store, config)
            ahead = ReplayAhead(ingestor)
            for n, (kind, session, spooled) in enumerate(run):
                key = spool.new_event_key()
                body = body_of(kind, session, n)
                if spooled:
                    spool.write(config.spool_dir, spool.Envelope(key, ROUTES[kind], body))
                else:
                    ahead()
                    HOOK_BODIES[ROUTES[kind]].model_validate(body).ingest(ingestor, key)
            replay(ingestor, config.spool_retention_days)  # the periodic round: the rest

            rows = store.conn.execute(
                "SELECT payload, kind, content_session_id, prompt_number FROM events ORDER BY id"
            ).fetchall()
    assert [captured(payload) for payload, *_ in rows] == list(range(len(run)))
    prompts = {"a": 0, "b": 0}
    for (kind, session, _), (_, stored_kind, stored_session, number) in zip(run, rows, strict=True):
        assert (KINDS[kind], session) == (stored_kind, stored_session)
        if kind == "init":
            prompts[session] += 1
        assert number == prompts[session], (kind, session, rows)
