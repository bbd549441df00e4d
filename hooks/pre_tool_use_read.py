"""PreToolUse hook (matcher ``Read``): show what earlier sessions did to a file before it is read.

For ``tool_input.file_path``, when the file is worth it, ask ``GET /api/context/file`` for the
file-history block and print
``{"hookSpecificOutput": {"hookEventName": "PreToolUse", "additionalContext": text}}``.
It never states a ``permissionDecision``: in Claude Code an ``"allow"`` skips the permission
prompt the user configured for Read, and a memory system must not widen (or narrow) what the
agent may do. The user's own rules decide; this hook only adds context.

Skipped, with ``{}`` and no request, when the local file system already says no:

- a subagent's Read (``agent_id`` present): the parent has the context, and subagents read a
  lot of files quickly;
- no ``file_path``, a missing file, a directory, or a file smaller than
  ``file_context_min_bytes`` (default 1,500: a small file is cheaper to read than to describe).

The service applies the rest: no observations of the file, or the file changed after the
newest of them (the hook sends the mtime it already has), means an empty reply and ``{}``.
Nothing is ever spooled: this is a read-only query, worthless once the Read has happened.

Fail-open: see ``hooks/_runtime.py``; exits 0 whatever happens.
"""

from __future__ import annotations

import os
import stat
import sys

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:  # the dev checkout, ``python -S``, or a non-editable install
    sys.path.insert(0, _ROOT)

from hooks import _runtime  # noqa: E402
from workbench import locate  # noqa: E402

HOOK = "PreToolUse"
ROUTE = "/api/context/file"
DEFAULT_MIN_BYTES = 1500
CONTEXT_TIMEOUT_S = 1.0  # the agent is waiting to read the file


def wanted(event: _runtime.HookInput) -> bool:
    """A Read by the main agent (a subagent's carries ``agent_id``; other tools are not ours)."""
    return not event.agent_id and event.tool_name in ("Read", "")


def target(event: _runtime.HookInput) -> str | None:
    """The absolute path the Read will open, or None when there is none."""
    tool_input = event.tool_input if isinstance(event.tool_input, dict) else {}
    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path.strip():
        return None
    path = path.strip()
    if not os.path.isabs(path) and event.cwd:
        path = os.path.join(event.cwd, path)
    return path


def worth_asking(path: str, min_bytes: int) -> int | None:
    """The file's mtime (epoch ms) when it is a regular file of ``min_bytes`` or more; else None."""
    try:
        info = os.stat(path)
    except (OSError, ValueError):  # missing, unreadable, or a path with a NUL byte
        return None
    if not stat.S_ISREG(info.st_mode) or info.st_size < min_bytes:
        return None
    return info.st_mtime_ns // 1_000_000


def output_for(context: str) -> dict[str, Any]:
    """The hook's stdout: context only, never a permission decision (see the module doc)."""
    if not context:
        return {}
    return {
        "hookSpecificOutput": {
            "hookEventName": HOOK,
            "additionalContext": context,
        }
    }


def main() -> None:
    event = _runtime.read_input()
    path = target(event) if event is not None and wanted(event) else None
    context = ""
    if event is not None and path is not None:
        root = _runtime.data_dir()
        raw = locate.hook_setting(root, "file_context_min_bytes")
        mtime = worth_asking(path, locate.parse_count(raw, DEFAULT_MIN_BYTES))
        if mtime is not None:
            context = _runtime.get_text(
                _runtime.service_port(root),
                ROUTE,
                {
                    "path": path,
                    "cwd": event.cwd,
                    "mtime": str(mtime),
                    "contentSessionId": event.session_id,
                },
                total_timeout=CONTEXT_TIMEOUT_S,
            )
    _runtime.emit(output_for(context))


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: BLE001 - the documented fail-open boundary (hooks/_runtime.py)
        pass
    sys.exit(0)
