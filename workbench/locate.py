"""Where things are: the data dir, the service's port, the project of a cwd (its short name
and the key that tells two folders of one name apart), and the
exclusion rule a hook applies before spooling. Stdlib only.

Hooks run on every tool call under a ~15 ms budget and cannot import pydantic, so the few
facts they need to find the service live here, and ``workbench.settings`` builds on the same
functions: one definition, two users.
"""

from __future__ import annotations

import functools
import json
import os
import sys
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
MAX_PROJECT_KEY_CHARS = 1024  # a longer root path is keyed by its hash (``project_identity``)
MAX_CWD_CHARS = 4096  # PATH_MAX: a longer cwd is no folder a process can be in
MAX_WALK_LEVELS = 256  # how far up a cwd ``project_identity`` looks for ``.git``


def default_data_dir() -> Path:
    """``~/.workbench``: one hidden folder per user, like ``~/.claude``."""
    return Path.home() / ".workbench"


# The model folders a user (a test, a bench) may move by env var; each loader finds its own
# through ``model_dir`` and the spawner resolves them all (``absolute_model_dirs``).
MODEL_DIR_VARS = (
    "WORKBENCH_ONNX_MODEL_DIR",
    "WORKBENCH_STATIC_MODEL_DIR",
    "WORKBENCH_RERANK_TOKENS_DIR",
)


# What a shell or an editor adds around a value by accident: ASCII blanks only. ``str.strip()``
# also takes NEL, NBSP, U+3000, U+2028… which are legal at a folder name's end: the CLI handed
# the service an absolute path, and the service's second reading named another folder
# (``memory`` for ``memory`` + NBSP; make fuzz, stop 40).
BLANKS = " \t\n\r\x0b\x0c"


def trimmed(value: str) -> str:
    """``value`` without the ASCII blanks around it (see ``BLANKS``)."""
    return value.strip(BLANKS)


def _absolute(value: str) -> str:
    """A model folder's path as given (``~`` expanded), made absolute against this cwd."""
    return os.path.abspath(os.path.expanduser(trimmed(value)))


def model_dir_override(var: str) -> Path | None:
    """``$var`` as an absolute folder (against this process's cwd), or None when unset."""
    value = trimmed(os.environ.get(var, ""))
    return Path(_absolute(value)) if value else None


def model_dir(var: str, name: str) -> Path:
    """Where a model built at install lives: ``$var`` when set (``model_dir_override``; tests
    and benches that must not write into a shared venv), else this venv's
    ``share/workbench/<name>``."""
    override = model_dir_override(var)
    if override is not None:
        return override
    return Path(sys.prefix) / "share" / "workbench" / name


def absolute_model_dirs(env: dict[str, str]) -> dict[str, str]:
    """``env`` with each ``MODEL_DIR_VARS`` path made absolute against this process's cwd.

    Why: the service runs in the data dir (workbench/spawn.py), so a relative
    ``WORKBENCH_STATIC_MODEL_DIR=models/static`` handed on as is named ``<data_dir>/models/
    static`` there: the service silently loaded no static tier, or another model. The user
    meant the folder relative to where they set it, which is the cwd of the process that
    spawns the service (the CLI, or the hook in the session's folder), so it is resolved
    here, once, before the spawn. Changes ``env`` in place and returns it.
    """
    for var in MODEL_DIR_VARS:
        value = trimmed(env.get(var, ""))
        if value:
            env[var] = _absolute(value)
    return env


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
        env = trimmed(os.environ.get("WORKBENCH_DATA_DIR", ""))
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


class ProjectIdentity(tuple[str, str]):
    """``(name, key)``: the short name people read and filter by, and the key that tells two
    folders of one name apart (``clientA/api`` and ``clientB/api`` are both ``api``).

    A tuple subclass, not a dataclass: ``dataclasses`` costs a hook ~3 ms to import.
    """

    __slots__ = ()

    def __new__(cls, name: str, key: str) -> ProjectIdentity:
        return super().__new__(cls, (name, key))

    @property
    def name(self) -> str:
        return self[0]

    @property
    def key(self) -> str:
        return self[1]


def project_from_cwd(cwd: str | None) -> str:
    """The project's short name for ``cwd`` (``project_identity(cwd).name``)."""
    return project_identity(cwd).name


def project_key_from_cwd(cwd: str | None) -> str:
    """The project's key for ``cwd`` (``project_identity(cwd).key``)."""
    return project_identity(cwd).key


