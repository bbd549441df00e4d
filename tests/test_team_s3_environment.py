"""The S3 secret built from the ``AWS_*`` variables (``workbench/team/s3.py``): exact options for
the documented cases, and, for any value of the variables, either options DuckDB accepts or an
``S3NotConfigured`` that names the variable to fix (never another exception).

The options are applied to a real in-memory DuckDB with httpfs loaded from its package, so a
value that would break the ``CREATE SECRET`` statement (a quote, a newline) is caught here.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.team import s3

pytestmark = pytest.mark.slow

DATA = "s3://bucket/prefix"
KEYS = {"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalr/K7MDENG"}


@pytest.fixture(scope="module")
def duck() -> Iterator[Any]:
    import duckdb

    from workbench.team.lake import extension_file

    con = duckdb.connect(":memory:", config={"allow_unsigned_extensions": True})
    httpfs = str(extension_file("duckdb_extension_httpfs", "httpfs"))
    yield con, httpfs
    con.close()


def test_an_http_endpoint_gives_host_port_no_tls_and_path_style() -> None:
    env = {**KEYS, "AWS_ENDPOINT_URL": "http://127.0.0.1:9000/", "AWS_DEFAULT_REGION": "eu-west-1"}

    assert s3.secret_options(DATA, env) == {
        "KEY_ID": "AKIDEXAMPLE",
        "SECRET": "wJalr/K7MDENG",
        "REGION": "eu-west-1",
        "ENDPOINT": "127.0.0.1:9000",
        "USE_SSL": False,
        "URL_STYLE": "path",
    }


def test_aws_itself_needs_no_endpoint_and_the_s3_specific_variables_win() -> None:
    env = {**KEYS, "AWS_SESSION_TOKEN": "tok", "AWS_REGION": "us-west-2"}
    assert s3.secret_options(DATA, env) == {
        "KEY_ID": "AKIDEXAMPLE",
        "SECRET": "wJalr/K7MDENG",
        "SESSION_TOKEN": "tok",
        "REGION": "us-west-2",
    }
    both = {**env, "AWS_ENDPOINT_URL": "http://a:1", "AWS_ENDPOINT_URL_S3": "https://minio.lan"}
    options = s3.secret_options(DATA, both)
    assert (options["ENDPOINT"], options["USE_SSL"]) == ("minio.lan", True)


def test_blank_credentials_count_as_missing_and_are_named() -> None:
    with pytest.raises(s3.S3NotConfigured) as caught:
        s3.secret_options(DATA, {"AWS_ACCESS_KEY_ID": "  ", "AWS_SECRET_ACCESS_KEY": ""})
    assert "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in caught.value.message
    assert DATA in caught.value.message


_VALUES = st.one_of(
    st.none(),
    # any text an environment variable can hold (execve strings end at NUL)
    st.text(st.characters(blacklist_characters="\x00"), max_size=30),
    st.sampled_from(["http://h:9000", "https://h", "h:9000", "http://", "http://h:99999", "'"]),
)


@given(key=_VALUES, secret=_VALUES, token=_VALUES, region=_VALUES, endpoint=_VALUES, s3_ep=_VALUES)
def test_any_environment_gives_a_secret_duckdb_accepts_or_names_the_variable(
    duck: Any, key: Any, secret: Any, token: Any, region: Any, endpoint: Any, s3_ep: Any
) -> None:
    con, httpfs = duck
    names = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION")
    values = (key, secret, token, region)
    env = {n: v for n, v in zip(names, values, strict=True) if v is not None}
    env.update({"AWS_ENDPOINT_URL": endpoint, "AWS_ENDPOINT_URL_S3": s3_ep})
    env = {n: v for n, v in env.items() if v is not None}
    con.execute("DROP TEMPORARY SECRET IF EXISTS team_s3")
    refused = None
    try:
        s3.setup(con, DATA, env, httpfs)
    except s3.S3NotConfigured as exc:
        refused = exc.message
    if refused is not None:
        assert "AWS_" in refused
        return
    row = con.execute("SELECT name FROM duckdb_secrets() WHERE name = 'team_s3'").fetchone()
    assert row == ("team_s3",)
