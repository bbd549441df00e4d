"""Fuzz: ``RowFile``'s cached rows are the file's rows, for any sequence of reads.

The learned stage's MaxSim gathers the static model's rows through ``RowFile``, which keeps
the rows it read in a bounded cache and starts it over when a read would overflow it (issue
21). For any sequence of reads (any ids, repeated, negative, in any shape, more than the
cache holds, none) and any cache size, each read gives what indexing the matrix gives, a
read past either end raises ``IndexError`` and leaves the cache as it was, and the cache
never holds more rows than its bound.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from workbench.recall.rerank_tokens import RowFile

pytestmark = pytest.mark.slow

ROWS, DIM, HEADER = 97, 5, 13

ids = st.lists(st.integers(-ROWS - 2, ROWS + 1), max_size=40)
read = st.one_of(ids, ids.map(lambda found: np.asarray(found, dtype=np.int64).reshape(-1, 1)))


@pytest.fixture(scope="module")
def matrix_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, np.ndarray]:
    path = tmp_path_factory.mktemp("rows") / "rows.bin"
    matrix = np.random.default_rng(3).standard_normal((ROWS, DIM)).astype("<f4")
    path.write_bytes(b"\x01" * HEADER + matrix.tobytes())
    return path, matrix


@settings(
    max_examples=budget(300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(reads=st.lists(read, min_size=1, max_size=12), cache_rows=st.integers(1, 120))
def test_every_read_gives_the_matrix_rows(
    matrix_file: tuple[Path, np.ndarray], reads: list[object], cache_rows: int
) -> None:
    path, matrix = matrix_file
    rows = RowFile(path, HEADER, ROWS, DIM, cache_rows=cache_rows)
    for wanted in reads:
        flat = np.asarray(wanted, dtype=np.int64).ravel()
        if flat.size and (flat.min() < -ROWS or flat.max() >= ROWS):
            before = rows.cached
            with pytest.raises(IndexError):
                rows[wanted]
            assert rows.cached == before
            continue
        got = rows[wanted]
        want = matrix[np.asarray(wanted, dtype=np.int64)]
        assert got.shape == want.shape
        assert np.array_equal(got, want)
        assert rows.cached <= min(cache_rows, ROWS)
