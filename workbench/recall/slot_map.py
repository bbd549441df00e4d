"""Live observation id → its FAISS slot, as two sorted numpy arrays instead of a dict.

Why: the vector index looked each id's slot up in a Python dict, ~10 MB at 100k ids (two
int objects and a hash-table entry each) of a service that must stay under 300 MiB with its
embedding worker (issue 21). Two int64 arrays hold the same in 1.6 MB. Lookups are a binary
search (``searchsorted``) per batch; an insertion or a removal copies the arrays (~0.1 ms at
100k), which the indexer pays once per chunk, never per search.

Not thread-safe by itself: ``VectorIndex`` holds its lock around every call.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


class SlotMap:
    """Sorted unique ids and the slot of each."""

    def __init__(self) -> None:
        import numpy as np

        self._ids = np.zeros(0, dtype=np.int64)
        self._slots = np.zeros(0, dtype=np.int64)

    @classmethod
    def of(cls, ids: Any, slots: Any) -> SlotMap:
        """A map from parallel sequences; the ids must be unique."""
        import numpy as np

        made = cls()
        ids = np.asarray(ids, dtype=np.int64)
        order = np.argsort(ids, kind="stable")
        made._ids, made._slots = ids[order], np.asarray(slots, dtype=np.int64)[order]
        if len(made._ids) > 1 and bool((made._ids[1:] == made._ids[:-1]).any()):
            raise ValueError("SlotMap.of: an id appears twice")
        return made

    def __len__(self) -> int:
        return len(self._ids)

    def __contains__(self, item: int) -> bool:
        return self.get(item) is not None

    def _where(self, ids: Any) -> tuple[Any, Any]:
        """(positions in the arrays, mask of the ids present) for an int64 array of ids."""
        import numpy as np

        pos = np.searchsorted(self._ids, ids)
        inside = pos < len(self._ids)
        found = np.zeros(len(ids), dtype=bool)
        found[inside] = self._ids[pos[inside]] == ids[inside]
        return pos, found

    def get(self, item: int) -> int | None:
        import numpy as np

        pos, found = self._where(np.asarray([int(item)], dtype=np.int64))
        return int(self._slots[pos[0]]) if found[0] else None

    def slots_of(self, ids: Iterable[int]) -> dict[int, int]:
        """``{id: slot}`` for those of ``ids`` present."""
        import numpy as np

        wanted = np.fromiter((int(i) for i in ids), dtype=np.int64)
        if not len(wanted) or not len(self._ids):
            return {}
        pos, found = self._where(wanted)
        return dict(zip(wanted[found].tolist(), self._slots[pos[found]].tolist(), strict=True))

    def pop(self, ids: Iterable[int]) -> Any:
        """Remove those of ``ids`` present; return their slots (int64 array)."""
        import numpy as np

        wanted = np.unique(np.fromiter((int(i) for i in ids), dtype=np.int64))
        if not len(wanted) or not len(self._ids):
            return np.zeros(0, dtype=np.int64)
        pos, found = self._where(wanted)
        gone = pos[found]
        slots = self._slots[gone]
        self._ids = np.delete(self._ids, gone)
        self._slots = np.delete(self._slots, gone)
        return slots

    def put(self, ids: Any, slots: Any) -> None:
        """Insert ids that are not present (unique among themselves) with their slots."""
        import numpy as np

        new_ids = np.asarray(ids, dtype=np.int64)
        if not len(new_ids):
            return
        order = np.argsort(new_ids, kind="stable")
        new_ids, new_slots = new_ids[order], np.asarray(slots, dtype=np.int64)[order]
        at = np.searchsorted(self._ids, new_ids)
        self._ids = np.insert(self._ids, at, new_ids)
        self._slots = np.insert(self._slots, at, new_slots)

    def ids(self) -> set[int]:
        return set(self._ids.tolist())

    def items(self) -> Iterator[tuple[int, int]]:
        return zip(self._ids.tolist(), self._slots.tolist(), strict=True)

    @property
    def max_id(self) -> int:
        return int(self._ids[-1]) if len(self._ids) else 0
