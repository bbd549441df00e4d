"""The reply parser: one test per rule, then fuzzing that it never raises and stays linear."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.compress.xml import parse_observations, parse_summary, unwrap_fence

FULL = """<observation>
  <type>bugfix</type>
  <title>Queue claim returned two rows</title>
  <subtitle>race between workers</subtitle>
  <facts>
    <fact>claim() ran SELECT then UPDATE without a lock</fact>
    <fact>fixed with UPDATE … RETURNING</fact>
  </facts>
  <narrative>Two workers could claim the same event. The claim is now one statement.</narrative>
  <concepts><concept>sqlite</concept><concept>concurrency</concept></concepts>
  <files_read><file>workbench/store/queue.py</file></files_read>
  <files_modified><file>workbench/store/queue.py</file><file>tests/test_queue.py</file></files_modified>
</observation>"""


def test_a_full_block_fills_every_field() -> None:
    [obs] = parse_observations(FULL)
    assert obs.type == "bugfix"
    assert obs.title == "Queue claim returned two rows"
    assert obs.subtitle == "race between workers"
    assert obs.facts == [
        "claim() ran SELECT then UPDATE without a lock",
        "fixed with UPDATE … RETURNING",
    ]
    assert obs.narrative.startswith("Two workers could claim")
    assert obs.concepts == ["sqlite", "concurrency"]
    assert obs.files_read == ["workbench/store/queue.py"]
    assert obs.files_modified == ["workbench/store/queue.py", "tests/test_queue.py"]


def test_prose_around_blocks_is_discarded_and_blocks_keep_their_order() -> None:
    reply = (
        "Here is what I found:\n"
        "<observation><title>first</title></observation>\n"
        "Some thoughts in between.\n"
        "<observation><title>second</title></observation>\nThat's all!"
    )
    assert [o.title for o in parse_observations(reply)] == ["first", "second"]


def test_no_blocks_means_no_observations() -> None:
    assert parse_observations("Nothing worth remembering in this call.") == []
    assert parse_observations("") == []


def test_a_fenced_reply_is_unwrapped() -> None:
    for fence in ("```xml\n", "```\n", "```XML  \n"):
        reply = f"{fence}{FULL}\n```"
        assert unwrap_fence(reply).startswith("<observation>")
        assert parse_observations(reply)[0].title == "Queue claim returned two rows"
    assert unwrap_fence("text ```xml\n<a/>\n``` text") == "text ```xml\n<a/>\n``` text"


def test_an_observation_with_no_title_narrative_or_facts_is_dropped() -> None:
    reply = (
        "<observation><type>change</type><concepts><concept>x</concept></concepts></observation>"
        "<observation><type>change</type><title>kept</title></observation>"
        "<observation>   </observation>"
    )
    assert [o.title for o in parse_observations(reply)] == ["kept"]


def test_a_missing_title_comes_from_the_narrative_or_first_fact() -> None:
    [from_narrative] = parse_observations(
        "<observation><narrative>The cache is per process. It resets on restart.</narrative>"
        "</observation>"
    )
    assert from_narrative.title == "The cache is per process."
    [from_fact] = parse_observations(
        "<observation><facts><fact>port 37700 is the default</fact></facts></observation>"
    )
    assert from_fact.title == "port 37700 is the default"
    [long] = parse_observations(
        f"<observation><narrative>{'word ' * 100}</narrative></observation>"
    )
    assert len(long.title) <= 120
    assert long.title.endswith("…")


def test_types_are_lowercased_variants_mapped_unknown_kept_missing_defaulted() -> None:
    reply = (
        "<observation><type> Security Alert </type><title>a</title></observation>"
        "<observation><type>security-note</type><title>b</title></observation>"
        "<observation><type>Gotcha</type><title>c</title></observation>"
        "<observation><title>d</title></observation>"
        "<observation><type>BUGFIX</type><title>e</title></observation>"
    )
    assert [o.type for o in parse_observations(reply)] == [
        "security_alert",
        "security_note",
        "gotcha",
        "discovery",
        "bugfix",
    ]


def test_concepts_with_a_description_keep_the_tag_before_the_colon() -> None:
    reply = (
        "<observation><title>t</title><concepts>"
        "<concept>Gotcha: the cache is per process</concept>"
        "<concept>how-it-works</concept><concept>gotcha</concept><concept>  </concept>"
        "</concepts></observation>"
    )
    assert parse_observations(reply)[0].concepts == ["gotcha", "how-it-works"]


def test_entities_are_unescaped_and_unescaped_text_is_tolerated() -> None:
    reply = (
        "<observation><title>a &amp; b &lt; c &#39;d&#39;</title>"
        "<facts><fact>x < y && y > z</fact><fact>R&D</fact></facts></observation>"
    )
    [obs] = parse_observations(reply)
    assert obs.title == "a & b < c 'd'"
    assert obs.facts == ["x < y && y > z", "R&D"]


def test_cdata_is_unwrapped() -> None:
    [obs] = parse_observations(
        "<observation><title><![CDATA[if a < b && c]]></title></observation>"
    )
    assert obs.title == "if a < b && c"


def test_single_line_fields_collapse_whitespace_but_narrative_keeps_lines() -> None:
    [obs] = parse_observations(
        "<observation><title>  a\n   b  </title>"
        "<narrative>line one\nline two</narrative></observation>"
    )
    assert obs.title == "a b"
    assert obs.narrative == "line one\nline two"


def test_a_reply_cut_off_mid_block_keeps_what_it_has() -> None:
    reply = (
        "<observation><title>complete</title></observation>\n"
        "<observation><type>change</type><title>truncated</title><facts><fact>one</fact><fact>tw"
    )
    observations = parse_observations(reply)
    assert [o.title for o in observations] == ["complete", "truncated"]
    assert observations[1].facts == ["one", "tw"]


def test_an_unclosed_field_ends_at_the_next_field() -> None:
    [obs] = parse_observations(
        "<observation><title>the title<subtitle>sub</subtitle>"
        "<narrative>n</narrative></observation>"
    )
    assert obs.title == "the title"
    assert obs.subtitle == "sub"


def test_list_fields_without_children_are_split_into_lines() -> None:
    [obs] = parse_observations(
        "<observation><title>t</title><facts>\n- one\n* two\n3. three\n\n</facts>"
        "<files_modified>a.py\nb.py</files_modified></observation>"
    )
    assert obs.facts == ["one", "two", "three"]
    assert obs.files_modified == ["a.py", "b.py"]


def test_tags_match_any_case_with_attributes_and_wrappers() -> None:
    reply = (
        "<observations>\n"
        '<Observation id="1"><TITLE lang="en">upper</TITLE>'
        "<Facts><Fact>f</Fact></Facts></Observation>\n"
        "</observations>"
    )
    [obs] = parse_observations(reply)
    assert obs.title == "upper"
    assert obs.facts == ["f"]


def test_lookalike_tags_are_not_fields() -> None:
    [obs] = parse_observations(
        "<observation><titles>no</titles><title>yes</title><factsheet>x</factsheet></observation>"
    )
    assert obs.title == "yes"
    assert obs.facts == []


# ----- summaries -----------------------------------------------------------------------------
SUMMARY = """Summary follows.
<summary>
  <request>Fix the queue claim race</request>
  <investigated>Read store/queue.py; ran pytest</investigated>
  <learned>SELECT then UPDATE races &amp; double-claims</learned>
  <completed>Claim is one UPDATE … RETURNING statement</completed>
  <next_steps>Add a two-worker stress test</next_steps>
  <notes></notes>
  <files_read><file>workbench/store/queue.py</file></files_read>
  <files_modified><file>workbench/store/queue.py</file></files_modified>
