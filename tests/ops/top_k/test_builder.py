"""TopK builders: checked models, pinned IR, schemas, and the standard versions' semantics in ORT."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto

from ortops import builder


def _plain(model):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def test_models_pin_ir_version_and_import_our_domain():
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value")
    assert model.ir_version == builder.IR_VERSION <= 13  # ORT 1.31 loads IR <= 13
    assert {(o.domain, o.version) for o in model.opset_import} == {("", 11), ("ortops.openvino", 1)}


def test_shape_inference_types_indices_by_index_element_type():
    for index_type, elem in (("i32", TensorProto.INT32), ("i64", TensorProto.INT64)):
        node = builder.top_k("x", "k", axis=1, mode="max", sort="value", index_element_type=index_type)
        model = builder.make_model(
            [node], [("x", TensorProto.FLOAT, [3, 7])], [("values", TensorProto.FLOAT, [3, 2]), ("indices", elem, [3, 2])],
            initializers=[onnx.helper.make_tensor("k", TensorProto.INT64, [1], [2])])
        inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
        out = {o.name: o.type.tensor_type for o in inferred.graph.output}
        assert out["indices"].elem_type == elem
        assert [d.dim_value for d in out["values"].shape.dim] == [3, 2]


def test_bad_attribute_is_refused_by_the_builder():
    import ortops

    with pytest.raises(ortops.OpError, match="mode='largest'"):
        builder.top_k("x", "k", axis=0, mode="largest", sort="value")
    with pytest.raises(ortops.OpError, match="index_element_type='i16' is invalid"):  # was a KeyError
        builder.top_k_model(TensorProto.FLOAT, 2, axis=0, mode="max", sort="value", index_element_type="i16")
    for build in (lambda axis: builder.top_k_model(TensorProto.FLOAT, 2, axis=axis, mode="max", sort="value"),
                  lambda axis: builder.top_k_side_by_side(11, TensorProto.FLOAT, 2, k=1, axis=axis, mode="max",
                                                          sort="value")):
        with pytest.raises(ortops.OpError, match=r"axis=5 is outside \[-2, 1\] for rank 2"):
            build(5)


@pytest.mark.parametrize("version", [1, 10, 11, 24])
def test_standard_versions_run_in_ort_with_the_lower_index_winning_ties(version):
    model = builder.onnx_top_k_model(version, TensorProto.FLOAT, 1, axis=0, k=3 if version == 1 else None)
    feed = {"X": np.array([2, 7, 7, 1, 7], np.float32)}
    if version != 1:
        feed["K"] = np.array([3], np.int64)
    values, indices = _plain(model).run(None, feed)
    assert values.tolist() == [7, 7, 7] and indices.tolist() == [1, 2, 4]


def test_top_k_1_needs_k_as_attribute_and_10_has_no_largest():
    with pytest.raises(ValueError, match="TopK-1 takes k as an attribute"):
        builder.onnx_top_k(1, "X", "K")
    with pytest.raises(ValueError, match="TopK-10 has no largest"):
        builder.onnx_top_k(10, "X", "K", largest=0)
    with pytest.raises(ValueError, match="cannot map mode='min'"):
        builder.top_k_side_by_side(10, TensorProto.FLOAT, 1, k=1, axis=0, mode="min", sort="value")


def test_side_by_side_feeds_one_input_to_both_nodes():
    import ortops

    model = builder.top_k_side_by_side(24, TensorProto.FLOAT, 2, k=2, axis=-1, mode="min", sort="value", stable=1)
    assert [n.input[0] for n in model.graph.node] == ["data", "data"]
    values, indices, onnx_values, onnx_indices = ortops.InferenceSession(model).run(
        None, {"data": np.array([[3, 1, 2, 1]], np.float32)})
    assert indices.tolist() == onnx_indices.tolist() == [[1, 3]]
    assert values.tolist() == onnx_values.tolist() == [[1, 1]]


@pytest.mark.slow  # about 13 s: ONNX's collector imports the test module of every op
def test_registering_our_schemas_keeps_onnx_reference_importable():
    import subprocess
    import sys

    code = ("from ortops.builder import register_schemas; register_schemas(); "
            "from onnx.reference import ReferenceEvaluator; "
            "from onnx.backend.test.case.node import collect_testcases; assert collect_testcases('TopK')")
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
