"""``team_text``'s fast path (no tag start, ``redact.may_hold_tag``) returns exactly what the
full scan returns.

The fast path exists for publish throughput (bench/team.py); it must never change a result.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.redact import may_hold_tag, strip_private
from workbench.team.local_rows import team_text

pytestmark = pytest.mark.slow


@given(st.text().filter(lambda t: not may_hold_tag(t)))
def test_text_without_a_tag_is_only_trimmed(text: str) -> None:
    assert team_text(text) == strip_private(text) == text.strip()


def test_an_entity_escaped_private_block_takes_the_full_scan() -> None:
    """Issue 20, item 10: ``&lt;private&gt;`` has no ``<`` and is still a private block."""
    assert team_text("a &lt;private&gt;key&lt;/private&gt; b") == "a  b"
