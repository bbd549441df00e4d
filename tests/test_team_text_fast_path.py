"""``team_text``'s fast path (no ``<`` in the text) returns exactly what the full scan returns.

The fast path exists for publish throughput (bench/team.py); it must never change a result.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from workbench.redact import strip_private
from workbench.team.local_rows import team_text


@given(st.text().filter(lambda t: "<" not in t))
def test_text_without_a_tag_is_only_trimmed(text: str) -> None:
    assert team_text(text) == strip_private(text) == text.strip()
