"""Fuzz: ``workbench search``'s fast path reads its arguments as Typer reads them, or declines.

``cli.fast_search.parse`` is a new reader of user input (issue 21). For any argument list
built from the command's own options, other options, ``=`` forms, blanks, dashes and
arbitrary text: it never raises; and whenever it accepts, Typer's parser (the full command,
``app``'s ``search``) accepts the same list and gets the same query, project, mode, limit and
``--json``. A list Typer refuses is never accepted.
"""

from __future__ import annotations

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from workbench.cli import fast_search
from workbench.cli.main import app

OPTIONS = ["--json", "--project", "--mode", "--limit", "--data-dir", "-d", "--obs-type", "--"]
VALUES = ["5", "0", "100", "101", " 7", "-1", "fts", "hybrid", "", " ", "webapp", "x=y", "٣"]
token = st.one_of(
    st.sampled_from(OPTIONS),
    st.sampled_from(VALUES),
    st.builds(lambda o, v: f"{o}={v}", st.sampled_from(OPTIONS), st.sampled_from(VALUES)),
    st.text(max_size=12),
)


def typer_reading(argv: list[str]) -> dict[str, object] | None:
    """What the full command's parser makes of ``argv`` (None: it refuses it)."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    command = group.commands["search"]
    try:
        with command.make_context("search", list(argv)) as ctx:
            return dict(ctx.params)
    except Exception:  # a usage error, or --help's exit: Typer does not run the command
        return None


@settings(max_examples=budget(300), deadline=None)
@given(st.lists(token, max_size=6))
def test_fast_path_agrees_with_typer_or_declines(argv: list[str]) -> None:
    fast = fast_search.parse(argv)
    if fast is None:
        return
    full = typer_reading(argv)
    assert full is not None, f"fast path accepted what Typer refuses: {argv!r}"
    assert fast["query"] == full["query"]
    assert fast.get("project") == full["project"]
    assert fast.get("mode", "hybrid") == full["mode"]
    assert fast.get("limit", 20) == full["limit"]
    assert fast["json"] == full["as_json"]
    if "data_dir" in fast:
        assert fast["data_dir"] == full["data_dir"]


@pytest.mark.parametrize(
    "argv",
    [
        ["refund", "--limit", "5", "--json"],
        ["--project=webapp", "retry button"],
        ["-d", "/tmp/x", "why"],
        ["q", "--mode", "fts"],
    ],
)
def test_the_common_forms_take_the_fast_path(argv: list[str]) -> None:
    fast = fast_search.parse(argv)
    assert fast is not None
    full = typer_reading(argv)
    assert full is not None
    assert fast["query"] == full["query"]
