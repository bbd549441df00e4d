"""Both spellings of the platform filter (``platform_source``, ``platformSource``) on every route.

Found in review: the routes took ``platform_source or platformSource``, so a blank first
spelling dropped the filter, a second one that disagreed was ignored, and a typo in the
losing spelling was never checked. Now, as the corpus filter already did: each given spelling
is checked, a blank one counts as absent, and two that disagree are a 422 naming both.
The real service over the shared platform seed.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Service, seeded_service
from tests.platform_seed import seed

ROUTES = [
    "/api/observations?format=json",
    "/api/search?format=json",
    "/api/context/inject?projects=shop",
    "/api/stats/types?project=shop",
]


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir: Path = tmp_path_factory.mktemp("platform-spellings") / "data"
    data_dir.mkdir()
    with seeded_service(data_dir, seed, WORKBENCH_EMBEDDER="none") as service:
        yield service


@pytest.mark.parametrize("route", ROUTES)
def test_two_spellings_that_disagree_are_a_422_naming_both(seeded: Service, route: str) -> None:
    status, body = seeded.get(f"{route}&platform_source=cursor&platformSource=gemini-cli")
    assert status == 422, body
    assert "platform_source" in body["message"]
    assert "platformSource" in body["message"]


@pytest.mark.parametrize("route", ROUTES)
def test_an_unknown_value_in_either_spelling_is_refused(seeded: Service, route: str) -> None:
    status, body = seeded.get(f"{route}&platform_source=cursor&platformSource=bogus")
    assert status == 422, body
    assert body["error"] == "UNKNOWN_PLATFORM"


@pytest.mark.parametrize("route", ROUTES)
def test_a_blank_spelling_does_not_drop_the_other(seeded: Service, route: str) -> None:
    one = seeded.get(f"{route}&platformSource=gemini-cli")
    both = seeded.get(f"{route}&platform_source=%20&platformSource=gemini-cli")
    unfiltered = seeded.get(route)
    assert one[0] == both[0] == 200
    assert both[1] == one[1]
    assert one[1] != unfiltered[1]  # the filter does filter


@pytest.mark.parametrize("route", ROUTES)
def test_the_same_value_in_both_spellings_is_fine(seeded: Service, route: str) -> None:
    status, _ = seeded.get(f"{route}&platform_source=cursor&platformSource=cursor")
    assert status == 200
