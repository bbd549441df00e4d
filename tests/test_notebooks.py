"""The notebooks run headless on the demo memory and compute what the library computes.

One real service per module, on a temporary data dir seeded with ``data/demo/memory.json``
through ``POST /api/import`` (embedder off: no model load). Each marimo notebook runs
in-process with ``app.run(defs={"args": ...})``; its results are compared with the same
numbers computed independently (SQL on the SQLite file, the library called directly). Then
``marimo check``, a notebook as a plain script, ``marimo export html``, the Jupyter example
through ``nbconvert --execute``, and ``workbench notebook``.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, Service, base_env, free_port
from workbench.knowledge import corpus as corpora
from workbench.knowledge import stats
from workbench.recall import evaluate as ev
from workbench.recall.filters import parse_time
from workbench.settings import load_settings
from workbench.store import duck
from workbench.store.database import Store

pytestmark = pytest.mark.slow

MEMORY = ROOT / "data" / "demo" / "memory.json"
NOTEBOOKS = ROOT / "notebooks"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A service on a data dir holding the demo history, plus two corpora built through it."""
    data_dir = tmp_path_factory.mktemp("notebooks") / "data"
    data_dir.mkdir()
    port = free_port()
    # The notebooks find the service through the data dir's settings, as after `workbench demo`.
    (data_dir / "settings.json").write_text(json.dumps({"port": port}), encoding="utf-8")
    service = Service(data_dir, port, base_env(data_dir, port, WORKBENCH_EMBEDDER="none"))
    service.start()
    try:
        status, body = service.post("/api/import", json.loads(MEMORY.read_text("utf-8")))
        assert status == 200, body
        for spec in (
            {"name": "security", "types": "security_alert,security_note"},
            {"name": "payments", "project": "payments-api", "types": "bugfix,decision"},
        ):
            status, body = service.post("/api/corpus", spec)
            assert status == 200, body
        yield service
    finally:
        service.stop()


def _sql(service: Service, query: str, params: tuple[Any, ...] = ()) -> Any:
    conn = sqlite3.connect(f"file:{service.data_dir / 'workbench.db'}?mode=ro", uri=True)
    try:
        return conn.execute(query, params).fetchone()[0]
    finally:
        conn.close()


def _run(name: str, *argv: str) -> dict[str, Any]:
    """Run notebook ``name`` in-process with these arguments; return its definitions."""
    module = __import__(f"notebooks.{name}", fromlist=["app", "parse_args"])
    _, defs = module.app.run(defs={"args": module.parse_args(list(argv))})
    return dict(defs)


def _env(service: Service) -> dict[str, str]:
    return base_env(service.data_dir, service.port)


# ----- corpus builder --------------------------------------------------------------------------
def test_corpus_builder_default_filter_is_the_whole_memory(demo: Service) -> None:
    defs = _run("corpus_builder", "--data-dir", str(demo.data_dir))
    total = _sql(demo, "SELECT count(*) FROM observations")
    assert defs["wire"] == {"limit": 500}
    assert defs["preview"].stats.observation_count == min(total, 500)
    assert defs["preview"].stats.token_estimate > 0
    assert defs["frame"].height == defs["preview"].stats.observation_count


def test_corpus_builder_filter_widgets_match_sql(demo: Service) -> None:
    defs = _run(
        "corpus_builder", "--data-dir", str(demo.data_dir),
        "--project", "payments-api", "--types", "bugfix,decision,change", "--since", "2026-11-01",
    )  # fmt: skip
    expected = _sql(
        demo,
        "SELECT count(*) FROM observations WHERE project = ? AND type IN ('bugfix', 'decision',"
        " 'change') AND created_at_epoch >= ?",
        ("payments-api", parse_time("2026-11-01", "since")),
    )
    preview = defs["preview"]
    assert expected > 0
    assert preview.stats.observation_count == expected
    # Only the narrowed end of the date range is stored, so a rebuild still picks up new work.
    assert "since" in defs["wire"]
    assert "until" not in defs["wire"]
    assert sum(preview.stats.type_breakdown.values()) == expected
    assert defs.get("saved") is None  # nothing is saved without --save or the button


