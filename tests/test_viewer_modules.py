"""The viewer's script is a set of ES modules (no build step): the page loads them as they are.

- ``index.html`` loads one entry, ``/static/app.js``, as ``<script type="module">``.
- The import graph, read from the sources: every specifier is ``./<name>.js`` in the same
  flat folder (the only shape ``GET /static/{name}`` serves); no cycle (a cycle lets a module
  run before one it imports, and a ``const`` read then throws); every module in the folder is
  reached from the entry (no dead file); none is over 400 lines; none writes markup.
- Served by the real service: every module in the graph is a 200 with a JavaScript content
  type (a browser refuses a module script served as anything else) and the strict CSP.
- With node (when installed): each module parses as a module, and the whole graph links (every
  imported name is exported) and evaluates.
- In headless Chromium: the page loads exactly the modules of the graph, each a 200, with no
  console error, no failed request and no script error.
"""

from __future__ import annotations

import http.client
import re
import shutil
import subprocess
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT, Service, base_env, free_port
from tests.viewer_page import launch_browser

STATIC = ROOT / "service" / "static"
ENTRY = "app.js"
MAX_LINES = 400
JS_CONTENT_TYPE = "text/javascript; charset=utf-8"
# ``import … from '…'``, ``export … from '…'`` (either may span lines) and ``import '…'``.
IMPORT = re.compile(
    r"""^\s*(?:import|export)\b[^'";]*?\bfrom\s*['"]([^'"]+)['"]|^\s*import\s*['"]([^'"]+)['"]""",
    re.MULTILINE,
)
SPECIFIER = re.compile(r"\./[a-z][a-z0-9-]*\.js")
SINKS = ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function")


# ----- reading the graph ------------------------------------------------------------------------
def specifiers(source: str) -> list[str]:
    """The module specifiers a source imports statically, in order."""
    return [a or b for a, b in IMPORT.findall(source)]


def import_graph(folder: Path, entry: str) -> dict[str, list[str]]:
    """``module file name -> the file names it imports``, for everything reached from ``entry``.

    Fails on a specifier that is not ``./<name>.js`` or names a missing file: the browser would
    fail to load the page on it.
    """
    graph: dict[str, list[str]] = {}
    todo = [entry]
    while todo:
        name = todo.pop()
        if name in graph:
            continue
        source = (folder / name).read_text(encoding="utf-8")
        assert "import(" not in source, f"{name}: dynamic import; import statically (see app.js)"
        imported = []
        for spec in specifiers(source):
            assert SPECIFIER.fullmatch(spec), (
                f"{name} imports {spec!r}: write './<name>.js' (the viewer serves one flat folder)"
            )
            target = spec.removeprefix("./")
            assert (folder / target).is_file(), f"{name} imports {spec!r}, which does not exist"
            imported.append(target)
        graph[name] = imported
        todo.extend(imported)
    return graph


def find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    """One import cycle as ``[a, b, …, a]``, or None when the graph is acyclic."""
    state: dict[str, str] = {}  # "open" while on the path, "done" after
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = "open"
        path.append(node)
        for child in graph.get(node, []):
            if state.get(child) == "open":
                return [*path[path.index(child) :], child]
            if child not in state and (found := visit(child)):
                return found
        path.pop()
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


GRAPH = import_graph(STATIC, ENTRY)
MODULES = sorted(GRAPH)


# ----- the readers themselves (so the graph tests cannot pass vacuously) ------------------------
def test_specifiers_reads_every_static_import_form():
    source = (
        "/* import { no } from './comment-only.js' is not at a line start */\n"
        "import { a } from './a.js';\n"
        'import {\n  b,\n  c,\n} from "./b.js";\n'
        "import './side.js';\n"
        "export { d } from './d.js';\n"
        "const text = 'import { x } from ./x.js';\n"
    )
    assert specifiers(source) == ["./a.js", "./b.js", "./side.js", "./d.js"]


def test_find_cycle_finds_a_cycle_and_passes_a_tree():
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": ["a"]}) == ["a", "a"]
    assert find_cycle({"a": ["b", "c"], "b": ["c"], "c": []}) is None


def test_import_graph_refuses_a_specifier_the_viewer_cannot_serve(tmp_path: Path):
    (tmp_path / "app.js").write_text("import { x } from './js/x.js';\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="one flat folder"):
        import_graph(tmp_path, "app.js")
    (tmp_path / "app.js").write_text("import { x } from './gone.js';\n", encoding="utf-8")
    with pytest.raises(AssertionError, match="does not exist"):
        import_graph(tmp_path, "app.js")


# ----- the graph --------------------------------------------------------------------------------
class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))


def test_the_page_loads_one_entry_as_a_module():
    parser = _Scripts()
    parser.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    assert parser.scripts == [{"type": "module", "src": f"/static/{ENTRY}"}]


def test_the_entry_imports_modules():
    assert len(MODULES) > 10, MODULES  # the split happened: the graph is not just app.js


