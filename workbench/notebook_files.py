"""Stdlib only: the notebooks ``workbench notebook`` opens, and where marimo keeps snapshots
of their outputs.

Low in the layers on purpose: ``workbench.forget`` removes those snapshots (a copy of the
memory outside the data dir), and must not import the notebooks' helpers (``notebooks``) to
find them.
"""

from __future__ import annotations

from pathlib import Path

NOTEBOOKS_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS: dict[str, str] = {
    "corpus_builder": "filter the memory with widgets, preview it, save it as a corpus",
    "knowledge_agent": "prime a corpus and chat with the knowledge agent, with citations",
    "analytics": "token economics, activity, type mix, files, concepts, sessions, SQL",
    "evaluate": "recall@k and MRR of full text / vector / hybrid on your own history",
}


def snapshot_path(name: str) -> Path:
    """Where marimo keeps its snapshot of notebook ``name``'s outputs (``marimo export html``
    writes it, and ``marimo edit`` with ``auto_instantiate`` off): beside the notebook, outside
    the data dir, holding whatever the notebook showed (memories' titles, questions)."""
    return NOTEBOOKS_DIR / "__marimo__" / "session" / f"{name}.py.json"


def snapshot_paths() -> list[Path]:
    """The snapshots of the notebooks that exist now (``workbench.forget`` removes them)."""
    return [path for name in NOTEBOOKS if (path := snapshot_path(name)).is_file()]