def test_corpus_builder_saves_through_the_service(demo: Service) -> None:
    defs = _run(
        "corpus_builder", "--data-dir", str(demo.data_dir),
        "--project", "ml-pipeline", "--name", "nb-ml", "--description", "from the notebook",
        "--save",
    )  # fmt: skip
    saved = defs["saved"]
    assert saved["name"] == "nb-ml"
    assert saved["stats"]["observation_count"] == _sql(
        demo, "SELECT count(*) FROM observations WHERE project = 'ml-pipeline'"
    )
    stored = corpora.load(load_settings(demo.data_dir), "nb-ml")
    assert stored.ids() == defs["preview"].ids()
    assert stored.filter.project == "ml-pipeline"
    assert stored.description == "from the notebook"


# ----- knowledge agent -------------------------------------------------------------------------
def test_knowledge_agent_answers_offline_with_citations_from_the_corpus(demo: Service) -> None:
    question = "Which credentials were exposed, and what was done about them?"
    defs = _run(
        "knowledge_agent", "--data-dir", str(demo.data_dir), "--corpus", "security",
        "--question", question,
    )  # fmt: skip
    result = defs["answer_result"]
    corpus = corpora.load(load_settings(demo.data_dir), "security")
    assert result["agent"] == "offline-extractive"
    assert result["answer"].startswith("Offline extractive answer")
    assert result["citations"]
    assert set(result["citations"]) <= corpus.ids()
    assert set(result["usage"].values()) == {0}
    assert defs["meta"]["session_id"] == result["session_id"]  # primed, then asked
    assert defs["primed"]["agent"] == "offline-extractive"
    from notebooks.knowledge_agent import reply_markdown, usage_row

    text = reply_markdown(result, demo.url)
    assert f"{demo.url}/api/observation/{result['citations'][0]}" in text
    assert usage_row(result)["cited"] == result["citations"]


# ----- analytics --------------------------------------------------------------------------------
def test_analytics_numbers_equal_the_library_and_sql(demo: Service) -> None:
    defs = _run("analytics", "--data-dir", str(demo.data_dir))
    con = duck.connect(demo.data_dir / "workbench.db")
    try:
        expected = stats.economics_summary(stats.economics(con, stats.ALL, "project"))
    finally:
        con.close()
    totals = defs["economics_totals"]
    assert totals == expected
    assert totals["observations"] == _sql(demo, "SELECT count(*) FROM observations")
    assert totals["discovery_tokens"] == _sql(
        demo, "SELECT sum(discovery_tokens) FROM observations"
    )
    assert int(defs["activity_by_day"]["observations"].sum()) == totals["observations"]
    assert int(defs["sql_result"]["observations"].sum()) == totals["observations"]
    session = defs["timeline_rows"]
    assert set(session["kind"]) == {"prompt", "observation", "summary"}


def test_analytics_scope_follows_the_arguments(demo: Service) -> None:
    defs = _run("analytics", "--data-dir", str(demo.data_dir), "--project", "inventory-service")
    assert defs["economics_totals"]["observations"] == _sql(
        demo, "SELECT count(*) FROM observations WHERE project = 'inventory-service'"
    )
    assert defs["session_table"]["project"].unique().to_list() == ["inventory-service"]


# ----- evaluate -----------------------------------------------------------------------------------
def test_evaluate_full_text_equals_the_library_and_is_well_formed(demo: Service) -> None:
    defs = _run("evaluate", "--data-dir", str(demo.data_dir), "--vectors", "none")
    evaluation = defs["evaluation"]
    assert set(evaluation.skipped) == {"vector", "hybrid"}
    with Store(demo.data_dir / "workbench.db", readonly=True) as store:
        independent = ev.sweep(ev.LocalRetriever(store.conn), ev.questions(store.conn))
    assert evaluation.rows == independent.rows
    rows = evaluation.rows
    assert {r["mode"] for r in rows} == {"fts"}
    for row in rows:
        assert 0.0 <= row["recall"] <= 1.0
        assert 0.0 <= row["hit_rate"] <= 1.0
        assert 0.0 <= row["mrr"] <= 1.0
        if row["budget"] is not None:
            assert row["tokens"] <= row["budget"]
    free = sorted((r["top_k"], r["recall"]) for r in rows if r["budget"] is None)
    assert [recall for _, recall in free] == sorted(recall for _, recall in free)


