"""Thread use is bounded (ortops.runtime): single-threaded inner sessions, one shared pool.

The thread count is read from /proc/self/task (OS threads, ORT's included), in a child
process, after every TopK dtype x mode x sort x layout has run.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from child_process import run_child
from ortops.ops.top_k.kernel import top_k as top_k_kernel
from ortops import reference, runtime
from ortops.kernels import selection

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc/self/task")

MATRIX = """
import itertools, os
import numpy as np
import onnxruntime as ort
import ortops
from onnx import TensorProto
from ortops import builder, dtypes, runtime

def threads():
    return len(os.listdir("/proc/self/task"))

options = ort.SessionOptions()
options.intra_op_num_threads = 1          # the user asks for one thread
rng = np.random.default_rng(0)
layouts = {1: ((400000,), 0), 2: ((64, 4000), 1), 3: ((8, 700, 30), 1)}  # long slice, rows, inner axis
small = ortops.InferenceSession(builder.top_k_model(TensorProto.FLOAT, 1, axis=0, mode="max", sort="value",
                                                    stable=1, k_shape=[1]), options)
small.run(None, {"data": np.arange(5, dtype=np.float32), "k": np.array([2])})
before = threads()
runs = 0
for t in dtypes.NUMERIC_TYPES:
    for mode, sort, rank in itertools.product(("max", "min"), ("value", "index"), layouts):
        shape, axis = layouts[rank]
        model = builder.top_k_model(t.onnx, rank, axis=axis, mode=mode, sort=sort, stable=1, k_shape=[1])
        session = ortops.InferenceSession(model, options)
        x = (rng.random(shape) * 100).astype(t.numpy)
        values, _ = session.run(None, {"data": x, "k": np.array([3])})
        assert values.shape[axis] == 3
        runs += 1
print(runs, before, threads(), runtime.worker_count())
"""


@pytest.mark.parametrize("setting", ["", "1", "3"])
def test_thread_count_stays_bounded_after_the_full_top_k_matrix(setting):
    child = run_child(MATRIX, timeout=300, env={runtime.THREADS_ENV: setting})
    assert child.status == 0, child.describe()
    runs, before, after, workers = map(int, child.lines()[-1].split())
    assert runs == 120, child.describe()
    if setting:
        assert workers == int(setting) - 1
    assert after - before <= workers, f"{after - before} threads added, at most {workers} expected"


def test_worker_count_reads_the_environment(monkeypatch):
    monkeypatch.setenv(runtime.THREADS_ENV, "4")
    assert runtime.worker_count() == 3
    monkeypatch.setenv(runtime.THREADS_ENV, "0")
    assert runtime.worker_count() == 0
    monkeypatch.setenv(runtime.THREADS_ENV, "many")
    assert 0 <= runtime.worker_count() <= 15


def test_parallel_map_keeps_order_and_raises():
    assert runtime.parallel_map(lambda v: v * 2, list(range(7))) == [0, 2, 4, 6, 8, 10, 12]
    with pytest.raises(ZeroDivisionError):
        runtime.parallel_map(lambda v: 1 // v, [1, 0, 2])


@st.composite
def _blocked_cases(draw):
    dtype = draw(st.sampled_from([np.float32, np.float64, np.int8, np.uint16, np.uint64, np.int64]))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=9))
    elements = st.sampled_from([0.0, -0.0, 1.0, np.nan, np.inf, -2.0]) if np.dtype(dtype).kind == "f" else \
        st.integers(0, 3)
    data = draw(hnp.arrays(dtype, shape, elements=elements))
    axis = draw(st.integers(0, len(shape) - 1))
    return data, draw(st.integers(1, shape[axis])), axis, draw(st.sampled_from(["max", "min"])), \
        draw(st.sampled_from(["value", "index"]))


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=_blocked_cases())
def test_blocks_on_several_threads_equal_the_reference(monkeypatch, case):
    """Tiny blocks on 4 threads: NaN in some blocks only, ties across block borders."""
    monkeypatch.setattr(selection, "PARALLEL_MIN", 2)
    monkeypatch.setattr(selection, "CHUNK_MIN", 4)
    monkeypatch.setattr(runtime, "worker_count", lambda: 3)
    data, k, axis, mode, sort = case
    got = top_k_kernel(data, np.array([k]), axis=axis, mode=mode, sort=sort, index_element_type="i64")
    want = reference.top_k(data, np.array([k]), axis=axis, mode=mode, sort=sort, index_element_type="i64")
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
