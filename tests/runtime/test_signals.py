"""Ctrl-C and SIGTERM during an op reach the caller as themselves, on both paths.

Each case runs in a child process that sends itself the signal while an op runs (a kernel
made slow on purpose), checks what the caller sees, and prints one line. An interrupt that
became an OpError, a log line, or an abort fails the test.
"""

from __future__ import annotations

import sys

import pytest

from child_process import SLOW_TOP_K, assert_interrupted_early, run_child

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

SETUP = """
import logging, os, signal, sys, threading, time
import numpy as np
import onnxruntime as ort
from onnx import TensorProto
import ortops
from ortops import bridge, builder

logging.getLogger("ortops").addHandler(logging.StreamHandler(sys.stdout))
""" + SLOW_TOP_K + """
model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1, k_shape=[1])
feed = {"data": np.ones((2, 3), np.float32), "k": np.array([1])}

def send_soon(signum, delay=0.5):
    threading.Timer(delay, os.kill, (os.getpid(), signum)).start()
"""

PATHS = {
    "session": "session = ortops.InferenceSession(model, path=\"pyop\")\nrun = lambda: session.run(None, feed)\n",
    "raw": ("options = ortops.session_options()\n"
            "raw = ort.InferenceSession(model.SerializeToString(), options, providers=['CPUExecutionProvider'])\n"
            "def run():\n"
            "    out = raw.run(None, feed)\n"
            "    time.sleep(5)  # the re-delivered signal interrupts this\n"
            "    return out\n"),
}


@pytest.mark.parametrize("path", PATHS)
def test_ctrl_c_during_an_op_raises_keyboard_interrupt(path):
    child = run_child(SETUP + PATHS[path] + """
send_soon(signal.SIGINT)
try:
    try:
        run()
        print("NO INTERRUPT")
    except ValueError as exc:                    # OpError is a ValueError: must not catch Ctrl-C
        print("CAUGHT AS ValueError", exc)
except KeyboardInterrupt:
    print("KeyboardInterrupt", len(slow_calls), len(slept))
run = None
""", timeout=60)
    assert child.status == 0, child.describe()
    assert_interrupted_early(child)  # the op stopped: no 30 s wait
    assert "OpError" not in child.stdout + child.stderr, child.describe()


@pytest.mark.parametrize("path", PATHS)
def test_sigterm_handler_raising_system_exit_stops_the_caller(path):
    child = run_child(SETUP + """
def on_term(signum, frame):
    raise SystemExit(7)
signal.signal(signal.SIGTERM, on_term)
""" + PATHS[path] + """
send_soon(signal.SIGTERM)
for i in range(3):                               # the user's loop must not go on
    try:
        run()
    except ValueError as exc:
        print("CAUGHT AS ValueError", exc)
    print("loop went on", i, flush=True)
""", timeout=60)
    assert child.status == 7, child.describe()
    assert "loop went on" not in child.stdout and "ValueError" not in child.stdout, child.describe()


def test_keyboard_interrupt_raised_in_a_kernel_is_not_an_op_error():
    """A KeyboardInterrupt raised by kernel code itself (no signal) comes back as itself."""
    child = run_child("""
import numpy as np
from onnx import TensorProto
import ortops
from ortops import bridge, builder

ortops.register()
def interrupt(*args, **kwargs):
    raise KeyboardInterrupt
for kernel in bridge._kernels.values():
    if kernel.op.op_type.startswith("TopK"):
        kernel.compute = interrupt
session = ortops.InferenceSession(builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value",
                                                      stable=1, k_shape=[1]), path="pyop")
feed = {"data": np.ones((2, 3), np.float32), "k": np.array([1])}
for attempt in range(2):                          # and the session still works for the next call
    try:
        session.run(None, feed)
        print("no error")
    except ValueError as exc:
        print("ValueError", exc)
    except KeyboardInterrupt:
        print("KeyboardInterrupt")
""", timeout=60)
    assert child.status == 0, child.describe()
    assert child.lines()[-2:] == ["KeyboardInterrupt", "KeyboardInterrupt"], child.describe()


def test_a_handler_that_returns_makes_the_run_fail_not_return_empty_outputs():
    """A handler that does not raise (it counts, or asyncio's cancels its task): the op it
    stopped gave empty outputs, so the session raises InterruptedError instead of returning
    them; the handler ran once."""
    child = run_child(SETUP + """
calls = []
signal.signal(signal.SIGUSR1, lambda signum, frame: calls.append(signum))
""" + PATHS["session"] + """
send_soon(signal.SIGUSR1)
try:
    print("RETURNED", [o.shape for o in run()])
except InterruptedError as exc:
    print("InterruptedError", len(calls), exc)
""", timeout=60)
    assert child.status == 0, child.describe()
    assert child.lines()[-1].startswith("InterruptedError 1 signal"), child.describe()


def test_a_handler_that_chains_to_the_one_it_replaced_ends_in_keyboard_interrupt():
    """The user's SIGINT handler calls the one it replaced (ortops' guard); a later session
    wraps the user's handler in turn. Ctrl-C then ran the two in a circle (RecursionError);
    the chain now ends in SIGINT's default, KeyboardInterrupt, with the user's handler run once."""
    child = run_child(SETUP + PATHS["session"] + """
calls = []
replaced = signal.getsignal(signal.SIGINT)
def chained(signum, frame):
    calls.append(signum)
    replaced(signum, frame)
signal.signal(signal.SIGINT, chained)
second = ortops.InferenceSession(model, path="pyop")
for interrupt in (lambda: signal.raise_signal(signal.SIGINT), lambda: (send_soon(signal.SIGINT), run())):
    calls.clear()
    try:
        interrupt()
        print("NO INTERRUPT")
    except KeyboardInterrupt:
        print("KeyboardInterrupt", len(calls))
    except RecursionError:
        print("RecursionError")
""", timeout=60)
    assert child.status == 0, child.describe()
    assert child.lines()[-2:] == ["KeyboardInterrupt 1", "KeyboardInterrupt 1"], child.describe()


def test_a_handlers_exception_in_a_lowered_session_is_raised_without_a_re_run():
    """path="auto" lowers the TopK. A signal handler's TimeoutError during a run came back only
    after the call was re-run on the PyOp path (as for an ORT failure), or was lost to that
    path's OpError; it is raised as it is, and no PyOp-path session is made."""
    child = run_child(SETUP + """
def on_alarm(signum, frame):
    raise TimeoutError("alarm")
signal.signal(signal.SIGALRM, on_alarm)
lowered = ortops.InferenceSession(model)          # auto: the TopK is lowered
big = {"data": np.random.default_rng(0).standard_normal((64, 400000)).astype(np.float32), "k": np.array([99])}
signal.setitimer(signal.ITIMER_REAL, 0.02)
try:
    for _ in range(200):
        lowered.run(None, big)
    print("NO ALARM")
except TimeoutError as exc:
    print("TimeoutError", lowered._pyop is None)
except ValueError as exc:
    print("OpError", exc)
""", timeout=120)
    assert child.status == 0, child.describe()
    assert child.lines()[-1] == "TimeoutError True", child.describe()
