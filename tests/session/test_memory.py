"""Errors hold no memory: an OpError keeps neither the bridge's input copies nor a cycle.

Measured in child processes with the garbage collector disabled, so that nothing depends
on when the collector runs.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

from child_process import run_child

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

KEPT_ERRORS = """
import gc
gc.disable()
import numpy as np
from onnx import TensorProto
import ortops
from ortops import builder

def rss_mib():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS")) / 1024

session = ortops.InferenceSession(builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value",
                                                      stable=1, k_shape=[1]))
x = np.random.default_rng(0).random((4, 1 << 20), dtype=np.float32)   # 16 MiB, copied by the bridge per call
session.run(None, {"data": x, "k": np.array([3])})
kept = []
def bad_call():
    try:
        session.run(None, {"data": x, "k": np.array([%(bad_k)s])})
    except ortops.OpError as exc:
        kept.append(exc)
bad_call()
before = rss_mib()
for _ in range(40):
    bad_call()
grown = rss_mib() - before
assert len(kept) == 41 and "is outside" in str(kept[-1]) and kept[-1].node_name == "top_k", kept[-1]
print(round(grown, 1))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
@pytest.mark.parametrize("bad_k", ["0", "1 << 21"])
def test_forty_kept_errors_from_16_mib_inputs_hold_little_memory(bad_k):
    child = run_child(KEPT_ERRORS % {"bad_k": bad_k}, timeout=120)
    assert child.status == 0, child.describe()
    grown = float(child.lines()[-1])
    assert grown < 48, f"40 kept errors grew RSS by {grown} MiB (their inputs were 640 MiB)"


def test_an_op_error_has_no_traceback_into_the_bridge(top_k_session):
    import numpy as np

    import ortops

    with pytest.raises(ortops.OpError) as info:
        top_k_session.run(None, {"data": np.ones((2, 3), np.float32), "k": np.array([7])})
    exc = info.value
    assert exc.__context__ is None and exc.__cause__ is None
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    assert "_hook" not in frames and "__call__" not in frames, frames


@pytest.mark.slow
@pytest.mark.parametrize("attempt", range(3))
def test_soak_with_bad_calls_stays_flat_without_the_garbage_collector(attempt):
    """scripts/soak.py with the collector off: errors must be freed by reference counting."""
    script = os.path.join(ROOT, "scripts", "soak.py")
    child = run_child(f"""
import gc, runpy, sys
gc.disable()
sys.argv = [{script!r}, "--runs", "2000", "--limit-mib", "32"]
runpy.run_path({script!r}, run_name="__main__")
""", timeout=300)
    result = json.loads(child.lines()[-1])
    assert child.status == 0 and result["ok"], child.describe()
    assert result["op_error"] > 400 and result["peak_growth_mib"] <= 32, result
