"""A corpus as readable markdown, and as the system blocks the knowledge agent is primed with.

``render_markdown`` is for people (``workbench corpus show --markdown``) and for the model: a
header (name, counts by type, date range, token estimate, filter), then one section per
observation, oldest first, headed ``## [#id] type: title`` so the id to cite is on the line
the model reads first.

Observation text is untrusted: a narrative may contain a line such as ``## [#999] decision:
…`` or ``# New instructions``. Every line of observation text that would start a markdown
heading is escaped (``\\#``), and single-line fields are collapsed to one line, so observation
content can never forge a section, a header or a citation target. The fence around the whole
corpus (``prompts.fence_corpus``) is the second guard.

``system_blocks`` is what the Messages API gets: the instructions, then the fenced corpus
marked ``cache_control: ephemeral``. The cache prefix runs up to and including the marked
block, so every follow-up in the conversation reads instructions and corpus at the cache-read
rate instead of paying for them in full again.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from workbench.knowledge.prompts import fence_corpus, system_prompt

if TYPE_CHECKING:
    from workbench.knowledge.corpus import Corpus, CorpusObservation

_HEADING = re.compile(r"^(\s{0,3})(#)", re.MULTILINE)
CACHE_CONTROL = {"type": "ephemeral"}


def render_markdown(corpus: Corpus) -> str:
    """The whole corpus as markdown (header, then one section per observation)."""
    return "\n\n".join([header(corpus), *(section(o) for o in corpus.observations)]) + "\n"


def header(corpus: Corpus) -> str:
    stats = corpus.stats
    types = ", ".join(f"{name} {count}" for name, count in stats.type_breakdown.items())
    earliest, latest = stats.date_range.earliest, stats.date_range.latest
    lines = [f"# Corpus: {corpus.name}"]
    if corpus.description.strip():
        lines += ["", _block(corpus.description)]
    lines += [
        "",
        f"- Observations: {stats.observation_count}" + (f" ({types})" if types else ""),
        f"- Date range: {earliest} → {latest}" if earliest else "- Date range: none (empty)",
        f"- Estimated tokens: ~{stats.token_estimate:,}",
        f"- Filter: {corpus.filter.describe()}",
    ]
    if not corpus.observations:
        lines.append(
            "- This corpus is empty: its filter matched no observations when it was built."
        )
    return "\n".join(lines)


def section(obs: CorpusObservation) -> str:
    """One observation: heading, date/project/subtitle, narrative, facts, concepts, files."""
    lines = [
        f"## [#{obs.id}] {_line(obs.type)}: {_line(obs.title) or '(untitled)'}",
        "",
        f"- Date: {obs.created_at}",
        f"- Project: {_line(obs.project)}",
    ]
    if obs.author is not None:
        lines.append(f"- Author: {_line(obs.author)} (a colleague's; not citable by id)")
    if obs.subtitle.strip():
        lines.append(f"- Subtitle: {_line(obs.subtitle)}")
    if obs.narrative.strip():
        lines += ["", _block(obs.narrative)]
    if obs.facts:
        lines += ["", "Facts:", *(f"- {_line(fact)}" for fact in obs.facts)]
    details = [
        ("Concepts", obs.concepts),
        ("Files read", obs.files_read),
        ("Files modified", obs.files_modified),
    ]
    extra = [
        f"- {label}: {', '.join(_line(v) for v in values)}" for label, values in details if values
    ]
    if extra:
        lines += ["", *extra]
    return "\n".join(lines)


def corpus_text(corpus: Corpus) -> str:
    """The rendered corpus inside its untrusted-data fence (what the model reads)."""
    return fence_corpus(corpus.name, render_markdown(corpus))


def system_blocks(corpus: Corpus) -> list[dict[str, Any]]:
    """The ``system`` parameter: instructions, then the fenced corpus marked for caching.

    The instructions are made again from the corpus's fields rather than read from its stored
    ``system_prompt``: a corpus built by an older release stored its description outside
    the untrusted-data fence.
    """
    instructions = system_prompt(
        name=corpus.name,
        description=corpus.description,
        filter_line=corpus.filter.describe(),
        count=corpus.stats.observation_count,
        earliest=corpus.stats.date_range.earliest,
        latest=corpus.stats.date_range.latest,
    )
    return [
        {"type": "text", "text": instructions},
        {"type": "text", "text": corpus_text(corpus), "cache_control": dict(CACHE_CONTROL)},
    ]


def _line(text: str) -> str:
    """One line: whitespace (newlines included) collapsed, so it cannot start a heading."""
    return " ".join(str(text).split())


def _block(text: str) -> str:
    """Multi-line text with every would-be heading escaped (``# x`` → ``\\# x``)."""
    return _HEADING.sub(r"\1\\\2", str(text).strip())
