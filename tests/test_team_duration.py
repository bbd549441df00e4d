"""``7d``-style durations: what ``team_snapshot_retention`` and ``maintain --older-than`` take."""

from __future__ import annotations

import pytest

from workbench.sections.duration import parse_seconds

pytestmark = pytest.mark.slow


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("0s", 0.0),
        ("30s", 30.0),
        ("15m", 900.0),
        ("1.5h", 5400.0),
        (" 7d ", 604800.0),
        ("2w", 1209600.0),
    ],
)
def test_durations_in_every_unit(text: str, seconds: float) -> None:
    assert parse_seconds(text) == seconds


@pytest.mark.parametrize(
    "text",
    [
        "",
        "7",
        "d",
        "-1d",
        "7 days",
        "1e3s",
        "nan s",
        "inf d",
        "٧d",
        "7D",
        "1.d",
        "7d7h",
        "\x00",
        "9" * 40 + "s",
    ],
)
def test_anything_else_is_refused_with_how_to_write_one(text: str) -> None:
    with pytest.raises(ValueError, match="30s, 15m, 12h, 7d, 2w"):
        parse_seconds(text)


def test_more_than_a_century_is_a_typo() -> None:
    with pytest.raises(ValueError, match="longer than a century"):
        parse_seconds("99999w")
