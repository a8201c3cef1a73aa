"""Run a hostile case in a child Python process: an abort or a hang cannot take pytest down."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from typing import NamedTuple


#: Child-process code that registers ortops' ops and makes every TopK kernel sleep 30 s before
#: it computes (``slow_calls`` counts the calls): a signal sent meanwhile lands inside an op.
SLOW_TOP_K = """
import time
import ortops
from ortops import bridge
ortops.register()
slow_calls = []
for kernel in bridge._kernels.values():            # every TopK registration sleeps 30 s first
    if kernel.op.op_type.startswith("TopK"):
        compute = kernel.compute
        def slow(*args, _compute=compute, **kwargs):
            slow_calls.append(1)
            time.sleep(30)
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
