"""Fuzz: ``workbench search``'s fast path reads its arguments as Typer reads them, or declines.

``cli.fast_search.parse`` is a new reader of user input (issue 21). For any argument list
built from the command's own options, other options, ``=`` forms, blanks, dashes and
arbitrary text: it never raises; and whenever it accepts, Typer's parser (the full command,
``app``'s ``search``) accepts the same list and gets the same query, project, mode, limit and
``--json``. A list Typer refuses is never accepted. And whatever answers on the service's
port, the fast path's reply reader prints only a well-framed 200 from this data dir's
service and declines anything else (the full command then answers), never raising.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from workbench.cli import fast_search
from workbench.cli.main import app

pytestmark = pytest.mark.slow

OPTIONS = ["--json", "--project", "--mode", "--limit", "--data-dir", "-d", "--obs-type", "--"]
VALUES = ["5", "0", "100", "101", " 7", "-1", "fts", "hybrid", "", " ", "webapp", "x=y", "٣"]


def tokens(options: list[str], values: list[str]) -> st.SearchStrategy[str]:
    """One argument: an option, a value, ``option=value``, or any text."""
    return st.one_of(
        st.sampled_from(options),
        st.sampled_from(values),
        st.builds(lambda o, v: f"{o}={v}", st.sampled_from(options), st.sampled_from(values)),
        st.text(max_size=12),
    )


token = tokens(OPTIONS, VALUES)


def typer_reading(command: str, argv: list[str]) -> dict[str, Any] | None:
    """What the full command's parser makes of ``argv`` (None: it refuses it)."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    try:
        with group.commands[command].make_context(command, list(argv)) as ctx:
            return dict(ctx.params)
    except Exception:  # a usage error, or --help's exit: Typer does not run the command
        return None


@settings(max_examples=budget(300), deadline=None)
@given(st.lists(token, max_size=6))
def test_fast_path_agrees_with_typer_or_declines(argv: list[str]) -> None:
    fast = fast_search.parse(argv)
    if fast is None:
        return
    full = typer_reading("search", argv)
    assert full is not None, f"fast path accepted what Typer refuses: {argv!r}"
    assert fast["query"] == full["query"]
    assert fast.get("project") == full["project"]
    assert fast.get("mode", "hybrid") == full["mode"]
    assert fast.get("limit", 20) == full["limit"]
    assert fast["json"] == full["as_json"]
    if "data_dir" in fast:
        assert fast["data_dir"] == full["data_dir"]


@pytest.mark.parametrize(
    "argv",
    [
        ["refund", "--limit", "5", "--json"],
        ["--project=webapp", "retry button"],
        ["-d", "/tmp/x", "why"],
        ["q", "--mode", "fts"],
    ],
)
def test_the_common_forms_take_the_fast_path(argv: list[str]) -> None:
    fast = fast_search.parse(argv)
    assert fast is not None
    full = typer_reading("search", argv)
    assert full is not None
    assert fast["query"] == full["query"]


# -- the reply reader: whatever answers on the port, a reply it cannot frame is declined ------
class Replier:
    """A loopback TCP server that answers every connection with ``self.raw`` and closes."""

    def __init__(self) -> None:
        import socket
        import threading

        self.raw = b""
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = int(self.sock.getsockname()[1])
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                conn.sendall(self.raw)


@pytest.fixture(scope="module")
def replier() -> Iterator[Replier]:
    server = Replier()
    yield server
    server.sock.close()


def serve_data_dir(replier: Replier, data_dir: Path, patch: pytest.MonkeyPatch) -> str:
    """Make ``data_dir`` (given its id file) the commands' data dir, served on the replier's
    port; its id, which a reply needs to be this data dir's service's."""
    from workbench import instance

    ident = instance.ensure(data_dir)
    patch.setenv("WORKBENCH_DATA_DIR", str(data_dir))
    patch.setenv("WORKBENCH_PORT", str(replier.port))
    return ident


def reply(body: bytes, ident: str, *, status: str = "200 OK", extra: str = "") -> bytes:
    head = (
        f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\n"
        f"content-length: {len(body)}\r\nx-workbench-instance: {ident}\r\n{extra}\r\n"
    )
    return head.encode("latin-1") + body


GOOD = b'{"observations": [], "sessions": [], "prompts": [], "totalResults": 0, "query": "q"}'


def test_reply_reader_declines_what_it_cannot_frame(
    replier: Replier, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    ident = serve_data_dir(replier, tmp_path, monkeypatch)
    replier.raw = reply(GOOD, ident)
    assert fast_search.main(["q", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["totalResults"] == 0
    for raw in [
        b"",
        b"garbage\r\n\r\n{}",
        reply(GOOD, "another-data-dir"),
        reply(GOOD, ident, status="500 Internal Server Error"),
        reply(GOOD, ident, extra="transfer-encoding: chunked\r\n"),
        reply(GOOD, ident)[:-5],  # a short body
        reply(b'{"observations": [{"id": "1"}], "sessions": [], "prompts": []}', ident),
        reply(b"[1, 2]", ident),
        reply(b"\xff\xfe", ident),
    ]:
        replier.raw = raw
        assert fast_search.main(["q", "--json"]) is None, raw
    assert capsys.readouterr().out == ""


@settings(max_examples=budget(60), deadline=None)
@given(st.binary(max_size=300))
def test_reply_reader_never_raises(replier: Replier, raw: bytes) -> None:
    replier.raw = raw
    with pytest.MonkeyPatch.context() as patch, tempfile.TemporaryDirectory() as folder:
        serve_data_dir(replier, Path(folder), patch)
        assert fast_search.main(["q", "--json"]) is None
