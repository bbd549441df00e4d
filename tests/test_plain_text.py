"""``cli.plain_text`` prints what rich prints, byte for byte, or declines.

The recall commands draw their tables and lines without rich when the text is plain and
stdout is a pipe (issue 21: rich was two thirds of ``workbench search``'s CPU as a process).
Here rich itself is the oracle: for generated tables and lines (words of every length, runs
of blanks, newlines, leading and trailing spaces, words longer than any column, widths from
20 to 160 columns) whatever ``plain_text`` returns must equal rich's output for the same
text and width, and it must not decline the ordinary cases. The command-level equality (the
fast path's process against the full Typer path) is in ``test_cli_search_start`` and
``test_cli_timeline_show_start``.
"""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.table import Table
from rich.text import Text

from tests.fuzz_harness import budget
from workbench.cli import plain_text
from workbench.cli.search_table import NEXT_STEPS

LETTERS = "abcdefXYZ0129-_.,:;()[]{}<>/\\'\"`~!@#$%^&*+=|?…"
word = st.text(alphabet=LETTERS, min_size=0, max_size=40)
gap = st.sampled_from([" ", " ", " ", "  ", "   ", "\n", " \n", "\n\n"])
cell = st.builds(
    lambda words, gaps, lead, tail: (
        lead + "".join(w + g for w, g in zip(words, gaps, strict=False)) + tail
    ),
    st.lists(word, max_size=8),
    st.lists(gap, max_size=8),
    st.sampled_from(["", "", " ", "  "]),
    st.sampled_from(["", "", " ", "  "]),
)


def rich_table(title: str, columns: list[str], rows: list[list[str]]) -> str:
    """``cli.tables.table``'s rich path, into a string."""
    out = io.StringIO()
    grid = Table(title=Text(title), title_justify="left", header_style="bold")
    for column in columns:
        grid.add_column(Text(column), overflow="fold")
    for row in rows:
        grid.add_row(*(Text(text) for text in row))
    Console(file=out).print(grid)
    return out.getvalue()


def rich_line(text: str) -> str:
    out = io.StringIO()
    Console(file=out).print(Text(text))
    return out.getvalue()


@settings(max_examples=budget(400), deadline=None)
@given(
    width=st.integers(20, 160),
    title=cell,
    shape=st.tuples(st.integers(1, 7), st.integers(0, 10)),
    data=st.data(),
)
def test_a_table_is_richs_or_declined(
    width: int, title: str, shape: tuple[int, int], data: st.DataObject
) -> None:
    n_columns, n_rows = shape
    columns = data.draw(st.lists(cell, min_size=n_columns, max_size=n_columns))
    rows = data.draw(
        st.lists(
            st.lists(cell, min_size=n_columns, max_size=n_columns),
            min_size=n_rows,
            max_size=n_rows,
        )
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", str(width))
        patch.delenv("FORCE_COLOR", raising=False)
        patch.delenv("TTY_COMPATIBLE", raising=False)
        drawn = plain_text.table(title, columns, rows)
        if drawn is not None:
            assert drawn == rich_table(title, columns, rows)


@settings(max_examples=budget(300), deadline=None)
@given(width=st.integers(20, 160), text=cell)
def test_a_line_is_richs_or_declined(width: int, text: str) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", str(width))
        drawn = plain_text.line(text)
        assert drawn is not None  # plain text on a pipe: never declined
        assert drawn == rich_line(text)


@pytest.mark.parametrize("width", [20, 43, 80, 86, 87, 120])
def test_the_next_steps_line_is_richs_markup_line(
    width: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    out = io.StringIO()
    Console(file=out).print(f"[dim]{NEXT_STEPS}[/]")
    assert plain_text.line(NEXT_STEPS) == out.getvalue()


def test_a_search_table_at_80_columns_is_drawn_without_rich(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setenv("COLUMNS", "80")
    columns = ["id", "time (UTC)", "type", "title", "project", "~tokens"]
    rows = [
        [str(i), "2026-11-03 10:00", "bugfix", f"Fix the refund {'retry ' * i}path", "api", "92"]
        for i in range(1, 12)
    ]
    drawn = plain_text.table("observations", columns, rows)
    assert drawn is not None
    assert drawn == rich_table("observations", columns, rows)
    assert drawn.splitlines()[1].startswith("┏")


@pytest.mark.parametrize(
    ("env", "text"),
    [
        ({"FORCE_COLOR": "1"}, "plain"),  # rich would style it
        ({"TTY_COMPATIBLE": "1"}, "plain"),
        ({"COLUMNS": "5"}, "plain"),  # narrower than this module draws
        ({}, "naïve"),  # a character this module does not measure
        ({}, "tab\there"),
    ],
)
def test_what_it_cannot_say_it_leaves_to_rich(
    env: dict[str, str], text: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert plain_text.line(text) is None
    assert plain_text.table("t", ["a"], [[text]]) is None


def test_inside_ipython_it_leaves_the_layout_to_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich lays out for a notebook when it finds IPython (``_is_jupyter``)."""
    import builtins

    monkeypatch.setenv("COLUMNS", "80")
    assert plain_text.line("plain") is not None
    monkeypatch.setattr(builtins, "get_ipython", lambda: None, raising=False)
    assert plain_text.line("plain") is None
