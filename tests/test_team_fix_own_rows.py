"""``search --team`` and your own published rows (review of issue 12, defects 1 and 6).

- Paging: your published rows rank high in the team list and are dropped there (local wins);
  the team list is read deeper until a page's worth of colleagues' rows is kept, so pages of
  the fused list neither repeat nor skip hits.
- Forgetting: a row you forgot locally is gone from the store, so local-wins no longer hid
  its published copy in the mirror; a row of yours whose session is one of this store's is
  never a team hit (forgotten, replaced by recompress, or held locally).

Real parts: the session's PostgreSQL as the catalog, ``workbench publish`` and
``workbench search --team`` as CLI runs, forget through the library behind its route.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.team_harness import Machine, forget, init, machine, seed

pytestmark = pytest.mark.slow


def _page(ana: Machine, query: str, *args: str) -> list[dict[str, Any]]:
    out = ana.run("search", "--team", "--json", query, *args)
    assert out.returncode == 0, out.stderr + out.stdout
    hits: list[dict[str, Any]] = json.loads(out.stdout)["observations"]
    return hits


def test_pages_neither_repeat_nor_skip_when_your_own_rows_rank_first(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(ana.data_dir, "api", "a1", [f"cache note {i}" for i in range(30)])
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()  # ana's rows now rank first in the team list too
    bob = machine(tmp_path, "bob")
    wordy = "with many more words that make this row rank below the short ones"
    seed(bob.data_dir, "api", "b1", [f"cache tip {i} {wordy}" for i in range(10)])
    init(bob, team_lake, "api", author="bob")
    bob.publish_json()

    whole = [(h["author"], h["id"]) for h in _page(ana, "cache", "--limit", "40")]
    walked = [
        (h["author"], h["id"])
        for offset in (0, 10, 20, 30)
        for h in _page(ana, "cache", "--limit", "10", "--offset", str(offset))
    ]

    assert len(whole) == 40
    assert sum(1 for a, _ in whole if a == "bob") == 10
    assert walked == whole


def test_a_row_you_forgot_is_not_a_team_hit_under_your_name(team_lake: Any, tmp_path: Path) -> None:
    ana = machine(tmp_path, "ana")
    forgotten, kept = seed(ana.data_dir, "api", "a1", ["zanzibar secret", "zanzibar other"])
    init(ana, team_lake, "api", author="ana")
    ana.publish_json()
    assert len(_page(ana, "zanzibar")) == 2  # the mirror now holds both published rows

    forget(ana.data_dir, forgotten)
    hits = _page(ana, "zanzibar")

    assert [(h["author"], h["id"]) for h in hits] == [("me", kept)]
    assert all("secret" not in json.dumps(h) for h in hits)
