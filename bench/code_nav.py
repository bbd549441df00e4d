"""Code navigation cost: outline of a 5,000-line file, search over 2,000 files. Prints figures.

Both through ``workbench.code.navigate``, the functions behind the MCP tools and the CLI:

- ``outline``: a generated 5,000-line file (Python by default; ``--language`` picks another
  of the samples' languages), read, parsed and folded on every run (outline has no cache);
- ``search``: a generated repo of 2,000 files across the twelve sample languages (each a
  sample with its symbols renamed, plus filler functions, ~60-120 lines), or ``--repo PATH``
  for a real checkout (e.g. one fetched into /work/data-sets/). ``cold`` clears the parse
  cache before each query (a CLI run, or the MCP server's first search); ``warm`` keeps it
  (the MCP server's later searches: files unchanged since are not parsed again).

p50/p95 over ``--runs`` runs per figure, wall clock, in this process. The box these figures
come from is shared with other benches (2 cores): compare only figures of one run.

Usage: python bench/code_nav.py [--runs 20] [--files 2000] [--lines 5000] [--repo PATH]
"""

from __future__ import annotations

import argparse
import random
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.harness import progress  # noqa: E402
from tests.code_samples import SAMPLES  # noqa: E402
from workbench.code import cache, navigate  # noqa: E402

QUERIES = ["store", "deposit", "greet_7", "Account", "helper", "render_view", "Ledger size"]


def big_python(lines: int) -> str:
    """A realistic module: imports, classes of methods with docstrings, functions."""
    out = ["import os", "from typing import Any", ""]
    n = 0
    while len(out) < lines:
        out += [
            "",
            f"class Service{n}(Base):",
            f'    """Service number {n}: handles requests."""',
            "",
        ]
        for m in range(6):
            out += [
                f"    def handle_{m}(self, request: dict[str, Any], retries: int = 3) -> dict:",
                f'        """Handle request kind {m}."""',
                "        result = {}",
                "        for key, value in request.items():",
                "            result[key] = value",
                "        return result",
                "",
            ]
        out += [f"def helper_{n}(x: int, y: int) -> int:", "    return x + y", ""]
        n += 1
    return "\n".join(out[:lines]) + "\n"


def renamed(language: str, suffix: str) -> str:
    """The sample of ``language`` with each of its symbol names given ``suffix``."""
    _, source, expected = SAMPLES[language]
    names = {q.rsplit(".", 1)[-1] for q, _, _, _ in expected}
    names = {n for n in names if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", n)}
    if not names or language == "markdown":
        return source
    pattern = re.compile(r"\b(" + "|".join(sorted(names, key=len, reverse=True)) + r")\b")
    return pattern.sub(rf"\g<1>{suffix}", source)


def big_file(language: str, lines: int) -> tuple[str, str]:
    """(file name, text) of about ``lines`` lines in ``language``."""
    if language == "python":
        return "big.py", big_python(lines)
    name, source, _ = SAMPLES[language]
    copies = [renamed(language, f"_{i}") for i in range(lines // source.count("\n") + 1)]
    text = "\n".join(copies)
    return f"big{Path(name).suffix}", "\n".join(text.split("\n")[:lines]) + "\n"


def make_repo(root: Path, files: int, seed: int = 7) -> Path:
    """``files`` source files in nested folders, every sample language, symbols renamed."""
    rng = random.Random(seed)
    languages = sorted(SAMPLES)
    (root / ".git").mkdir(parents=True)
    for i in range(files):
        language = languages[i % len(languages)]
        name, _, _ = SAMPLES[language]
        text = renamed(language, f"_{i}")
        if language == "python":
            text += "".join(
                f"\n\ndef render_view_{i}_{k}(x):\n    return x\n"
                for k in range(rng.randint(5, 30))
            )
        folder = root / f"pkg{i % 40}" / f"mod{i % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"f{i}{Path(name).suffix}").write_text(text, encoding="utf-8")
    return root


def timed(
    runs: int, work: Callable[[], object], before: Callable[[], None] | None = None
) -> list[float]:
    out = []
    for _ in range(runs):
        if before:
            before()
        start = time.perf_counter()
        work()
        out.append((time.perf_counter() - start) * 1000)
    return out


def row(label: str, samples: list[float], extra: str = "") -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"{label:<52} {statistics.median(ordered):>9.1f} {p95:>9.1f}   {extra}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--language", default="python", choices=sorted(SAMPLES))
    parser.add_argument("--repo", type=Path, help="a real checkout to search instead")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp).resolve()
        name, text = big_file(args.language, args.lines)
        (base / "one").mkdir()
        (base / "one" / name).write_text(text, encoding="utf-8")
        progress(f"outline of {name}: {len(text.splitlines())} lines, {len(text):,} bytes")
        outline = navigate.outline(base / "one", name)
        outline_ms = timed(args.runs, lambda: navigate.outline(base / "one", name))

        if args.repo:
            repo = args.repo.resolve()
        else:
            progress(f"generating a {args.files}-file repo")
            repo = make_repo(base / "repo", args.files)
        cold: list[float] = []
        warm: list[float] = []
        scanned = 0
        for query in QUERIES:
            progress(f"search {query!r}")
            cold += timed(
                max(1, args.runs // 4), lambda q=query: navigate.search(repo, q), cache.clear
            )
            navigate.search(repo, query)
            warm += timed(args.runs, lambda q=query: navigate.search(repo, q))
            scanned = navigate.search(repo, query).files_scanned

    print("Code navigation (workbench.code.navigate); ms; box shared with other benches (2 cores)")
    print(f"{'':<52} {'p50':>9} {'p95':>9}")
    print(
        row(
            f"outline, {len(text.splitlines()):,}-line {outline.parsed.language} file",
            outline_ms,
            f"{outline.parsed.count()} symbols, ~{outline.tokens:,} tokens folded "
            f"vs ~{len(text) // 4:,} to read it",
        )
    )
    where = "a real repo" if args.repo else "a generated repo"
    print(row(f"search, {scanned:,} files ({where}), cold", cold, f"{len(QUERIES)} queries"))
    print(row(f"search, {scanned:,} files ({where}), warm cache", warm, "files unchanged"))


if __name__ == "__main__":
    main()
