"""Reading a test runner's output: counts, failing tests, the first error, a verdict.

Why a module of its own: "pytest: 3 failed, 41 passed, first error: assert 2 == 3" is the
single most useful fact a coding session produces, and each runner prints it differently.
Covered: pytest (``3 failed, 41 passed in 2.1s``, ``FAILED path::test - msg``, ``E   …``),
unittest (``Ran 9 tests``, ``FAIL: test_x (mod.Class.test_x)``), jest (``Tests: 1 failed, 12
passed``, ``● Suite › test``), vitest (``Tests  1 failed | 9 passed``, ``FAIL  file > suite >
test``), cargo (``test result: …``, ``test name ... FAILED``), go (``--- FAIL: TestX``,
``FAIL pkg``/``ok pkg``), and any runner whose last summary line reads ``N failed``/``N
passed``. Input is already windowed (head and tail), so the summary at the end is always seen.

``runner_from_output`` names the runner from its output alone, so a run is recognised
behind any wrapper (``make test``, ``npm test``, ``./scripts/ci.sh``), not only by its command.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workbench.compress.rules.text import dedupe, short

_COUNT = re.compile(
    r"(\d+) (failed|passed|errors?|skipped|xfailed|xpassed|deselected|warnings?|ignored|"
    r"pending|todo)\b"
)
_SUMMARY_LINE = re.compile(r"\b\d+ (?:failed|passed|errors?|skipped|deselected|xfailed|xpassed)\b")
_FAILURE = re.compile(
    r"^(?:FAILED|ERROR) (?P<pytest>[^\s(]\S*)"
    r"|^(?:FAIL|ERROR): \S+ \((?P<unittest>[^)\s]+)\)"
    r"|^\s*--- FAIL: (?P<go>\S+)"
    r"|^FAIL\t(?P<gopkg>\S+ \[(?:build|setup) failed\])"
    r"|^test (?P<cargo>\S+) \.\.\. FAILED"
    r"|^\s*● (?P<jest>\S.*?)\s*$"
    r"|^\s*FAIL {1,2}(?P<vitest>\S+ > .*?)\s*$",
    re.MULTILINE,
)
# What each runner prints and nothing else does (checked in this order).
_SIGNATURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "pytest",
        re.compile(
            r"^=+ test session starts =+$|^FAILED \S+::\S+"
            r"|^=* ?\d+ (?:failed|passed)(?:, \d+ \w+)* in [\d.]+s(?: \(\S+\))? ?=*$",
            re.MULTILINE,
        ),
    ),
    ("unittest", re.compile(r"^Ran \d+ tests? in [\d.]+s\n\n(?:OK|FAILED \()", re.MULTILINE)),
    ("vitest", re.compile(r"^\s*Test Files\s+\d+ (?:failed|passed)", re.MULTILINE)),
    ("jest", re.compile(r"^Tests:\s+(?:\d+ \w+, )*\d+ total$", re.MULTILINE)),
    ("cargo test", re.compile(r"^test result: (?:ok|FAILED)\. \d+ passed", re.MULTILINE)),
    (
        "go test",
        re.compile(
            r"^(?:ok  |FAIL)\t\S+(?:\t(?:[\d.]+s|\(cached\))| \[build failed\])"
            r"|^--- (?:FAIL|PASS): ",
            re.M,
        ),
    ),
)
# A package's verdict: ``ok  \tpkg\t0.01s``, ``FAIL\tpkg\t0.02s``, ``?   \tpkg\t[no test
# files]``, and for a package that does not compile ``FAIL\tpkg [build failed]``.
_GO_PACKAGE = re.compile(r"^(ok  |FAIL|\?   )\t\S+(?:\t| \[(?:build|setup) failed\])", re.M)
_PYTEST_E = re.compile(r"^E {2,}(\S.*)$", re.MULTILINE)
_ERROR_LINE = re.compile(
    r"^.*(?:\b\w*(?:Error|Exception)\b:|\berror(?:\[\w+\])?:|panicked at|\bAssertionError\b"
    r"|\bexpect\(.*\)\.).*$",
    re.MULTILINE,
)
_EMPTY = ("no tests ran", "collected 0 items", "no tests found", "no test files", "ran 0 tests")
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in ", re.MULTILINE)
_UNITTEST_FAILED = re.compile(
    r"^FAILED \((?:failures=(\d+))?(?:, )?(?:errors=(\d+))?", re.MULTILINE
)
_ORDER = ("failed", "error", "passed", "skipped", "xfailed", "xpassed", "deselected", "ignored")


@dataclass
class RunOutcome:
    """What a test run's output says."""

    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    first_error: str = ""
    empty: bool = False
    notes: list[str] = field(default_factory=list)  # e.g. go's per-package verdicts

    @property
    def failed(self) -> int:
        return self.counts.get("failed", 0) + self.counts.get("error", 0)

    def status(self, exit_code: int | None, *, interrupted: bool = False) -> str:
        """``failing`` | ``passing`` | ``interrupted`` | ``empty`` | ``unclear``.

        ``empty`` means nothing ran: a "no tests" marker, only skipped/deselected counts, or
        pytest's exit code 5 ("no tests collected"), none of which is a failure.
        """
        if interrupted:
            return "interrupted"
        if self.failed or self.failures:
            return "failing"
        passed = self.counts.get("passed", 0)
        if not passed and (self.empty or self.counts or exit_code == 5):
            return "empty"
        if exit_code not in (None, 0):
            return "failing"
        if passed or exit_code == 0:
            return "passing"
        return "unclear"

    def counts_text(self) -> str:
        """``3 failed, 41 passed, 2 skipped`` (known kinds first, in a fixed order)."""
        kinds = [k for k in _ORDER if k in self.counts] + sorted(
            k for k in self.counts if k not in _ORDER
        )
        return ", ".join(f"{self.counts[k]} {k}" for k in kinds)

    def failure_files(self) -> list[str]:
        """Test files named by failing test ids (``tests/test_x.py::test_y`` → the file)."""
        return dedupe(f.split("::", 1)[0] for f in self.failures if "::" in f)


