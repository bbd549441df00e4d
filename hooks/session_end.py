"""SessionEnd hook: tell the service the session is over, and why (``reason``).

The service uses it to close the session and flush any pending summary work. Claude Code does
not wait on this hook's outcome, so it is as short as a hook can be.

Prints ``{}``. Fail-open: see ``hooks/_runtime.py``; exits 0 whatever happens.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing costs start-up; see hooks/_runtime.py
if TYPE_CHECKING:
    from typing import Any

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if _ROOT not in sys.path:  # the dev checkout, ``python -S``, or a non-editable install
    sys.path.insert(0, _ROOT)

from hooks import _runtime  # noqa: E402

HOOK = "SessionEnd"
ROUTE = "/api/sessions/end"


def build_body(event: _runtime.HookInput) -> dict[str, Any]:
    return {"contentSessionId": event.session_id, "reason": event.reason}


def main() -> None:
    event = _runtime.read_input()
    if event is not None:
        _runtime.deliver(HOOK, ROUTE, build_body(event), cwd=event.cwd)
    _runtime.emit()


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # noqa: BLE001 - the documented fail-open boundary (hooks/_runtime.py)
        _runtime.emit_fallback()
    sys.exit(0)
