"""The SessionStart context filtered by agent platform: ``/api/context/inject?platform_source=``.

By default the context of a project holds every platform's memories (memory is shared across
agents: what Gemini CLI learnt yesterday is what Claude Code should know today); a
``platform_source`` keeps only that platform's observations and summaries, and a platform no
adapter sends is a 422 that lists the known ones.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Service, seeded_service
from tests.platform_seed import TITLES, seed
from workbench.platforms import PLATFORM_SOURCES

SHOP = ("shop-claude", "shop-gemini", "shop-codex")


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir: Path = tmp_path_factory.mktemp("context-platform") / "data"
    data_dir.mkdir()
    with seeded_service(data_dir, seed, WORKBENCH_EMBEDDER="none") as service:
        yield service


def inject(service: Service, query: str) -> str:
    status, body = service.get(f"/api/context/inject?projects=shop{query}")
    assert status == 200, body
    assert isinstance(body, str)
    return body


def test_the_default_context_holds_every_platform_of_the_project(seeded: Service) -> None:
    block = inject(seeded, "")
    assert all(TITLES[sid] in block for sid in SHOP)
    assert "learned by gemini-cli" in block
    assert "learned by claude-code" in block
    assert TITLES["blog-gemini"] not in block


@pytest.mark.parametrize("param", ["platform_source", "platformSource"])
def test_a_platform_keeps_only_its_observations_and_summaries(seeded: Service, param: str) -> None:
    block = inject(seeded, f"&{param}=gemini-cli")
    assert TITLES["shop-gemini"] in block
    assert TITLES["shop-claude"] not in block
    assert TITLES["shop-codex"] not in block
    assert "learned by gemini-cli" in block
    assert "learned by claude-code" not in block
    assert "learned by codex-cli" not in block
    assert TITLES["blog-gemini"] not in block  # still only the project asked for


def test_a_platform_with_no_memories_in_the_project_gets_the_welcome(seeded: Service) -> None:
    status, body = seeded.get("/api/context/inject?projects=blog&platform_source=codex-cli")
    assert status == 200, body
    assert "No memories of this project yet" in body
    assert TITLES["blog-gemini"] not in body


@pytest.mark.parametrize("value", ["gemini", "Claude-Code", "cursor-ide", "x" * 100])
def test_an_unknown_platform_is_a_422_listing_the_known_ones(seeded: Service, value: str) -> None:
    status, body = seeded.get(f"/api/context/inject?projects=shop&platform_source={value}")
    assert status == 422, body
    assert body["error"] == "UNKNOWN_PLATFORM"
    assert "platform_source" in body["message"]
    assert all(name in body["message"] for name in PLATFORM_SOURCES)
    assert body["known"] == list(PLATFORM_SOURCES)