def parse_test_output(text: str) -> RunOutcome:
    """Counts, failing tests (first 20), the first error line, and whether nothing ran."""
    outcome = RunOutcome()
    if not text:
        return outcome
    lines = text.splitlines()
    summary = next((ln for ln in reversed(lines) if _SUMMARY_LINE.search(ln)), "")
    for number, kind in _COUNT.findall(summary):
        key = kind.rstrip("s") if kind in ("errors", "warnings") else kind
        outcome.counts[key] = outcome.counts.get(key, 0) + int(number)
    if not outcome.counts and not _unittest_counts(text, outcome):
        _go_counts(text, outcome)
    failures = (next(g for g in m.groups() if g) for m in _FAILURE.finditer(text))
    outcome.failures = dedupe(short(f, 160) for f in failures)[:20]
    error = _PYTEST_E.search(text) or _ERROR_LINE.search(text)
    if error:
        outcome.first_error = short(
            error.group(1) if error.re is _PYTEST_E else error.group(0), 200
        )
    lowered = text[-4000:].lower()
    outcome.empty = any(marker in lowered for marker in _EMPTY)
    return outcome


def _unittest_counts(text: str, outcome: RunOutcome) -> bool:
    """``Ran 5 tests in 0.1s`` + ``FAILED (failures=1, errors=1)`` or ``OK``."""
    ran = _UNITTEST_RAN.search(text)
    if ran is None:
        return False
    failed = _UNITTEST_FAILED.search(text)
    failures = int(failed.group(1) or 0) if failed else 0
    errors = int(failed.group(2) or 0) if failed else 0
    for key, value in (("failed", failures), ("error", errors)):
        if value:
            outcome.counts[key] = value
    outcome.counts["passed"] = max(int(ran.group(1)) - failures - errors, 0)
    return True


def runner_from_output(text: str) -> str | None:
    """The test runner whose output this is (``pytest``, ``unittest``, ``jest``…), else None."""
    if not text:
        return None
    return next((name for name, sign in _SIGNATURES if sign.search(text)), None)


def _go_counts(text: str, outcome: RunOutcome) -> None:
    """``go test`` prints no totals: count top-level ``--- FAIL``/``--- PASS`` lines instead.

    Subtests (indented) are named among the failures but not counted twice; the packages'
    own verdicts (``ok``/``FAIL``/``?`` lines) go into ``notes``.
    """
    failed = len(re.findall(r"^--- FAIL:", text, re.MULTILINE))
    passed = len(re.findall(r"^--- PASS:", text, re.MULTILINE))
    packages = [m.group(1).strip() for m in _GO_PACKAGE.finditer(text)]
    if len(packages) > 1 and (failed or "FAIL" in packages):  # which of several packages
        verdicts = [("failed", packages.count("FAIL")), ("ok", packages.count("ok"))]
        outcome.notes.append("packages: " + ", ".join(f"{n} {word}" for word, n in verdicts if n))
    if not (failed or passed):
        failed = sum(1 for ln in text.splitlines() if ln.startswith("FAIL\t"))
        passed = sum(1 for ln in text.splitlines() if ln.startswith("ok  \t"))
    if failed:
        outcome.counts["failed"] = failed
    if passed:
        outcome.counts["passed"] = passed
