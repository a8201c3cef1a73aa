"""Process-wide resources survive fork (ortops.runtime): a forked child computes, it never hangs.

Each case runs in its own process: the parent runs a large float TopK, which uses the
runtime's worker pool (the NaN check beside the selection, the row blocks), then forks with
``multiprocessing``'s ``fork`` start method, and the child runs the same TopK again.
"""

from __future__ import annotations

import pytest

from child_process import run_child

FORK_CASE = """
import multiprocessing, sys
import numpy as np
from onnx import TensorProto
import ortops
from ortops import builder

model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1, k_shape=[1])
session = ortops.InferenceSession(model)
x = np.random.default_rng(0).random((64, 32000), dtype=np.float32)
x[3, 7] = np.nan                        # the NaN path too, in the second call
k = np.array([50])
expected_values = -np.sort(-x[:, :], axis=-1)[:, :50]
clean = np.nan_to_num(x, nan=0.5)
values, _ = session.run(None, {"data": clean, "k": k})
values_nan, _ = session.run(None, {"data": x, "k": k})


def child(queue):
    again, _ = session.run(None, {"data": clean, "k": k})           # the parent's session
    fresh, indices = ortops.InferenceSession(model).run(None, {"data": x, "k": k})  # a new one
    queue.put((again, fresh, indices))


context = multiprocessing.get_context("fork")
queue = context.Queue()
process = context.Process(target=child, args=(queue,), daemon=True)
process.start()
try:
    again, fresh, indices = queue.get(timeout=30)
except Exception:
    print("NO RESULT", flush=True)
    process.kill()
    sys.exit(3)
process.join(30)
print("child exit", process.exitcode)
assert np.array_equal(again, values)
assert np.array_equal(fresh, values_nan, equal_nan=True)
assert np.isnan(fresh[3, 0]) and indices[3, 0] == 7
print("ok")
"""


@pytest.mark.parametrize("threads", ["", "1", "3"])
def test_forked_child_runs_the_same_large_top_k(threads):
    child = run_child(FORK_CASE, timeout=120, env={"ORTOPS_NUM_THREADS": threads})
    assert child.status == 0, child.describe()
    assert child.lines()[-2:] == ["child exit 0", "ok"], child.describe()


def test_fork_from_a_busy_thread_pool():
    """Fork while other threads are running ops: the child still gets a working runtime, and
    the session it inherited works there (not the parent's ORT session, whose lock a thread
    inside its ``run`` may have held at the fork: it hung a child about once in 80 forks)."""
    child = run_child("""
        import os, signal, sys, threading
        import numpy as np
        from onnx import TensorProto
        import ortops
        from ortops import builder

        model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="min", sort="index", stable=1,
                                    k_shape=[1])
        session = ortops.InferenceSession(model)
        x = np.random.default_rng(1).random((32, 40000), dtype=np.float32)
        k = np.array([7])
        expected, _ = session.run(None, {"data": x, "k": k})
        stop = threading.Event()

        def busy():
            while not stop.is_set():
                session.run(None, {"data": x, "k": k})

        workers = [threading.Thread(target=busy) for _ in range(3)]
        for w in workers:
            w.start()
        pids = []
        for _ in range(8):
            pid = os.fork()
            if pid == 0:
                signal.alarm(60)  # a hung grandchild must not outlive the test
                values, _ = session.run(None, {"data": x, "k": k})
                os._exit(0 if np.array_equal(values, expected) else 5)
            pids.append(pid)
        stop.set()
        for w in workers:
            w.join()
        print([os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids])
    """, timeout=120)
    assert child.status == 0, child.describe()
    assert child.lines()[-1] == str([0] * 8), child.describe()


def test_forked_child_of_a_process_that_used_openvino_gets_an_error_not_a_hang():
    """OpenVINO's CPU plugin does not survive fork: a child forked from a process that ran
    OpenVINO hung compiling a model in about 1 run of 40 (waiting for a TBB task no thread
    runs). ortops' OpenVINO interop refuses there at once, naming the cause and the remedy;
    the parent goes on with the right answers."""
    pytest.importorskip("openvino")
    child = run_child("""
        import multiprocessing
        import numpy as np
        from onnx import TensorProto
        from ortops import builder
        from ortops.interop import openvino as ov_interop

        model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1)
        x = np.random.default_rng(2).random((16, 5000), dtype=np.float32)
        feed = {"data": x, "k": np.array([5])}
        expected = -np.sort(-x, axis=-1)[:, :5]
        assert np.array_equal(ov_interop.run(model, feed)[0], expected)

        def child(queue):
            try:
                ov_interop.run(model, feed)
                queue.put("ran")
            except RuntimeError as error:
                queue.put(str(error))

        context = multiprocessing.get_context("fork")
        for _ in range(5):
            queue = context.Queue()
            process = context.Process(target=child, args=(queue,), daemon=True)
            process.start()
            print(queue.get(timeout=60))
            process.join(30)
            print("child exit", process.exitcode)
        assert np.array_equal(ov_interop.run(model, feed)[0], expected)
        print("ok")
    """, timeout=180)
    assert child.status == 0, child.describe()
    lines = child.lines()
    assert lines[-1] == "ok" and lines.count("child exit 0") == 5, child.describe()
    errors = [line for line in lines if "OpenVINO cannot run in this process, forked from process" in line]
    assert len(errors) == 5 and all("'spawn'" in e and "fork" in e for e in errors), child.describe()


def test_fork_while_registration_holds_its_lock():
    """A fork while another thread registers the ops (or the schemas) holds their lock: the child
    has no such thread to release it, and hung making its first session."""
    child = run_child("""
        import os, signal
        import numpy as np
        from onnx import TensorProto
        import ortops
        from ortops import bridge, builder
        from ortops.builder import schemas

        model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1)
        pids = []
        for lock in (bridge._lock, schemas._lock):
            with lock:  # as another thread inside register() or register_schemas() would hold it
                pid = os.fork()
                if pid == 0:
                    signal.alarm(60)  # a hung grandchild must not outlive the test
                    values, _ = ortops.InferenceSession(model, path="pyop").run(
                        None, {"data": np.array([[1, 3, 2]], np.float32), "k": np.array([1])})
                    os._exit(0 if values.tolist() == [[3]] else 5)
                pids.append(pid)
        print([os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids])
    """, timeout=120)
    assert child.status == 0, child.describe()
    assert child.lines()[-1] == str([0, 0]), child.describe()
