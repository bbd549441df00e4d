"""The offline compressor's edit rules (``compress/rules/edits.py``): Edit, MultiEdit, Write,
NotebookEdit on realistic Claude Code payloads.
"""

from __future__ import annotations

from tests.offline_events import CWD, dumped, event, one


# ----- edits ---------------------------------------------------------------------------------
def test_edit_is_a_change_naming_file_lines_and_replacement() -> None:
    obs = one(
        event(
            "Edit",
            {
                "file_path": f"{CWD}/workbench/store/queue.py",
                "old_string": "def claim(self):\n    return self._next()",
                "new_string": "def claim(self, limit: int = 1):\n    return self._next(limit)",
                "replace_all": False,
            },
            {
                "filePath": f"{CWD}/workbench/store/queue.py",
                "oldString": "def claim(self):\n    return self._next()",
                "newString": "def claim(self, limit: int = 1):\n    return self._next(limit)",
                "originalFile": "import sqlite3\n" * 500,
                "structuredPatch": [
                    {
                        "oldStart": 40,
                        "oldLines": 3,
                        "newStart": 40,
                        "newLines": 3,
                        "lines": [
                            " class Queue:",
                            "-    def claim(self):",
                            "-        return self._next()",
                            "+    def claim(self, limit: int = 1):",
                            "+        return self._next(limit)",
                        ],
                    }
                ],
                "userModified": False,
                "replaceAll": False,
            },
        )
    )
    assert obs.type == "change"
    assert obs.title == "Edited workbench/store/queue.py"
    assert obs.files_modified == ["workbench/store/queue.py"]
    assert obs.files_read == []
    assert "lines 40–42" in obs.facts
    assert "+2 −2 lines" in obs.facts
    assert any(f.startswith("replaced `def claim(self):`") for f in obs.facts)
    assert "touches: claim" in obs.facts
    assert {"python", "store"} <= set(obs.concepts)
    assert "import sqlite3" not in dumped(obs)  # originalFile is never copied


def test_edit_that_renames_one_identifier_is_a_refactor() -> None:
    obs = one(
        event(
            "Edit",
            {
                "file_path": f"{CWD}/app/util.py",
                "old_string": "total = compute_sum(xs)\nreturn compute_sum(ys) + total",
                "new_string": "total = sum_values(xs)\nreturn sum_values(ys) + total",
                "replace_all": True,
            },
            {"filePath": f"{CWD}/app/util.py"},
        )
    )
    assert obs.type == "refactor"
    assert obs.title == "Renamed compute_sum → sum_values in app/util.py"
    assert "replaced every occurrence" in obs.facts


def test_multi_edit_that_moves_a_block_is_a_refactor() -> None:
    block = "def helper():\n    return 42\n"
    obs = one(
        event(
            "MultiEdit",
            {
                "file_path": f"{CWD}/app/main.py",
                "edits": [
                    {"old_string": block, "new_string": ""},
                    {"old_string": "# helpers\n", "new_string": "# helpers\n" + block},
                ],
            },
            {"filePath": f"{CWD}/app/main.py"},
        )
    )
    assert obs.type == "refactor"
    assert obs.title == "Moved code within app/main.py"
    assert "moved: `def helper():`" in obs.facts


def test_multi_edit_lists_its_edits() -> None:
    obs = one(
        event(
            "MultiEdit",
            {
                "file_path": f"{CWD}/README.md",
                "edits": [
                    {"old_string": "Install", "new_string": "Installation"},
                    {"old_string": "", "new_string": "## Usage"},
                    {"old_string": "old line", "new_string": ""},
                    "not an edit",
                ],
            },
            None,
        )
    )
    assert obs.type == "change"
    assert obs.title == "Edited README.md (3 edits)"
    assert "3 edits" in obs.facts
    assert "inserted `## Usage`" in obs.facts
    assert "deleted `old line`" in obs.facts
    assert "docs" in obs.concepts


def test_write_of_a_new_file_is_a_feature() -> None:
    content = "import re\n\n\ndef parse(text):\n    return []\n\n\nclass Parser:\n    pass\n"
    obs = one(
        event(
            "Write",
            {"file_path": f"{CWD}/workbench/compress/xml.py", "content": content},
            {
                "type": "create",
                "filePath": f"{CWD}/workbench/compress/xml.py",
                "content": content,
                "structuredPatch": [],
            },
        )
    )
    assert obs.type == "feature"
    assert obs.title == "Created workbench/compress/xml.py"
    assert "9 lines, 68 chars" in obs.facts
    assert "defines: parse, Parser" in obs.facts
    assert obs.files_modified == ["workbench/compress/xml.py"]


def test_write_over_an_existing_file_is_a_change() -> None:
    obs = one(
        event(
            "Write",
            {"file_path": f"{CWD}/config.toml", "content": "a = 1\n"},
            {"type": "update", "filePath": f"{CWD}/config.toml", "content": "a = 1\n"},
        )
    )
    assert obs.type == "change"
    assert obs.title == "Rewrote config.toml"
    assert "config" in obs.concepts


def test_write_with_an_old_string_response_still_sees_creation() -> None:
    response = f"File created successfully at: {CWD}/notes.md"
    obs = one(event("Write", {"file_path": f"{CWD}/notes.md", "content": "# Notes\n"}, response))
    assert obs.type == "feature"


def test_notebook_edit_is_a_change() -> None:
    obs = one(
        event(
            "NotebookEdit",
            {
                "notebook_path": f"{CWD}/notebooks/analysis.ipynb",
                "cell_id": "cell-3",
                "new_source": "df.groupby('day').sum()",
                "cell_type": "code",
                "edit_mode": "insert",
            },
            {"new_source": "df.groupby('day').sum()", "cell_id": "cell-3"},
        )
    )
    assert obs.type == "change"
    assert obs.title == "Edited notebook notebooks/analysis.ipynb"
    assert "insert code cell cell-3" in obs.facts
    assert "notebook" in obs.concepts


def test_write_of_a_private_key_is_a_security_alert_without_the_key() -> None:
    key = (
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        "b3BlbnNzaC1rZXktdjEAAAAA\n"
        "-----END OPENSSH PRIVATE KEY-----"
    )
    obs = one(
        event("Write", {"file_path": f"{CWD}/deploy/key", "content": key}, {"type": "create"})
    )
    assert obs.type == "security_alert"
    assert "contains a private key (value not stored)" in obs.facts
    assert "b3BlbnNzaC1rZXktdjEAAAAA" not in dumped(obs)
