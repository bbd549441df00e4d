"""The one place that builds an ``anthropic`` client and says what its errors mean.

Shared by the Claude compressor (``compress/claude.py``) and the knowledge agent
(``knowledge/agent_claude.py``). Both need the same answer to "what went wrong?" (a bad key, no
credit, a rate limit, an overload, a request the API refused…), but they give different
advice: the compressor's worker retries later and keeps the queued event, while the agent
answers a person who is waiting. So ``classify`` returns a neutral ``ApiProblem`` and each
caller words its own message from it. The classification itself lives in
``workbench.provider_errors`` (shared with the OpenAI-compatible compressor).

``anthropic`` is imported inside the functions: it costs about a second to import, and hooks,
``workbench --help`` and the offline paths must not pay for it.
"""

from __future__ import annotations

from typing import Any

# What an exception means is decided once, for every provider SDK (provider_errors.py).
from workbench.provider_errors import ApiProblem, Reason, classify
from workbench.settings import Settings

__all__ = ["ApiProblem", "Reason", "build_client", "classify"]


def build_client(settings: Settings, *, max_retries: int) -> Any:
    """An ``anthropic.Anthropic`` for ``settings`` (key, base URL, timeout).

    ``max_retries`` is the caller's choice: the compressor's worker owns its retries (0), the
    interactive agent lets the SDK retry a rate limit or an overload a few times.
    Call only when ``settings.api_key()`` is set.
    """
    import anthropic

    return anthropic.Anthropic(
        api_key=settings.api_key(),
        base_url=settings.anthropic_endpoint()[0],
        max_retries=max_retries,
        timeout=settings.llm_timeout_s,
    )
