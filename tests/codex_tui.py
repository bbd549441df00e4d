"""Codex CLI's interactive screen (its TUI) in a pseudo-terminal, driven like a user's keys.

Why: Codex 0.171 runs a hook only once the user trusted it, and the one place a user does
that is this screen: at start it asks "Hooks need review" and "Trust all and continue" writes
``[hooks.state."…"] trusted_hash`` to config.toml (``workbench.agents.codex_trust``). The
real-agent suite trusts workbench's hooks exactly so, to verify the step the README gives.

The screen asks the terminal about itself (cursor position, colours, modes) and waits for the
answers, so ``Terminal`` answers them the way a terminal emulator does. Text is matched on
the screen's output with escape sequences removed; keys are sent once the screen has been
quiet for a moment (keys sent while it is still drawing are lost).
"""

from __future__ import annotations

import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time
from pathlib import Path

# What the screen asks -> what a terminal answers.
ANSWERS = [
    (b"\x1b[6n", b"\x1b[1;1R"),  # cursor position
    (b"\x1b]10;?", b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\"),  # foreground colour
    (b"\x1b]11;?", b"\x1b]11;rgb:0000/0000/0000\x1b\\"),  # background colour
    (b"\x1b[c", b"\x1b[?62c"),  # device attributes
    (b"\x1b[?u", b"\x1b[?0u"),  # keyboard protocol flags
]
MODE_QUERY = re.compile(rb"\x1b\[\?(\d+)\$p")  # DECRQM: "mode reset"
ESCAPES = re.compile(rb"\x1b\[[0-9;?>]*[a-zA-Z]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)")
DOWN, ENTER = b"\x1b[B", b"\r"


class Terminal:
    """``argv`` running in a 120x40 pseudo-terminal in ``cwd`` with ``env``."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str]) -> None:
        pid, fd = pty.fork()
        if pid == 0:  # the child: becomes the program
            try:
                os.chdir(cwd)
                os.execve(argv[0], argv, {**env, "TERM": "xterm-256color"})
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.output = b""

    def screen(self) -> str:
        """Everything shown since the last ``clear``, escapes removed, spaces collapsed."""
        return " ".join(ESCAPES.sub(b" ", self.output).decode("utf-8", "replace").split())

    def clear(self) -> None:
        self.output = b""

    def _read(self, timeout: float) -> bool:
        """Read what is there within ``timeout``; answer the terminal queries in it."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # the program exited
            return False
        self.output += data
        for query, answer in ANSWERS:
            if query in data:
                os.write(self.fd, answer)
        for mode in MODE_QUERY.finditer(data):
            os.write(self.fd, b"\x1b[?" + mode.group(1) + b";2$y")
        return True

    def wait_for(self, text: str, timeout: float = 30) -> None:
        """Until ``text`` is on the screen, then until the screen is quiet for 0.5 s."""
        deadline = time.monotonic() + timeout
        while text not in self.screen():
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never shown; the screen: {self.screen()[-1500:]}")
            self._read(0.1)
        quiet = time.monotonic()
        while time.monotonic() - quiet < 0.5 and time.monotonic() < deadline:
            if self._read(0.1):
                quiet = time.monotonic()

    def keys(self, *keys: bytes) -> None:
        self.clear()
        for key in keys:
            os.write(self.fd, key)
            self._read(0.2)

    def pump(self, seconds: float) -> None:
        """Keep answering the screen for ``seconds`` (it waits on answers while it works)."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self._read(0.1)

    def close(self) -> None:
        try:
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline:
                done, _ = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    break
                self._read(0.1)
            else:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(self.fd)
