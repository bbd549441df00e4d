"""Nothing private and nothing from a project off the allowlist ever reaches the lake's files.

The store is seeded through the ``Store`` API directly, so ``<private>`` blocks are in it (the
service would have stripped them at ingest): publishing must strip them again. The proof scans
every Parquet file under the lake's data path twice: its raw bytes, and (Parquet pages may be
compressed, hiding a string from a byte scan) every value read back with ``read_parquet``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.team_harness import init, machine, seed
from workbench.team.local_rows import team_text

pytestmark = pytest.mark.slow

PRIVATE = "hunter2-PRIVATE-MARKER-7f3a"
OFF_LIST = "zebra-OFFLIST-PROJECT-TEXT-91c2"


def _all_text(files: list[Path]) -> str:
    """Every value of every Parquet file, as text, read with DuckDB (no lake, just the files)."""
    import duckdb

    con = duckdb.connect(":memory:")
    chunks = []
    for path in files:
        rows = con.execute(f"SELECT * FROM read_parquet('{path}')").fetchall()
        chunks.append(repr(rows))
    con.close()
    return "\n".join(chunks)


def test_parquet_files_hold_no_private_text_and_no_off_list_project(
    team_lake: Any, tmp_path: Path
) -> None:
    ana = machine(tmp_path, "ana")
    seed(
        ana.data_dir,
        "api",
        "s1",
        [f"deploy key <private>{PRIVATE}</private> rotated", "cache warmed"],
        narrative=f"used <private>{PRIVATE}</private>; then <private>{PRIVATE} unclosed",
        summary=f"request <private>{PRIVATE}</private>",
    )
    seed(ana.data_dir, "zoo", "s2", [OFF_LIST], narrative=OFF_LIST, summary=OFF_LIST)
    init(ana, team_lake, "api", author="ana")

    run = ana.publish_json()

    assert run["added"]["observations"] == 2
    files = team_lake.parquet_files()
    assert len(files) >= 3  # sessions, observations, summaries at least: not inlined
    for path in files:
        raw = path.read_bytes()
        for marker in (PRIVATE, OFF_LIST, "<private>"):
            assert marker.encode() not in raw, f"{marker} in {path}"
    text = _all_text(files)
    assert "cache warmed" in text  # the search sees the published text at all
    for marker in (PRIVATE, OFF_LIST, "<private"):
        assert marker not in text
    titles = team_lake.query(tmp_path, "SELECT title, narrative FROM lake.observations ORDER BY 1")
    assert titles == [
        ("cache warmed", "used ; then"),
        ("deploy key  rotated", "used ; then"),
    ]


_PIECES = st.sampled_from(
    ["<private>", "</private>", "<PRIVATE note='x'>", "< private>", "<private", "secret", " ", "a"]
)


@given(st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=12).map("".join))
def test_team_text_never_lets_a_private_tag_out(text: str) -> None:
    """Fuzz: whatever the mix of tags, nothing from a ``<private`` opener on is published."""
    out = team_text(text)
    assert not re.search(r"<\s*private\b", out, re.IGNORECASE)
    assert team_text(out) == out


@given(st.text(st.characters(blacklist_characters="<>"), max_size=40))
def test_text_inside_a_closed_private_block_never_survives(secret: str) -> None:
    marker = f"MARK{secret}MARK"
    out = team_text(f"before <private>{marker}</private> after")
    assert "MARK" not in out
    assert out == "before  after"
