"""The MCP ``search`` tool's ``platformSource`` filter, through the real client and service."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession

from tests.conftest import Service, seeded_service
from tests.relevance_set import OBSERVATIONS, SESSIONS, seed
from tests.test_mcp import params, run_session, text_of

pytestmark = pytest.mark.slow


@pytest.fixture
def seeded(data_dir: Path) -> Any:
    with seeded_service(data_dir, seed) as service:
        yield service


def test_search_keeps_only_the_platforms_observations(seeded: Service) -> None:
    base = {"dateStart": "2026-11-01", "type": "observations", "limit": 100, "mode": "fts"}

    async def script(session: ClientSession) -> tuple[str, str]:
        every = await session.call_tool("search", base)
        only = await session.call_tool("search", {**base, "platformSource": "cursor"})
        return text_of(every), text_of(only)

    server = params(seeded.data_dir, seeded.port)
    every, only = run_session(server, script, seeded.data_dir.parent / "mcp-stderr.log")
    cursor_titles = {o.title for o in OBSERVATIONS if SESSIONS[o.session][1] == "cursor"}
    listed = [line for line in only.splitlines() if re.match(r"#\d+\s", line)]
    assert listed, only
    assert all(any(title in line for title in cursor_titles) for line in listed), only
    assert len(listed) < len([ln for ln in every.splitlines() if re.match(r"#\d+\s", ln)])
