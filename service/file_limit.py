"""Raise the service's soft limit on open files toward its hard limit, once, at start.

Why: every connection is a file handle. Under the usual soft limit (1,024 in most Linux
sessions, 256 on macOS) a local process that opened ~1,100 connections sending nothing made
the service refuse every other one, hooks' and ``/api/health`` alike, until the head timeout
(``http_protocol.HEAD_TIMEOUT_S``) closed them, and it could open them again as fast
(tests/test_service_file_limit.py). The hard limit is usually far higher (524,288 under
systemd), and raising the soft one up to it needs no privilege: this is what servers do.

``WANTED`` caps it: past that, more handles buy nothing a local service needs, and macOS
refuses a soft limit above ``OPEN_MAX`` (10,240) even when the hard one is unlimited. No
``resource`` module (Windows): nothing to do.
"""

from __future__ import annotations

import logging

WANTED = 65_536
MACOS_OPEN_MAX = 10_240

log = logging.getLogger("workbench.service")


def raise_file_limit(wanted: int = WANTED) -> tuple[int, int] | None:
    """Raise the soft ``RLIMIT_NOFILE`` to ``min(wanted, hard)``; the (before, after) soft
    limits when it changed, else None. Never lowers it, never raises."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    if soft == resource.RLIM_INFINITY or soft >= target:
        return None
    for attempt in (target, min(target, MACOS_OPEN_MAX)):
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (attempt, hard))
        except (ValueError, OSError):
            continue
        return soft, attempt
    log.warning("could not raise the open-files limit above %d", soft)
    return None
