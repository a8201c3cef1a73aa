"""Tests for ortops.builder.arg_max: the ortops node and its standard-op equivalents.

Expected outputs are written by hand. The equivalent models are run by ONNX's own
ReferenceEvaluator and by plain ONNX Runtime, so the built-in composition is checked
without ortops' kernel in the loop.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx.reference import ReferenceEvaluator

from ortops import InferenceSession, OpError
from ortops.ops.arg_max.builder import (
    ARG_MAX_OPSET,
    arg_max,
    arg_max_model,
    arg_max_side_by_side,
    onnx_arg_max_equivalent,
    onnx_arg_max_equivalent_model,
)
from ortops.builder.common import IR_VERSION
from ortops.ops import NCNN_DOMAIN

TIES = np.array([1, 3, 3, 2, 3], np.float32)  # the maximum 3 at flat indices 1, 2 and 4


def _plain(model: onnx.ModelProto, data: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"data": data})[0]


def _evaluate(model: onnx.ModelProto, data: np.ndarray) -> np.ndarray:
    return ReferenceEvaluator(model).run(None, {"data": data})[0]


def _ops(model: onnx.ModelProto) -> list[str]:
    return [n.op_type for n in model.graph.node]


# ----------------------------------------------------------------------------- the node


def test_arg_max_node():
    node = arg_max("x", out_max_val=1, topk=3, output="y", name="am")
    assert (node.domain, node.op_type, list(node.input), list(node.output), node.name) == (
        NCNN_DOMAIN, "ArgMax", ["x"], ["y"], "am")
    assert {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute} == {"out_max_val": 1, "topk": 3}


@pytest.mark.parametrize("attrs", [dict(topk=0), dict(out_max_val=2), dict(topk=-1)])
def test_arg_max_node_rejects_bad_attributes(attrs):
    with pytest.raises(OpError, match="ArgMax node 'bad'"):
        arg_max("x", name="bad", **attrs)


def test_arg_max_model_shape_and_opsets():
    model = arg_max_model(3, out_max_val=1, topk=4)
    assert model.ir_version == IR_VERSION
    assert {o.domain: o.version for o in model.opset_import} == {"": ARG_MAX_OPSET, NCNN_DOMAIN: 1}
    out = model.graph.output[0].type.tensor_type
    assert out.elem_type == onnx.TensorProto.FLOAT
    assert [d.dim_value for d in out.shape.dim] == [2, 4]
    assert len(model.graph.input[0].type.tensor_type.shape.dim) == 3


def test_arg_max_model_runs_in_ortops():
    session = InferenceSession(arg_max_model(1, out_max_val=1, topk=4))
    np.testing.assert_array_equal(session.run(None, {"data": TIES})[0], [[3, 3, 3, 2], [4, 2, 1, 3]])


# ----------------------------------------------------------------------------- the equivalents


def test_topk1_is_reshape_and_arg_max_select_last_index():
    model = onnx_arg_max_equivalent_model(2, topk=1)
    assert _ops(model)[:2] == ["Reshape", "ArgMax"]
    node = model.graph.node[1]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    assert attrs == {"axis": 0, "keepdims": 1, "select_last_index": 1}
    assert "TopK" not in _ops(model) and "Slice" not in _ops(model)


def test_topk_above_one_reverses_then_top_k():
    exact = onnx_arg_max_equivalent_model(1, topk=3)
    naive = onnx_arg_max_equivalent_model(1, topk=3, exact_ties=False)
    assert _ops(exact).index("Slice") < _ops(exact).index("TopK")
    assert "Slice" not in _ops(naive) and "ArgMax" not in _ops(naive)
    slice_node = next(n for n in exact.graph.node if n.op_type == "Slice")
    steps = next(i for i in exact.graph.initializer if i.name == slice_node.input[4])
    assert onnx.numpy_helper.to_array(steps).tolist() == [-1]


@pytest.mark.parametrize("run", [_plain, _evaluate], ids=["onnxruntime", "onnx-reference"])
@pytest.mark.parametrize(
    "topk, out_max_val, exact_ties, expected",
    [
        (1, 0, True, [[4]]),  # the last of the three 3s
        (1, 1, True, [[3], [4]]),
        (1, 0, False, [[1]]),  # TopK-11: the first of them
        (3, 0, True, [[4, 2, 1]]),
        (4, 1, True, [[3, 3, 3, 2], [4, 2, 1, 3]]),
        (4, 1, False, [[3, 3, 3, 2], [1, 2, 4, 3]]),
        (2, 0, False, [[1, 2]]),  # the boundary tie keeps the lower indices
        (5, 0, True, [[4, 2, 1, 3, 0]]),
    ],
)
def test_equivalent_by_hand(run, topk, out_max_val, exact_ties, expected):
    model = onnx_arg_max_equivalent_model(1, out_max_val=out_max_val, topk=topk, exact_ties=exact_ties)
    output = run(model, TIES)
    assert output.dtype == np.float32
    np.testing.assert_array_equal(output, np.array(expected, np.float32))


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_equivalent_flattens_every_rank(rank):
    # A 2x...x2 (or 8) tensor of 0..n-1 with a copy of the maximum at flat index 1.
    shape = (8,) if rank == 1 else (2,) * rank
    data = np.arange(np.prod(shape), dtype=np.float32)
    data[1] = data[-1]
    data = data.reshape(shape)
    last = data.size - 1
    np.testing.assert_array_equal(_plain(onnx_arg_max_equivalent_model(rank, topk=1), data), [[last]])
    np.testing.assert_array_equal(_plain(onnx_arg_max_equivalent_model(rank, topk=3), data), [[last, 1, last - 1]])
    np.testing.assert_array_equal(_plain(onnx_arg_max_equivalent_model(rank, topk=3, exact_ties=False), data),
                                  [[1, last, last - 1]])


def test_equivalent_keeps_signed_zero_of_the_chosen_element():
    data = np.array([-1.0, 0.0, -0.0], np.float32)  # +0.0 and -0.0 tie: ncnn takes index 2
    for topk in (1, 2):
        output = _plain(onnx_arg_max_equivalent_model(1, out_max_val=1, topk=topk), data)
        assert output[1].tolist() == [2, 1][:topk]
        assert np.signbit(output[0, 0])


def test_equivalent_nodes_use_the_prefix():
    nodes, inits = onnx_arg_max_equivalent("x", topk=2, output="y", prefix="p")
    assert all(n.name.startswith("p/") for n in nodes)
    assert all(i.name.startswith("p/") for i in inits)
    assert nodes[-1].output == ["y"]


@pytest.mark.parametrize("attrs", [dict(topk=0), dict(out_max_val=3)])
def test_equivalent_rejects_bad_attributes(attrs):
    with pytest.raises(ValueError):
        onnx_arg_max_equivalent("x", **attrs)


# ----------------------------------------------------------------------------- side by side


def test_side_by_side_outputs():
    model = arg_max_side_by_side(2, out_max_val=1, topk=2)
    assert [o.name for o in model.graph.output] == ["output", "onnx_output"]
    ours, builtin = InferenceSession(model).run(None, {"data": TIES.reshape(1, 5)})
    np.testing.assert_array_equal(ours, [[3, 3], [4, 2]])
    np.testing.assert_array_equal(builtin, [[3, 3], [4, 2]])


def test_side_by_side_naive_differs_on_ties():
    model = arg_max_side_by_side(1, topk=2, exact_ties=False)
    ours, builtin = InferenceSession(model).run(None, {"data": TIES})
    np.testing.assert_array_equal(ours, [[4, 2]])
    np.testing.assert_array_equal(builtin, [[1, 2]])


def test_builder_never_imports_onnxruntime():
    code = ("import sys; from ortops.ops.arg_max.builder import arg_max_side_by_side; "
            "arg_max_side_by_side(2, topk=3); sys.exit('onnxruntime' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
