"""`make test` runs on parallel pytest-xdist workers (issue 23): what keeps them apart.

A service's port is chosen by ``free_port`` and bound only after the service's imports; two
workers choosing in that gap must never be handed the same port, so each worker draws from its
own share. The share is read from the variables xdist sets in every worker.
"""

from __future__ import annotations

import pytest

from tests.conftest import free_port

WORKERS = 4


def test_each_worker_takes_ports_only_from_its_own_share(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_XDIST_WORKER_COUNT", str(WORKERS))
    drawn: dict[int, set[int]] = {}
    for worker in range(WORKERS):
        monkeypatch.setenv("PYTEST_XDIST_WORKER", f"gw{worker}")
        drawn[worker] = {free_port() for _ in range(40)}
    for worker, ports in drawn.items():
        assert {(port >> 1) % WORKERS for port in ports} == {worker}
    everyone = [port for ports in drawn.values() for port in ports]
    assert len(everyone) == len(set(everyone))


def test_one_process_alone_takes_any_free_port(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYTEST_XDIST_WORKER", raising=False)
    monkeypatch.delenv("PYTEST_XDIST_WORKER_COUNT", raising=False)
    assert len({(free_port() >> 1) % WORKERS for _ in range(200)}) > 1