def test_there_is_no_import_cycle():
    assert find_cycle(GRAPH) is None


def test_every_script_in_the_folder_is_reached_from_the_entry():
    on_disk = sorted(p.name for p in STATIC.glob("*.js"))
    assert on_disk == MODULES


@pytest.mark.parametrize("name", MODULES)
def test_no_module_is_over_the_line_cap(name: str):
    lines = len((STATIC / name).read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines: split it along its sections"


@pytest.mark.parametrize("name", MODULES)
def test_no_module_writes_markup(name: str):
    source = (STATIC / name).read_text(encoding="utf-8")
    used = [sink for sink in SINKS if sink in source]
    assert used == [], f"{name} uses {used}: render memories with el()/textContent (dom.js)"


# ----- served by the real service ---------------------------------------------------------------
@pytest.fixture(scope="module")
def viewer_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    data = tmp_path_factory.mktemp("viewer-modules") / "data"
    data.mkdir()
    port = free_port()
    svc = Service(data_dir=data, port=port, env=base_env(data, port, WORKBENCH_EMBEDDER="none"))
    svc.start()
    status, body = svc.post("/api/memory/save", {"text": "a card for the feed", "project": "m"})
    assert status == 200, body
    yield svc
    svc.stop()


def test_every_module_is_served_as_javascript(viewer_service: Service):
    conn = http.client.HTTPConnection("127.0.0.1", viewer_service.port, timeout=10)
    try:
        for name in MODULES:
            conn.request("GET", f"/static/{name}")
            response = conn.getresponse()
            body = response.read()
            assert response.status == 200, name
            assert response.getheader("content-type") == JS_CONTENT_TYPE, name
            assert "script-src 'self'" in response.getheader("content-security-policy"), name
            assert body == (STATIC / name).read_bytes(), name
    finally:
        conn.close()


# ----- node: parse, link and evaluate -----------------------------------------------------------
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


@needs_node
@pytest.mark.parametrize("name", MODULES)
def test_each_module_parses_as_a_module(name: str):
    assert NODE is not None
    done = subprocess.run(
        [NODE, "--input-type=module", "--check"],
        input=(STATIC / name).read_bytes(),
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, f"{name}: {done.stderr.decode()}"


@needs_node
def test_the_graph_links_and_evaluates(tmp_path: Path):
    """Every imported name is exported and no module throws while loading (no DOM needed).

    A copy beside a ``{"type": "module"}`` package.json makes node read ``.js`` as modules;
    the stand-in ``document`` says "still loading", so the entry waits instead of starting.
    """
    assert NODE is not None
    for name in MODULES:
        shutil.copy(STATIC / name, tmp_path / name)
    (tmp_path / "package.json").write_text('{"type": "module"}\n', encoding="utf-8")
    script = (
        "globalThis.document = { readyState: 'loading', addEventListener() {} };\n"
        f"await import('./{ENTRY}');\n"
        "console.log('loaded');\n"
    )
    done = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "loaded"

    # The same run fails on a name nobody exports, so the pass above means something.
    entry = tmp_path / ENTRY
    entry.write_text(
        entry.read_text(encoding="utf-8").replace("import {", "import { notExported,", 1),
        encoding="utf-8",
    )
    broken = subprocess.run(
        [NODE, "--input-type=module", "-e", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert broken.returncode != 0
    assert "notExported" in broken.stderr


# ----- the browser ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    yield from launch_browser()


def test_the_page_loads_every_module_with_no_console_error(browser: Any, viewer_service: Service):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(10000)
    problems: list[str] = []
    scripts: dict[str, tuple[int, str | None]] = {}

    def on_response(response: Any) -> None:
        path = response.url.removeprefix(viewer_service.url)
        if response.status >= 400:
            problems.append(f"{response.status} for {path}")
        if path.startswith("/static/") and path.endswith(".js"):
            scripts[path.removeprefix("/static/")] = (
                response.status,
                response.headers.get("content-type"),
            )

    page.on("response", on_response)
    page.on("requestfailed", lambda request: problems.append(f"failed: {request.url}"))
    page.on("pageerror", lambda exc: problems.append(f"page error: {exc}"))
    page.on(
        "console",
        lambda msg: (
            problems.append(f"console {msg.type}: {msg.text}") if msg.type == "error" else None
        ),
    )
    from playwright.sync_api import TimeoutError as PageTimeout

    try:
        page.goto(viewer_service.url + "/")
        try:
            page.wait_for_selector("#conn.pill-live")
            page.wait_for_selector("#feed .card")
            page.wait_for_selector("#stats-mini b")
            page.wait_for_function("document.querySelectorAll('#f-project option').length > 1")
        except PageTimeout as exc:
            pytest.fail(f"the page did not come up ({exc.message}); it reported {problems}")
        loaded = dict(scripts)
        seen = list(problems)
    finally:
        context.close()
    assert seen == []
    assert sorted(loaded) == MODULES
    assert set(loaded.values()) == {(200, JS_CONTENT_TYPE)}
