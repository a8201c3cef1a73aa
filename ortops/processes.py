"""Calls in a child Python process (``multiprocessing``, forkserver or spawn), so that a runtime
that crashes (a segfault, glibc's heap checks) or hangs becomes an :class:`Outcome` instead of
taking the caller down. Used by the ncnn oracle, ``ortops compare``'s runtimes and the bench.

:class:`Worker` keeps one child and sends it calls one at a time over a pipe; a call whose child
dies says how (``"killed by SIGSEGV"``, ``"exit status 3"``) and quotes what the child wrote to
stderr during it; a call with no answer within the timeout kills the child; the next call starts
a new one. :func:`call_once` runs one call in a child of its own. The function must be importable
by name and take and return picklable values.

Not ``concurrent.futures.ProcessPoolExecutor``: a worker killed by a signal breaks the whole pool
without saying which signal, a hung worker cannot be killed, and a worker's stderr is not kept per
call. So the child is a plain process whose file descriptors 1 and 2 go to a file of its own.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import sys
import tempfile
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

__all__ = ["Outcome", "Worker", "call_once", "DEFAULT_TIMEOUT"]

#: How long one call may take before the child is killed (a hang is reported like a crash).
DEFAULT_TIMEOUT = 300.0
#: Where it exists, a fork server started afresh (not forked from the caller, whose threads and
#: runtimes it never holds) with NumPy, onnx, ONNX Runtime and ortops imported: each child is a
#: fork of it and skips those imports. OpenVINO is not imported there: its import starts a
#: thread, and OpenVINO does not survive fork. Elsewhere (Windows), spawn. The fork server is
#: one per process: a program that starts its own first keeps its own preload list.
_FORKSERVER = "forkserver" in multiprocessing.get_all_start_methods()
_CONTEXT = multiprocessing.get_context("forkserver" if _FORKSERVER else "spawn")
_PRELOAD = ["numpy", "onnx", "onnxruntime", "ortops"]


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


def describe_exit(status: int) -> str:
    """``"killed by SIGSEGV"`` for a negative exit code (a signal), else ``"exit status N"``."""
    if status < 0:
        try:
            return f"killed by {signal.Signals(-status).name}"
        except ValueError:
            return f"killed by signal {-status}"
    return f"exit status {status}"


class Worker:
    """One child process that runs calls until it dies; then the next call starts another.

    Parameters
    ----------
    timeout : float
        Seconds one call may take; a child that takes longer is killed and the call's
        outcome is a crash ("no answer within ... s").
    """

    def __init__(self, timeout: float = DEFAULT_TIMEOUT):
        self.timeout = timeout
        self._process = self._pipe = self._stderr = None

    def _start(self) -> Outcome | None:
        """Start a child; None once it is in its loop, else how it died while starting."""
        self._stderr = tempfile.NamedTemporaryFile(prefix="ortops-child-", suffix=".stderr")
        if _FORKSERVER:  # the fork server is global: name what it preloads before it starts
            _CONTEXT.set_forkserver_preload(_PRELOAD)
        self._pipe, theirs = _CONTEXT.Pipe()
        process = _CONTEXT.Process(target=_serve, args=(theirs, self._stderr.name), daemon=True)
        try:
            process.start()
        except BaseException:  # e.g. spawn refused (a script without a __main__ guard): its error stands
            self._end()
            raise
        finally:
            theirs.close()
        self._process = process
        try:  # the child's first message: it reached its loop
            answered = self._pipe.poll(self.timeout)
            if answered and self._pipe.recv() == "ready":
                return None
        except (EOFError, OSError):
            answered = True
        outcome = self._died(0, hung=not answered)
        script = getattr(sys.modules.get("__main__"), "__file__", None)
        hint = (f": multiprocessing imports {script} again in each child, which must not start processes "
                "itself; keep that script's work under `if __name__ == '__main__':`") if script and answered else ""
        return outcome._replace(crash=f"{outcome.crash} while starting{hint}")

    def _stderr_since(self, offset: int) -> str:
        self._stderr.seek(offset)
        return self._stderr.read().decode("utf8", "replace")[-2000:]

    def call(self, function: Callable, *args, **kwargs) -> Outcome:
        """``function(*args, **kwargs)`` in the child (``function`` is pickled by its module and
        name); never raises for what the child does."""
        if self._process is not None and not self._process.is_alive():  # died between calls
            self._end()
        if self._process is None and (failed := self._start()) is not None:
            return failed
        offset = self._stderr.seek(0, os.SEEK_END)
        try:
            self._pipe.send((function, args, kwargs))
            if not self._pipe.poll(self.timeout):
                return self._died(offset, hung=True)
            status, value = self._pipe.recv()
        except (EOFError, OSError):
            return self._died(offset)
        stderr = self._stderr_since(offset)
        return Outcome(True, value, stderr=stderr) if status == "ok" else Outcome(False, error=value, stderr=stderr)

    def _died(self, offset: int, hung: bool = False) -> Outcome:
        if hung:
            self._process.kill()
        self._process.join()
        crash = f"no answer within {self.timeout:g} s" if hung else describe_exit(self._process.exitcode)
        outcome = Outcome(False, crash=crash, stderr=self._stderr_since(offset))
        self._end()
        return outcome

    def _end(self) -> None:
        self._pipe.close()
        self._stderr.close()
        self._process = self._pipe = self._stderr = None

    def close(self, wait: float = 10) -> None:
        """End the child: it exits when its pipe closes, or is killed after ``wait`` seconds."""
        if self._process is not None:
            self._pipe.close()
            self._process.join(wait)
            self._process.kill()  # nothing when it has exited
            self._process.join()
            self._end()

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, kind, *exc) -> None:
        self.close(10 if kind is None else 0)  # interrupted (Ctrl-C): the child's call is not awaited


def call_once(function: Callable, *args, timeout: float = DEFAULT_TIMEOUT, **kwargs) -> Outcome:
    """``function(*args, **kwargs)`` in a child process of its own, ended afterwards."""
    with Worker(timeout) as worker:
        return worker.call(function, *args, **kwargs)


def _serve(pipe, stderr_path: str) -> None:
    """The child's loop: run each call received on ``pipe`` and send back its answer."""
    try:
        output = os.open(stderr_path, os.O_WRONLY | os.O_APPEND)
    except OSError:  # the caller gave up while this child started (Ctrl-C) and removed the file
        return
    os.dup2(output, 2)
    os.dup2(output, 1)  # a runtime's own prints go to the stderr file, never into the answers
    sys.stdout = sys.stderr
    parent = multiprocessing.parent_process()
    if parent is not None:  # the process that asked for this one: a call must not outlive it (SIGKILL)
        threading.Thread(target=_exit_after, args=(parent,), daemon=True).start()
    pipe.send("ready")
    while True:
        try:
            message = pipe.recv_bytes()
        except EOFError:
            return
        try:
            function, args, kwargs = pickle.loads(message)
            answer = ("ok", function(*args, **kwargs))
        except Exception as exc:  # noqa: BLE001 - the parent reports it as this call's outcome
            answer = ("error", f"{type(exc).__name__}: {exc}")
        pipe.send(answer)


def _exit_after(parent) -> None:
    parent.join()
    os._exit(1)
