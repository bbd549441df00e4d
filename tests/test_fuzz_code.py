"""Hostile input to the code tools (issue 22 item 1): source, encodings, nesting, paths, MCP.

What must hold whatever the input:

- an outline is produced or the file is refused with a ``WorkbenchError`` naming why (binary,
  too large); never another exception, never a ``RecursionError``;
- every symbol's range lies inside the file (1 <= start <= end <= lines), the folded view
  renders, and unfolding any listed symbol gives text from inside the file;
- a path either resolves inside the root or is refused (never read outside it);
- each ``tools/call`` to the real MCP server is answered with its id, and the server lives.

Inputs: random bytes under every extension; every sample cut at many offsets (truncated
source); samples spliced at random; nesting thousands deep in each language family; each
sample in every encoding it can be written in (line numbers must not move); random paths
and queries; raw hostile JSON-RPC arguments (lone surrogates, NUL, wrong types, huge text).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.code_samples import SAMPLES, write_repo
from tests.conftest import ROOT, base_env, free_port
from tests.fuzz_harness import budget
from tests.fuzz_strategies import json_values, render
from tests.mcp_stdio import RawClient, initialized_mcp
from workbench.code import navigate
from workbench.code.fold import MAX_INDENT, folded_view
from workbench.code.languages import EXTENSIONS
from workbench.code.source import read_source
from workbench.code.symbols import ParsedFile, parse
from workbench.code.unfold import unfold
from workbench.errors import WorkbenchError

pytestmark = pytest.mark.slow

SLOW = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_repo(tmp_path_factory.mktemp("fuzz-code") / "repo").resolve()


def check(parsed: ParsedFile, text: str) -> None:
    """The invariants every outline keeps, whatever the source."""
    lines = text.split("\n")
    assert parsed.total_lines == len(lines)
    for symbol, _, _ in parsed.walk():
        assert 1 <= symbol.line_start <= symbol.line_end <= parsed.total_lines, symbol
        assert "\n" not in symbol.signature
        assert len(symbol.signature) <= 200
    view = folded_view(parsed)
    assert view.tokens > 0
    for symbol, parent, _ in itertools.islice(parsed.walk(), 50):
        qualified = f"{parent}.{symbol.name}" if parent else symbol.name
        done = unfold(parsed, lines, qualified)
        assert done is not None
        assert 1 <= done.line_start <= done.line_end <= len(lines)


def outline_or_refused(repo: Path, name: str, data: bytes) -> None:
    path = repo / "fuzz" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    refused = ""
    try:
        result = navigate.outline(repo, f"fuzz/{name}")
    except WorkbenchError as exc:
        refused = exc.message
    if refused:
        assert "binary" in refused or "limit" in refused, refused
        return
    check(result.parsed, read_source(path, name).text)
    navigate.outline_text(result)


# ----- random and truncated source -----------------------------------------------------------


@settings(max_examples=budget(120), deadline=None, suppress_health_check=SLOW)
@given(ext=st.sampled_from(sorted(EXTENSIONS)), data=st.binary(max_size=2000))
def test_random_bytes_under_every_extension(repo: Path, ext: str, data: bytes) -> None:
    outline_or_refused(repo, f"random{ext}", data)


@settings(max_examples=budget(100), deadline=None, suppress_health_check=SLOW)
@given(
    language=st.sampled_from(sorted(SAMPLES)),
    pieces=st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=12),
)
def test_spliced_samples_keep_the_invariants(language: str, pieces: list[int]) -> None:
    """Slices of every sample glued together: unbalanced braces, half a class, stray dedents."""
    name, _, _ = SAMPLES[language]
    corpus = "".join(source for _, source, _ in SAMPLES.values())
    text = "".join(corpus[p % len(corpus) : p % len(corpus) + 97] for p in pieces)
    check(parse(text, name), text)


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_every_truncation_of_each_sample(language: str) -> None:
    name, source, expected = SAMPLES[language]
    for cut in range(0, len(source), 5):
        text = source[:cut]
        check(parse(text, name), text)
    whole = parse(source, name)
    assert not whole.error_nodes
    assert whole.count() == len(expected)


# ----- deep nesting --------------------------------------------------------------------------


def _nested_python(depth: int) -> str:
    return "".join(f"{'    ' * i}class C{i}:\n" for i in range(depth)) + "    " * depth + "x = 1\n"


NESTING = {
    "deep.py": _nested_python(2_000),
    "deep.ts": "class A { m() { " * 3_000 + "} }" * 3_000,
    "deep.c": "int f() {" + "{" * 20_000 + "}" * 20_000 + "}\n",
    "deep.rs": "fn f() { " + "(" * 10_000 + ")" * 10_000 + " }\n",
    "deep.rb": "module M\n" * 3_000 + "end\n" * 3_000,
    "deep.md": "".join(f"{'#' * (1 + i % 6)} h{i}\n" for i in range(5_000)) + "> " * 5_000,
    "deep.sh": "f() { " * 2_000 + "}" * 2_000 + "\n",
    "unclosed.java": "class A {" * 5_000,
}


@pytest.mark.parametrize("name", sorted(NESTING))
def test_deep_nesting_costs_no_recursion(repo: Path, name: str) -> None:
    text = NESTING[name]
    parsed = parse(text, name)
    check(parsed, text)
    view = folded_view(parsed).text
    widest = max(len(line) - len(line.lstrip(" ")) for line in view.splitlines())
    assert widest <= 2 * (MAX_INDENT + 2) + 2 or name.endswith(".md")
    (repo / name).write_text(text, encoding="utf-8")
    navigate.search(repo, "C1999 A f M h4999", name, max_results=5)


# ----- every encoding ------------------------------------------------------------------------

BOMS = {
    "utf-8-sig": ("utf-8", b"\xef\xbb\xbf"),
    "utf-16-le": ("utf-16-le", b"\xff\xfe"),
    "utf-16-be": ("utf-16-be", b"\xfe\xff"),
    "utf-32-le": ("utf-32-le", b"\xff\xfe\x00\x00"),
    "utf-32-be": ("utf-32-be", b"\x00\x00\xfe\xff"),
}
PLAIN = ["utf-8", "latin-1", "cp1252", "shift_jis", "gb18030", "koi8-r", "mac-roman"]


@pytest.mark.parametrize("encoding", sorted(BOMS) + PLAIN)
def test_every_encoding_keeps_every_samples_symbols(repo: Path, encoding: str) -> None:
    for language, (name, source, expected) in SAMPLES.items():
        codec, bom = BOMS.get(encoding, (encoding, b""))
        data = bom + source.encode(codec)
        target = f"enc/{encoding}/{Path(name).name}"
        path = repo / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        result = navigate.outline(repo, target)
        got = [
            (f"{p}.{s.name}" if p else s.name, s.kind, s.line_start, s.line_end)
            for s, p, _ in result.parsed.walk()
        ]
        assert got == expected, (language, encoding)


@settings(max_examples=budget(80), deadline=None, suppress_health_check=SLOW)
@given(
    ext=st.sampled_from([".py", ".go", ".md", ".c"]),
    text=st.text(max_size=300),
    codec=st.sampled_from(["utf-8", "utf-16", "utf-32", "utf-8-sig"]),
    junk=st.binary(max_size=8),
)
def test_random_text_in_any_encoding_with_junk(
    repo: Path, ext: str, text: str, codec: str, junk: bytes
) -> None:
    """Lone surrogates are not encodable: they go in as invalid bytes, like a broken file."""
    data = text.encode(codec, errors="surrogatepass") + junk
    outline_or_refused(repo, f"any{ext}", data)


# ----- paths and queries ---------------------------------------------------------------------

path_parts = st.sampled_from(
    ["..", ".", "/", "src", "accounts.py", "~", "\0", "\ud800", "/etc/passwd", "a" * 300, "//", ""]
)


@settings(max_examples=budget(150), deadline=None, suppress_health_check=SLOW)
@given(parts=st.lists(path_parts, max_size=8), extra=st.text(max_size=20))
def test_any_path_is_read_inside_the_root_or_refused(
    repo: Path, parts: list[str], extra: str
) -> None:
    given_path = "/".join(parts) + extra
    for call in (
        lambda: navigate.outline(repo, given_path).path,
        lambda: navigate.unfold(repo, given_path, "Account").path,
        lambda: navigate.search(repo, "acc", given_path or None).query,
    ):
        refused = ""
        try:
            call()
        except WorkbenchError as exc:
            refused = exc.message or "(no message)"
        if not refused and given_path:  # what was read lies inside the root
            resolved = (repo / given_path).resolve()
            assert resolved == repo or repo in resolved.parents


@settings(max_examples=budget(60), deadline=None, suppress_health_check=SLOW)
@given(query=st.text(max_size=600), max_results=st.integers(min_value=-5, max_value=300))
def test_any_query_is_answered_or_refused(repo: Path, query: str, max_results: int) -> None:
    refused = ""
    try:
        result = navigate.search(repo, query, "src", max_results=max_results)
    except WorkbenchError as exc:
        refused = exc.message
    if refused:
        assert "query" in refused or "max_results" in refused, refused
        return
    assert len(result.matches) <= max_results
    navigate.search_text(result)


# ----- the real MCP server -------------------------------------------------------------------

CODE_TOOLS = ["smart_search", "smart_outline", "smart_unfold"]
_ids = itertools.count(5000)


@pytest.fixture(scope="module")
def mcp(repo: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RawClient]:
    data = tmp_path_factory.mktemp("fuzz-code-data")
    env = base_env(data, free_port(), CLAUDE_PROJECT_DIR=str(repo))
    with initialized_mcp(env, ROOT) as client:
        yield client
    assert "Traceback" not in client.stderr()


def call(mcp: RawClient, tool: str, arguments_json: str) -> dict[str, Any]:
    request_id = next(_ids)
    line = (
        f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
        f'"params":{{"name":"{tool}","arguments":{arguments_json}}}}}'
    )
    mcp.send_line(line.encode("utf-8", errors="surrogatepass"))
    return mcp.reply(request_id, timeout=60)


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("smart_outline", '{"file_path":"src/\\ud800.py"}'),
        ("smart_outline", '{"file_path":"src/a\\u0000.py"}'),
        ("smart_outline", '{"file_path":12}'),
        ("smart_outline", '{"file_path":["src/accounts.py"]}'),
        ("smart_outline", '{"file_path":"' + "a/" * 3000 + '"}'),
        ("smart_unfold", '{"file_path":"src/accounts.py","symbol_name":"\\udfff"}'),
        ("smart_unfold", '{"file_path":"src/accounts.py"}'),
        ("smart_search", '{"query":"\\ud83d","path":"\\u0000"}'),
        ("smart_search", '{"query":"store","max_results":1e400}'),
        ("smart_search", '{"query":' + "[" * 500 + "]" * 500 + "}"),
        ("smart_search", '{"query":"x","file_pattern":"\\ud800"}'),
    ],
)
def test_hostile_arguments_are_answered(mcp: RawClient, tool: str, arguments: str) -> None:
    reply = call(mcp, tool, arguments)
    assert "result" in reply or "error" in reply
    if "result" in reply:
        text = json.dumps(reply["result"])
        assert "Traceback" not in text
    good = call(mcp, "smart_outline", '{"file_path":"src/accounts.py"}')
    assert good["result"]["isError"] is False


@settings(max_examples=budget(30), deadline=None, suppress_health_check=SLOW)
@given(tool=st.sampled_from(CODE_TOOLS), arguments=json_values)
def test_random_arguments_to_the_code_tools_are_answered(
    mcp: RawClient, tool: str, arguments: Any
) -> None:
    reply = call(mcp, tool, render(arguments))
    assert "result" in reply or "error" in reply, reply
