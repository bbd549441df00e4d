"""Where things are: the data dir, the service's port, the project of a cwd, and the
exclusion rule a hook applies before spooling. Stdlib only.

Hooks run on every tool call under a ~15 ms budget and cannot import pydantic, so the few
facts they need to find the service live here, and ``workbench.settings`` builds on the same
functions: one definition, two users.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path

# Hook start-up is the budget (bench/hooks.py): ``typing`` costs ~4 ms, so annotations stay
# strings and it is imported for checkers only; ``fnmatch`` is imported where a glob is matched.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SETTINGS_FILE = "settings.json"
PORT_BASE = 37700
PORT_SPAN = 2000  # default ports: 37700-39699 (default_port)
MAX_PROJECT_CHARS = 200  # the longest project name the HTTP API accepts (service/schemas.py)


def default_data_dir() -> Path:
    """``~/.workbench``: one hidden folder per user, like ``~/.claude``."""
    return Path.home() / ".workbench"


def resolve_data_dir(explicit: Path | str | None = None) -> Path:
    """The single source of truth for the data dir: argument > ``WORKBENCH_DATA_DIR`` > default.

    Always absolute, resolved once against the caller's cwd: the service is spawned with
    ``cwd=data_dir``, so a relative ``.demo/data`` handed on as is would open
    ``.demo/data/.demo/data``. ``abspath`` (not ``resolve``) keeps symlinks as the user wrote
    them and only folds ``..``.
    """
    if explicit is not None:
        chosen = Path(explicit).expanduser()
    else:
        env = os.environ.get("WORKBENCH_DATA_DIR", "").strip()
        chosen = Path(env).expanduser() if env else default_data_dir()
    return Path(os.path.abspath(chosen))


def default_port(data_dir: Path | str) -> int:
    """A port of its own for each data dir: ``PORT_BASE + hash(uid, real path) % PORT_SPAN``.

    Two data dirs used to share ``37700 + uid % 100``, and a client of one then talked to
    the other's service. The hash is FNV-1a (no import: hooks pay for each module) over the
    uid and the data dir's real path (symlinks followed: two spellings of one folder are one
    data dir), so it is stable across runs and differs between data dirs and users. A setting
    (``WORKBENCH_PORT`` or settings.json ``port``) overrides it; ``workbench.instance`` catches
    the rare collision that remains.
    """
    uid = os.getuid() if hasattr(os, "getuid") else 0
    key = f"{uid}:{os.path.realpath(data_dir)}".encode("utf-8", "surrogateescape")
    digest = 0x811C9DC5
    for byte in key:
        digest = ((digest ^ byte) * 0x01000193) & 0xFFFFFFFF
    return PORT_BASE + digest % PORT_SPAN


def service_port(data_dir: Path) -> int:
    """The port the service listens on: ``WORKBENCH_PORT`` > settings.json ``port`` > default.

    Mirrors ``Settings.port`` without pydantic; an unreadable file falls back to the default,
    exactly as the service itself does.
    """
    env = parse_port(os.environ.get("WORKBENCH_PORT", ""))
    if env is not None:
        return env
    try:
        data = json.loads((data_dir / SETTINGS_FILE).read_text(encoding="utf-8"))
        port = parse_port(data.get("port")) if isinstance(data, dict) else None
        if port is not None:
            return port
    except (OSError, ValueError):
        pass
    return default_port(data_dir)


def parse_port(value: object) -> int | None:
    """A port from env text or a JSON value: an integer 1–65535 (``"40000"``, ``40000.0`` too).

    The one rule both ``service_port`` (hooks) and ``Settings.port`` (the service) apply, so a
    hook always looks where the service listens. Booleans are not ports.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str):
        text = value.strip()
        if not (text.isascii() and text.isdigit()):
            return None
        value = int(text)
    if isinstance(value, int) and 0 < value < 65536:
        return value
    return None


@functools.lru_cache(maxsize=1024)
def project_from_cwd(cwd: str | None) -> str:
    """Name the project for ``cwd``: the git root's folder name, else the folder's own name.

    Walks up looking for ``.git`` instead of running ``git``: a subprocess would cost more than
    the whole hook budget. Cached: the service sees the same few cwds thousands of times.
    Never raises: a ``cwd`` comes from a hook payload, and a folder the file system refuses
    to look into is simply not a git root. The name is cut to ``MAX_PROJECT_CHARS``.
    """
    if not cwd:
        return "unknown"
    path = Path(cwd)
    for candidate in (path, *path.parents):
        if _holds_git(candidate):
            return _project_name(candidate)
    return _project_name(path)


