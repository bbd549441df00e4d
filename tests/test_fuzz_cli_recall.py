"""Fuzz: ``workbench timeline`` and ``show``'s fast paths read arguments as Typer does, or decline.

``cli.fast_timeline.parse`` and ``cli.fast_show.parse`` are new readers of user input (issue
21). For any argument list built from the commands' own options, other options, ``=`` forms,
blanks, dashes, ids, refs and arbitrary text: they never raise; and whenever they accept,
Typer's parser (the full command on ``app``) accepts the same list and reads the same values.
And whatever answers on the service's port, their reply readers print only a well-framed 200
from this data dir's service of the expected shape, and decline anything else (the full
command then answers), never raising. (``workbench search``'s are in
``test_fuzz_cli_search``; the replier is shared.)
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from tests.test_fuzz_cli_search import (
    Replier,
    replier,
    reply,
    serve_data_dir,
    tokens,
    typer_reading,
)
from workbench.cli import fast_show, fast_timeline

pytestmark = pytest.mark.slow

__all__ = ["replier"]  # the shared module-scoped fixture

OPTIONS = [
    "--json",
    "--query",
    "-q",
    "--before",
    "--after",
    "--project",
    "--data-dir",
    "-d",
    "--team",
    "--",
    "-x",
]
VALUES = ["5", "0", "50", "51", " 7", "-1", "+3", "٣", "", " ", "#12", "12,13", "team:ana:3"]
token = tokens(OPTIONS, VALUES)


@settings(max_examples=budget(300), deadline=None)
@given(st.lists(token, max_size=6))
def test_timeline_fast_path_agrees_with_typer_or_declines(argv: list[str]) -> None:
    fast = fast_timeline.parse(argv)
    if fast is None:
        return
    full = typer_reading("timeline", argv)
    assert full is not None, f"fast path accepted what Typer refuses: {argv!r}"
    assert not full["team"]
    assert fast["anchor"] == full["anchor"]
    assert fast.get("query") == full["query"]
    assert fast["depth_before"] == full["before"]
    assert fast["depth_after"] == full["after"]
    assert fast.get("project") == full["project"]
    assert fast["json"] == full["as_json"]
    if "data_dir" in fast:
        assert fast["data_dir"] == full["data_dir"]


@settings(max_examples=budget(300), deadline=None)
@given(st.lists(token, max_size=6))
def test_show_fast_path_agrees_with_typer_or_declines(argv: list[str]) -> None:
    fast = fast_show.parse(argv)
    if fast is None:
        return
    full = typer_reading("show", argv)
    assert full is not None, f"fast path accepted what Typer refuses: {argv!r}"
    parts = [p.strip().lstrip("#") for raw in full["ids"] for p in raw.split(",")]
    assert fast["ids"] == [int(p) for p in parts if p]
    assert fast["json"] == full["as_json"]
    if "data_dir" in fast:
        assert fast["data_dir"] == full["data_dir"]


@pytest.mark.parametrize(
    ("parse", "argv"),
    [
        (fast_timeline.parse, ["12"]),
        (fast_timeline.parse, ["-q", "docker image", "--project=infra", "--json"]),
        (fast_timeline.parse, ["S3", "--before", "0", "--after=50", "-d", "/tmp/x"]),
        (fast_show.parse, ["12", "#13", "14,15"]),
        (fast_show.parse, ["12", "--json", "-d", "/tmp/x"]),
    ],
)
def test_the_common_forms_take_the_fast_path(parse: Any, argv: list[str]) -> None:
    assert parse(argv) is not None


TIMELINE = (
    b'{"anchor": {"kind": "observation", "id": 1, "created_at": "2026-11-03T10:00:00Z"},'
    b' "items": [{"kind": "observation", "id": 1, "is_anchor": true, "created_at_epoch": 1,'
    b' "type": "change", "title": "t", "tokens": 3}]}'
)
SHOWN = (
    b'[{"id": 1, "type": "change", "project": "p", "created_at": "2026-11-03T10:00:00Z",'
    b' "title": "t", "facts": ["f"]}]'
)


def test_reply_readers_decline_what_they_cannot_use(
    replier: Replier, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    ident = serve_data_dir(replier, tmp_path, monkeypatch)
    replier.raw = reply(TIMELINE, ident)
    assert fast_timeline.main(["1"]) == 0
    replier.raw = reply(SHOWN, ident)
    assert fast_show.main(["1"]) == 0
    assert "#1  t" in capsys.readouterr().out
    bad = [
        b"",
        reply(TIMELINE, "another-data-dir"),
        reply(TIMELINE, ident, status="404 Not Found"),
        reply(TIMELINE, ident)[:-3],
        reply(b'{"anchor": {"kind": "observation"}, "items": [{"id": "1"}]}', ident),
        reply(TIMELINE.replace(b'"items"', b'"teamSnapshot": 1, "items"'), ident),
        reply(SHOWN.replace(b'"facts": ["f"]', b'"facts": [1]'), ident),
        reply(SHOWN.replace(b'"id": 1', b'"id": 1, "ref": "team:ana:1"'), ident),
        reply(b'{"id": 1}', ident),
    ]
    for raw in bad:
        replier.raw = raw
        assert fast_timeline.main(["1"]) is None, raw
        assert fast_show.main(["1"]) is None, raw
    assert capsys.readouterr().out == ""


@settings(max_examples=budget(60), deadline=None)
@given(st.binary(max_size=300))
def test_reply_readers_never_raise(replier: Replier, raw: bytes) -> None:
    replier.raw = raw
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as folder:
        serve_data_dir(replier, Path(folder), patch)
        assert fast_timeline.main(["1", "--json"]) is None
        assert fast_show.main(["1", "--json"]) is None
