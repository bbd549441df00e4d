"""``service.idle_trim.IdleTrim``: one heap trim per quiet spell after requests, none without
requests, and an open request (the viewer's event stream) does not hold it off. Driven on a
real event loop with a real ASGI app; the trim itself (glibc's ``malloc_trim``) is counted
instead of run, and run once for real."""

from __future__ import annotations

import asyncio
from typing import Any

from service.idle_trim import IdleTrim
from workbench.recall.heap_trim import trim_heap

IDLE = 0.05


def _app(hold: asyncio.Event | None = None) -> Any:
    async def app(scope: Any, receive: Any, send: Any) -> None:
        if hold is not None:
            await hold.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    return app


async def _request(guard: IdleTrim, scope_type: str = "http") -> None:
    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        return None

    await guard({"type": scope_type}, receive, send)


def test_a_quiet_spell_after_requests_trims_once() -> None:
    calls: list[int] = []

    async def run() -> IdleTrim:
        guard = IdleTrim(_app(), idle_s=IDLE, trim=lambda: calls.append(1))
        for _ in range(3):
            await _request(guard)
        assert calls == []  # not before the spell
        await asyncio.sleep(IDLE * 4)
        assert calls == [1]
        await asyncio.sleep(IDLE * 4)  # quiet on, no request since: no second trim
        await _request(guard)
        await asyncio.sleep(IDLE * 4)
        return guard

    guard = asyncio.run(run())
    assert calls == [1, 1]
    assert guard.trims == 2


def test_a_request_starting_restarts_the_spell_and_an_open_one_does_not_hold_it_off() -> None:
    """The viewer's event stream stays open for hours: a request in flight must not stop the
    trim for good, but its start is activity like any other."""
    calls: list[int] = []
    idle = 0.3  # wide enough that a loaded loop's late wake-ups keep the order below

    async def run() -> None:
        hold = asyncio.Event()
        guard = IdleTrim(_app(), idle_s=idle, trim=lambda: calls.append(1))
        await _request(guard)  # ends: the spell starts
        await asyncio.sleep(idle * 0.6)
        guard.app = _app(hold)
        stream = asyncio.ensure_future(_request(guard))  # starts: the spell starts again
        await asyncio.sleep(idle * 0.6)
        assert calls == []  # past the first request's deadline, not past the stream's start
        await asyncio.sleep(idle * 4)
        assert calls == [1]  # quiet since the stream started, though it is still open
        hold.set()
        await stream
        await asyncio.sleep(idle * 4)
        assert calls == [1, 1]  # its end was a request ending: one more spell, one more trim

    asyncio.run(run())


def test_other_scopes_pass_through_and_start_nothing() -> None:
    calls: list[int] = []

    async def run() -> None:
        async def lifespan(scope: Any, receive: Any, send: Any) -> None:
            return None

        guard = IdleTrim(lifespan, idle_s=IDLE, trim=lambda: calls.append(1))
        await _request(guard, "lifespan")
        await asyncio.sleep(IDLE * 4)
        assert guard.timer is None

    asyncio.run(run())
    assert calls == []


def test_the_real_trim_runs_here() -> None:
    """glibc's ``malloc_trim`` is what the service calls (this suite runs on Linux)."""
    assert trim_heap() is True


def test_the_service_app_runs_it_outside_every_guard_but_the_instance_one(tmp_path: Any) -> None:
    """Every request counts as activity, a refused one too (so it sits outside BodyLimit and
    the origin guard), and the data dir's id still goes on every reply (inside it)."""
    from service.app import create_app
    from service.instance_guard import InstanceGuard
    from service.limits import BodyLimit
    from workbench.settings import load_settings

    app = create_app(load_settings(tmp_path / "data"))
    order = [m.cls for m in app.user_middleware]  # outermost first
    assert order.index(InstanceGuard) < order.index(IdleTrim) < order.index(BodyLimit)
