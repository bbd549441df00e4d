"""Secret-looking values and secret files: detected by kind, masked, never copied.

Why here and not only in ``redact``: redaction strips what the user marked private; this
catches what nobody marked, such as a key pasted into a command or printed by ``env``. A rule
that sees one names its kind ("an AWS access key id") and every observation passes
``mask_secrets`` last, so the value itself never reaches the store.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator

# Why one literal-prefixed pattern per kind, each behind an ``in`` test, and not one big
# alternation: sre cannot skip ahead through an alternation, and the single pattern cost
# ~500 µs per 3 KB of text; this costs ~45 µs, which matters at tens of thousands of events/s.
_TOKENS = (
    ("private_key", "-----BEGIN", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("aws_key", "AKIA", re.compile(r"AKIA[0-9A-Z]{16}")),
    ("anthropic_key", "sk-ant-", re.compile(r"sk-ant-[A-Za-z0-9_-]{20,}")),
    ("openai_key", "sk-", re.compile(r"sk-(?:proj-)?[A-Za-z0-9]{32,}")),
    ("github_token", "_", re.compile(r"gh[pousr]_[A-Za-z0-9]{30,}")),
    ("slack_token", "xox", re.compile(r"xox[abprs]-[A-Za-z0-9-]{10,}")),
    ("google_key", "AIza", re.compile(r"AIza[0-9A-Za-z_-]{35}")),
)
# A secret-named variable given a literal with a digit in it: ``TOKEN="ab12…"``. Code like
# ``api_key = settings.api_key`` has no digit, so it is not flagged. Found by ``str.find`` of
# each keyword, then one anchored match right after it: scanning every ``=`` and ``:`` of a
# source file with a regex cost four times as much.
_ASSIGN_KEYWORDS = ("api_key", "api-key", "apikey", "secret", "token", "passwd", "password")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_ASSIGN_VALUE = re.compile(
    r"[\"']?[ \t]*[=:][ \t]*[\"']?(?P<value>(?=[A-Za-z_/+=.-]*\d)[A-Za-z0-9_/+=.-]{16,})"
)
SECRET_NAMES = {
    "private_key": "a private key",
    "aws_key": "an AWS access key id",
    "anthropic_key": "an Anthropic API key",
    "openai_key": "an OpenAI API key",
    "github_token": "a GitHub token",
    "slack_token": "a Slack token",
    "google_key": "a Google API key",
    "assignment": "a value assigned to a secret-named variable",
}
_SECRET_NAME = re.compile(
    r"\.env(?:\.[\w-]+)?|\.netrc|\.pgpass|\.npmrc|\.pypirc|credentials[\w.-]*|secrets?[\w.-]*"
    r"|id_(?:rsa|dsa|ecdsa|ed25519)|[\w.-]+\.(?:pem|key|p12|pfx|jks)",
    re.IGNORECASE,
)
_TEMPLATE_SUFFIXES = (".example", ".sample", ".template", ".dist")  # ``.env.example`` holds none


def secret_kinds(text: str) -> list[str]:
    """Kinds of secret-looking values in a text (names only, never the values)."""
    kinds = dict.fromkeys(kind for kind, _, _ in _spans(text))
    return [SECRET_NAMES[kind] for kind in kinds]


def mask_secrets(text: str) -> str:
    """The text with every secret-looking value replaced by ``[secret]`` (names kept)."""
    spans = sorted((start, end) for _, start, end in _spans(text))
    if not spans:
        return text
    parts, last = [], 0
    for start, end in spans:
        if end <= last:  # inside the previous mask
            continue
        if start < last:  # overlaps it: widen the previous mask
            last = end
            continue
        parts.append(text[last:start] + "[secret]")
        last = end
    return "".join(parts) + text[last:]


def _spans(text: str) -> Iterator[tuple[str, int, int]]:
    """(kind, start, end) of each secret-looking value."""
    if not text or len(text) < 16:
        return
    for kind, literal, pattern in _TOKENS:
        if literal in text:
            for match in pattern.finditer(text):
                start = match.start()
                if start == 0 or not text[start - 1].isalnum():  # a word of its own
                    yield kind, start, match.end()
    lowered = text.lower()
    if len(lowered) != len(text):  # "İ" and a few others grow when lowercased: keep offsets
        lowered = text.translate(_ASCII_LOWER)
    for keyword in _ASSIGN_KEYWORDS:
        start = lowered.find(keyword)
        while start >= 0:
            after = start + len(keyword)
            value = _ASSIGN_VALUE.match(text, after)
            if value:
                yield "assignment", value.start("value"), value.end()
            start = lowered.find(keyword, after)


def is_secret_path(path: str) -> bool:
    """True for ``.env``, credential files, private keys and certificates (not templates)."""
    name = path.rstrip("/").rsplit("/", 1)[-1]
    if not name or name.lower().endswith(_TEMPLATE_SUFFIXES):
        return False
    return _SECRET_NAME.fullmatch(name) is not None
