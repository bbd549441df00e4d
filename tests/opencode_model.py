"""The model the real OpenCode talks to in ``tests/test_real_opencode.py``: rules, not a queue.

OpenCode 1.18.33 reaches Anthropic through ``provider.anthropic.options.baseURL`` (the AI
SDK's ``@ai-sdk/anthropic``, bundled in its binary: nothing is downloaded), so the model is
``tests/fake_anthropic.py``'s server, streaming SSE, answering each request by what it asks
rather than by its place in a queue: OpenCode sends side requests (a session title, from its
``title`` agent, with no tools) next to the agent's own, in no fixed order.

The rules, from the request body:
- no ``tools``: a side request (the title); answered with ``TITLE``;
- otherwise the user's prompt names a play (``plays``: a keyword -> the tool calls to make,
  in order, each a tool and its input); the ``tool_result`` blocks already in the request say
  how many were made: the next one is answered as a ``tool_use`` when the request lists its
  tool, else with a text saying the tool is missing (the tests then fail on what the model
  was offered, not on a hang); once all were made (or for no play), ``REPLY``.
"""

from __future__ import annotations

import time
from typing import Any

from tests.fake_anthropic import (
    FakeAnthropic,
    RecordedRequest,
    message_body,
    tool_names,
    tool_results,
)
from tests.fake_http import Scripted

TITLE = "Refresh token notes"
REPLY = "Done: the refresh token lives 14 days."
Call = tuple[str, dict[str, Any]]  # a tool the model calls and its input


class OpenCodeModel(FakeAnthropic):
    """The fake Anthropic server, answering by the rules above; ``plays`` by prompt keyword."""

    name = "fake Anthropic for OpenCode"

    def __init__(self, plays: dict[str, list[Call]]) -> None:
        super().__init__()
        self.plays = plays
        self.arrived: list[float] = []  # time.monotonic() of each request, as ``requests``

    def _answer(self, request: RecordedRequest) -> Scripted:
        with self._lock:
            self.requests.append(request)
            self.arrived.append(time.monotonic())
            number = len(self.requests)
        model = request.body.get("model") if isinstance(request.body, dict) else None
        fields: dict[str, Any] = {"model": model or "claude-haiku-4-5"}
        fields["message_id"] = f"msg_fake_{number}"
        return Scripted(200, self._reply(request, number, fields))

    def _reply(self, request: RecordedRequest, number: int, fields: dict[str, Any]) -> Any:
        offered = tool_names(request)
        if not offered:
            return message_body([{"type": "text", "text": TITLE}], **fields)
        for keyword, calls in self.plays.items():
            made = len(tool_results(request))
            if keyword not in request.user_text or made >= len(calls):
                continue
            tool, args = calls[made]
            if tool not in offered:
                missing = f"The tool {tool} is not offered."
                return message_body([{"type": "text", "text": missing}], **fields)
            call = {"type": "tool_use", "id": f"toolu_fake_{number}", "name": tool, "input": args}
            return message_body([call], stop_reason="tool_use", **fields)
        return message_body([{"type": "text", "text": REPLY}], **fields)

    def asked(self, keyword: str) -> list[RecordedRequest]:
        """The agent's own requests (they offer tools) of the session whose prompt has it."""
        return [r for r in self.requests if tool_names(r) and keyword in r.user_text]
