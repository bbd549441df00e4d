"""The Claude compressor: one Messages API call per tool call or summary, XML replies parsed.

Why these choices:
- ``anthropic`` is imported lazily (inside functions): it costs about a second to import, and
  hooks, the CLI's ``--help`` and the offline path must not pay for it.
- The client is built with ``max_retries=0``: the worker owns retries and backs off between
  them, so the SDK retrying too would multiply waits and hide failures from the queue.
- Errors become ``CompressionError`` with ``retryable`` and ``kind`` set once
  (``workbench.provider_errors``, shared with the OpenAI-compatible compressor): rate limits,
  overload, 5xx and network problems are retryable; a bad key, missing permission, no credit
  and other 4xx are not, and their message says how to fix it.
- Prompts, reply parsing and file filling are shared with every model provider
  (``workbench.compress.llm``).
- ``discovery_tokens`` is what the call cost: input + output + cache write + cache read tokens.
"""

from __future__ import annotations

from typing import Any

from workbench.anthropic_api import build_client
from workbench.compress.llm import LlmCompressor
from workbench.errors import CompressionError
from workbench.provider_errors import ProviderText, to_compression_error
from workbench.settings import Settings

_KEY_FIX = (
    "Set a valid key in ANTHROPIC_API_KEY (or WORKBENCH_ANTHROPIC_API_KEY) and restart the "
    "service, or set WORKBENCH_COMPRESSOR=offline; queued events are kept and will be "
    "compressed once the key works."
)
CLAUDE_TEXT = ProviderText(
    label="the Anthropic API",
    key_fix=_KEY_FIX,
    model_setting="WORKBENCH_MODEL",
    billing_fix=(
        "Add credit or raise the spend limit at https://console.anthropic.com/settings/billing, "
        "or set WORKBENCH_COMPRESSOR=offline"
    ),
    endpoint_setting="WORKBENCH_ANTHROPIC_BASE_URL",
)


class ClaudeCompressor(LlmCompressor):
    """Observations and summaries written by Claude through the Messages API."""

    name = "claude"

    @classmethod
    def from_settings(cls, settings: Settings) -> ClaudeCompressor:
        """A compressor for ``settings``; raises ``CompressionError`` when no key is set."""
        key = settings.api_key()
        if not key:
            why = settings.provider_problem("claude") or "no Anthropic API key"
            raise CompressionError(
                f"the claude compressor cannot run ({why}). {_KEY_FIX}",
                retryable=False,
                kind="auth",
            )
        return cls(build_client(settings, max_retries=0), settings.model)

    def _ask(self, system: str, user: str, max_tokens: int) -> tuple[str, int]:
        """(reply text, tokens used) for one request; API errors become ``CompressionError``."""
        import anthropic

        try:
            message = self.client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                system=system,
                messages=[{"role": "user", "content": user}],
            )
        except anthropic.AnthropicError as exc:
            raise classify_error(exc, self.model) from exc
        content = getattr(message, "content", None)
        if not isinstance(content, list):
            # A 200 the SDK could not read as a message (a proxy's page, truncated JSON): not
            # the model saying "nothing worth keeping", so retry rather than store nothing.
            raise CompressionError(
                f"the Anthropic API answered without a message ({str(message)[:200]!r}); "
                "will retry later.",
                retryable=True,
                kind="transient",
            )
        text = "".join(
            getattr(block, "text", "") or ""
            for block in content
            if getattr(block, "type", "") == "text"
        )
        return text, usage_tokens(getattr(message, "usage", None))


def usage_tokens(usage: Any) -> int:
    """input + output + cache creation + cache read tokens (missing counts are 0)."""
    if usage is None:
        return 0
    fields = (
        "input_tokens",
        "output_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    )
    return sum(value for name in fields if isinstance(value := getattr(usage, name, 0), int))


def classify_error(exc: Exception, model: str) -> CompressionError:
    """The ``CompressionError`` for an ``anthropic`` exception, worded for Anthropic."""
    return to_compression_error(exc, CLAUDE_TEXT, model)
