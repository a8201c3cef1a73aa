"""ortops.InferenceSession's paths and its registrations: only what the model needs."""

from __future__ import annotations

from child_process import run_child

CHILD = """
import numpy as np
from onnx import TensorProto
import ortops
from ortops import builder

s1 = ortops.InferenceSession(builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value"), path="pyop")
print(s1.run(None, {"data": np.array([[1, 3, 2]], np.float32), "k": np.array([2])})[1].tolist())
s2 = ortops.InferenceSession(builder.arg_max_model(2, topk=1), path="pyop")
ortops.register()
ortops.session_options()
print(s1.run(None, {"data": np.array([[1, 3, 2]], np.float32), "k": np.array([2])})[1].tolist())
print(s2.run(None, {"data": np.array([[1, 3, 2]], np.float32)})[0].tolist())
try:
    s1.run(None, {"data": np.array([[1, 3, 2]], np.float32), "k": np.array([4])})
except ortops.OpError as exc:
    print("OpError", exc.kind)
"""


def test_a_session_keeps_working_after_later_sessions_and_registrations():
    """onnxruntime-extensions 0.15.2: a PyOp registered after the library was loaded into a
    session crashes that session's next run. ortops registers everything at once, before its
    first session: an earlier session survives later sessions of other ops, register() and
    session_options()."""
    child = run_child(CHILD)
    assert child.status == 0, child.describe()
    assert child.lines() == ["[[1, 2]]", "[[1, 2]]", "[[1.0]]", "OpError k_range"], child.describe()
