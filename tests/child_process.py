"""Run a hostile case in a child Python process: an abort or a hang cannot take pytest down."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import NamedTuple


#: Child-process code that registers ortops' ops and makes every TopK kernel sleep 30 s before
#: it computes (``slow_calls`` counts the calls, ``slept`` the sleeps that ended): a signal sent
#: meanwhile lands inside an op.
SLOW_TOP_K = """
import signal, time
# Ctrl-C raises KeyboardInterrupt even where the test run started with SIGINT ignored (a job put in
# the background by a shell without job control): Python keeps a SIG_IGN it inherits.
signal.signal(signal.SIGINT, signal.default_int_handler)
import ortops
from ortops import bridge
ortops.register()
slow_calls, slept = [], []
for kernel in bridge._kernels.values():            # every TopK registration sleeps 30 s first
    if kernel.op.op_type.startswith("TopK"):
        compute = kernel.compute
        def slow(*args, _compute=compute, **kwargs):
            slow_calls.append(1)
            time.sleep(30)
            slept.append(1)
            return _compute(*args, **kwargs)
        kernel.compute = slow
"""


class Child(NamedTuple):
    status: int
    stdout: str
    stderr: str

    def lines(self) -> list[str]:
        return self.stdout.strip().splitlines()

    def describe(self) -> str:
        return f"exit status {self.status}\n--- stdout\n{self.stdout[-3000:]}\n--- stderr\n{self.stderr[-3000:]}"


#: The tests folder: a test module run as a script from a subfolder imports the shared helpers
#: (helpers, strategies, ...) from here (see :func:`script_env`).
TESTS = os.path.dirname(os.path.abspath(__file__))


def script_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """The environment (``os.environ`` and ``env``) for running a test module as a script:
    :data:`TESTS` first on ``PYTHONPATH``."""
    full = {**os.environ, **(env or {})}
    full["PYTHONPATH"] = os.pathsep.join(p for p in (TESTS, full.get("PYTHONPATH", "")) if p)
    return full


def run_child(code: str, *, timeout: float = 120, env: dict[str, str] | None = None, **popen) -> Child:
    """Run ``code`` (dedented) with this interpreter; return its exit status and output.

    A child that outlives ``timeout`` is killed, and the test fails naming the hang.
    """
    full_env = {**os.environ, **(env or {})}
    try:
        done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                              timeout=timeout, env=full_env, **popen)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"the child hung for {timeout} s\n{exc.stdout!r}\n{exc.stderr!r}") from None
    return Child(done.returncode, done.stdout, done.stderr)


def assert_interrupted_early(child) -> None:
    """The child's last line is ``KeyboardInterrupt CALLS SLEPT`` (printed by a snippet that sent
    itself a signal while SLOW_TOP_K's op slept): the slow op ran once, and the interrupt ended its
    30 s sleep (no seconds are compared: a loaded machine may deliver the signal late)."""
    words = (child.lines()[-1:] or [""])[0].split()
    assert words == ["KeyboardInterrupt", "1", "0"], child.describe()
