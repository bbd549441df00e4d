"""One token estimator (``workbench.tokens``): the compressor's discovery cost and the
recall layer's read cost are the same ``ceil(chars / 4)``, from the same function."""

from __future__ import annotations

import math

from workbench import tokens
from workbench.compress import offline


def test_the_compressor_uses_the_recall_estimator() -> None:
    assert offline.estimate_tokens is tokens.estimate_tokens


def test_text_is_a_quarter_of_its_characters_rounded_up() -> None:
    assert tokens.estimate_tokens(None) == 0
    assert tokens.estimate_tokens("") == 0
    assert tokens.estimate_tokens("abcd") == 1
    assert tokens.estimate_tokens("abcde") == 2


def test_structures_count_every_key_string_and_scalar() -> None:
    value = {"path": "/a.py", "lines": [1, 22, None, True], "nested": {"k": "vv"}}
    chars = len("path/a.py") + len("lines") + len("1") + len("22") + len("True")
    chars += len("nested") + len("kvv")
    assert tokens.estimate_tokens(value) == math.ceil(chars / 4)
    assert tokens.estimate_tokens("ab", "cde", None) == math.ceil(5 / 4)  # summed, then rounded
