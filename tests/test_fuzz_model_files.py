"""Fuzz: the static model's weights file as the service maps it (``embed.mapped_table``).

Issue 21 (service RSS): the static tier's table is mapped from its safetensors file instead of
read into the heap. The file is read by the service, so any bytes there (a truncated build, a
hand-edited header, another tool's file under that name) must give a table of exactly the
size its header names, lying inside the file, or None (the caller then reads it as before and
says why it cannot); never an exception from the mapping, never a table past the file's end.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from workbench.recall.embed import mapped_table

pytestmark = pytest.mark.slow

TempPathFactory = pytest.TempPathFactory

small = st.integers(min_value=-2, max_value=40)
headers = st.fixed_dictionaries(
    {
        "dtype": st.sampled_from(["F32", "F16", "BF16", "I8", "F64", 3, None]),
        "shape": st.one_of(st.lists(small, max_size=3), st.text(max_size=3)),
        "data_offsets": st.one_of(st.lists(small.map(lambda n: n * 4), max_size=3), st.none()),
    }
)


def write(folder: Path, header: bytes, body: bytes, size: int | None = None) -> Path:
    path = folder / "model.safetensors"
    length = len(header) if size is None else size
    path.write_bytes(length.to_bytes(8, "little") + header + body)
    return path


def check(path: Path) -> None:
    table = mapped_table(path)
    if table is None:
        return
    assert table.ndim == 2
    assert table.dtype.kind == "f"
    assert table.dtype.itemsize in (2, 4)
    assert table.offset + table.nbytes <= path.stat().st_size
    _ = table.sum()  # every mapped byte is readable


@settings(max_examples=budget(200), deadline=None)
@given(entry=headers, name=st.sampled_from(["embeddings", "other"]), body=st.binary(max_size=6000))
def test_any_header_maps_within_the_file_or_not_at_all(
    tmp_path_factory: TempPathFactory, entry: dict[str, object], name: str, body: bytes
) -> None:
    folder = tmp_path_factory.mktemp("weights")
    check(write(folder, json.dumps({name: entry}).encode(), body))


@settings(max_examples=budget(200), deadline=None)
@given(raw=st.binary(max_size=300), size=st.one_of(st.none(), st.integers(0, 2**63)))
def test_any_bytes_map_within_the_file_or_not_at_all(
    tmp_path_factory: TempPathFactory, raw: bytes, size: int | None
) -> None:
    folder = tmp_path_factory.mktemp("weights")
    check(write(folder, raw, b"", size))


@settings(max_examples=budget(200), deadline=None)
@given(
    rows=st.integers(0, 30),
    dim=st.integers(0, 12),
    dtype=st.sampled_from([("F32", 4), ("F16", 2)]),
    begin=st.integers(0, 64),
    slack=st.integers(-64, 64),
)
def test_a_well_formed_header_maps_when_the_file_holds_its_bytes(
    tmp_path_factory: TempPathFactory,
    rows: int,
    dim: int,
    dtype: tuple[str, int],
    begin: int,
    slack: int,
) -> None:
    """A header naming a table the file holds maps it, with its shape; one whose bytes the
    file lacks (``slack`` < 0) does not."""
    end = begin + rows * dim * dtype[1]
    entry = {"dtype": dtype[0], "shape": [rows, dim], "data_offsets": [begin, end]}
    folder = tmp_path_factory.mktemp("weights")
    path = write(folder, json.dumps({"embeddings": entry}).encode(), b"\0" * max(0, end + slack))
    check(path)
    table = mapped_table(path)
    if rows and dim and slack >= 0:
        assert table is not None
        assert table.shape == (rows, dim)
    elif slack < 0:
        assert table is None
