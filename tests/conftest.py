"""Shared fixtures: a real data dir in tmp_path, a real uvicorn service on a free port.

Also the small helpers several test files used to copy (a seeded service, a fresh-interpreter
import check, migrations up to a point, clustered vectors…): one copy here, each with a
docstring that says who shares it.

Nothing here mocks our own stack. The only fakes are the model providers' APIs (Anthropic,
OpenAI-compatible), served as real local HTTP servers by ``tests/fake_anthropic.py`` and
``tests/fake_openai.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings

ROOT = Path(__file__).resolve().parent.parent
HOOKS_DIR = ROOT / "hooks"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

pytest_plugins = [
    "tests.fake_anthropic",
    "tests.fake_openai",
    "tests.onnx_model",
    "tests.hook_harness",
    "tests.real_world",
]

# Variables that would let the developer's shell leak into a test.
LEAKY_ENV = [k for k in os.environ if k.startswith("WORKBENCH_")] + [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENROUTER_API_KEY",
    "GEMINI_API_KEY",
    "CLAUDE_CONFIG_DIR",
    "XDG_CONFIG_HOME",
]


# Hypothesis profiles, chosen with HYPOTHESIS_PROFILE: "ci" (the default) for `make test`, 50
# examples a test, and "fuzz" for `make fuzz`, 1000 (twenty times). The fuzz suite scales its
# per-test counts from the active profile (tests/fuzz_harness.budget: half in "ci"). "ci" is
# deterministic and blind to the clock (issue 23): the same examples on every run (derandomize,
# so no example database either), no per-example deadline and no too_slow health check, which a
# loaded machine trips, not the code.
# "fuzz" explores: new random examples each run, failures kept in .hypothesis/ and replayed.
hypothesis_settings.register_profile(
    "ci",
    max_examples=50,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
hypothesis_settings.register_profile("fuzz", max_examples=1000, deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


# Where programs put per-user files when these are unset: all of it under HOME then.
HOME_VARIABLES = (
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "XDG_STATE_HOME",
    "IPYTHONDIR",
    "JUPYTER_CONFIG_DIR",
    "JUPYTER_DATA_DIR",
    "JUPYTER_RUNTIME_DIR",
    "MPLCONFIGDIR",
)
SUITE_HOME = pytest.StashKey[tuple[Path, dict[str, str | None]]]()


def pytest_configure(config: pytest.Config) -> None:
    """Give the whole run a HOME of its own, an empty folder removed at the end (issue 23).

    marimo writes ``~/.config/marimo`` and ``~/.cache/marimo``, a Jupyter kernel ``~/.ipython``,
    the agents' CLIs their dot-folders, and the CLI defaults to ``~/.workbench``: none of that
    may land in the developer's HOME. Set here, before any test module is imported, so code in
    this process and every child process (``base_env`` copies ``os.environ``) sees it; the
    ``HOME_VARIABLES`` are unset so that their defaults fall under it too. Each process of a
    run (an xdist worker too) gets its own folder. tests/test_suite_home.py proves it.
    """
    config.addinivalue_line("markers", SLOW_MARKER)
    saved = {key: os.environ.get(key) for key in ("HOME", *HOME_VARIABLES, NO_BYTECODE)}
    home = Path(tempfile.mkdtemp(prefix="workbench-tests-home-"))
    config.stash[SUITE_HOME] = (home, saved)
    os.environ["HOME"] = str(home)
    for key in HOME_VARIABLES:
        os.environ.pop(key, None)
    _write_bytecode()


# A shell with PYTHONDONTWRITEBYTECODE set (this sandbox's has) makes every interpreter the suite
# starts (~2,000 services, CLIs, hooks) compile each module it imports from source again, and
# every xdist worker rewrite every test module's asserts again: 8.8 s of collection against
# 3.2 s with the caches. The run writes bytecode as a Python install normally does, into the
# __pycache__ folders git ignores (issue 23).
NO_BYTECODE = "PYTHONDONTWRITEBYTECODE"


def _write_bytecode() -> None:
    """Cache bytecode in this process (test modules are imported after this) and its children."""
    os.environ.pop(NO_BYTECODE, None)
    sys.dont_write_bytecode = False


# The default run (`make test` on a developer's machine) is the fast tier; the tests marked
# ``slow`` are the long end-to-end ones (the agents' own CLIs from npm, PostgreSQL and DuckLake,
# headless Chromium, marimo runs, the embedding worker, mypy, stress runs). They are grouped, not
# dropped: CI runs every tier (issue 23), and so does a run that names its tests.
SLOW_MARKER = "slow: a long end-to-end test, left out of a plain `make test`; CI runs it"


def runs_every_tier(config: pytest.Config) -> str | None:
    """Why this run includes the slow tests, or None for the fast tier.

    CI (``CI`` set, as .ci/run exports it) and ``make test-all`` (``WORKBENCH_TEST_ALL=1``) run
    everything; so does a run given test paths or a ``-m`` expression, since whoever names a
    slow test means to run it.
    """
    if os.environ.get("CI"):
        return "CI is set"
    if os.environ.get("WORKBENCH_TEST_ALL"):
        return "WORKBENCH_TEST_ALL is set"
    if config.option.markexpr:
        return "-m was given"
    if config.option.file_or_dir:
        return "tests were named"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The fast tier leaves the ``slow`` tests out, reported as deselected."""
    if runs_every_tier(config) is not None:
        return
    fast, slow = [], []
    for item in items:
        (slow if item.get_closest_marker("slow") is not None else fast).append(item)
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = fast


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    reason = runs_every_tier(config)
    if reason is None:
        terminalreporter.write_line(
            "fast tier: the slow end-to-end tests were left out (`make test-all` runs every "
            "tier; CI always does)"
        )
    else:
        terminalreporter.write_line(f"every tier ran ({reason})")