def _holds_git(folder: Path) -> bool:
    try:
        return (folder / ".git").exists()
    except (OSError, ValueError):
        # Trigger: a component over 255 bytes (ENAMETOOLONG), a symlink loop, no permission,
        # a NUL byte (ValueError). / Why: the cwd is the payload's, not ours to trust, and a
        # 500 or a silent hook would lose the event. / Outcome: no git root here; walk on up.
        return False


def _project_name(folder: Path) -> str:
    return folder.name[:MAX_PROJECT_CHARS] or "unknown"


# Pydantic's spellings of a boolean, so a hook and the service read one value the same way.
_TRUE = frozenset({"1", "on", "t", "true", "y", "yes"})
_FALSE = frozenset({"0", "off", "f", "false", "n", "no"})


def hook_setting(data_dir: Path, name: str) -> object:
    """The raw value of one setting for a hook: ``WORKBENCH_<NAME>`` > settings.json > None.

    The same precedence as ``Settings`` (minus pydantic, which a hook cannot afford), so a
    hook can skip a request the service would answer with nothing (e.g. UserPromptSubmit
    when ``prompt_injection`` is off). Parse the value with ``parse_flag``/``parse_count``.
    """
    env = os.environ.get("WORKBENCH_" + name.upper(), "")
    if env:  # as given: pydantic reads " yes " as invalid, and so must we
        return env
    try:
        data = json.loads((data_dir / SETTINGS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get(name) if isinstance(data, dict) else None


def parse_flag(value: object, default: bool) -> bool:
    """A boolean setting as pydantic reads it (``true``/``1``/``yes``/``on``…); else ``default``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        text = value.lower()
        if text in _TRUE:
            return True
        if text in _FALSE:
            return False
    return default


def parse_count(value: object, default: int) -> int:
    """A non-negative integer setting as pydantic reads one (``"1500"``, ``" +1_500 "``,
    ``"1500.0"``, ``1500``, ``1500.0``); anything else gives ``default``."""
    if isinstance(value, bool):
        return default
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            try:
                value = float(value)
            except ValueError:
                return default
    if isinstance(value, float):
        value = int(value) if value.is_integer() else None
    return value if isinstance(value, int) and value >= 0 else default


# ----- the exclusion rule, for the service and for hooks that must spool ----------------------
def is_excluded(patterns: list[str], project: str, cwd: str = "") -> bool:
    """True when the project name (or the full cwd) matches one ``excluded_projects`` glob."""
    import fnmatch  # only when a hook or the service has a rule to apply (see the imports)

    return any(
        fnmatch.fnmatchcase(project, p) or (cwd and fnmatch.fnmatchcase(cwd, p)) for p in patterns
    )


def excluded_projects(data_dir: Path) -> list[str] | None:
    """``excluded_projects`` as ``Settings`` reads it (env > settings.json > ``[]``).

    None when the rule cannot be known: the variable or the file is unreadable, or holds
    something that is not a list of names. Callers fail closed on None.
    """
    env = os.environ.get("WORKBENCH_EXCLUDED_PROJECTS", "")
    if env:
        return _pattern_list(env)
    path = data_dir / SETTINGS_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError):  # a directory, unreadable, not UTF-8, not JSON
        return None
    if not isinstance(data, dict):
        return None
    return _pattern_list(data.get("excluded_projects", []))


def _pattern_list(value: Any) -> list[str] | None:
    """A JSON list of strings, or ``a,b`` text (as the settings validator accepts); else None."""
    if isinstance(value, str):
        text = value.strip()
        if not text.startswith("["):
            return [part.strip() for part in text.split(",") if part.strip()]
        try:
            value = json.loads(text)
        except ValueError:
            return None
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return value
    return None


def capture_refusal(data_dir: Path, body: dict[str, Any], cwd: str = "") -> str | None:
    """Why an event must not be kept on this machine's disk (the spool), else None.

    The service applies the same rule at ingest; a hook applies it only when it must spool,
    so an excluded project's text never reaches the disk while the service is down. Fails
    closed: when the rule cannot be read, nothing is spooled. ``cwd``: the hook payload's,
    for bodies that name neither a project nor a cwd (Stop, SessionEnd: only the session).
    """
    patterns = excluded_projects(data_dir)
    if patterns is None:
        return f"{data_dir / SETTINGS_FILE} cannot be read: capture is paused"
    cwd = body["cwd"] if isinstance(body.get("cwd"), str) else cwd
    project = body.get("project") if isinstance(body.get("project"), str) else ""
    if not project and cwd:
        project = project_from_cwd(cwd)
    if project and is_excluded(patterns, project, cwd):
        return f"project {project!r} is excluded"
    return None
