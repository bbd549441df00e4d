"""The offline compressor's summary (``compress/digest.py``): a digest of one prompt's
observations and the last assistant message.
"""

from __future__ import annotations

import math

from tests.offline_events import ANTHROPIC_KEY, CWD, PYTEST_FAILING, bash, event, one
from workbench.compress.offline import OfflineCompressor
from workbench.models import Observation, ObservationDraft, SummaryRequest


# ----- summarize -----------------------------------------------------------------------------
def stored(draft: ObservationDraft, ident: int, prompt_number: int = 1) -> Observation:
    fields = {k: v for k, v in draft.model_dump().items() if k in ObservationDraft.model_fields}
    return Observation(
        **fields,
        id=ident,
        content_session_id="sess-1",
        project="proj",
        prompt_number=prompt_number,
        created_at="2026-01-01T00:00:00Z",
        created_at_epoch=1_767_225_600 + ident,
        content_hash=f"h{ident}",
    )


def session_observations() -> list[Observation]:
    compressor = OfflineCompressor()
    events = [
        event("Read", {"file_path": f"{CWD}/workbench/store/queue.py"}, "def claim():\n    pass\n"),
        bash("pytest -q", PYTEST_FAILING),
        event(
            "Edit",
            {
                "file_path": f"{CWD}/workbench/store/queue.py",
                "old_string": "return 1",
                "new_string": "return limit",
            },
            None,
        ),
        bash("pytest -q", "44 passed in 2s"),
        bash(
            'git commit -m "Fix claim"',
            "[main 1234567] Fix claim\n 1 file changed, 1 insertion(+)\n",
        ),
    ]
    drafts = [compressor.observe(e).observations[0] for e in events]
    return [stored(d, i + 1) for i, d in enumerate(drafts)]


LAST_MESSAGE = """Fixed the claim race in the queue. Claims now lock the row before reading it.
All 44 tests pass.

Next steps:
- add a stress test with two workers
- document the lock in ARCHITECTURE.md

TODO: benchmark claim latency."""


def test_summarize_builds_a_digest_from_the_prompts_observations() -> None:
    observations = session_observations()
    other_prompt = stored(
        observations[0].model_copy(update={"title": "Read other.py"}), 99, prompt_number=2
    )
    request = SummaryRequest(
        content_session_id="sess-1",
        project="proj",
        prompt_number=1,
        user_prompt="  Fix the race in queue.claim   \n",
        last_assistant_message=LAST_MESSAGE,
        observations=[*reversed(observations), other_prompt],
    )
    result = OfflineCompressor().summarize(request)
    summary = result.summary
    assert summary is not None
    assert result.generated_by == "offline"
    assert summary.request == "Fix the race in queue.claim"
    assert summary.investigated == "Read workbench/store/queue.py"
    assert "Read other.py" not in summary.investigated  # another prompt's observation
    assert "Edited workbench/store/queue.py" in summary.completed
    assert "Committed: Fix claim" in summary.completed
    assert "Tests pass again: `pytest -q`" in summary.completed
    assert "Tests failing" not in summary.completed
    assert summary.learned.startswith("Fixed the claim race in the queue. Claims now lock the row")
    assert "first error: assert 2 == 1" in summary.learned
    assert summary.next_steps == (
        "add a stress test with two workers; document the lock in ARCHITECTURE.md; "
        "TODO: benchmark claim latency."
    )
    assert summary.files_read == ["workbench/store/queue.py"]
    assert summary.files_edited == ["workbench/store/queue.py"]
    assert result.discovery_tokens == math.ceil((len(request.user_prompt) + len(LAST_MESSAGE)) / 4)


def test_summarize_is_deterministic_and_handles_an_empty_prompt() -> None:
    request = SummaryRequest(
        content_session_id="s",
        project="p",
        prompt_number=1,
        user_prompt="hi",
        observations=session_observations(),
    )
    assert OfflineCompressor().summarize(request) == OfflineCompressor().summarize(request)
    empty = OfflineCompressor().summarize(
        SummaryRequest(content_session_id="s", project="p", prompt_number=3)
    )
    assert empty.summary is not None
    assert empty.summary.next_steps == ""
    assert empty.summary.completed == ""
    assert empty.discovery_tokens == 0


def test_summarize_puts_security_observations_in_notes() -> None:
    alert = one(bash("cat .env", f"KEY={ANTHROPIC_KEY}"))
    request = SummaryRequest(
        content_session_id="s", project="p", prompt_number=1, observations=[stored(alert, 1)]
    )
    summary = OfflineCompressor().summarize(request).summary
    assert summary is not None
    assert summary.notes == "Secret-looking value in output of `cat .env`"