</summary>"""


def test_a_summary_fills_every_field() -> None:
    summary = parse_summary(SUMMARY)
    assert summary is not None
    assert summary.request == "Fix the queue claim race"
    assert summary.investigated == "Read store/queue.py; ran pytest"
    assert summary.learned == "SELECT then UPDATE races & double-claims"
    assert summary.completed.startswith("Claim is one UPDATE")
    assert summary.next_steps == "Add a two-worker stress test"
    assert summary.notes == ""
    assert summary.files_read == ["workbench/store/queue.py"]
    assert summary.files_edited == ["workbench/store/queue.py"]


def test_summary_rules_for_missing_empty_skipped_and_fenced() -> None:
    assert parse_summary("no summary here") is None
    assert parse_summary("<summary>  <notes> </notes> </summary>") is None
    assert parse_summary('<skip_summary reason="trivial"/>') is None
    assert parse_summary(f"```xml\n{SUMMARY}\n```") is not None
    first = parse_summary(
        "<summary><request>one</request></summary><summary><request>two</request></summary>"
    )
    assert first is not None
    assert first.request == "one"


# ----- robustness ----------------------------------------------------------------------------
FRAGMENTS = [
    "<observation>",
    "</observation>",
    "<observation",
    "<summary>",
    "</summary>",
    "<title>",
    "</title>",
    "<facts>",
    "<fact>",
    "</fact>",
    "</facts>",
    "<concepts>",
    "<concept>",
    "</concept>",
    "<type>",
    "</type>",
    "<narrative>",
    "</narrative>",
    "<files_read>",
    "<file>",
    "</file>",
    "<![CDATA[",
    "]]>",
    "&amp;",
    "&#x110000;",
    "&",
    "<",
    ">",
    ":",
    "```xml\n",
    "```",
    "\n",
    " ",
    "<skip_summary/>",
    "<request>",
    "</request>",
    "\x00",
    "\udcff",
]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_arbitrary_text_never_raises(text: str) -> None:
    for obs in parse_observations(text):
        assert obs.title
    parse_summary(text)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=5)), max_size=60))
def test_tag_soup_never_raises(parts: list[str]) -> None:
    text = "".join(parts)
    for obs in parse_observations(text):
        assert obs.title
        assert all(c == c.lower() for c in obs.concepts)
    parse_summary(text)


def test_adversarial_replies_parse_to_nothing() -> None:
    """Unclosed tags by the thousand hold no observation and no summary. How long the parse
    takes (linear, not quadratic) is in bench/worst_cases.py: no timing asserts in tests."""
    replies = [
        "<observation>" * 20_000,
        "<observation><title>" * 10_000,
        "<observation><facts>" + "<fact>" * 20_000,
        "<summary><request>" * 10_000,
        "<" * 100_000,
    ]
    for reply in replies:
        assert parse_observations(reply) == []
        assert parse_summary(reply) is None
