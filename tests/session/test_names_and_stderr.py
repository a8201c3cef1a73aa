"""Issue 12, item 10's last points: the names ortops generates never collide with the model's
own, and an OpError through ortops.InferenceSession comes with a clean stderr (no ORT shape
warnings about the failed op's empty outputs), while ORT's errors still reach the caller."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

import ortops
from ortops import builder
from child_process import run_child
from helpers import top_k_model


def _taken_names_model(data_type=TensorProto.FLOAT):
    """A TopK whose graph outputs are values/indices, in a model that already uses every name
    ortops would generate for it: ``values/ortops_bridge_output`` (a graph output of its own),
    ``values/ortops_copy`` (a node name), ``top_k/ortops_cast_in0`` and ``..._out0``."""
    model = top_k_model(data_type)
    graph = model.graph
    graph.node.extend([
        helper.make_node("Identity", ["data"], ["values/ortops_bridge_output"], name="values/ortops_copy"),
        helper.make_node("Identity", ["data"], ["top_k/ortops_cast_in0"], name="top_k/ortops_cast_out0_cast"),
        helper.make_node("Identity", ["data"], ["top_k/ortops_cast_out0"], name="indices/ortops_copy"),
    ])
    for name in ("values/ortops_bridge_output", "top_k/ortops_cast_in0", "top_k/ortops_cast_out0"):
        graph.output.append(helper.make_tensor_value_info(name, data_type, None))
    return model


def test_generated_names_never_collide_with_the_models_own():
    for data_type, dtype in ((TensorProto.FLOAT, np.float32), (TensorProto.FLOAT16, np.float16)):
        model = _taken_names_model(data_type)
        prepared = ortops.prepare_model(model)
        produced = [o for n in prepared.graph.node for o in n.output]
        assert len(produced) == len(set(produced)), produced
        node_names = [n.name for n in prepared.graph.node if n.name]
        assert len(node_names) == len(set(node_names)), node_names
        session = ortops.InferenceSession(model)
        data = np.array([[1, 3, 2]], dtype)
        outputs = session.run(None, {"data": data, "k": np.array([2])})
        assert [o.tolist() for o in outputs] == [[[3, 2]], [[1, 2]], data.tolist(), data.tolist(), data.tolist()]


def test_an_op_error_leaves_stderr_clean(tmp_path):
    # declared output shapes of rank 2: the failed op's empty (0,) outputs differ from them
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value")
    path = tmp_path / "top_k.onnx"
    onnx.save(model, path)
    child = run_child("""
import sys
import numpy as np, onnxruntime as ort, ortops
session = ortops.InferenceSession(%r)
for _ in range(3):
    try:
        session.run(None, {"data": np.ones((2, 3), np.float32), "k": np.array([9])})
    except ortops.OpError as exc:
        print("OpError:", exc)
print(session.run(None, {"data": np.array([[1, 3, 2]], np.float32), "k": np.array([1])})[0].tolist())
try:  # ORT's own errors still reach the caller
    session.run(None, {"data": np.ones((2, 3), np.float64), "k": np.array([1])})
except ortops.OpError:
    print("wrong: an OpError")
except Exception as exc:
    print("ORT error:", type(exc).__name__)
options = ort.SessionOptions()
ortops.InferenceSession(%r, options)
print("severity left as it was:", options.log_severity_level)
pyop = ortops.InferenceSession(%r, path="pyop")
pyop.set_providers(["CPUExecutionProvider"])  # ORT makes its session again: quiet as the first
try:
    pyop.run(None, {"data": np.ones((2, 3), np.float32), "k": np.array([9])})
except ortops.OpError:
    print("OpError after set_providers")
""" % (str(path), str(path), str(path)))
    assert child.status == 0, child.describe()
    lines = child.lines()
    assert lines[:3] == ["OpError: TopK node 'top_k': k=9 is outside [1, 3] for axis 1 of shape (2, 3)"] * 3, \
        child.describe()
    assert lines[3:] == ["[[3.0]]", "ORT error: InvalidArgument", "severity left as it was: -1",
                         "OpError after set_providers"], child.describe()
    assert child.stderr == "", child.describe()


def test_set_providers_that_ort_narrows_keeps_the_re_run_consistent(tmp_path):
    """set_providers naming a provider ORT lacks, with options for each: the PyOp re-run's session
    was made from ORT's one provider and the caller's two options ("EP Error ... should be the
    same length")."""
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value")
    path = tmp_path / "top_k.onnx"
    onnx.save(model, path)
    child = run_child("""
import numpy as np, ortops
session = ortops.InferenceSession(MODEL, path="lowered")
session.set_providers(["CUDAExecutionProvider", "CPUExecutionProvider"], [{"device_id": "0"}, {}])
try:
    session.run(None, {"data": np.ones((2, 3), np.float32), "k": np.array([9])})
except ortops.OpError as exc:
    print("OpError:", exc)
""".replace("MODEL", repr(str(path))))
    assert child.status == 0, child.describe()
    assert child.lines()[-1].startswith("OpError: TopK node 'top_k': k=9"), child.describe()
    assert "EP Error" not in child.stdout + child.stderr, child.describe()  # ORT prints it on stdout
