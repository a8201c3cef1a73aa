"""prepare_model and InferenceSession: load-time checks that name the node, rewrites, types."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import ortops
from ortops import builder
from ortops.ops import NCNN_DOMAIN, OPENVINO_DOMAIN

from helpers import top_k_and_arg_max_model


def _model(op_type, domain, inputs, attrs, *, name="bad_node", outputs=2,
           output_types=(TensorProto.FLOAT, TensorProto.INT32)):
    node = helper.make_node(op_type, [i[0] for i in inputs], [f"out{i}" for i in range(outputs)], name=name,
                            domain=domain, **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(f"out{i}", output_types[i], None) for i in range(outputs)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(domain, 1)],
                             ir_version=builder.IR_VERSION)


TOPK_INPUTS = [("data", TensorProto.FLOAT, [3, 4]), ("k", TensorProto.INT64, [1])]


@pytest.mark.parametrize("attrs, message", [
    (dict(axis=1, mode="largest", sort="value"), "mode='largest' is invalid; it must be one of 'max', 'min'"),
    (dict(axis=1, mode="max", sort="asc"), "sort='asc' is invalid"),
    (dict(axis=1, mode="max", sort="value", index_element_type="i16"), "index_element_type='i16'"),
    (dict(axis=1, mode="max", sort="value", stable=2), "stable=2"),
    (dict(mode="max", sort="value"), "required attribute 'axis' is missing"),
    (dict(axis="1", mode="max", sort="value"), "attribute 'axis' has ONNX type STRING; it must be INT"),
    (dict(axis=1, mode="max", sort="value", largest=1), "unknown attribute"),
])
def test_bad_top_k_attributes_fail_at_session_creation_naming_the_node(attrs, message):
    with pytest.raises(ortops.OpError, match="TopK node 'bad_node'") as info:
        ortops.InferenceSession(_model("TopK", OPENVINO_DOMAIN, TOPK_INPUTS, attrs))
    assert message in str(info.value)


@pytest.mark.parametrize("attrs, message", [
    (dict(reduction="avg"), "reduction='avg' is invalid"),
    (dict(use_init_val=3), "use_init_val=3"),
])
def test_bad_scatter_attributes_fail_at_session_creation(attrs, message):
    inputs = [("data", TensorProto.FLOAT, [4]), ("indices", TensorProto.INT64, [2]),
              ("updates", TensorProto.FLOAT, [2]), ("axis", TensorProto.INT64, [])]
    with pytest.raises(ortops.OpError, match=message):
        ortops.InferenceSession(_model("ScatterElementsUpdate", OPENVINO_DOMAIN, inputs, attrs, outputs=1))


@pytest.mark.parametrize("attrs, message", [(dict(topk=0), "topk=0 must be an integer >= 1"),
                                            (dict(out_max_val=2), "out_max_val=2")])
def test_bad_arg_max_attributes_fail_at_session_creation(attrs, message):
    with pytest.raises(ortops.OpError, match=message):
        ortops.InferenceSession(_model("ArgMax", NCNN_DOMAIN, [("data", TensorProto.FLOAT, [5])], attrs, outputs=1))


def test_arg_max_rejects_non_float32_at_load():
    with pytest.raises(ortops.OpError, match="ncnn ArgMax is float32-only"):
        ortops.InferenceSession(_model("ArgMax", NCNN_DOMAIN, [("data", TensorProto.FLOAT16, [5])], {}, outputs=1))


def test_unknown_op_in_our_domain_is_an_error():
    with pytest.raises(ortops.OpError, match="is not an op of domain 'ortops.openvino'"):
        ortops.InferenceSession(_model("Sort", OPENVINO_DOMAIN, TOPK_INPUTS, {}))


def test_float_k_is_rejected_at_load():
    inputs = [("data", TensorProto.FLOAT, [3, 4]), ("k", TensorProto.FLOAT, [1])]
    with pytest.raises(ortops.OpError, match="input 'k' has type float; it must be an integer type"):
        ortops.InferenceSession(_model("TopK", OPENVINO_DOMAIN, inputs, dict(axis=1, mode="max", sort="value")))


def test_missing_optional_attributes_get_the_spec_defaults():
    session = ortops.InferenceSession(_model("TopK", OPENVINO_DOMAIN, TOPK_INPUTS, dict(axis=1, mode="min", sort="value")))
    values, indices = session.run(None, {"data": np.array([[4, 1, 1, 3]] * 3, np.float32), "k": np.array([2])})
    assert indices.dtype == np.int32  # index_element_type defaults to i32
    np.testing.assert_array_equal(indices, [[1, 2]] * 3)


def test_prepare_model_does_not_modify_its_input():
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value")
    before = model.SerializeToString()
    prepared = ortops.prepare_model(model)
    assert model.SerializeToString() == before
    # the bridge node, and an Identity between it and each graph output (pre-allocated outputs)
    assert [(n.domain, n.op_type) for n in prepared.graph.node] == [
        ("ortops._bridge", "TopK_i32"), ("", "Identity"), ("", "Identity")]


@pytest.mark.parametrize("dtype", [np.float16])
def test_float16_top_k_is_exact_through_casts(dtype):
    model = builder.top_k_model(TensorProto.FLOAT16, 1, axis=0, mode="max", sort="value", stable=1)
    data = np.array([0.1, 65504, -0.0, 0.0, np.nan, 6e-8, 0.1, -65504], dtype)
    values, indices = ortops.InferenceSession(model).run(None, {"data": data, "k": np.array([8])})
    assert values.dtype == dtype
    np.testing.assert_array_equal(indices, [4, 1, 0, 6, 5, 2, 3, 7])
    np.testing.assert_array_equal(values, data[indices])


def test_bfloat16_top_k_is_rewritten_around_the_bridge():
    model = builder.top_k_model(TensorProto.BFLOAT16, 1, axis=0, mode="max", sort="value")
    prepared = ortops.prepare_model(model)
    ops = [n.op_type for n in prepared.graph.node]
    assert ops == ["Cast", "TopK_i32", "Cast", "Identity"]  # the indices are a graph output
    assert helper.get_attribute_value(prepared.graph.node[0].attribute[0]) == TensorProto.FLOAT


def test_model_from_path_and_bytes(tmp_path):
    model = builder.top_k_model(TensorProto.INT32, 1, axis=0, mode="max", sort="value")
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    for source in (path, str(path), model.SerializeToString()):
        session = ortops.InferenceSession(source)
        values, _ = session.run(None, {"data": np.array([3, 9, 1], np.int32), "k": np.array([1])})
        assert values.tolist() == [9]


def test_a_session_that_lowers_and_keeps_pyops_infers_shapes_once(monkeypatch):
    """The lowering and prepare_model share one run of onnx's shape inference: a TopK lowered
    (guarded, its PyOp fallback inside an If) beside an ncnn ArgMax kept as a PyOp (a symbolic
    batch: path="auto" lowers ArgMax only on a static shape)."""
    model = top_k_and_arg_max_model()
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    calls = []
    infer = onnx.shape_inference.infer_shapes
    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", lambda *a, **k: calls.append(1) or infer(*a, **k))
    session = ortops.InferenceSession(model)
    assert len(calls) == 1
    assert list(session.lowered_nodes) == ["top5"]
    data = np.random.default_rng(3).integers(0, 7, (4, 100)).astype(np.float32)  # tie-heavy
    values, indices, argmax = session.run(None, {"data": data})
    order = np.lexsort((np.arange(100)[None].repeat(4, 0), -data), axis=-1)[:, :5]  # value desc, lower index first
    np.testing.assert_array_equal(indices, order)
    np.testing.assert_array_equal(values, np.take_along_axis(data, order, -1))
    flat = data.ravel()
    top3 = np.lexsort((-np.arange(flat.size), -flat))[:3]  # ncnn: value desc, higher flat index first
    np.testing.assert_array_equal(argmax, np.stack([flat[top3], top3.astype(np.float32)]))
