"""A ``platform_source`` *filter* value, checked against the platforms workbench knows.

Context, analytics, corpora, the viewer and imports all take a platform filter; one check so
each refuses a typo (``gemini`` for ``gemini-cli``) the same way, with a 422 naming the field,
the value and every known platform. A filter on a platform nobody captures from would only
ever match nothing, silently. The known values come from ``workbench.platforms``, so a new
adapter's platform is accepted everywhere the moment it is listed there.
"""

from __future__ import annotations

from typing import Any

from workbench.errors import InvalidInput
from workbench.platforms import PLATFORM_SOURCES

VALUE_CHARS = 40  # how much of a bad value a message repeats


class UnknownPlatform(InvalidInput):
    """A ``platform_source`` that no adapter sends."""

    status_code = 422
    code = "UNKNOWN_PLATFORM"


def known_platforms() -> list[str]:
    """The platform_source values in the order ``workbench.platforms`` lists them."""
    return list(PLATFORM_SOURCES)


def check_platform(value: Any, field: str = "platform_source") -> str | None:
    """``value`` trimmed when it is a known platform; None when absent or blank.

    Raises ``UnknownPlatform`` (422) for any other text and ``InvalidInput`` for a non-text.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(
            f"{field} must be text, got {str(value)[:VALUE_CHARS]!r}; e.g. {field}=claude-code"
        )
    text = value.strip()
    if not text:
        return None
    if text not in PLATFORM_SOURCES:
        known = known_platforms()
        raise UnknownPlatform(
            f"{field}={text[:VALUE_CHARS]!r} is not a known platform; use one of "
            f"{', '.join(known)} (e.g. {field}={known[-1]}), or leave it out for every platform",
            field=field,
            value=text[:VALUE_CHARS],
            known=known,
        )
    return text
