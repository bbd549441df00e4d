"""The background worker: claim → compress → store → ack, one event at a time.

One thread, so events are derived in the order they arrived (a prompt's summary after its
observations). Failures never loop forever and are never dropped:
- ``CompressionError(retryable=True)`` (rate limit, overload, network) and unexpected
  exceptions back off exponentially and retry, up to ``max_attempts``;
- ``CompressionError(retryable=False)`` (bad key, no credit) first hands the event to the
  next provider of the chain (``compress/chain.py``, inside the compressor); when none is
  left it parks the event as failed with the message, which ``/api/stats`` and
  ``workbench status`` show and ``retry`` re-queues;
- a fault of the store itself (disk full, a write lock held elsewhere, the file gone) is not
  the events' fault: the whole batch goes back to pending with a backoff (attempts unchanged,
  the reason in ``last_error``), and the worker backs off too. The release is retried until it
  succeeds, so a batch is never left ``claimed`` until the next restart.

The compressor is built lazily on first use so a slow import (``anthropic``) never delays the
service's start, and rebuilt when settings change it.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any

from workbench.compress.base import Compressor
from workbench.derive import Derived, compress_event, store_result
from workbench.errors import CompressionError
from workbench.models import CompressionResult
from workbench.settings import Settings
from workbench.store import events
from workbench.store.connection import atomic, is_store_fault
from workbench.store.database import Store
from workbench.store.events import EventRow

log = logging.getLogger("workbench.worker")


class Worker(threading.Thread):
    def __init__(
        self,
        store: Store,
        settings: Settings,
        compressor_factory: Callable[[], Compressor],
    ) -> None:
        super().__init__(name="workbench-worker", daemon=True)
        self.store = store
        self.settings = settings
        self._factory = compressor_factory
        self._compressor: Compressor | None = None
        self._wake = threading.Event()
        # Not ``_stop``: that name is a method threading.Thread.join() calls internally.
        self._stopping = threading.Event()
        # Called after each event's results are committed (live feed, embedding, …).
        self.listeners: list[Callable[[EventRow, Derived], None]] = []
        self.processed = 0
        self.last_error: str | None = None
        # 16 keeps one batch's write transaction to a few ms: a hook's request waiting on
        # the write lock must never notice the worker.
        self.batch_size = 16
        self._last_ingest = 0.0
        # Consecutive failed steps (for the backoff), and the reason of the last one while
        # events it had claimed are still waiting to be released.
        self._failures = 0
        self._orphaned: str | None = None

    @property
    def compressor(self) -> Compressor:
        if self._compressor is None:
            self._compressor = self._factory()
        return self._compressor

    def compressor_status(self) -> list[dict[str, Any]]:
        """Per provider of the chain, its last error (empty until the compressor is built)."""
        status = getattr(self._compressor, "status", None)
        return status() if callable(status) else []

    def notify(self) -> None:
        """Wake the worker: new work was enqueued."""
        self._last_ingest = time.monotonic()
        self._wake.set()

    def ingest_busy(self, window_s: float = 0.25) -> bool:
        """True when an event was enqueued in the last ``window_s`` (a burst is under way)."""
        return time.monotonic() - self._last_ingest < window_s

    def _yield_to_ingest(self) -> None:
        """Let a burst of hook requests finish before compressing, for at most 250 ms.

        Trigger: an event was enqueued in the last 2 ms. Why: the worker shares the GIL and
        the write lock with the request loop, and a hook waiting on either is the latency the
        agent feels; compression can lag a burst by a few ms. Outcome: ingest keeps its speed
        under load, and the worker still makes progress (a batch at least every 250 ms).
        """
        deadline = time.monotonic() + 0.25
        while time.monotonic() - self._last_ingest < 0.002 and time.monotonic() < deadline:
            time.sleep(0.002)

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        self._wake.set()
        if self.is_alive():
            self.join(timeout)
        close = getattr(self._compressor, "close", None)
        if close is not None and not self.is_alive():  # its HTTP client, once nothing uses it
            close()

    def run(self) -> None:
        while not self._stopping.is_set():
            self._yield_to_ingest()
            try:
                if self._orphaned is not None:
                    self._release(self._orphaned)
                worked = self.step()
                self._failures = 0
            except Exception as exc:  # the loop must survive a broken store moment (disk full…)
                self._step_failed(exc)
                worked = False
            if not worked:
                # Sleep until woken; wake up anyway to pick up retries whose backoff expired.
                self._wake.wait(timeout=0.5)
                self._wake.clear()

    def _backoff_s(self) -> float:
        """Exponential in consecutive failures, from ``retry_base_s``, capped at 30 s."""
        base = max(0.05, self.settings.retry_base_s)
        cap = min(30.0, max(base, self.settings.retry_max_s))
        return float(min(cap, base * 2 ** min(max(self._failures, 1) - 1, 16)))

    def _step_failed(self, exc: Exception) -> None:
        """Release what the failed step had claimed (or remember to), then back off."""
        self._failures += 1
        kind = "store" if is_store_fault(exc) else "unexpected"
        reason = f"{kind}: {_describe(exc)}"
        self.last_error = reason
        if kind == "store":
            log.warning("worker step failed, claimed events go back to the queue: %s", reason)
        else:
            log.exception("worker step failed")
        self._orphaned = reason
        try:
            self._release(reason)
        except Exception as again:  # the store is still failing: retried before the next claim
            log.warning("could not release claimed events yet: %s", _describe(again))
        self._stopping.wait(self._backoff_s())

    def _release(self, reason: str) -> None:
        count = events.release_claims(self.store.conn, reason, delay_s=self._backoff_s())
        self._orphaned = None
        if count:
            log.info("released %d claimed events after a failed step", count)

    def step(self) -> bool:
        """Process one batch of ready events; False when there was nothing to do.

        Compression runs outside any transaction; the results of the whole batch are then
        stored and acked in one transaction (each event in its own savepoint, so one bad
        result cannot take the others down).
        """
        # Batches amortise the transaction cost for the fast offline compressor; a model call
        # can take seconds, so with Claude each event is claimed (and held) on its own.
        size = self.batch_size if self.compressor.name == "offline" else 1
        batch = events.claim(self.store.conn, limit=size)
        if not batch:
            return False
        done: list[tuple[EventRow, CompressionResult]] = []
        for event in batch:
            if event.kind == "summarize" and done:
                # A summary digests its prompt's stored observations, which may be earlier in
                # this very batch: store those first, or the summary would not see them.
                self._store(done)
                done = []
            try:
                done.append((event, compress_event(self.store, self.compressor, event)))
            except CompressionError as exc:
                wait = exc.details.get("retry_after_s")
                self._failed(
                    event,
                    f"{exc.kind}: {exc.message}",
                    retryable=exc.retryable,
                    min_delay_s=float(wait) if isinstance(wait, int | float) else 0.0,
                )
            except Exception as exc:  # a bug or odd payload: retry a bounded number of times
                if is_store_fault(exc):
                    raise  # not this event's fault: the batch is released (see run)
                self._failed(event, f"unexpected: {_describe(exc)}", retryable=True)
        self._store(done)
        return True

    def _store(self, done: list[tuple[EventRow, CompressionResult]]) -> None:
        """Store and ack compressed results in one transaction (a savepoint per event)."""
        stored: list[tuple[EventRow, Derived]] = []
        with atomic(self.store.conn):
            for event, result in done:
                try:
                    stored.append((event, store_result(self.store, event, result)))
                except Exception as exc:
                    if is_store_fault(exc):
                        raise  # disk full, lock, file gone: roll back; the batch is released
                    self._failed(event, f"unexpected: {_describe(exc)}", retryable=True)
        self.processed += len(stored)
        for event, derived in stored:
            for listener in self.listeners:
                try:
                    listener(event, derived)
                except Exception:  # a listener must never stop the queue from draining
                    log.exception("worker listener failed")

    def _failed(
        self, event: EventRow, reason: str, *, retryable: bool, min_delay_s: float = 0.0
    ) -> None:
        self.last_error = reason
        status = events.fail(
            self.store.conn,
            event.id,
            reason,
            retryable=retryable,
            max_attempts=self.settings.max_attempts,
            base_delay_s=self.settings.retry_base_s,
            max_delay_s=self.settings.retry_max_s,
            min_delay_s=min_delay_s,
        )
        log.warning(
            "event %s %s: %s", event.id, "parked" if status == "failed" else "will retry", reason
        )

    def drain(self, timeout: float = 30.0) -> None:
        """Process until nothing is ready (used by ``workbench demo`` and tests in-process)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.step():
            pass


def _describe(exc: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(exc), exc)).strip()
