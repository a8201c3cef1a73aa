"""ortops.InferenceSession's paths and its registrations: only what the model needs."""

from __future__ import annotations

from child_process import run_child

CHILD = """
import numpy as np
from onnx import TensorProto
import ortops
from ortops import bridge, builder

s1 = ortops.InferenceSession(builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value"), path="pyop")
print(sorted(bridge._families))
s2 = ortops.InferenceSession(builder.arg_max_model(2, topk=1), path="pyop")
print(sorted(bridge._families))
print(s1.run(None, {"data": np.array([[1, 3, 2]], np.float32), "k": np.array([2])})[1].tolist())
print(s2.run(None, {"data": np.array([[1, 3, 2]], np.float32)})[0].tolist())
try:
    s1.run(None, {"data": np.array([[1, 3, 2]], np.float32), "k": np.array([4])})
except ortops.OpError as exc:
    print("OpError", exc.kind)
"""


def test_a_session_registers_only_the_families_its_model_uses_and_later_ones_add_theirs():
    child = run_child(CHILD)
    assert child.status == 0, child.describe()
    lines = child.lines()
    assert lines[0] == "['ortops._bridge::TopK_i32']"
    assert lines[1] == "['ortops._bridge::ArgMax', 'ortops._bridge::TopK_i32']"
    assert lines[2:] == ["[[1, 2]]", "[[1.0]]", "OpError k_range"]
