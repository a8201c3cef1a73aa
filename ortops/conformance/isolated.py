"""Run a function in a child Python process, so that a runtime that crashes (a segfault, an
abort from glibc's heap checks) becomes a verdict instead of taking the conformance run down.

:class:`Worker` keeps one child and sends it calls ``module.function(*args, **kwargs)`` one at
a time (pickled over a pipe). When the child dies during a call, the call's :class:`Outcome`
says how (the signal or exit status) and quotes what the child wrote to stderr during that call
(e.g. glibc's "double free or corruption"); the next call starts a new child.
:func:`call_once` runs one call in a child of its own: for inputs that may corrupt the child's
memory without killing it at once, so that no later call runs in a damaged process.

The child redirects its file descriptor 1 to stderr, so a runtime's prints never mix with the
answers. The called function must be importable by name, take and return picklable values
(NumPy arrays included), and must not need the parent's state.

Run as ``python -m ortops.conformance.isolated``: the child's loop (:func:`_serve`).
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["Outcome", "Worker", "call_once"]

_HEADER = struct.Struct("<Q")
#: How long one call may take before the child is killed (a hang is reported like a crash).
DEFAULT_TIMEOUT = 300.0


class Outcome(NamedTuple):
    """What one call in the child gave: exactly one of ``value`` (``ok``), ``error`` (a Python
    exception inside the child, as ``"Type: message"``) or ``crash`` (the child died or hung:
    ``"killed by SIGSEGV"``, ``"exit status 134"``, ``"no answer within 300 s"``)."""

    ok: bool
    value: Any = None
    error: str | None = None
    crash: str | None = None
    stderr: str = ""  # what the child wrote to stderr during the call (its last 2000 characters)

    def describe(self) -> str:
        """One line: the value's absence explained, with the child's own words."""
        if self.ok:
            return "returned"
        said = " ".join(self.stderr.split())[-300:]
        what = f"crashed ({self.crash})" if self.crash else f"raised {self.error}"
        return f"{what}; stderr: {said!r}" if said else what


def _describe_exit(status: int) -> str:
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


def _read_exact(fd: int, size: int, deadline: float) -> bytes | None:
    """``size`` bytes from ``fd``, or None at end of file or after ``deadline``."""
    chunks, left = [], size
    while left:
        wait = deadline - time.monotonic()
        if wait <= 0 or not select.select([fd], [], [], wait)[0]:
            return None
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class Worker:
    """One child process that runs calls until it dies; then the next call starts another.

    Parameters
    ----------
    timeout : float
        Seconds one call may take; a child that takes longer is killed and the call's
        outcome is a crash ("no answer within ... s").
    env : mapping, optional
        Extra environment variables for the child.
    """

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, env: dict[str, str] | None = None):
        self.timeout = timeout
        self.env = {**os.environ, **(env or {})}
        self._process: subprocess.Popen | None = None
        self._stderr = None

    def _start(self) -> subprocess.Popen:
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen([sys.executable, "-m", __name__], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self._stderr, env=self.env)
        return self._process

    def _stderr_since(self, offset: int) -> str:
        self._stderr.seek(offset)
        text = self._stderr.read().decode("utf8", "replace")
        self._stderr.seek(0, os.SEEK_END)
        return text[-2000:]

    def call(self, function: Callable, *args, **kwargs) -> Outcome:
        """``function(*args, **kwargs)`` in the child (``function`` is pickled by its module and
        name); never raises for what the child does."""
        if self._process is not None and self._process.poll() is not None:  # died between calls
            self._close_files(self._process)
            self._process = None
        process = self._process or self._start()
        self._stderr.seek(0, os.SEEK_END)
        offset = self._stderr.tell()
        message = pickle.dumps((function, args, kwargs), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            process.stdin.write(_HEADER.pack(len(message)) + message)
            process.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._died(offset)
        deadline = time.monotonic() + self.timeout
        fd = process.stdout.fileno()
        header = _read_exact(fd, _HEADER.size, deadline)
        body = None if header is None else _read_exact(fd, _HEADER.unpack(header)[0], deadline)
        if body is None:
            return self._died(offset, hung=time.monotonic() >= deadline)
        status, value = pickle.loads(body)
        stderr = self._stderr_since(offset)
        if status == "ok":
            return Outcome(True, value, stderr=stderr)
        return Outcome(False, error=value, stderr=stderr)

    def _died(self, offset: int, hung: bool = False) -> Outcome:
        process, self._process = self._process, None
        if hung:
            process.kill()
        status = process.wait()
        crash = f"no answer within {self.timeout:g} s" if hung else _describe_exit(status)
        stderr = self._stderr_since(offset)
        self._close_files(process)
        return Outcome(False, crash=crash, stderr=stderr)

    def _close_files(self, process: subprocess.Popen) -> None:
        for stream in (process.stdin, process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def close(self) -> None:
        """End the child (it exits when its input closes)."""
        process, self._process = self._process, None
        if process is None:
            return
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        self._close_files(process)

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def call_once(function: Callable, *args, timeout: float = DEFAULT_TIMEOUT, **kwargs) -> Outcome:
    """``function(*args, **kwargs)`` in a child process of its own, ended afterwards."""
    with Worker(timeout) as worker:
        return worker.call(function, *args, **kwargs)


# --- the child -----------------------------------------------------------------------------------


def _serve() -> None:
    answers = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # a runtime's own prints go to stderr, never into the answers
    sys.stdout = sys.stderr
    requests = sys.stdin.buffer
    while True:
        header = requests.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        try:
            function, args, kwargs = pickle.loads(requests.read(_HEADER.unpack(header)[0]))
            answer = ("ok", function(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - the parent reports it as this call's outcome
            answer = ("error", f"{type(exc).__name__}: {exc}")
        message = pickle.dumps(answer, protocol=pickle.HIGHEST_PROTOCOL)
        answers.write(_HEADER.pack(len(message)) + message)
        answers.flush()


if __name__ == "__main__":
    _serve()