def pytest_unconfigure(config: pytest.Config) -> None:
    if SUITE_HOME not in config.stash:
        return
    home, saved = config.stash[SUITE_HOME]
    for key, value in saved.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    shutil.rmtree(home, ignore_errors=True)


def _fail_skips_in_ci(report: pytest.TestReport | pytest.CollectReport) -> None:
    """In CI (``CI`` set, as .ci/run is run) a skipped test or module fails, saying why.

    CI runs as root with chromium, PostgreSQL, node and the agents' CLIs installed: a skip
    there is a test that can never fail (issue 23), so it is reported as a failure instead.
    """
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.outcome = "failed"
        report.longrepr = f"skipped in CI, where every test must run: {reason}"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    _fail_skips_in_ci(report)
    return report


@pytest.hookimpl(wrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Any:
    report = yield
    _fail_skips_in_ci(report)
    return report


def pytest_report_header() -> list[str]:
    import fastapi
    import pydantic

    return [
        f"sqlite {sqlite3.sqlite_version}, fastapi {fastapi.__version__}, "
        f"pydantic {pydantic.VERSION}"
    ]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in LEAKY_ENV:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    # Loading the embedding model costs ~6 s of CPU per service: tests that need semantic
    # recall opt in (WORKBENCH_EMBEDDER=minilm); everything else runs full text only.
    monkeypatch.setenv("WORKBENCH_EMBEDDER", "none")


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


def free_port() -> int:
    """A loopback port nobody holds now, for a service the test starts on it a moment later.

    Under pytest-xdist (``make test``) each worker takes only its own share of the ports (the
    kernel's choice halved, since it hands out odd ports here, modulo the number of workers):
    the port is released when chosen and bound only after the service's imports, and two
    workers choosing in that gap could otherwise be handed the same one.
    """
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if (port >> 1) % workers == worker % workers:
            return port


def base_env(data_dir: Path, port: int, **extra: str) -> dict[str, str]:
    """A clean environment for a subprocess: no leaking WORKBENCH_*/ANTHROPIC_* variables."""
    env = {k: v for k, v in os.environ.items() if k not in LEAKY_ENV}
    env.update(
        WORKBENCH_DATA_DIR=str(data_dir),
        WORKBENCH_PORT=str(port),
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
    return env


def run_workbench(
    env: dict[str, str], *args: str, timeout: float = 90
) -> subprocess.CompletedProcess[str]:
    """``python -m workbench ARGS`` as a real subprocess from the repo root, output as text."""
    return subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_bench(*argv: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """A bench script (``bench/x.py ARGS``) as a real subprocess from the repo root, without
    the developer's ``WORKBENCH_*`` settings, its tables 200 columns wide."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_")}
    env.update(PYTHONPATH=str(ROOT), COLUMNS="200")
    return subprocess.run(
        [sys.executable, *argv],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def http_json(
    method: str,
    url: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = 60.0,
) -> tuple[int, Any]:
    """One request with the standard library; returns (status, parsed JSON or text).

    ``timeout`` is a limit for a loaded 2-core machine, not a speed (10 s failed a restart test
    under load, issue 23): a request that answers returns at once whatever the limit."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    for key, value in (headers or {}).items():
        req.add_header(key, value)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            raw = resp.read().decode("utf-8")
            status = resp.status
    except urllib.error.HTTPError as exc:
        raw = exc.read().decode("utf-8")
        status = exc.code
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


@dataclass
class Service:
    """A real ``python -m service`` process on a free loopback port."""

    data_dir: Path
    port: int
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    log_path: Path = field(default_factory=Path)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> Service:
        self.log_path = self.data_dir.parent / f"service-{self.port}-{time.time_ns()}.log"
        log = self.log_path.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "service"],
            env=self.env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"service exited with {self.proc.returncode}:\n{self.log_path.read_text()}"
                )
            try:
                status, body = http_json("GET", f"{self.url}/api/health", timeout=1.0)
                if status == 200 and isinstance(body, dict) and body.get("service") == "workbench":
                    return self
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"service did not answer in {timeout}s:\n{self.log_path.read_text()}")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def kill9(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()

    def get(self, path: str, **kw: Any) -> tuple[int, Any]:
        return http_json("GET", self.url + path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> tuple[int, Any]:
        return http_json("POST", self.url + path, body, **kw)

    def wait_idle(self, timeout: float = 120.0) -> dict[str, Any]:
        """Wait until the worker has drained the queue (nothing pending or claimed); a
        service still starting (one a hook spawned, not yet listening) is waited for too."""
        deadline = time.monotonic() + timeout
        health: Any = None
        while time.monotonic() < deadline:
            try:
                _, health = self.get("/api/health")
            except OSError:
                time.sleep(0.1)
                continue
            queue = health.get("queue", {})
            if queue.get("pending", 0) == 0 and queue.get("claimed", 0) == 0:
                return health
            time.sleep(0.05)
        raise AssertionError(f"queue did not drain in {timeout}s: {health}")


@pytest.fixture
def make_service(data_dir: Path) -> Iterator[Any]:
    """Factory: ``make_service(**env)`` starts a service on ``data_dir``; all are stopped."""
    started: list[Service] = []

    def factory(port: int | None = None, *, start: bool = True, **extra: str) -> Service:
        chosen = port or free_port()
        svc = Service(data_dir=data_dir, port=chosen, env=base_env(data_dir, chosen, **extra))
        started.append(svc)
        return svc.start() if start else svc

    yield factory
    for svc in started:
        svc.stop()


@pytest.fixture
def service(make_service: Any) -> Service:
    """One running service on this test's own data dir (offline compressor)."""
    return make_service()


def imports_module(modules: str, name: str) -> bool:
    """Whether importing ``modules`` (as in ``import a, b``) in a fresh interpreter loads ``name``.

    Shared because every optional SDK (``anthropic``, ``openai``…) must stay a lazy import, and
    each compressor's tests check it the same way: in a new ``python -c``, so what this test
    session has already imported does not count.
    """
    code = f"import sys, json; import {modules}; print(json.dumps({name!r} in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return bool(json.loads(out.stdout))


class SimilarityRanker:
    """A vector ranker at the protocol level over fixed cosines by id: it holds only these ids.

    Shared so that search tests can fix what "semantically close" means without a model: like
    the FAISS ranker, given ``allowed`` ids it returns every allowed id it holds, best first.
    ``name`` is the ranker's name in hits and logs.
    """

    def __init__(self, similarity: dict[int, float], name: str = "fixed") -> None:
        self.similarity = similarity
        self.name = name

    def available(self) -> bool:
        return True

    def rank(self, query: str, k: int, allowed: Sequence[int] | None) -> list[tuple[int, float]]:
        pairs = [(i, c) for i, c in self.similarity.items() if allowed is None or i in allowed]
        return sorted(pairs, key=lambda p: (-p[1], p[0]))[:k]


def migrate_until(conn: sqlite3.Connection, last: str) -> None:
    """Apply the registered migrations up to and including ``last``, as an older version did.

    Shared so that every upgrade test builds its "older store" the same way, with the real
    migrations, one transaction each, recorded in ``_migrations``.
    """
    from workbench.store import schema
    from workbench.store.connection import atomic

    schema._ensure_table(conn)
    for name, fn in schema.MIGRATIONS:
        with atomic(conn):
            fn(conn)
            conn.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, 'then')", (name,))
        if name == last:
            return


@contextmanager
def seeded_service(
    data_dir: Path, seed: Callable[[Any], object], **extra: str
) -> Iterator[Service]:
    """A service on ``data_dir`` after ``seed(store)`` filled its store; stopped on leaving.

    Shared by the module-scoped fixtures that serve one prepared store to many tests (the
    relevance set, the zebra herd…): seed with the real ``Store``, then start the real service.
    ``extra`` are environment variables for it (see ``base_env``).
    """
    from workbench.store.database import Store

    with Store(data_dir / "workbench.db") as store:
        seed(store)
    port = free_port()
    service = Service(data_dir=data_dir, port=port, env=base_env(data_dir, port, **extra)).start()
    try:
        yield service
    finally:
        service.stop()


@contextmanager
def relevance_set_service(data_dir: Path) -> Iterator[tuple[Service, Any]]:
    """The relevance set (``tests/relevance_set.py``) served full-text only, and its labels.

    ``WORKBENCH_EMBEDDER=none``: the tests that use it pin the full-text behaviour and the
    contract; with no model to load the service also starts and stops in a moment.
    """
    from tests.relevance_set import seed

    data_dir.mkdir()
    labels: list[Any] = []
    with seeded_service(
        data_dir, lambda store: labels.append(seed(store)), WORKBENCH_EMBEDDER="none"
    ) as service:
        yield service, labels[0]


def api_search(svc: Service, query: str, **params: str) -> Any:
    """``GET /api/search?query=…&…`` on a running service; asserts 200 and returns the body.

    Shared by the tests that read which rankers placed each hit over HTTP.
    """
    extra = "".join(f"&{k}={quote(v)}" for k, v in params.items())
    status, body = svc.get(f"/api/search?query={quote(query)}{extra}")
    assert status == 200, body
    return body


def clustered_vectors(n: int, dim: int = 64, *, clusters: int, spread: float, seed: int = 1) -> Any:
    """``n`` unit float32 vectors around ``clusters`` random centres, ``spread`` apart from them.

    Shared by the vector index tests: approximate-index recall means nothing on random vectors
    (ENVIRONMENT.md), so they all measure it on clusters; each file picks its own shape.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(clusters, dim))
    points = centres[rng.integers(0, clusters, n)] + spread * rng.normal(size=(n, dim))
    points /= np.linalg.norm(points, axis=1, keepdims=True)
    return points.astype(np.float32)


@contextmanager
def store_of_titles(path: Path, titles: Iterable[str]) -> Iterator[Any]:
    """A real ``Store`` at ``path`` holding one observation per title, ids 1, 2… in order.

    Shared by the search tests that rank a handful of titled memories (all in session ``s`` of
    project ``p``): the titles are the test's data, the store around them is the same.
    """
    with store_of_turns(path, (("s", title) for title in titles)) as store:
        yield store


@contextmanager
def store_of_turns(path: Path, turns: Iterable[tuple[str, str]]) -> Iterator[Any]:
    """``store_of_titles`` with each title's session: ``(session, title)`` turns of project
    ``p``, ids 1, 2… in order (the conversation tests' sessions decide which turns neighbour)."""
    from workbench.models import ObservationDraft
    from workbench.store import observations
    from workbench.store.connection import atomic
    from workbench.store.database import Store

    with Store(path) as store:
        with atomic(store.conn):
            for session, title in turns:
                observations.insert(
                    store.conn,
                    ObservationDraft(title=title),
                    content_session_id=session,
                    project="p",
                )
        yield store


def locally_filtered(db: Path, filters: Any, table: str, column: str) -> set[Any]:
    """``column`` of the rows of ``table`` in the store at ``db`` that the local SQLite filter
    compiler (``SearchFilters.table_sql``) selects: the side a dialect test compares against."""
    from workbench.store.connection import connect

    clauses, params = filters.table_sql(table, "t")
    where = " WHERE " + " AND ".join(clauses) if clauses else ""
    conn = connect(db, readonly=True)
    try:
        return {r[0] for r in conn.execute(f"SELECT {column} FROM {table} t{where}", params)}
    finally:
        conn.close()


def turn_order(
    store: Any,
    root: Path,
    question: str,
    cosines: dict[int, float],
    filters: Any = None,
    limit: int = 20,
    **over: object,
) -> list[int]:
    """The observation ids hybrid search ranks for ``question`` over ``store`` (``store_of_turns``),
    the vector side scoring each id by ``cosines``, settings ``over`` under ``root``.

    The neighbour lift is off so a conversation test sees only the term it is about.
    """
    from workbench.recall.search import SearchEngine
    from workbench.settings import load_settings

    settings = load_settings(root, search_neighbour_weight=0.0, **over)
    found = SearchEngine(store, settings, SimilarityRanker(cosines)).search(
        question, filters, types="observations", limit=limit
    )
    return [h.id for h in found.observations]


def settings_refusal(root: Path, **overrides: object) -> str:
    """The message loading settings with ``overrides`` under ``root`` fails with (it must)."""
    from pydantic import ValidationError

    from workbench.settings import load_settings

    with pytest.raises(ValidationError) as err:
        load_settings(root, **overrides)
    return str(err.value)


def assert_setting_refused(root: Path, field: str, value: object, says: str) -> None:
    """Loading settings with ``field = value`` fails, naming the field and the rule ``says``."""
    message = settings_refusal(root, **{field: value})
    assert says in message
    assert field in message


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Any]:
    """One throwaway PostgreSQL for the whole session (tests/postgres.py), or a skip saying why.

    Shared by the team tests: the DuckLake catalog. Started once (~1 s); each test takes its own
    database from it with ``cluster.new_database()``.
    """
    from tests.postgres import running_cluster, unavailable_reason

    reason = unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    with running_cluster() as cluster:
        yield cluster


@pytest.fixture
def team_lake(postgres_cluster: Any, tmp_path: Path) -> Any:
    """A fresh team lake for one test: its own catalog database, a data dir in tmp_path.

    Shared by the team tests (tests/team_harness.py).
    """
    from tests.team_harness import Lake

    return Lake(postgres_cluster, postgres_cluster.new_database(), tmp_path / "lake")
