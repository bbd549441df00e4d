"""Fuzz: model folders named by env var (``locate.absolute_model_dirs`` / ``model_dir_override``).

Issue 21: a relative ``WORKBENCH_STATIC_MODEL_DIR`` reached the service (whose cwd is the data
dir) as is, and named another folder there. Any value a user can put in the environment must
come out of the spawner's resolution absolute and naming the same folder as seen from the
caller's cwd, or be left alone when blank; other variables are never touched, and the loader's
reading (``model_dir_override``) agrees with what the spawner hands on.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from workbench.locate import MODEL_DIR_VARS, absolute_model_dirs, model_dir_override, trimmed

pytestmark = pytest.mark.slow

# What an environment variable can hold: any text without NUL (surrogates cannot be encoded).
values = st.text(
    st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
)


@settings(max_examples=budget(300), deadline=None)
@given(
    chosen=st.dictionaries(st.sampled_from(MODEL_DIR_VARS), values),
    other=values,
)
# make fuzz, stop 40: a folder "0" + NEL. abspath dropped the slash, and the next reading's
# str.strip() took the NEL off its end, naming folder "0": the service (which reads the path
# the spawner hands on) would load another folder than the user named.
@example(chosen={"WORKBENCH_ONNX_MODEL_DIR": "0\x85/"}, other="")
def test_any_model_dir_value_comes_out_absolute_and_the_same_folder(
    chosen: dict[str, str], other: str
) -> None:
    env = {**chosen, "WORKBENCH_OTHER": other}
    out = absolute_model_dirs(dict(env))
    assert out["WORKBENCH_OTHER"] == other
    assert set(out) == set(env)
    here = os.getcwd()
    for var, value in chosen.items():
        if not trimmed(value):
            assert out[var] == value  # unset in effect: the loader uses this venv's share dir
            continue
        assert os.path.isabs(out[var])
        expected = os.path.expanduser(trimmed(value))
        if not os.path.isabs(expected):
            assert Path(out[var]) == Path(os.path.normpath(os.path.join(here, expected)))
        assert absolute_model_dirs(dict(out)) == out  # once absolute, it stays as it is


@settings(max_examples=budget(200), deadline=None)
@given(value=values)
def test_the_loader_reads_what_the_spawner_hands_on(value: str) -> None:
    var = MODEL_DIR_VARS[0]
    handed = absolute_model_dirs({var: value})[var]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(var, value)
        read = model_dir_override(var)
    if not trimmed(value):
        assert read is None
    else:
        assert read == Path(handed)
