"""Memory text is shown as written in the CLI's tables and notes, never read as rich markup.

The report (noticed at the last stop): ``cli/tables.table`` handed cells to rich as markup, so
``Callable[[str], str]`` lost its brackets and ``[bold]`` in a memory or a query restyled the
output instead of being printed. Checked through the real CLI against a real service.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner, Result

from tests.conftest import Service, base_env, free_port
from tests.fuzz_harness import budget
from workbench.cli.main import app
from workbench.cli.tables import table
from workbench.models import ObservationDraft
from workbench.store import observations
from workbench.store.connection import atomic
from workbench.store.database import Store

TITLE = "Typed the hook as Callable[[str], str] and [bold]list[int][/bold]"
NARRATIVE = "The [red]retry[/red] wrapper takes dict[str, Any] now"


@pytest.fixture(scope="module")
def svc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data_dir: Path = tmp_path_factory.mktemp("markup") / "data"
    data_dir.mkdir()
    with Store(data_dir / "workbench.db") as store, atomic(store.conn):
        observations.insert(
            store.conn,
            ObservationDraft(title=TITLE, narrative=NARRATIVE, facts=["uses [link=x]y[/link]"]),
            content_session_id="s-markup",
            project="markup",
        )
    port = free_port()
    service = Service(data_dir=data_dir, port=port, env=base_env(data_dir, port)).start()
    yield service
    service.stop()


def run(svc: Service, *args: str) -> Result:
    env = {
        "WORKBENCH_DATA_DIR": str(svc.data_dir),
        "WORKBENCH_PORT": str(svc.port),
        "COLUMNS": "400",  # one line per row: the text is checked whole
    }
    result = CliRunner().invoke(app, list(args), env=env, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result


def test_search_table_shows_brackets_and_tags_as_written(svc: Service) -> None:
    out = run(svc, "search", "Callable", "--mode", "fts").stdout
    assert TITLE in out


def test_a_query_with_markup_is_echoed_as_written(svc: Service) -> None:
    out = run(svc, "search", "[bold]Callable", "--mode", "fts").stdout
    assert "[bold]Callable" in out


def test_show_prints_narrative_and_facts_as_written(svc: Service) -> None:
    out = run(svc, "search", "Callable", "--mode", "fts", "--json").stdout
    first = json.loads(out)["observations"][0]["id"]
    shown = run(svc, "show", str(first)).stdout
    assert NARRATIVE in shown
    assert "uses [link=x]y[/link]" in shown


@settings(
    max_examples=budget(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(text=st.text(alphabet="ab[]/\\=#:, ", min_size=1, max_size=30).map(str.strip).filter(bool))
def test_fuzz_any_bracketed_text_prints_as_written(
    text: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    table(text, [text], [[text]])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].strip() == text  # the title
    assert sum(text in line for line in lines[1:]) >= 2  # the header and the cell
