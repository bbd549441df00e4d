"""Realistic Claude Code tool events for the offline compressor tests (test_compress_offline*).

``event`` builds any tool call, ``bash`` a Bash call, ``one`` asserts the call gave exactly one
observation and returns it; ``PYTEST_FAILING`` is a real failing pytest run's output.
"""

from __future__ import annotations

import json
from typing import Any

from workbench.compress.offline import OfflineCompressor
from workbench.models import ObservationDraft, ToolEvent

CWD = "/home/dev/proj"
ANTHROPIC_KEY = "sk-ant-api03-" + "Zx9" * 12

PYTEST_FAILING = """============================= test session starts ==============================
platform linux -- Python 3.11.7, pytest-9.2.0, pluggy-1.6.0
rootdir: /home/dev/proj
collected 44 items

tests/test_queue.py ..F.......                                          [ 22%]
tests/test_store.py ....F...F.................                          [100%]

=================================== FAILURES ===================================
___________________________ test_claim_is_exclusive ____________________________

    def test_claim_is_exclusive(store):
>       assert store.claim() == 1
E       assert 2 == 1
E        +  where 2 = <bound method Queue.claim of <Queue>>()

tests/test_queue.py:31: AssertionError
=========================== short test summary info ============================
FAILED tests/test_queue.py::test_claim_is_exclusive - assert 2 == 1
FAILED tests/test_store.py::test_atomic - sqlite3.OperationalError: database is locked
FAILED tests/test_store.py::test_fts_sync - KeyError: 'title'
========================= 3 failed, 41 passed in 2.31s =========================
"""


def event(tool: str, tool_input: Any = None, tool_response: Any = None, **kw: Any) -> ToolEvent:
    fields: dict[str, Any] = {
        "content_session_id": "sess-1",
        "project": "proj",
        "tool_name": tool,
        "tool_input": tool_input,
        "tool_response": tool_response,
        "cwd": CWD,
        "prompt_number": 1,
    }
    fields.update(kw)
    return ToolEvent(**fields)


def bash(command: str, stdout: str = "", stderr: str = "", **extra: Any) -> ToolEvent:
    response = {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False}
    response.update(extra)
    return event("Bash", {"command": command, "description": "Run it"}, response)


def one(ev: ToolEvent, compressor: OfflineCompressor | None = None) -> ObservationDraft:
    result = (compressor or OfflineCompressor()).observe(ev)
    assert len(result.observations) == 1, result
    return result.observations[0]


def dumped(draft: ObservationDraft) -> str:
    return json.dumps(draft.model_dump())
