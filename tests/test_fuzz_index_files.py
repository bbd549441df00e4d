"""Fuzz: what ``index_files.remove_replaced`` leaves in ``index/``, whatever was there.

Issue 21: a switch of ``vector_index`` left the other kind's files forever. For any mix of
this model's file sets (whole, torn, or interrupted saves' temp files), other models' sets
(including a name that extends ours) and unrelated files:

- the kind in use and everything not of this model are never touched;
- with the kind in use complete on disk (its meta, written last by ``save``, present), no
  other kind's file and no temp file of this model is left;
- without it, nothing at all is removed (a replacement that is not complete removes nothing);
- ``saved_kinds`` lists exactly the other kinds with a readable meta, newest save first.

Real files in a real folder; the kind in use is a real ``VectorIndex.save``.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.fuzz_harness import budget
from workbench.recall import index_files
from workbench.recall.vectors import KINDS, VectorIndex

pytestmark = pytest.mark.slow  # every fuzz file runs in CI's slow tier (test_suite_tiers)

OURS = "static-0123abcd"
OTHERS = ["minilm-int8-feedbeef0000-t256", f"{OURS}.fp16", "static"]
PARTS = ["faiss", "ids.json", "json"]
SUFFIXES = ["", ".tmp"]


def names_of(model: str) -> list[str]:
    return [
        f"observations.{model}.{kind}.{part}{tail}"
        for kind in KINDS
        for part in PARTS
        for tail in SUFFIXES
    ]


OUR_NAMES = names_of(OURS)
FOREIGN = [name for model in OTHERS for name in names_of(model)] + ["notes.txt", "x.faiss"]


def saved(folder: Path, kind: str) -> None:
    index = VectorIndex(OURS, 4, kind)  # type: ignore[arg-type]
    vecs = np.eye(4, dtype=np.float32)[:3]
    index.add([1, 2, 3], [f"h{i}" for i in range(3)], vecs, projects=["p"] * 3)
    index.save(folder)


@settings(max_examples=budget(200), deadline=None)
@given(
    in_use=st.sampled_from(KINDS),
    whole_in_use=st.booleans(),
    ours=st.sets(st.sampled_from(OUR_NAMES)),
    foreign=st.sets(st.sampled_from(FOREIGN)),
    stamps=st.dictionaries(st.sampled_from(KINDS), st.one_of(st.none(), st.floats(0, 1e10))),
)
def test_only_this_models_replaced_kinds_go_and_only_once_the_kind_in_use_is_saved(
    in_use: str,
    whole_in_use: bool,
    ours: set[str],
    foreign: set[str],
    stamps: dict[str, float | None],
) -> None:
    with tempfile.TemporaryDirectory() as raw:
        folder = Path(raw)
        mine = {f"observations.{OURS}.{in_use}.{part}" for part in PARTS}
        ours = ours - mine  # the set in use is either saved whole below or absent
        for name in ours | foreign:
            (folder / name).write_bytes(b"junk")
        for kind, stamp in stamps.items():  # readable metas of other kinds (saved_kinds)
            meta = folder / f"observations.{OURS}.{kind}.json"
            if kind != in_use and meta.name in ours and stamp is not None:
                meta.write_text(json.dumps({"saved_at": stamp}), encoding="utf-8")
        if whole_in_use:
            saved(folder, in_use)
        before = {p.name for p in folder.iterdir()}

        listed = index_files.saved_kinds(folder, OURS, besides=in_use)
        readable = {
            kind: stamp
            for kind, stamp in stamps.items()
            if kind != in_use and stamp is not None and f"observations.{OURS}.{kind}.json" in ours
        }
        assert set(listed) == set(readable)
        assert [readable[k] for k in listed] == sorted(readable.values(), reverse=True)

        removed = index_files.remove_replaced(folder, OURS, in_use)  # type: ignore[arg-type]
        after = {p.name for p in folder.iterdir()}
        assert set(removed) == before - after
        assert foreign <= after  # other models' and unrelated files: never touched
        if not whole_in_use:
            assert after == before  # no complete replacement: nothing goes
            return
        assert mine <= after  # the kind in use stays
        assert after == mine | foreign  # every other kind and temp file of ours is gone
