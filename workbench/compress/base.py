"""The ``Compressor`` protocol and the one place that picks an implementation.

A compressor is pure with respect to the store: it gets a redacted ``ToolEvent`` (or a
``SummaryRequest``) and returns drafts plus what they cost. The worker stores them and acks the
event in one transaction, so a compressor can never leave half a result behind.

Failures are raised as ``CompressionError(retryable=...)``; the worker backs off on retryable
ones and parks the event with the message otherwise.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from workbench.models import CompressionResult, SummaryRequest, ToolEvent
from workbench.settings import Settings


@runtime_checkable
class Compressor(Protocol):
    """Turns one tool call into observations and one prompt's work into a summary."""

    @property
    def name(self) -> str:
        """Which provider this is (``offline``, ``claude``…; the chain's is computed)."""
        ...

    def observe(self, event: ToolEvent) -> CompressionResult:
        """Observations for one tool call (possibly none: not every call is worth keeping)."""
        ...

    def summarize(self, request: SummaryRequest) -> CompressionResult:
        """A summary for one prompt of a session (``result.summary`` is set)."""
        ...


def build_compressor(settings: Settings, name: str | None = None) -> Compressor:
    """The compressor for ``name``, else the fallback chain from the settings.

    The chain (``settings.compressor_names()``) is wrapped in a ``ChainCompressor`` even when it
    holds one name, so health can report every provider's last error the same way.
    """
    if name is None:
        from workbench.compress.chain import ChainCompressor

        return ChainCompressor(
            settings.compressor_names(), lambda chosen: build_compressor(settings, chosen)
        )
    if name == "offline":
        from workbench.compress.offline import OfflineCompressor

        return OfflineCompressor()
    if name == "claude":
        from workbench.compress.claude import ClaudeCompressor

        return ClaudeCompressor.from_settings(settings)
    if name == "openai_compat":
        from workbench.compress.openai_compat import OpenAICompatCompressor

        return OpenAICompatCompressor.from_settings(settings)
    raise ValueError(f"unknown compressor {name!r}; use 'offline', 'claude' or 'openai_compat'")
