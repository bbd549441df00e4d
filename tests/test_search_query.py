"""``SearchQuery`` / ``CorpusFilter``: one spelling per field, its rules and its messages."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.errors import InvalidInput
from workbench.knowledge.corpus_filter import CorpusFilter, parse_filter
from workbench.recall.search_query import (
    LEGACY_NAMES,
    RecallFilter,
    SearchQuery,
    SpellingConflict,
)


def test_defaults_are_an_unfiltered_first_page() -> None:
    q = SearchQuery()
    assert (q.mode, q.order_by, q.limit, q.offset, q.team) == ("hybrid", "relevance", 20, 0, False)
    assert q.filters().is_empty()
    assert q.wire() == {}
    assert q.deprecations() == []


def test_values_are_normalised_once() -> None:
    q = SearchQuery.parse(
        {
            "query": "  refund  ",
            "types": "BugFix, feature,bugfix",
            "kinds": ["obs", "prompts"],
            "files": "./src/a.py,src/b",
            "mode": "FTS",
            "since": "2026-11-01",
            "until": "2026-11-30",
        }
    )
    assert q.query == "refund"
    assert q.types == ["bugfix", "feature"]
    assert q.kinds == ["observations", "prompts"]
    assert q.files == ["src/a.py", "src/b"]
    assert q.mode == "fts"
    flt = q.filters()
    assert flt.obs_types == ["bugfix", "feature"]
    assert flt.date_end - flt.date_start == 30 * 86_400_000 - 1  # until is the whole day
    assert q.wire()["types"] == "bugfix,feature"


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"types": "bugfix,nope"}, ["types 'nope' is not an observation type", "allowed"]),
        ({"kinds": "events"}, ["kinds 'events' is not a search type"]),
        ({"since": "soon"}, ["since='soon' is not an ISO date"]),
        ({"since": "2026-12-02", "until": "2026-12-01"}, ["since is after until"]),
        ({"mode": "magic"}, ["mode='magic' is not allowed", "hybrid | fts | vector"]),
        ({"order_by": "newest"}, ["order_by='newest' is not allowed"]),
        ({"platform_source": "gemini"}, ["platform_source='gemini' is not a known platform"]),
        ({"limit": 0}, ["limit"]),
        ({"offset": -1}, ["offset"]),
        ({"projet": "x"}, ["unknown parameter 'projet'", "project"]),
        ({"project": 7}, ["project must be text"]),
    ],
)
def test_bad_values_name_the_field_and_the_rule(data: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(InvalidInput) as caught:
        SearchQuery.parse(data)
    for word in words:
        assert word in caught.value.message


@pytest.mark.parametrize(("old", "new"), sorted(LEGACY_NAMES.items()))
def test_every_old_spelling_maps_to_its_field_with_a_notice(old: str, new: str) -> None:
    value = {
        "types": "bugfix",
        "kinds": "prompts",
        "since": "2026-11-01",
        "until": "2026-11-30",
        "platform_source": "cursor",
        "order_by": "date_desc",
    }[new]
    old_way = SearchQuery.parse({"query": "x", old: value})
    new_way = SearchQuery.parse({"query": "x", new: value})
    assert old_way.model_dump() == new_way.model_dump()
    assert old_way.renamed == (old,)
    assert old_way.deprecations() == [
        f"{old} is deprecated, use {new} (it goes away in the next release)"
    ]
    assert new_way.deprecations() == []


def test_both_spellings_with_different_values_are_a_422_naming_both() -> None:
    with pytest.raises(SpellingConflict) as caught:
        SearchQuery.parse({"obs_type": "bugfix", "types": "feature"})
    assert caught.value.status_code == 422
    assert "obs_type='bugfix'" in caught.value.message
    assert "types='feature'" in caught.value.message
    same = SearchQuery.parse({"obs_type": "bugfix", "types": "bugfix"})
    assert same.types == ["bugfix"]
    assert same.renamed == ("obs_type",)


def test_an_error_about_an_old_spelling_names_what_was_sent() -> None:
    with pytest.raises(InvalidInput) as caught:
        SearchQuery.parse({"dateStart": "soon"})
    assert "dateStart='soon'" in caught.value.message


def test_the_corpus_filter_is_built_on_the_same_fields() -> None:
    shared = set(RecallFilter.model_fields)
    assert shared <= set(SearchQuery.model_fields)
    assert set(CorpusFilter.model_fields) == shared | {"limit"}
    flt = parse_filter({"types": "bugfix", "since": "2026-11-01", "platform_source": "cursor"})
    assert (
        flt.filters()
        == SearchQuery.parse(
            {"types": "bugfix", "since": "2026-11-01", "platform_source": "cursor"}
        ).filters()
    )
    assert flt.limit == 500


def test_a_stored_corpus_filter_in_the_old_form_still_loads() -> None:
    stored = {
        "project": "api",
        "types": ["bugfix"],
        "dateStart": "2026-11-01",
        "dateEnd": None,
        "platformSource": None,
        "limit": 50,
        "team": False,
    }
    flt = CorpusFilter.model_validate(stored)
    assert (flt.since, flt.limit) == ("2026-11-01", 50)
    assert "dateStart" not in flt.model_dump()
    assert flt.deprecations() == [
        "dateStart is deprecated, use since (it goes away in the next release)",
        "dateEnd is deprecated, use until (it goes away in the next release)",
        "platformSource is deprecated, use platform_source (it goes away in the next release)",
    ]


def test_the_corpus_filter_refuses_search_only_fields() -> None:
    with pytest.raises(InvalidInput, match="unknown corpus filter 'offset'"):
        parse_filter({"offset": 5})
