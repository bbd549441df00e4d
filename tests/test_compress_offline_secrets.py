"""Secret detection (``compress/rules/secrets.py``): values are masked, code is not."""

from __future__ import annotations

import pytest

from tests.offline_events import ANTHROPIC_KEY


# ----- secret detection ----------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "masked"),
    [
        (f"export ANTHROPIC_API_KEY={ANTHROPIC_KEY}", "export ANTHROPIC_API_KEY=[secret]"),
        ('TOKEN="abc123def456ghi789jk" ok', 'TOKEN="[secret]" ok'),
        ("password: hunter2hunter2hunter2", "password: [secret]"),
        ("aws AKIAABCDEFGHIJKLMNOP here", "aws [secret] here"),
        ("İİ TOKEN=abc123def456ghi789jk!", "İİ TOKEN=[secret]!"),  # "İ" grows when lowercased
        ("api_key = settings.anthropic_api_key", "api_key = settings.anthropic_api_key"),
        ("max_tokens=12345678901234567890", "max_tokens=12345678901234567890"),
        ("xAKIAABCDEFGHIJKLMNOP", "xAKIAABCDEFGHIJKLMNOP"),  # not a word of its own
    ],
)
def test_secret_values_are_masked_and_code_is_not(text: str, masked: str) -> None:
    from workbench.compress.rules.secrets import mask_secrets, secret_kinds

    assert mask_secrets(text) == masked
    assert bool(secret_kinds(text)) is (text != masked)
