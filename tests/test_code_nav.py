"""Code navigation (issue 22 item 1): outline, unfold and search over real files in a repo.

Every language's sample (``tests/code_samples.py``) is written into a git work tree in
``tmp_path`` and read back through ``workbench.code.navigate``, the functions the MCP tools
and the CLI call: the symbols, kinds and line ranges of each file; the original's text
shapes; unfolding with comments and decorators; the missing-symbol answer; search across
languages with the skipped folders and ``.gitignore`` left out; paths that leave the root
(``..``, absolute, symlinks) refused; binary, huge and oddly encoded files; and the cache
seeing an edited file. The MCP tools run through a real stdio client in
``test_code_mcp.py``, the CLI in ``test_code_cli.py``, hostile input in
``test_fuzz_code.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.code_samples import SAMPLES, write_repo
from workbench.code import navigate
from workbench.code.languages import SUPPORTED, has_outline
from workbench.code.source import MAX_FILE_BYTES
from workbench.code.walk import ignored, parse_gitignore
from workbench.errors import InvalidInput, NotFound, WorkbenchError
from workbench.recall.file_history import render_file_context


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return write_repo(tmp_path / "repo").resolve()


def symbols_of(result: navigate.Outline) -> list[tuple[str, str, int, int]]:
    return [
        (f"{parent}.{s.name}" if parent else s.name, s.kind, s.line_start, s.line_end)
        for s, parent, _ in result.parsed.walk()
    ]


def test_every_required_language_has_a_grammar_and_a_sample() -> None:
    required = {"python", "typescript", "tsx", "javascript", "go", "rust", "java", "c", "cpp"}
    assert required | {"ruby", "bash", "markdown"} <= set(SUPPORTED)
    assert set(SAMPLES) == set(SUPPORTED)


@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_outline_of_each_language(repo: Path, language: str) -> None:
    name, _, expected = SAMPLES[language]
    result = navigate.outline(repo, name)
    assert result.parsed.language == language
    assert not result.parsed.error_nodes
    assert symbols_of(result) == expected
    assert result.tokens > 0
    assert result.text.startswith(("📁 ", "📄 ") + ())
    assert f"{name} ({language}, " in result.text.splitlines()[0]


def test_python_outline_reads_like_the_originals(repo: Path) -> None:
    result = navigate.outline(repo, "src/accounts.py")
    lines = result.text.splitlines()
    assert lines[0] == f"📁 src/accounts.py (python, 24 lines, ~{result.tokens} tokens folded)"
    assert lines[2:5] == [
        "  📦 Imports: 2 statements",
        "    import os",
        "    from typing import Any",
    ]
    assert "  ◆ Account [exported] (L7-18)" in lines
    assert "    class Account(Base)" in lines
    assert "    💬 A bank account." in lines
    # members indented under the class; the signature stops at the body, braces and all
    assert "    ƒ deposit [exported] (L16-18)" in lines
    assert "      def deposit(self, amount: int = 0, meta: dict[str, Any] = {}) -> None" in lines
    assert "  ƒ _helper (L21-23)" in lines  # not exported: a leading underscore
    assert "    def _helper(x, y)" in lines  # a multi-line signature on one line


def test_exported_follows_each_languages_rule(repo: Path) -> None:
    ts = {s.name: s.exported for s, _, _ in navigate.outline(repo, "web/users.ts").parsed.walk()}
    assert ts["UserStore"]
    assert ts["findUser"]
    assert not ts["internal"]
    go = {s.name: s.exported for s, _, _ in navigate.outline(repo, "store/store.go").parsed.walk()}
    assert go == {"Store": True, "Add": True, "newStore": False}
    rust = [s.exported for s, _, _ in navigate.outline(repo, "src/cache.rs").parsed.walk()]
    assert rust == [True, False, True, True, False, False]


def test_markdown_outline_lists_headings_code_and_front_matter(repo: Path) -> None:
    text = navigate.outline(repo, "docs/guide.md").text.splitlines()
    assert text[0].startswith("📄 docs/guide.md (markdown, 22 lines, ~")
    assert text[1].rstrip().endswith("L1-3")
    assert "---frontmatter---" in text[1]
    assert text[2].startswith("  # Guide")
    assert text[2].rstrip().endswith("L4")
    assert text[3].startswith("    ## Install")
    assert text[4].startswith("      ```bash")
    assert text[4].rstrip().endswith("L10-12")
    assert text[6].startswith("  # Setext title")


def test_unfold_gives_the_source_with_its_decorators_and_comments(repo: Path) -> None:
    result = navigate.unfold(repo, "src/accounts.py", "balance")
    assert result.found
    assert result.kind == "method"
    assert result.text == (
        "// 📍 src/accounts.py L12-14\n"
        "    @property\n"
        "    def balance(self) -> int:\n"
        "        return self._balance"
    )
    add = navigate.unfold(repo, "native/ledger.c", "add")
    assert add.text.splitlines()[1:] == [
        "/* Adds two numbers. */",
        "static int add(int a, int b) {",
        "    return a + b;",
        "}",
    ]
    assert navigate.unfold(repo, "native/ledger.c", "point").text.splitlines()[1] == (
        "struct point {"  # the #include lines above are not its comment
    )


def test_unfold_by_qualified_name_and_of_a_markdown_section(repo: Path) -> None:
    build = navigate.unfold(repo, "lib/billing.rb", "Billing.Invoice.build")
    assert build.symbol == "Billing.Invoice.build"
    assert build.text.splitlines()[1:] == ["    def self.build", "      new", "    end"]
    section = navigate.unfold(repo, "docs/guide.md", "Install")
    assert section.text == (
        "<!-- 📍 docs/guide.md L8-12 -->\n## Install\n\n```bash\npip install workbench\n```"
    )


def test_unfold_of_a_missing_symbol_lists_the_available_ones(repo: Path) -> None:
    result = navigate.unfold(repo, "src/accounts.py", "withdraw")
    assert not result.found
    assert result.text == (
        'Symbol "withdraw" not found in src/accounts.py.\n\nAvailable symbols:\n'
        "  - Account (class, L7-18)\n"
        "  - Account.balance (method, L13-14)\n"
        "  - Account.deposit (method, L16-18)\n"
        "  - _helper (function, L21-23)"
    )


def test_search_finds_symbols_across_languages_best_first(repo: Path) -> None:
    result = navigate.search(repo, "store")
    names = [(m.qualified_name, m.path) for m in result.matches]
    # name matches first (equal beats contained); a tie keeps the walk's (sorted) file order
    assert names == [
        ("Store", "src/cache.rs"),
        ("Store", "store/store.go"),
        ("newStore", "store/store.go"),
        ("UserStore", "web/users.ts"),
        ("Add", "store/store.go"),  # its signature holds "Store": func (s *Store) Add(...)
    ]
    assert result.matches[-1].reason == "signature match"
    assert result.files_scanned == len(SAMPLES)
    assert result.symbols_found == sum(len(expected) for _, _, expected in SAMPLES.values())
    text = navigate.search_text(result)
    assert text.startswith('🔍 Smart Search: "store"\n   Scanned 12 files, found ')
    assert "  type Store (store/store.go:6-8)\n    type Store struct" in text
    assert f"(~{result.tokens} tokens for folded view)" in text
    assert "── Folded File Views ──" in text
    assert "📁 store/store.go (go, 18 lines, ~" in text
    assert text.endswith("use smart_unfold with file path and symbol name")
    assert result.tokens == sum(tokens for _, tokens, _ in result.files) > 0


def test_search_skips_ignored_folders_gitignore_and_hidden_files(repo: Path) -> None:
    result = navigate.search(repo, "qqxneedle")
    assert result.matches == []
    assert "No matching symbols found." in navigate.search_text(result)
    # the same file outside the skipped places is found
    (repo / "src" / "found.py").write_text("def qqxneedle():\n    pass\n")
    assert [m.path for m in navigate.search(repo, "qqxneedle").matches] == ["src/found.py"]


def test_search_scope_file_pattern_and_limit(repo: Path) -> None:
    assert {m.path for m in navigate.search(repo, "add", "native").matches} == {"native/ledger.c"}
    assert {m.path for m in navigate.search(repo, "a", file_pattern=".rs").matches} == {
        "src/cache.rs"
    }
    assert len(navigate.search(repo, "e", max_results=2).matches) == 2
    single = navigate.search(repo, "deposit", "src/accounts.py")
    assert [m.qualified_name for m in single.matches] == ["Account.deposit"]


@pytest.mark.parametrize(
    ("query", "kwargs", "message"),
    [
        ("", {}, "the query is empty"),
        (" _-./ ", {}, "the query is empty"),
        ("x" * 501, {}, "over 500 characters"),
        ("x", {"max_results": 0}, "max_results must be 1 to 200"),
    ],
)
def test_search_refuses_bad_queries(
    repo: Path, query: str, kwargs: dict[str, int], message: str
) -> None:
    with pytest.raises(InvalidInput, match=message):
        navigate.search(repo, query, **kwargs)


def test_paths_that_leave_the_root_are_refused(repo: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.py"
    secret.write_text("def password():\n    return 'hunter2'\n")
    (repo / "src" / "escape.py").symlink_to(secret)
    (repo / "linked").symlink_to(tmp_path)
    for given in ("../secret.py", str(secret), "src/escape.py", "linked/secret.py"):
        with pytest.raises(InvalidInput, match="outside the project root"):
            navigate.outline(repo, given)
        with pytest.raises(InvalidInput, match="outside the project root"):
            navigate.unfold(repo, given, "password")
    with pytest.raises(InvalidInput, match="outside the project root"):
        navigate.search(repo, "password", "..")
    # the walk neither follows the folder link nor reads the file link
    assert navigate.search(repo, "password").matches == []
    # a link that stays inside the root is fine
    (repo / "src" / "alias.py").symlink_to(repo / "src" / "accounts.py")
    assert navigate.outline(repo, "src/alias.py").parsed.symbols


def test_bad_paths_say_what_to_do(repo: Path) -> None:
    with pytest.raises(NotFound, match="does not exist"):
        navigate.outline(repo, "src/nothing.py")
    with pytest.raises(InvalidInput, match="is a folder"):
        navigate.outline(repo, "src")
    with pytest.raises(InvalidInput, match="NUL byte"):
        navigate.outline(repo, "src/a\0.py")
    with pytest.raises(InvalidInput, match="empty"):
        navigate.unfold(repo, "src/accounts.py", "  ")


def test_a_search_skips_minified_bundles_and_an_outline_still_reads_them(repo: Path) -> None:
    bundle = "".join(f"function f{i}(a){{return a+{i}}};" for i in range(2_000))
    (repo / "web" / "app.min.js").write_text(bundle + "\nfunction qqxbundle(){}\n")
    result = navigate.search(repo, "qqxbundle")
    assert result.matches == []
    assert result.skipped == ["web/app.min.js: minified or generated (very long lines)"]
    assert navigate.outline(repo, "web/app.min.js").parsed.count() == 2_001


def test_binary_and_huge_files_are_skipped_with_a_reason(repo: Path) -> None:
    (repo / "src" / "blob.py").write_bytes(b"def a():\n\0\0\0binary")
    huge = repo / "src" / "huge.py"
    huge.write_text("x = 1\n" * (MAX_FILE_BYTES // 6 + 10))
    with pytest.raises(WorkbenchError, match="a binary file"):
        navigate.outline(repo, "src/blob.py")
    with pytest.raises(WorkbenchError, match="over the 1,048,576-byte limit"):
        navigate.outline(repo, "src/huge.py")
    result = navigate.search(repo, "a")
    assert any("src/blob.py: a binary file" in s for s in result.skipped)
    assert any("src/huge.py: over the" in s for s in result.skipped)
    assert "Skipped 2 files" in navigate.search_text(result)


@pytest.mark.parametrize(
    ("encoding", "bom"),
    [
        ("utf-8", b""),
        ("utf-8", b"\xef\xbb\xbf"),
        ("utf-16-le", b"\xff\xfe"),
        ("utf-16-be", b"\xfe\xff"),
        ("utf-32-le", b"\xff\xfe\x00\x00"),
        ("latin-1", b""),
        ("cp1252", b""),
    ],
)
def test_every_encoding_reads_with_the_right_lines(repo: Path, encoding: str, bom: bytes) -> None:
    source = '# café\n\n\ndef café_crème(x):\n    return "€" if x else "ü"\n'
    if encoding == "latin-1":
        source = source.replace("€", "E")
    (repo / "src" / "enc.py").write_bytes(bom + source.encode(encoding))
    result = navigate.outline(repo, "src/enc.py")
    [symbol] = result.parsed.symbols
    assert (symbol.line_start, symbol.line_end) == (4, 5)
    if encoding not in ("latin-1", "cp1252"):  # read as Latin-1: the name is mojibake
        assert symbol.name == "café_crème"
        unfolded = navigate.unfold(repo, "src/enc.py", "café_crème")
        assert unfolded.text.endswith('return "€" if x else "ü"')


def test_crlf_and_form_feeds_keep_line_numbers(repo: Path) -> None:
    source = "\f\r\nclass A:\r\n    x = 1\u2028\r\n\r\ndef f():\r\n    pass\r\n"
    (repo / "src" / "crlf.py").write_bytes(source.encode("utf-8"))
    result = navigate.outline(repo, "src/crlf.py")
    assert [(s.name, s.line_start, s.line_end) for s in result.parsed.symbols] == [
        ("A", 2, 3),
        ("f", 5, 6),
    ]
    assert (
        navigate.unfold(repo, "src/crlf.py", "f").text
        == "// 📍 src/crlf.py L5-6\ndef f():\n    pass"
    )


def test_a_file_without_a_grammar_is_said_so(repo: Path) -> None:
    (repo / "notes.txt").write_text("hello\n")
    result = navigate.outline(repo, "notes.txt")
    assert result.parsed.symbols == []
    assert not result.parsed.has_grammar
    assert navigate.outline_text(result).startswith(
        "Could not outline notes.txt: no grammar for its language (unknown)"
    )
    assert "Read the file instead" in navigate.unfold(repo, "notes.txt", "x").text


def test_search_sees_an_edited_file(repo: Path) -> None:
    assert navigate.search(repo, "renamed_later").matches == []
    path = repo / "src" / "accounts.py"
    path.write_text(path.read_text() + "\n\ndef renamed_later():\n    pass\n")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert [m.qualified_name for m in navigate.search(repo, "renamed_later").matches] == [
        "renamed_later"
    ]


def test_gitignore_rules() -> None:
    rules = [("", r) for r in parse_gitignore("*.log\n/build\ndocs/**/tmp\ncache/\n!keep.log\n")]
    assert ignored(rules, "a/b/x.log", False)
    assert not ignored(rules, "a/keep.log", False)  # negated, the last match wins
    assert ignored(rules, "build", True)
    assert not ignored(rules, "src/build", True)
    assert ignored(rules, "docs/a/b/tmp", True)
    assert ignored(rules, "docs/tmp", True)
    assert ignored(rules, "x/cache", True)
    assert not ignored(rules, "x/cache", False)
    nested = [("pkg", r) for r in parse_gitignore("gen.py\n")]
    assert ignored(nested, "pkg/sub/gen.py", False)
    assert not ignored(nested, "gen.py", False)


def test_file_history_ends_with_the_outline_hint_only_for_outlinable_files() -> None:
    assert has_outline("src/a.py")
    assert has_outline("A.TSX")
    assert not has_outline("notes.txt")
    py = render_file_context('src/we"ird.py', []).text.splitlines()
    assert py[-2] == (
        'Need a structural map first? MCP `smart_outline("src/we\\"ird.py")`: signatures and '
        'line ranges, cheaper than re-reading; `smart_unfold("src/we\\"ird.py", "<symbol>")` '
        "for one function."
    )
    txt = render_file_context("notes.txt", []).text.splitlines()
    assert txt[-2].startswith("Details: MCP `get_observations`")