@functools.lru_cache(maxsize=1024)
def project_identity(cwd: str | None) -> ProjectIdentity:
    """Name and key of the project ``cwd`` is in.

    - In a git repository: the *main* repository's root. A worktree's ``.git`` is a file
      (``gitdir: <main>/.git/worktrees/<w>``) whose ``commondir`` leads back to the main
      ``.git``, so every worktree of one repository is one project, named and keyed by the
      main checkout. A submodule's gitdir has no ``commondir``: it is its own project.
    - Elsewhere: the folder itself.

    The key is the root's real path (symlinks resolved, so one folder reached two ways is one
    project); a path longer than ``MAX_PROJECT_KEY_CHARS`` is keyed by its sha256 instead.
    Reads ``.git`` files instead of running ``git``: a subprocess would cost more than the
    whole hook budget. Cached: the service sees the same few cwds thousands of times. Never
    raises: a ``cwd`` comes from a hook payload, and a folder the file system refuses to look
    into is simply not a git root. The name is cut to ``MAX_PROJECT_CHARS``.
    """
    if not cwd:
        return ProjectIdentity("unknown", "unknown")
    # Trigger: a cwd longer than PATH_MAX. / Why: no process can sit in it, and walking up
    # (or resolving) its thousands of components costs seconds. / Outcome: keyed as given.
    if len(cwd) > MAX_CWD_CHARS:
        return ProjectIdentity(_project_name(cwd.rstrip("/").rsplit("/", 1)[-1]), _bounded_key(cwd))
    checkout = _git_folder(cwd)
    if checkout is not None:
        root, name = _repository_root(Path(checkout))
        return ProjectIdentity(_project_name(name), _project_key(root))
    path = Path(cwd)
    return ProjectIdentity(_project_name(path.name), _project_key(path))


def checkout_root(cwd: str | None) -> Path | None:
    """The folder holding the ``.git`` (directory or worktree file) nearest above ``cwd``.

    Unlike ``project_identity``'s root, a linked worktree is its own checkout here: files are
    written and read in the checkout a session works in, while the project (and its memory)
    is the repository's. None outside a repository. Never raises, like ``project_identity``.
    """
    # A relative cwd would be read against this process's own folder: no agent sends one.
    if not cwd or len(cwd) > MAX_CWD_CHARS or not os.path.isabs(cwd):
        return None
    checkout = _git_folder(cwd)
    return None if checkout is None else Path(checkout)


def _git_folder(cwd: str) -> str | None:
    """The nearest folder at or above ``cwd`` that holds a ``.git`` entry, or None; at most
    ``MAX_WALK_LEVELS`` up (``project_identity`` and ``checkout_root`` walk the same way)."""
    folder = str(Path(cwd))  # "a//b/" is "a/b", as the file system reads it
    for _ in range(MAX_WALK_LEVELS):
        if _holds_git(folder):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent
    return None


def _holds_git(folder: str) -> bool:
    # ``exists`` is False for any OSError or ValueError: a component over 255 bytes
    # (ENAMETOOLONG), a symlink loop, no permission, a NUL byte. The cwd is the payload's,
    # not ours to trust, and a 500 or a silent hook would lose the event: no git root here.
    return os.path.exists(os.path.join(folder, ".git"))


def _repository_root(folder: Path) -> tuple[Path, str]:
    """The main checkout of the repository whose ``.git`` is in ``folder``, and its name.

    Anything unexpected (``.git`` is a FIFO, garbage ``gitdir:``, no ``commondir``) keeps
    ``folder`` itself: the old rule, never an error.
    """
    marker = folder / ".git"
    try:
        if marker.is_dir():
            return folder, folder.name
    except (OSError, ValueError):
        return folder, folder.name
    gitdir_line = _first_line(marker)
    if not gitdir_line.startswith("gitdir:"):
        return folder, folder.name
    gitdir = folder / gitdir_line[len("gitdir:") :].strip()  # an absolute one replaces folder
    common = _first_line(gitdir / "commondir")
    if not common:
        return folder, folder.name  # a submodule, or a gitdir that is not one
    common_dir = Path(os.path.normpath(gitdir / common))
    if common_dir.name == ".git":
        return common_dir.parent, common_dir.parent.name
    # The worktree of a bare repository (``api.git``): the bare repository is the project.
    name = common_dir.name[:-4] if common_dir.name.endswith(".git") else common_dir.name
    return common_dir, name or folder.name


def _first_line(path: Path) -> str:
    """The first line of a small regular file, or ``""`` (never blocks on a FIFO or a device)."""
    try:
        if not os.path.isfile(path):
            return ""
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except (OSError, ValueError):
        return ""
    lines = head.decode("utf-8", "replace").splitlines()
    return lines[0].strip() if lines else ""


def _project_name(name: str) -> str:
    return name[:MAX_PROJECT_CHARS] or "unknown"


def _project_key(folder: Path) -> str:
    """The real absolute path of ``folder`` (its sha256 past ``MAX_PROJECT_KEY_CHARS``)."""
    try:
        key = os.path.realpath(folder)
    except (OSError, ValueError):  # a NUL byte; a loop is left unresolved, not raised
        key = str(folder)
    return _bounded_key(key)


def _bounded_key(key: str) -> str:
    if len(key) <= MAX_PROJECT_KEY_CHARS and "\0" not in key:
        return key
    import hashlib  # only for absurd paths: a hook does not pay for it otherwise

    return "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


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
