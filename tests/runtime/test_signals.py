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
start = time.monotonic()
send_soon(signal.SIGINT)
try:
    try:
        run()
        print("NO INTERRUPT")
    except ValueError as exc:                    # OpError is a ValueError: must not catch Ctrl-C
        print("CAUGHT AS ValueError", exc)
except KeyboardInterrupt:
    print("KeyboardInterrupt", f"{time.monotonic() - start:.2f}", len(slow_calls))
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
