"""``search --team``: local hits and the team mirror's, fused by rank, paged as one list.

- **Where the team half comes from.** The team mirror (``team/mirror.py``), refreshed to the
  lake's newest snapshot first (a few ms when nothing changed, plus opening the lake), then
  BM25 over its FTS index under the same ``SearchFilters`` as local search. The lake is asked
  for a newer snapshot only when the mirror last heard from it over ``team_mirror_max_age_s``
  ago (30 s by default: opening the lake is most of a team search's cost). When the lake
  cannot be reached the last mirror answers and the reply says so (``teamStale``);
  ``teamSnapshot`` is always the snapshot the team hits come from.
- **Fusion.** The two lists' scores are not comparable, their ranks are: reciprocal rank
  (``recall.fusion.rrf``). Local wins on duplicates (``read.drop_local_duplicates``).
- **Paging.** ``offset`` pages through the *fused* list: both lists are read from their top
  to ``offset + limit`` (the local one in pages of at most ``MAX_LIMIT``), fused, and the
  page cut from the result, so page 2 continues page 1 whatever mix of local and team hits
  it holds. Sessions and prompts stay local and are paged as locally.
- **Citable ids.** A colleague's hit carries ``ref``: ``team:<author>:<their local id>``
  (``team/refs.py``), which ``workbench show``, the MCP ``get_observations`` tool and
  ``GET /api/team/observation/{ref}`` resolve; its ``id`` is *their* number, not yours.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from workbench.team import mirror, mirror_read
from workbench.team.read import ME, drop_local_duplicates, index_line, team_hit

if TYPE_CHECKING:
    from workbench.settings import Settings

LocalPage = Callable[[int, int], dict[str, Any]]  # (limit, offset) -> SearchResult.to_json()
PAGE = 100  # recall.search.MAX_LIMIT: the most one local search returns


def local_prefix(local_page: LocalPage, limit: int, offset: int) -> dict[str, Any]:
    """The local answer for the page asked, its ``observations`` the top ``offset + limit``."""
    need = offset + limit
    if need <= PAGE:
        first = local_page(need, 0)
        answer = dict(first)
        for key in ("sessions", "prompts"):
            answer[key] = (first.get(key) or [])[offset:need]
        return answer
    answer = dict(local_page(limit, offset))
    own: list[dict[str, Any]] = []
    for start in range(0, need, PAGE):
        page = local_page(min(PAGE, need - start), start).get("observations") or []
        own += page
        if len(page) < min(PAGE, need - start):
            break
    answer["observations"] = own
    return answer


def merge_search(
    local: dict[str, Any],
    team_rows: list[dict[str, Any]],
    *,
    limit: int,
    offset: int = 0,
    freshness: mirror.Freshness,
) -> dict[str, Any]:
    """``local`` (observations from the top) with the team's fused in; the page at ``offset``.

    Local hits get ``author: "me"``; team hits their author and ``ref``.
    """
    from workbench.recall.fusion import rrf

    own = [dict(h, author=ME) for h in local.get("observations") or []]
    team = [team_hit(r) for r in team_rows]
    for rank, hit in enumerate(team, start=1):
        hit["ranks"] = {"team": rank}
    pool = own + team
    order = [i for i, _ in rrf([("local", range(len(own))), ("team", range(len(own), len(pool)))])]
    page = [pool[i] for i in order][offset : offset + limit]
    merged = dict(local)
    merged["observations"] = page
    for key in ("sessions", "prompts"):
        merged[key] = [dict(h, author=ME) for h in local.get(key) or []]
    merged["totalResults"] = int(local.get("totalResults") or 0) + len(team)
    merged["teamSnapshot"] = freshness.snapshot
    merged["teamResults"] = sum(1 for h in page if "ref" in h)
    merged["offset"] = offset
    if freshness.stale:
        merged["teamStale"] = (
            f"the team lake could not be read ({freshness.stale}); team hits are from the "
            f"local mirror at snapshot {freshness.snapshot}"
        )
    return merged


def with_team_search(
    settings: Settings,
    local_page: LocalPage,
    *,
    query: str | None,
    filters: Any,
    types: str | list[str] | None,
    limit: int,
    offset: int = 0,
) -> dict[str, Any]:
    """One page of the fused (local + team) search. Shared by the CLI and ``/api/search``.

    The team half is observations only, under the same ``filters`` (a ``SearchFilters``);
    prompts never leave a machine.
    """
    wanted = ",".join(types) if isinstance(types, list) else types or ""
    freshness = mirror.refresh(settings, max_age_s=settings.team_mirror_max_age_s)
    local = local_prefix(local_page, limit, offset)
    rows: list[dict[str, Any]] = []
    if not wanted or "observation" in wanted.lower():
        rows = _team_rows(settings, query, filters, offset + limit)
    return merge_search(local, rows, limit=limit, offset=offset, freshness=freshness)


def _team_rows(
    settings: Settings, query: str | None, filters: Any, wanted: int
) -> list[dict[str, Any]]:
    """The team list's top ``wanted`` rows after local-wins drops this store's own rows.

    Why read deeper until that many are kept (or the mirror has no more): your own published
    rows may fill any fixed depth, and a page fused from fewer than ``offset + limit`` team
    rows differs from the next page's cut, so pages repeated and skipped hits. With at least
    ``wanted`` kept, every page is cut from the same list: the rows kept from the top k are a
    prefix of those kept from the top k' > k.
    """
    depth = 2 * wanted
    while True:
        read = mirror_read.read_search(settings, query, filters, limit=depth)
        rows = drop_local_duplicates(read, settings.team_author_id(), settings.db_path)
        if len(rows) >= wanted or len(read) < depth:
            return rows
        depth *= 4


def search_text(data: dict[str, Any]) -> str:
    """A team search as the compact text index: a colleague's hit is its ``team:author:id``
    ref and ends with ``@author``; a ``#id`` is yours."""
    what = f'"{data["query"]}"' if data.get("query") else "(filters only)"
    lines = [
        f"workbench search {what} with the team (snapshot {data['teamSnapshot']}): "
        f"{len(data['observations'])} observations, {data['teamResults']} from colleagues "
        "(@author; times UTC)"
    ]
    if data.get("teamStale"):
        lines.append(data["teamStale"])
    for key, heading in (
        ("observations", "Observations"),
        ("sessions", "Session summaries"),
        ("prompts", "Prompts"),
    ):
        if data.get(key):
            lines += ["", f"{heading}:"] + [index_line(h) for h in data[key]]
    if not any(data.get(k) for k in ("observations", "sessions", "prompts")):
        lines.append("No matches. Try other or fewer words, or fewer filters.")
    lines += [
        "",
        "A colleague's observation is cited by its ref (team:author:id): get_observations, "
        "`workbench show` and /api/team/observation/{ref} take it; a #id is yours.",
    ]
    return "\n".join(lines) + "\n"
