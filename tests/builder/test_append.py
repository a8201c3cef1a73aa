"""ortops.builder.append_nodes: ortops and standard nodes attached to a model's outputs."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ortops
from ortops import builder
from conftest import brute_top_k


def _base() -> onnx.ModelProto:
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["scores"], name="relu")], "base",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 10])],
                              [helper.make_tensor_value_info("scores", TensorProto.FLOAT, ["n", 10])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_ortops_and_standard_nodes_run_on_the_model_outputs():
    base = _base()
    model = builder.append_nodes(base, [
        builder.top_k("scores", "k", axis=-1, mode="max", sort="value", stable=1, index_element_type="i64",
                      outputs=("ov_values", "ov_indices"), name="ov_top3"),
        builder.onnx_top_k(11, "scores", "k", axis=-1, outputs=("values", "indices"), name="top3"),
    ], initializers={"k": np.array([3], np.int64)})
    assert len(base.graph.output) == 1 and len(base.graph.node) == 1  # the input model is unchanged
    assert [o.name for o in model.graph.output] == ["scores", "ov_values", "ov_indices", "values", "indices"]
    assert {(o.domain, o.version) for o in model.opset_import} == {("", 13), ("ortops.openvino", builder.SCHEMA_VERSION)}
    assert model.graph.output[2].type.tensor_type.elem_type == TensorProto.INT64
    x = np.random.default_rng(0).integers(-2, 3, (4, 10)).astype(np.float32)
    out = dict(zip([o.name for o in model.graph.output], ortops.InferenceSession(model).run(None, {"x": x})))
    relu = np.maximum(x, 0)
    expected = [brute_top_k(list(r), 3) for r in relu]
    assert out["ov_indices"].tolist() == expected == out["indices"].tolist()


def test_only_the_chosen_outputs():
    model = builder.append_nodes(_base(), [helper.make_node("ArgMax", ["scores"], ["best"], axis=1, name="am")],
                                 outputs=["best"], keep_outputs=False)
    assert [o.name for o in model.graph.output] == ["best"]


@pytest.mark.parametrize("nodes, inits, message", [
    ([helper.make_node("Relu", ["nowhere"], ["y"])], None, "reads 'nowhere'"),
    ([helper.make_node("Relu", ["x"], ["scores"])], None, "writes 'scores'"),
    ([helper.make_node("Relu", ["x"], ["y"])], {"x": np.zeros(1)}, "initializer 'x'"),
    ([helper.make_node("TopK", ["scores", "k"], ["v", "i"], axis=5)], {"k": np.array([3])}, "not valid ONNX"),
])
def test_mistakes_are_named(nodes, inits, message):
    with pytest.raises(ValueError, match=message):
        builder.append_nodes(_base(), nodes, initializers=inits)