def test_evaluate_through_the_service_agrees_with_in_process(demo: Service) -> None:
    """Same engine over HTTP: identical full-text metrics; the missing model is reported."""
    over_http = _run("evaluate", "--data-dir", str(demo.data_dir), "--vectors", "service")
    local = _run("evaluate", "--data-dir", str(demo.data_dir), "--vectors", "none")
    assert over_http["evaluation"].rows == local["evaluation"].rows
    assert "disabled" in over_http["evaluation"].skipped["vector"]


# ----- the other ways to run them ----------------------------------------------------------------
def test_marimo_check_passes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "marimo", "check", "--strict", str(NOTEBOOKS)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_a_notebook_runs_as_a_plain_script(demo: Service) -> None:
    proc = subprocess.run(
        [sys.executable, str(NOTEBOOKS / "analytics.py"), "--data-dir", str(demo.data_dir)],
        capture_output=True,
        text=True,
        timeout=180,
        env=_env(demo),
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr


def test_marimo_export_html_runs_a_notebook_headless(demo: Service, tmp_path: Path) -> None:
    out = tmp_path / "evaluate.html"
    proc = subprocess.run(
        [
            sys.executable, "-m", "marimo", "export", "html", str(NOTEBOOKS / "evaluate.py"),
            "-o", str(out), "--", "--data-dir", str(demo.data_dir), "--vectors", "none",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        env=_env(demo),
        cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "recall" in out.read_text(encoding="utf-8")


def test_the_jupyter_example_executes_top_to_bottom(demo: Service, tmp_path: Path) -> None:
    import nbformat

    proc = subprocess.run(
        [
            sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute",
            str(NOTEBOOKS / "workbench_example.ipynb"), "--output-dir", str(tmp_path),
            "--ExecutePreprocessor.timeout=120",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=_env(demo),
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    executed = nbformat.read(tmp_path / "workbench_example.ipynb", as_version=4)
    outputs = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    total = _sql(demo, "SELECT count(*) FROM observations")
    assert f"{total} observations in 5 projects" in printed


def test_the_jupyter_example_reads_a_relative_data_dir(demo: Service, tmp_path: Path) -> None:
    """The README's ``WORKBENCH_DATA_DIR=.demo/data jupyter lab`` (issue 19, item 13): the
    kernel runs in the notebook's folder, the relative path was typed in the shell's."""
    import nbformat

    launched_in = demo.data_dir.parent
    env = {
        **_env(demo),
        "WORKBENCH_DATA_DIR": demo.data_dir.name,
        "PWD": str(launched_in),
        "PYTHONPATH": str(ROOT),  # the kernel imports this checkout's workbench
    }
    proc = subprocess.run(
        [
            sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
            str(NOTEBOOKS / "workbench_example.ipynb"), "--output-dir", str(tmp_path),
            "--ExecutePreprocessor.timeout=120",
        ],
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
        cwd=launched_in,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    executed = nbformat.read(tmp_path / "workbench_example.ipynb", as_version=4)
    printed = "".join(
        o.get("text", "")
        for c in executed.cells
        if c.cell_type == "code"
        for o in c.outputs
        if o.output_type == "stream"
    )
    assert printed.startswith(f"{demo.data_dir}: ")


def test_workbench_notebook_lists_opens_and_refuses(demo: Service) -> None:
    from typer.testing import CliRunner

    from workbench.cli.main import app

    def cli(*args: str) -> Any:
        argv = ["notebook", *args, "--data-dir", str(demo.data_dir)]
        return CliRunner().invoke(app, argv, catch_exceptions=False)

    listed = cli()
    assert listed.exit_code == 0
    for name in ("corpus_builder", "knowledge_agent", "analytics", "evaluate"):
        assert name in listed.output
    unknown = cli("nope")
    assert unknown.exit_code == 1
    assert "no notebook named 'nope'" in unknown.output
    assert "analytics" in unknown.output
    planned = cli("analytics", "--dry-run")
    assert planned.exit_code == 0
    assert planned.output.split() == [
        sys.executable, "-m", "marimo", "edit", str(NOTEBOOKS / "analytics.py"),
        "--", "--data-dir", str(demo.data_dir.resolve()),
    ]  # fmt: skip
