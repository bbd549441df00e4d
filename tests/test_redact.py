"""Tag stripping: every stripped tag, its matching rules, and a property over random text."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_strategies import TAG_ESCAPINGS, escaped_block
from workbench.redact import (
    PASSES,
    STRIPPED_TAGS,
    is_task_notification,
    may_hold_surrogates,
    redact_value,
    strip_private,
)

ALL_TAGS = [
    "private",
    "workbench-context",
    "claude-mem-context",
    "system-reminder",
    "system_instruction",
    "system-instruction",
    "persisted-output",
    "hook_context",
]


def test_the_stripped_tag_list_is_exactly_the_documented_one() -> None:
    assert sorted(STRIPPED_TAGS) == sorted(ALL_TAGS)


@pytest.mark.parametrize("tag", ALL_TAGS)
def test_each_tag_is_stripped(tag: str) -> None:
    assert strip_private(f"keep <{tag}>drop me</{tag}> this") == "keep  this"


@pytest.mark.parametrize("tag", ALL_TAGS)
def test_attributes_are_allowed(tag: str) -> None:
    text = f"a <{tag} id=\"1\" source='hook'>drop</{tag}> b"
    assert strip_private(text) == "a  b"


@pytest.mark.parametrize("tag", ALL_TAGS)
def test_multiline_blocks_are_stripped(tag: str) -> None:
    text = f"before\n<{tag}>\nline one\nline two\n</{tag}>\nafter"
    assert strip_private(text) == "before\n\nafter"


def test_tag_names_match_case_insensitively() -> None:
    assert strip_private("a <PRIVATE>x</Private> b") == "a  b"


def test_closing_tag_may_carry_whitespace() -> None:
    assert strip_private("a <private>x</private > b") == "a  b"


def test_matching_is_non_greedy() -> None:
    text = "<private>one</private> keep this <private>two</private>"
    assert strip_private(text) == "keep this"


def test_different_tags_in_one_text() -> None:
    text = "<system-reminder>r</system-reminder>ask <private>p</private>me"
    assert strip_private(text) == "ask me"


def test_the_same_closing_tag_is_required() -> None:
    text = "a <private>secret</system-reminder> b"
    assert strip_private(text) == text


def test_an_unclosed_tag_is_left_alone() -> None:
    text = "please <private> keep everything after this"
    assert strip_private(text) == text


def test_a_tag_name_prefix_is_not_a_tag() -> None:
    text = "<privateer>ship</privateer> and <private-note>x</private-note>"
    assert strip_private(text) == text


def test_a_block_inside_a_block_is_removed_with_it() -> None:
    text = "a <private>outer <system-reminder>inner</system-reminder> tail</private> b"
    assert strip_private(text) == "a  b"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<private>a <private>b</private> c</private> d", "d"),
        ("<private>1 <private>2 <private>3</private> 4</private> 5</private> z", "z"),
        ("<private>a <system-reminder>b</system-reminder> c</private> d", "d"),
        # More openers than closers: the closer ends the widest block (when in doubt, strip).
        ("<private>a <private> b</private> tail", "tail"),
        ("<private>1 <private>2 <private>3</private> 4</private> z", "z"),
        # A stray closer is text.
        ("a</private> b <private>c</private>", "a</private> b"),
        # Removing a block can re-form a tag around it; that one goes too.
        ("<pri<private>x</private>vate>y</private> z", "z"),
    ],
)
def test_nested_blocks_never_leak_their_tail(text: str, expected: str) -> None:
    assert strip_private(text) == expected


def test_long_text_with_many_tags_keeps_only_what_is_outside_them() -> None:
    """Its wall time (linear in the text) is in bench/worst_cases.py: no timing asserts here."""
    text = ("word <private>s</private> <private> " * 20_000) + "</private>"
    assert strip_private(text) == "word"


def test_result_is_trimmed() -> None:
    assert strip_private("  \n <private>x</private>  hello \n ") == "hello"


def test_only_private_text_becomes_empty() -> None:
    assert strip_private("<private>my secret token ABC123</private>") == ""


def test_text_without_tags_is_unchanged_but_trimmed() -> None:
    assert strip_private("  a < b and c > d  ") == "a < b and c > d"


# ----- task notifications ---------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<task-notification>agent finished</task-notification>", True),
        ("  \n<task-notification id='7'>\nagent\nfinished\n</task-notification>\n ", True),
        ("<TASK-NOTIFICATION>x</task-notification>", True),
        ("<task-notification>x</task-notification> and a real question", False),
        ("a question <task-notification>x</task-notification>", False),
        ("<task-notification>never closed", False),
        ("plain prompt", False),
        ("", False),
    ],
)
def test_task_notification_only(text: str, expected: bool) -> None:
    assert is_task_notification(text) is expected


# ----- redact_value ---------------------------------------------------------------------------
def test_redact_value_recurses_through_json_like_values() -> None:
    value = {
        "command": "echo <private>ABC123</private> done",
        "nested": {
            "list": [
                "ok",
                "<private>x</private>",
                {"deep": "<system-reminder>r</system-reminder>kept"},
            ]
        },
        "number": 3,
        "flag": True,
        "none": None,
        "float": 1.5,
    }
    assert redact_value(value) == {
        "command": "echo  done",
        "nested": {"list": ["ok", "", {"deep": "kept"}]},
        "number": 3,
        "flag": True,
        "none": None,
        "float": 1.5,
    }


def test_redact_value_returns_new_containers() -> None:
    original = {"a": ["<private>x</private>"]}
    redact_value(original)
    assert original == {"a": ["<private>x</private>"]}


def test_redact_value_on_a_plain_string() -> None:
    assert redact_value("<private>x</private> y") == "y"


# ----- property -------------------------------------------------------------------------------
FRAGMENTS = [
    "<private>",
    "</private>",
    "<private a='1'>",
    "</private >",
    "<PRIVATE>",
    "</Private>",
    "<private",
    "</private",
    "<",
    ">",
    "/",
    " ",
    "\n",
    "secret",
    "<system-reminder>",
    "</system-reminder>",
    "<privat",
    "e>",
    # Halves of a tag that re-form one when the block between them goes (issue 19, item 4).
    "<pri",
    "vate>",
    "</pri",
    "<priv",
    "ate>",
]
texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet="<>/ aeiprvt=\n'\"", max_size=4)),
    max_size=25,
).map("".join)
CLOSED_PRIVATE = re.compile(r"<private(\s[^<>]*)?>.*?</private\s*>", re.DOTALL | re.IGNORECASE)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_output_never_holds_a_closed_private_block(text: str) -> None:
    out = strip_private(text)
    lowered = out.lower()
    if "<private>" in lowered:
        assert "</private>" not in lowered[lowered.index("<private>") :]
    assert CLOSED_PRIVATE.search(out) is None


@settings(max_examples=200, deadline=None)
@given(texts)
def test_stripping_is_idempotent(text: str) -> None:
    once = strip_private(text)
    assert strip_private(once) == once


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40).filter(lambda s: "<" not in s))
def test_text_without_angle_brackets_is_only_trimmed(text: str) -> None:
    assert strip_private(text) == text.strip()


def _block(tag: str, inner: list[str]) -> str:
    return f"<{tag}>" + " ".join(inner) + f"</{tag}>"


secret_blocks = st.recursive(
    st.just("SECRET"),
    lambda inner: st.builds(_block, st.sampled_from(ALL_TAGS), st.lists(inner, max_size=4)),
    max_leaves=12,
).filter(lambda s: s.startswith("<"))
documents = st.lists(
    st.one_of(st.sampled_from(["alpha", "beta", "gamma"]), secret_blocks), max_size=8
)


@settings(max_examples=400, deadline=None)
@given(documents)
def test_well_nested_blocks_are_removed_whole(parts: list[str]) -> None:
    """Nothing inside a (possibly nested) block survives, and every word outside does."""
    out = strip_private(" ".join(parts))
    assert "SECRET" not in out
    assert out.split() == [p for p in parts if not p.startswith("<")]


def test_redact_value_strips_dict_keys_too() -> None:
    value = {"<private>sk-key</private>name": {"<private>k</private>": "<private>v</private>"}}
    assert redact_value(value) == {"name": {"": ""}}


def test_redact_value_keeps_a_string_without_a_block_exactly() -> None:
    code = "    if a < b:\n        return <T>\n"
    assert redact_value({"old_string": code}) == {"old_string": code}


def test_redact_value_replaces_lone_surrogates_when_asked() -> None:
    value = {"\ud83dk": ["x \udc00", "<private>p</private>\ud83d"]}
    assert redact_value(value, surrogates=True) == {"\ufffdk": ["x \ufffd", "\ufffd"]}
    assert redact_value("\ud83d\ude00") == "\ud83d\ude00"  # left alone unless asked


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (b'"x \\ud83d"', True),
        (b'"\\uDC00"', True),
        (b'"a \xed\xa0\xbd"', True),  # a surrogate UTF-8-encoded (json.loads: surrogatepass)
        (b'"\\u00e9 \xed\x95\x9c"', False),  # an escape and Hangul (ED 95 9C): no surrogate
        (b'"\\\\u"', False),
        (b"{}", False),
    ],
)
def test_may_hold_surrogates_reads_the_bytes(raw: bytes, expected: bool) -> None:
    assert may_hold_surrogates(raw) is expected


# ----- re-formed tags: linear, and never keeping what the old fixpoint loop removed -------------
# (issue 19, item 4) The loop below is the redaction as it was: remove every block, scan again,
# until nothing changes. One pass per nesting level made it quadratic (a crafted 60 KB tool
# output outlasted a hook's timeout); it stays here as the oracle the new one must be safe by.
_REFERENCE_TAG = re.compile(
    r"<(?:(?P<open>" + "|".join(map(re.escape, ALL_TAGS)) + r")(?:\s[^<>]*)?"
    r"|/(?P<close>" + "|".join(map(re.escape, ALL_TAGS)) + r")\s*)>",
    re.IGNORECASE,
)


def _reference_pass(text: str) -> str:
    tokens = [
        (m.start(), m.end(), (m["open"] or m["close"]).lower(), bool(m["open"]))
        for m in _REFERENCE_TAG.finditer(text)
    ]
    closers_left: dict[str, int] = {}
    for _, _, tag, is_open in tokens:
        if not is_open:
            closers_left[tag] = closers_left.get(tag, 0) + 1
    open_at: dict[str, list[int]] = {}
    spans = []
    for start, end, tag, is_open in tokens:
        stack = open_at.setdefault(tag, [])
        if is_open:
            stack.append(start)
            continue
        closers_left[tag] -= 1
        if stack:
            del stack[closers_left[tag] + 1 :]
            spans.append((stack.pop(), end))
    out, pos = [], 0
    for start, end in sorted(spans):
        out.append(text[pos:start] if start > pos else "")
        pos = max(pos, end)
    return "".join(out) + text[pos:]


def reference(text: str) -> tuple[str, int]:
    """The old fixpoint result (trimmed), and how many passes changed the text."""
    passes = 0
    while (after := _reference_pass(text)) != text:
        text, passes = after, passes + 1
    return text.strip(), passes


def nested(depth: int, tail: str = " tail") -> str:
    """The adversarial input: each removal re-forms the tag around it, ``depth`` times."""
    return "<priv" * depth + "<private>SECRET</private>" + "ate>SECRET</private>" * depth + tail


@pytest.mark.parametrize("depth", [0, 1])
def test_a_tag_re_formed_once_is_removed_like_before(depth: int) -> None:
    assert strip_private(nested(depth)) == "tail" == reference(nested(depth))[0]


@pytest.mark.parametrize("depth", [2, 3, 50, 3000])
def test_deeper_re_forming_drops_everything_from_the_first_opener(depth: int) -> None:
    """Past ``PASSES`` levels the rest is dropped (tail included): when in doubt, strip."""
    assert strip_private(nested(depth)) == ""
    assert strip_private("keep " + nested(depth)) == "keep"


def test_deep_re_forming_in_a_dict_key_and_value() -> None:
    value = {"k" + nested(40): ["a " + nested(40), "plain"]}
    assert redact_value(value) == {"k": ["a", "plain"]}


@settings(max_examples=600, deadline=None)
@given(texts)
def test_the_result_is_the_old_fixpoint_or_a_prefix_of_it(text: str) -> None:
    """Never keeps what the old loop removed: equal when it settled within ``PASSES``
    passes, else a prefix of its result (the cut), and never an opening tag after a cut."""
    new = strip_private(text)
    old, passes = reference(text)
    if passes <= PASSES:
        assert new == old
    else:
        assert old.startswith(new)
        assert not any(m["open"] for m in _REFERENCE_TAG.finditer(new))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(["<pri", "<priv", "vate>", "ate>", "x", "</private>", "<private>", " w "]),
        max_size=40,
    ).map("".join)
)
def test_re_forming_soup_is_safe_and_idempotent(text: str) -> None:
    new = strip_private(text)
    old, _ = reference(text)
    assert old.startswith(new)
    assert strip_private(new) == new


@pytest.mark.parametrize(
    "text",
    [
        "a <PR\u0131VATE>x</private> b",  # dotless i: re folds it onto "i", lower() does not
        "a <PR\u0130VATE>x</pr\u0130vate> b",  # dotted I: its lowercase is two characters
        "a <\u017fystem-reminder>x</system-reminder> b",  # long s
        "a <wor\u212abench-context>x</WORKBENCH-CONTEXT> b",  # Kelvin sign: lower() gives "k"
        "\U0001f4a5 a <Private>x</PRIVATE> b",  # non-ASCII text, none of those: the fast scan
    ],
)
def test_tags_match_case_insensitively_as_re_does_whatever_the_scan(text: str) -> None:
    """The scan of a lowercased copy is used only where it finds what ``re.IGNORECASE`` finds,
    and an opener pairs with its tag's closer however each is spelled (the old loop grouped
    tags by ``lower()``, so ``<PRıVATE>x</private>`` kept ``x``)."""
    assert strip_private(text).endswith("a  b")


# ----- escaped tags (issue 20, item 10) -------------------------------------------------------


@pytest.mark.parametrize("escaping", sorted(TAG_ESCAPINGS))
@pytest.mark.parametrize("tag", ["workbench-context", "private", "hook_context"])
def test_an_escaped_block_is_stripped(tag: str, escaping: str) -> None:
    assert strip_private(f"keep {escaped_block(tag, escaping)} this") == "keep  this"


def test_gemini_hands_our_context_back_escaped_inside_its_own_wrapper() -> None:
    prompt = (
        "<hook_context>&lt;workbench-context&gt;\n# workbench memory\n- a memory\n"
        "&lt;/workbench-context&gt;</hook_context>\n\nfix the bug"
    )
    assert strip_private(prompt) == "fix the bug"


def test_an_unclosed_escaped_tag_and_other_escaped_tags_are_text() -> None:
    for text in ("a &lt;private&gt; b", "&lt;b&gt;bold&lt;/b&gt;", "x \\u003cdiv\\u003e y"):
        assert strip_private(text) == text


def test_a_json_escaped_slash_closes_too() -> None:
    assert strip_private('{"t": "a \\u003cprivate\\u003ex\\u003c\\/private\\u003e b"}') == (
        '{"t": "a  b"}'
    )
