"""``rerank_tokens.RowFile``: the static model's rows a search gathers, through a bounded cache.

Issue 21: the learned stage's MaxSim gathers ~200 of the static model's 30k rows per search.
Letting the mapping's pages go after every gather (so RSS stays flat) cost ~0.7 ms a search
to fault them back in, against ~0.02 ms from resident rows; searches gather mostly the same
rows. These tests hold the three promises: the rows are the file's, bit for bit, whatever the
ids; a row read once is not read from the file again while the cache holds it; and neither
the mapping nor the cache grows past its bound.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from workbench.recall.rerank_tokens import RowFile

HEADER = 40  # bytes before the matrix, as a safetensors header puts its own


def matrix_file(path: Path, rows: int, dim: int) -> np.ndarray:
    """A file of ``HEADER`` bytes and then a random float32 ``rows`` × ``dim`` matrix."""
    matrix = np.random.default_rng(rows * 31 + dim).standard_normal((rows, dim)).astype("<f4")
    path.write_bytes(b"\x07" * HEADER + matrix.tobytes())
    return matrix


def resident_kb(path: Path) -> int:
    """kB of ``path``'s pages this process holds mapped (``/proc/self/smaps``)."""
    total, block = 0, False
    for line in Path("/proc/self/smaps").read_text(encoding="utf-8").splitlines():
        head = line.split()
        if head and not head[0].endswith(":"):  # a mapping's first line: range perms ... path
            block = line.endswith(str(path.resolve()))
        elif block and head[0] == "Rss:":
            total += int(head[1])
    return total


def test_a_row_read_once_is_not_read_from_the_file_again(tmp_path: Path) -> None:
    path = tmp_path / "rows.bin"
    matrix = matrix_file(path, 3000, 64)
    rows = RowFile(path, HEADER, 3000, 64, cache_rows=256)
    first = [5, 5, 0, 2999, 7, 1024, 6]
    assert np.array_equal(rows[first], matrix[first])
    assert rows.from_file == 6  # each distinct row once
    again = [7, 0, 6, 5]
    assert np.array_equal(rows[again], matrix[again])
    assert rows.from_file == 6  # all cached: nothing read from the file
    mixed = np.asarray([[2999, 100], [101, 5]])
    assert np.array_equal(rows[mixed], matrix[mixed])  # any shape of ids, as numpy indexes
    assert rows.from_file == 8


def test_the_cache_and_the_mapping_stay_bounded(tmp_path: Path) -> None:
    """Past ``cache_rows`` the cache starts over (never more rows than its bound), a read of
    more rows than it holds goes to the file alone, and no page of the file stays mapped."""
    path = tmp_path / "rows.bin"
    matrix = matrix_file(path, 4000, 256)  # 1 KB rows: each of a few pages
    rows = RowFile(path, HEADER, 4000, 256, cache_rows=300)
    rng = np.random.default_rng(5)
    for _ in range(40):
        ids = rng.integers(0, 4000, size=int(rng.integers(1, 120)))
        assert np.array_equal(rows[ids], matrix[ids])
        assert rows.cached <= 300
        assert resident_kb(path) == 0
    every = np.arange(4000)
    assert np.array_equal(rows[every], matrix)  # more than the cache: straight from the file
    assert np.array_equal(np.asarray(rows), matrix)
    assert rows.cached <= 300
    assert resident_kb(path) == 0


def test_ids_are_checked_as_numpy_checks_them(tmp_path: Path) -> None:
    path = tmp_path / "rows.bin"
    matrix = matrix_file(path, 50, 4)
    rows = RowFile(path, HEADER, 50, 4, cache_rows=8)
    assert np.array_equal(rows[[-1, -50, 3]], matrix[[-1, -50, 3]])
    assert rows[np.asarray([], dtype=np.int64)].shape == (0, 4)
    for bad in ([50], [-51], [0, 10**9], [1.0, 2.0], np.ones(50, dtype=bool)):
        with pytest.raises(IndexError):
            rows[bad]
    assert np.array_equal(rows[[1, 2]], matrix[[1, 2]])  # a refused read left nothing behind
