"""One sentence on which tier finds the memories MiniLM has not reached yet.

Why one function: the service's search text (``compact.py``), the CLI's table
(``cli/search_table.py``, which must stay importable without the service's stack) and the
doctor all say it, and "vectors N behind: found by full text only" was wrong while the static
tier (static_tier.py) held those memories. Stdlib only.
"""

from __future__ import annotations


def rebuilding_note(done: int, total: int) -> str:
    """What the index is doing while it is filled from the embeddings cache (the status's
    reason and the search note say it alike)."""
    return f"rebuilding the index from the embeddings cache ({done} of {total})"


def vectors_note(
    behind: int | None, static: int | None, rebuilding: tuple[int, int] | None = None
) -> str | None:
    """``behind``: observations without a MiniLM vector; ``static``: how many of them the
    static tier holds; ``rebuilding``: ``(done, total)`` while the index is filled from the
    embeddings cache (no saved index at start), when the caller knows. None when every
    memory has its MiniLM vector (nothing to say).

    Why ``rebuilding``: the memories are then behind because the index is being filled from
    vectors already cached, not because a worker has yet to embed them; the note said "until
    the embedding worker catches up" (with no worker involved, or none at all).
    """
    if not behind:
        return None
    if rebuilding is not None:
        return (
            f"vectors {behind} behind: {rebuilding_note(*rebuilding)}; until it gets there "
            "they are found by full text only"
        )
    covered = min(behind, static or 0)
    if covered == behind:
        return (
            f"vectors: the newest {behind} observations are matched by the static model "
            "(faster, less precise) until MiniLM reaches them"
        )
    if covered == 0:
        return (
            f"vectors {behind} behind: the newest observations are found by full text only "
            "until the embedding worker catches up"
        )
    return (
        f"vectors {behind} behind MiniLM: {covered} matched by the static model meanwhile, "
        f"{behind - covered} found by full text only until the embedding worker reaches them"
    )
