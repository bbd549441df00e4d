"""The fallback chain: try providers in order, move on only when one fails terminally.

``compressor_chain`` (e.g. ``claude → openai_compat → offline``) is tried in order for each
event. A retryable error (rate limit, transient) is raised at once: the worker backs off and
retries the event later, from the head of the chain, as it always did. A terminal one (auth,
quota, bad request, a provider not configured) hands this event to the next provider. The
result carries the ``generated_by`` of the provider that produced it, so each observation
records who wrote it.

Providers are built lazily, on the first event that reaches them (``anthropic`` and ``openai``
cost a second to import); a provider whose settings are incomplete fails the same way every
time, so its build error is kept rather than retried per event. ``status()`` reports, per
provider, the last error's kind and message for health and ``workbench status``.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from workbench.compress.base import Compressor
from workbench.errors import CompressionError
from workbench.models import CompressionResult, SummaryRequest, ToolEvent


class ChainCompressor:
    """A ``Compressor`` over an ordered list of providers (one name: just that provider)."""

    def __init__(self, names: list[str], build: Callable[[str], Compressor]) -> None:
        if not names:
            raise ValueError("a compressor chain needs at least one provider")
        self.names = list(names)
        self._build = build
        self._built: dict[str, Compressor | CompressionError] = {}
        self._last_error: dict[str, dict[str, Any]] = {}
        self._last_ok: dict[str, float] = {}

    @property
    def name(self) -> str:
        """The single provider's name, else ``chain`` (the worker batches only ``offline``)."""
        return self.names[0] if len(self.names) == 1 else "chain"

    def observe(self, event: ToolEvent) -> CompressionResult:
        return self._run(lambda c: c.observe(event))

    def summarize(self, request: SummaryRequest) -> CompressionResult:
        return self._run(lambda c: c.summarize(request))

    def status(self) -> list[dict[str, Any]]:
        """Per provider: the last error (kind, message, when) and the last success."""
        return [
            {
                "name": name,
                "lastError": self._last_error.get(name),
                "lastOkAt": self._last_ok.get(name),
            }
            for name in self.names
        ]

    def close(self) -> None:
        for built in self._built.values():
            close = getattr(built, "close", None)
            if callable(close):
                close()

    def _run(self, call: Callable[[Compressor], CompressionResult]) -> CompressionResult:
        failures: list[tuple[str, CompressionError]] = []
        for name in self.names:
            try:
                result = call(self._provider(name))
            except CompressionError as exc:
                self._last_error[name] = {
                    "kind": exc.kind,
                    "message": exc.message,
                    "at": round(time.time(), 3),
                }
                if exc.retryable:
                    raise  # the worker backs off and retries the whole chain later
                failures.append((name, exc))
                continue
            self._last_ok[name] = round(time.time(), 3)
            return result
        if len(failures) == 1:
            raise failures[0][1]
        last = failures[-1][1]
        raise CompressionError(
            "every compressor in the chain failed: "
            + "; ".join(f"{name}: {exc.kind}: {exc.message}" for name, exc in failures)
            + " Add offline at the end of WORKBENCH_COMPRESSOR_CHAIN to always keep something.",
            retryable=False,
            kind=last.kind,
        )

    def _provider(self, name: str) -> Compressor:
        built = self._built.get(name)
        if built is None:
            try:
                built = self._build(name)
            except CompressionError as exc:
                built = exc
            self._built[name] = built
        if isinstance(built, CompressionError):
            # A fresh error each time: re-raising the cached one would grow its traceback by
            # every call's frames (and keep the events they hold) for as long as the service runs.
            raise CompressionError(built.message, retryable=built.retryable, kind=built.kind)
        return built
