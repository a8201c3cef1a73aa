"""Calls in a child process (ortops.processes): a crash or a hang is an outcome, not
the end of the caller. The crashes here are real ones (a NULL read, abort()), in the child."""

from __future__ import annotations

import ctypes
import math
import multiprocessing
import os
import subprocess
import sys
import time

import numpy as np
import pytest

from ortops.processes import Worker, call_once


def test_values_come_back():
    with Worker() as worker:
        outcome = worker.call(np.arange, 5, dtype=np.float32)
        assert outcome.ok and outcome.value.dtype == np.float32 and outcome.value.tolist() == [0, 1, 2, 3, 4]
        again = worker.call(math.hypot, 3.0, 4.0)
        assert again.ok and again.value == 5.0


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no fork server here")
def test_children_fork_from_a_server_that_imported_the_runtimes_but_not_openvino():
    loaded = "[name in __import__('sys').modules for name in ('numpy', 'onnx', 'onnxruntime', 'ortops', 'openvino')]"
    with Worker() as worker:
        outcome = worker.call(eval, loaded)
        assert outcome.ok and outcome.value == [True, True, True, True, False]  # before the call imported anything
        parent = worker.call(os.getppid)
        assert parent.ok and parent.value != os.getpid()  # the fork server's child, not this process's


def test_a_segfault_is_reported_and_the_next_call_runs():
    with Worker() as worker:
        crashed = worker.call(ctypes.string_at, 0)  # reads address 0
        assert not crashed.ok and crashed.value is None
        assert crashed.crash == "killed by SIGSEGV"
        assert "SIGSEGV" in crashed.describe()
        after = worker.call(math.sqrt, 16.0)
        assert after.ok and after.value == 4.0


def test_an_abort_is_reported_with_what_the_child_wrote():
    with Worker() as worker:
        worker.call(os.write, 2, b"first call's noise\n")
        written = worker.call(os.write, 2, b"double free or corruption (out)\n")
        assert written.ok and "double free" in written.stderr and "first call" not in written.stderr
    outcome = call_once(os.abort)
    assert not outcome.ok and outcome.crash == "killed by SIGABRT"


def test_a_python_exception_is_an_error_not_a_crash():
    outcome = call_once(math.sqrt, -1.0)
    assert not outcome.ok and outcome.crash is None
    assert outcome.error.startswith("ValueError")


def test_prints_do_not_mix_with_answers():
    """A runtime printing to stdout (file descriptor 1) must not break the protocol."""
    with Worker() as worker:
        printed = worker.call(os.write, 1, b"noise on stdout\n")
        assert printed.ok and printed.value == len(b"noise on stdout\n")
        assert "noise on stdout" in printed.stderr
        assert worker.call(len, "abc").value == 3


def test_a_hang_is_killed_and_reported():
    with Worker(timeout=1) as worker:
        outcome = worker.call(time.sleep, 30)
        assert not outcome.ok and outcome.crash == "no answer within 1 s"
        worker.timeout = 120  # the next call starts a new child: on a loaded machine that may take seconds
        assert worker.call(abs, -2).value == 2


def test_a_child_that_died_between_calls_is_replaced():
    with Worker() as worker:
        assert worker.call(os.getpid).ok
        first = worker._process
        first.kill()
        first.join()
        again = worker.call(os.getpid)
        assert again.ok and again.value != first.pid


def test_a_script_without_a_main_guard_is_told_why_its_child_died(tmp_path):
    """multiprocessing imports the caller's script again in each child (forkserver, spawn):
    one that calls ortops at top level starts processes there, and the child dies while
    starting. The outcome says so and names the remedy, not only "exit status 1"."""
    script = tmp_path / "unguarded.py"
    script.write_text("import os\nfrom ortops.processes import call_once\n"
                      "print('CRASH', call_once(os.getpid).crash, flush=True)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False)
    said = [line for line in done.stdout.splitlines() if line.startswith("CRASH")]
    assert said and "while starting" in said[-1] and "if __name__ == '__main__':" in said[-1], done


def test_a_child_does_not_outlive_the_process_that_asked_for_it(tmp_path):
    """A parent killed with SIGKILL left its child running its call to the end (a minute here)."""
    script = tmp_path / "parent.py"
    script.write_text("import os, sys, time\nfrom ortops.processes import Worker\n"
                      "if __name__ == '__main__':\n"
                      "    worker = Worker()\n"
                      "    worker._start()\n"
                      "    open(sys.argv[1], 'w').write(str(worker._process.pid))\n"
                      "    worker._pipe.send((time.sleep, (60,), {}))\n"
                      "    time.sleep(1)\n"
                      "    os.kill(os.getpid(), 9)\n")
    # No pipes: the fork server inherits them, and reading them would wait for the child.
    subprocess.run([sys.executable, str(script), str(tmp_path / "pid")], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, timeout=120, check=False)
    child = int((tmp_path / "pid").read_text())
    for _ in range(100):
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        os.kill(child, 9)
        pytest.fail("the child still ran 10 s after its parent was killed")
