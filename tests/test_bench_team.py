"""``bench/team.py --quick`` runs end to end against a real lake (figures printed, not judged).

Keeps the benchmark script working as the team code changes; timing is never asserted. The
catalog is a fresh database of the session's PostgreSQL (``--catalog``), so no second cluster
is started.
"""

from __future__ import annotations

import subprocess
import sys
from typing import Any

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


def test_quick_bench_publishes_both_authors_and_prints_the_figures(postgres_cluster: Any) -> None:
    dsn = postgres_cluster.dsn(postgres_cluster.new_database())

    out = subprocess.run(
        [sys.executable, "bench/team.py", "--quick", "--catalog", dsn],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "COLUMNS": "200"},
    )

    assert out.returncode == 0, out.stderr + out.stdout
    assert out.stdout.count("rows in") == 2  # each author's publish line
    assert "author-00 │ 10,201" in out.stdout  # 10,000 observations + 201 sessions
    assert "author-01 │ 10,201" in out.stdout
    assert "20,000" in out.stdout  # the reads measured on the whole quick lake
    assert "GROUP BY team p50" in out.stdout
