"""The agents' own programs from npm, at pinned versions, for the end-to-end suite.

Why the real programs: fixtures we write encode what we believe an agent sends. The standing
suite (``tests/test_real_*.py``) installs each CLI from the npm registry at the version below,
points it at a local fake model server and drives it after ``workbench install --agent X``.

They are installed once into ``<venv>/share/real-agents`` (``make agents`` does it ahead of the
tests; otherwise the first test that needs them does, under a lock). The only reason to skip is
that npm is missing or the registry cannot be reached: any other failure is an error.

``python -m tests.real_agents`` installs them and prints where each program is.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class Pin:
    """One agent CLI: its npm package, the version we test against and its program's name."""

    package: str
    version: str
    program: str

    @property
    def spec(self) -> str:
        return f"{self.package}@{self.version}"


PINS: dict[str, Pin] = {
    "claude": Pin("@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": Pin("@openai/codex", "0.171.0", "codex"),
    "gemini": Pin("@google/gemini-cli", "0.61.0", "gemini"),
    "opencode": Pin("opencode-ai", "1.18.33", "opencode"),
}
# Agents workbench registers its MCP server with but drives no hooks of (issue 22 item 4):
# their own folder, so adding one never reinstalls the CLIs above.
MCP_ONLY_PINS: dict[str, Pin] = {
    "copilot": Pin("@github/copilot", "1.0.102", "copilot"),
}

# npm's words for "the registry is not reachable from here" (DNS, refused, offline, timeout).
_UNREACHABLE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "ENETUNREACH", "ENOTCACHED")


class RegistryUnreachable(RuntimeError):
    """npm is missing or cannot reach its registry: the one reason the real-agent tests skip."""


def prefix() -> Path:
    """Where the pinned CLIs live: beside this interpreter's venv, removed with it."""
    return Path(sys.prefix) / "share" / "real-agents"


def _stamp(root: Path) -> Path:
    return root / "pins.json"


def _wanted(pins: dict[str, Pin]) -> str:
    return json.dumps({name: pin.spec for name, pin in sorted(pins.items())})


def _root_for(pins: dict[str, Pin]) -> Path:
    return prefix() if pins is PINS else prefix().with_name("real-agents-mcp-only")


def install(root: Path | None = None, pins: dict[str, Pin] = PINS) -> Path:
    """Install every pinned CLI into ``root`` (once: a stamp names the pins installed)."""
    root = root or _root_for(pins)
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "w", encoding="utf-8") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _stamp(root).exists() and _stamp(root).read_text("utf-8") == _wanted(pins):
            return root
        npm = shutil.which("npm")
        if npm is None:
            raise RegistryUnreachable("npm is not on PATH (apt-get install -y npm)")
        proc = subprocess.run(
            [npm, "install", "--prefix", str(root), "--no-audit", "--no-fund", "--no-save"]
            + [pin.spec for pin in pins.values()],
            capture_output=True,
            text=True,
            timeout=900,
            env={**os.environ, "npm_config_update_notifier": "false"},
        )
        if proc.returncode != 0:
            output = proc.stdout + proc.stderr
            if any(code in output for code in _UNREACHABLE):
                raise RegistryUnreachable(f"the npm registry is unreachable: {output[-400:]}")
            raise RuntimeError(f"npm install of the pinned agents failed:\n{output[-2000:]}")
        _stamp(root).write_text(_wanted(pins), "utf-8")
    return root


def program(name: str) -> Path:
    """The installed program of agent ``name``; skips the test only if npm cannot reach npm."""
    pins = PINS if name in PINS else MCP_ONLY_PINS
    try:
        root = install(pins=pins)
    except RegistryUnreachable as exc:
        pytest.skip(f"real {name} CLI not installed: {exc}")
    path = root / "node_modules" / ".bin" / pins[name].program
    assert path.exists(), f"{pins[name].spec} installed but {path} is missing"
    return path


def main() -> None:
    for pins in (PINS, MCP_ONLY_PINS):
        try:
            root = install(pins=pins)
        except RegistryUnreachable as exc:  # the tests skip with this reason: no need to fail
            print(f"real agent CLIs not installed ({exc}); their tests will skip")
            return
        for name, pin in pins.items():
            print(f"{name:9} {pin.spec:34} {root / 'node_modules' / '.bin' / pin.program}")


if __name__ == "__main__":
    main()
