"""The offline compressor as a whole: the protocol, odd shapes, size, determinism, cost.

Each rule on realistic Claude Code payloads has its own file: test_compress_offline_edits.py,
_reads.py, _bash.py, _summarize.py (the digest) and _secrets.py; the events they share are
built by tests/offline_events.py.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.offline_events import CWD, PYTEST_FAILING, bash, dumped, event, one
from workbench.compress.base import Compressor, build_compressor
from workbench.compress.offline import OfflineCompressor
from workbench.models import CompressionResult
from workbench.settings import load_settings


# ----- protocol ------------------------------------------------------------------------------
def test_offline_compressor_satisfies_the_protocol(data_dir: Any) -> None:
    compressor = build_compressor(load_settings(data_dir), "offline")
    assert isinstance(compressor, Compressor)
    assert compressor.name == "offline"
    result = compressor.observe(event("Read", {"file_path": f"{CWD}/a.py"}, "x = 1"))
    assert isinstance(result, CompressionResult)
    assert result.generated_by == "offline"


# ----- odd shapes, size, determinism, cost ---------------------------------------------------
ODD_VALUES: list[Any] = [
    None,
    "",
    "plain text",
    42,
    3.5,
    True,
    [],
    {},
    [1, "two", None, {"text": 5}],
    {"stdout": None, "stderr": 7},
    {"file": "not a dict"},
    {"file": {"content": 12}},
    {"structuredPatch": [{"newStart": "x", "lines": [1, None]}, "junk"]},
    {"filenames": "a.py"},
    {"numFiles": "3"},
    {"content": [{"type": "image"}, {"text": None}]},
    "{not json",
    '{"a": [1, 2]}',
    {"edits": "nope"},
    {"todos": [1, {"status": None}]},
    {"\u0000": "\udcff"},
    [[[[[[["deep"]]]]]]],
]
TOOLS = [
    "Edit",
    "MultiEdit",
    "Write",
    "NotebookEdit",
    "Read",
    "Grep",
    "Glob",
    "LS",
    "WebFetch",
    "WebSearch",
    "Task",
    "Agent",
    "TodoWrite",
    "ExitPlanMode",
    "Bash",
    "mcp__x__y",
    "Unknown",
]


@pytest.mark.parametrize("tool", TOOLS)
def test_odd_shapes_never_raise(tool: str) -> None:
    compressor = OfflineCompressor()
    for tool_input in ODD_VALUES:
        for tool_response in ODD_VALUES:
            result = compressor.observe(event(tool, tool_input, tool_response))
            assert len(result.observations) <= 1
            for obs in result.observations:
                assert obs.title


def test_huge_responses_stay_bounded() -> None:
    """Their wall time is in bench/worst_cases.py (issue 23: no timing asserts in tests)."""
    stdout = "collecting ...\n" + ("x" * 120 + "\n") * 40_000 + PYTEST_FAILING
    huge = bash("pytest", stdout)
    read = event(
        "Read",
        {"file_path": f"{CWD}/big.log"},
        {"type": "text", "file": {"content": "line\n" * 1_000_000}},
    )
    compressor = OfflineCompressor()
    test_obs = one(huge, compressor)
    read_obs = one(read, compressor)
    assert test_obs.facts[0] == "pytest: 3 failed, 41 passed"  # the summary at the tail is seen
    for obs in (test_obs, read_obs):
        assert len(dumped(obs)) < 5_000


def test_same_input_gives_the_same_output() -> None:
    events = [
        bash("pytest -q", PYTEST_FAILING),
        bash("pytest -q", "44 passed in 1s"),
        event("Edit", {"file_path": f"{CWD}/a.py", "old_string": "a", "new_string": "b"}, None),
        event("Grep", {"pattern": "x"}, {"filenames": ["b.py", "a.py"], "numFiles": 2}),
        bash("git commit -m 'x'", "[main abc1234] x\n"),
    ]
    first = [OfflineCompressor().observe(e).model_dump() for e in events]
    second = [OfflineCompressor().observe(e).model_dump() for e in events]
    assert first == second
    run_one = OfflineCompressor()
    run_two = OfflineCompressor()
    assert [run_one.observe(e).model_dump() for e in events] == [
        run_two.observe(e).model_dump() for e in events
    ]


def test_discovery_tokens_estimate_the_raw_call() -> None:
    tool_input = {"file_path": "/a/b.py"}
    tool_response = {"type": "text", "file": {"content": "x" * 4000}}
    result = OfflineCompressor().observe(event("Read", tool_input, tool_response))
    chars = (
        len("file_path")
        + len("/a/b.py")
        + len("type")
        + len("text")
        + len("file")
        + len("content")
        + 4000
    )
    assert result.discovery_tokens == math.ceil(chars / 4)
