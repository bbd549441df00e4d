"""One sentence on which tier finds the memories MiniLM has not reached yet.

Why one function: the service's search text (``compact.py``), the CLI's table
(``cli/search_table.py``, which must stay importable without the service's stack) and the
doctor all say it, and "vectors N behind: found by full text only" was wrong while the static
tier (static_tier.py) held those memories. Stdlib only.
"""

from __future__ import annotations


def vectors_note(behind: int | None, static: int | None) -> str | None:
    """``behind``: observations without a MiniLM vector; ``static``: how many of them the
    static tier holds. None when every memory has its MiniLM vector (nothing to say)."""
    if not behind:
        return None
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
