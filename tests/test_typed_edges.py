"""The read side's replies are typed (issue 23, item 1): a handler returns the model it declares.

"The response model is the data, not a check after a dict": every GET route of the modules that
answer from memory (``bench/typed_edges.py``'s ``READ_SIDE``: search, observations, context,
analytics, corpora, projects, summaries, prompts, team) that declares a ``response_model`` has a
handler annotated to return that very model (mypy then checks that it builds one), not a
``dict`` FastAPI validates afterwards. Checked over the live route table, not the source text.
``bench/typed_edges.py`` prints the counts (dict handlers, ``dict[str, Any]`` functions, raw
``Response`` routes) for any checkout.
"""

from __future__ import annotations

import typing

import pytest
from fastapi import FastAPI

from bench.typed_edges import READ_SIDE  # the modules the bench counts as the read side
from tests.test_routes_layout import api_routes


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    from service.app import create_app
    from workbench.settings import load_settings

    return create_app(load_settings(tmp_path_factory.mktemp("typed")), pid_lock=False)


def test_the_read_sides_handlers_return_the_model_they_declare(app: FastAPI) -> None:
    checked, untyped = [], []
    for route in api_routes(app):
        module = route.endpoint.__module__.rsplit(".", 1)[-1]
        if module not in READ_SIDE or "GET" not in route.methods or route.response_model is None:
            continue
        checked.append(route.path)
        returns = typing.get_type_hints(route.endpoint).get("return")
        if returns is not route.response_model:
            untyped.append(f"GET {route.path} ({module}.{route.endpoint.__name__}) -> {returns}")
    assert len(checked) >= 13, f"too few read routes found to check anything: {checked}"
    assert not untyped, "handlers that build a dict for their model:\n" + "\n".join(untyped)
