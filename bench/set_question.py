"""``SetQuestion``: one question a relevance set's loader asks, with the turns that answer it.

The loaders of the conversation sets (``relevance_set_friends``, ``relevance_set_memorybank``,
``relevance_set_qmsum``, ``relevance_set_multihop``) each read their raw data into turns and
these; ``relevance_sets._drafts`` stores the turns and maps ``evidence`` (indexes into the
loader's turn list) to observation ids. One shape, so the four loaders cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SetQuestion:
    cls: str  # the question's class, for the per-class tables
    text: str
    project: str  # the episode, user, meeting or conversation asked of: the search's project
    evidence: tuple[int, ...]  # indexes into the turn list
