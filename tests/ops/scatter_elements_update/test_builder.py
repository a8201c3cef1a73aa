"""ScatterElementsUpdate builders: checked models, the standard ScatterElements versions' semantics
in plain ORT, the side-by-side model, and the composition an exporter would emit for mean and
use_init_val=0. Expected values are computed by hand."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortops
from ortops.builder.common import IR_VERSION
from ortops.ops.scatter_elements_update.builder import (
    COMPOSITION_OPSET,
    ONNX_REDUCTION,
    SCATTER_ELEMENTS_REDUCTIONS,
    SCATTER_ELEMENTS_VERSIONS,
    onnx_scatter_elements,
    onnx_scatter_elements_model,
    scatter_elements_update,
    scatter_elements_update_model,
    scatter_elements_update_side_by_side,
    scatter_mean_composition,
)


@pytest.mark.parametrize("build", [
    lambda axis: onnx_scatter_elements_model(18, TensorProto.FLOAT, 2, axis=axis),
    lambda axis: scatter_elements_update_side_by_side(18, TensorProto.FLOAT, 2, axis=axis),
    lambda axis: scatter_mean_composition(TensorProto.FLOAT, 2, axis=axis),
], ids=["onnx_scatter_elements_model", "scatter_elements_update_side_by_side", "scatter_mean_composition"])
def test_an_axis_outside_the_rank_is_refused_when_built(build):
    """ONNX's checker does not compare a ScatterElements axis with the rank: the builder does."""
    for axis in (2, -3):
        with pytest.raises(ortops.OpError, match=rf"axis={axis} is outside \[-2, 1\] for rank 2"):
            build(axis)
    assert build(-2) is not None


def _plain(model):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])


def _checked(model):
    onnx.checker.check_model(model, full_check=True)
    assert model.ir_version == IR_VERSION <= 13  # ORT 1.31 loads IR <= 13
    return model


# ----------------------------------------------------------------------------- the ortops node


def test_custom_node_writes_both_attributes_and_refuses_bad_ones():
    node = scatter_elements_update("d", "i", "u", "a", name="s")
    assert node.domain == "ortops.openvino" and node.op_type == "ScatterElementsUpdate"
    assert {a.name: helper.get_attribute_value(a) for a in node.attribute} == {"reduction": b"none", "use_init_val": 1}
    with pytest.raises(ortops.OpError, match="reduction='avg'"):
        scatter_elements_update("d", "i", "u", "a", reduction="avg")
    with pytest.raises(ortops.OpError, match="use_init_val=2"):
        scatter_elements_update("d", "i", "u", "a", use_init_val=2)


def test_custom_model_declares_input_types_and_axis_shape():
    model = _checked(scatter_elements_update_model(TensorProto.INT16, 3, reduction="mean", use_init_val=0,
                                                   indices_type=TensorProto.UINT8, axis_type=TensorProto.INT8,
                                                   axis_shape=()))
    types = {i.name: i.type.tensor_type for i in model.graph.input}
    assert [i.name for i in model.graph.input] == ["data", "indices", "updates", "axis"]
    assert types["data"].elem_type == types["updates"].elem_type == TensorProto.INT16
    assert types["indices"].elem_type == TensorProto.UINT8 and types["axis"].elem_type == TensorProto.INT8
    assert len(types["axis"].shape.dim) == 0 and len(types["data"].shape.dim) == 3
    assert {(o.domain, o.version) for o in model.opset_import} == {("", 11), ("ortops.openvino", 1)}


def test_custom_model_runs_the_seed_example_1():
    model = scatter_elements_update_model(TensorProto.FLOAT, 1, reduction="sum")
    output, = ortops.InferenceSession(model).run(None, {
        "data": np.array([2, 3, 4, 6], np.float32), "indices": np.array([1, 0, 0, -2, -1, 2]),
        "updates": np.array([10, 20, 30, 40, 70, 60], np.float32), "axis": np.array([0])})
    assert output.tolist() == [52, 13, 104, 76]


# ----------------------------------------------------------------------------- standard ScatterElements


def test_versions_and_their_reductions():
    assert SCATTER_ELEMENTS_VERSIONS == {11: 11, 13: 13, 16: 16, 18: 18}
    assert SCATTER_ELEMENTS_REDUCTIONS[13] == ("none",)
    assert set(SCATTER_ELEMENTS_REDUCTIONS[18]) == set(ONNX_REDUCTION.values())
    for version in (11, 13):
        node = onnx_scatter_elements(version, "d", "i", "u", axis=1)
        assert {a.name for a in node.attribute} == {"axis"}  # no reduction attribute before 16
    with pytest.raises(ValueError, match="ScatterElements-16 has no reduction='min'"):
        onnx_scatter_elements(16, "d", "i", "u", reduction="min")
    with pytest.raises(ValueError, match="ScatterElements-13 has no reduction='add'"):
        onnx_scatter_elements(13, "d", "i", "u", reduction="add")
    with pytest.raises(ValueError, match="version 12"):
        onnx_scatter_elements(12, "d", "i", "u")


# data [[1, 2, 3], [4, 5, 6]], axis 1, indices [[0, 0, 2], [1, -1, 1]], updates [[10, 20, 30], [40, 50, 60]]
_STANDARD = {
    "none": [[20, 2, 30], [4, 60, 50]],  # ORT: the last of several updates wins (undefined in the spec)
    "add": [[31, 2, 33], [4, 105, 56]],
    "mul": [[200, 2, 90], [4, 12000, 300]],
    "min": [[1, 2, 3], [4, 5, 6]],
    "max": [[20, 2, 30], [4, 60, 50]],
}


@pytest.mark.parametrize("version, reduction", [(v, r) for v, rs in SCATTER_ELEMENTS_REDUCTIONS.items() for r in rs])
def test_standard_node_semantics_in_plain_ort(version, reduction):
    model = _checked(onnx_scatter_elements_model(version, TensorProto.INT32, 2, axis=1, reduction=reduction))
    assert {(o.domain, o.version) for o in model.opset_import} == {("", version)}
    output, = _plain(model).run(None, {
        "data": np.array([[1, 2, 3], [4, 5, 6]], np.int32), "indices": np.array([[0, 0, 2], [1, -1, 1]]),
        "updates": np.array([[10, 20, 30], [40, 50, 60]], np.int32)})
    assert output.tolist() == _STANDARD[reduction]


# ----------------------------------------------------------------------------- side by side


def test_side_by_side_feeds_one_set_of_inputs_to_both_nodes():
    model = _checked(scatter_elements_update_side_by_side(18, TensorProto.FLOAT, 2, axis=1, reduction="max"))
    assert [i.name for i in model.graph.input] == ["data", "indices", "updates"]
    assert [o.name for o in model.graph.output] == ["output", "onnx_output"]
    axis, = model.graph.initializer
    assert axis.name == "axis" and axis.data_type == TensorProto.INT64 and list(axis.dims) == [1]
    assert [(n.domain, n.op_type) for n in model.graph.node] == [("ortops.openvino", "ScatterElementsUpdate"),
                                                                ("", "ScatterElements")]
    output, builtin = ortops.InferenceSession(model).run(None, {
        "data": np.array([[1, 2, 3], [4, 5, 6]], np.float32), "indices": np.array([[0, 0, 2], [1, -1, 1]]),
        "updates": np.array([[10, 20, 30], [40, 50, 60]], np.float32)})
    assert output.tolist() == builtin.tolist() == _STANDARD["max"]


def test_side_by_side_casts_other_index_types_for_the_standard_node_only():
    model = _checked(scatter_elements_update_side_by_side(16, TensorProto.INT8, 1, axis=0, reduction="sum",
                                                          indices_type=TensorProto.UINT16))
    custom, cast, standard = model.graph.node
    assert custom.input[1] == "indices" and cast.op_type == "Cast" and standard.input[1] == cast.output[0]
    output, builtin = ortops.InferenceSession(model).run(None, {
        "data": np.array([1, 2], np.int8), "indices": np.array([1, 1, 0], np.uint16),
        "updates": np.array([100, 30, 5], np.int8)})
    assert output.tolist() == builtin.tolist() == [6, -124]  # 2 + 130 wraps to -124


@pytest.mark.parametrize("reduction, use_init_val", [("mean", 1), ("mean", 0), ("sum", 0), ("min", 0)])
def test_side_by_side_refuses_what_does_not_map(reduction, use_init_val):
    with pytest.raises(ValueError, match="scatter_mean_composition"):
        scatter_elements_update_side_by_side(18, TensorProto.FLOAT, 1, axis=0, reduction=reduction,
                                             use_init_val=use_init_val)


def test_side_by_side_none_ignores_use_init_val():
    model = scatter_elements_update_side_by_side(11, TensorProto.FLOAT, 1, axis=0, reduction="none", use_init_val=0)
    assert model.opset_import[0].version == 11


# ----------------------------------------------------------------------------- the composition


def _compose(data, indices, updates, *, axis=0, **kwargs):
    elem = helper.np_dtype_to_tensor_dtype(np.asarray(data).dtype)
    model = _checked(scatter_mean_composition(elem, np.ndim(data), axis=axis, **kwargs))
    assert {(o.domain, o.version) for o in model.opset_import} == {("", COMPOSITION_OPSET)}
    assert {n.domain for n in model.graph.node} == {""}  # standard ops only
    return _plain(model).run(None, {"data": data, "indices": indices, "updates": updates})[0]


def test_composition_float_mean_with_and_without_init_value():
    data = np.array([2, 3, 4, 6], np.float32)
    indices = np.array([1, 0, 0, 2, 2, 2])
    updates = np.array([10, 20, 30, 40, 70, 60], np.float32)
    assert _compose(data, indices, updates, reduction="mean").tolist() == pytest.approx(
        [(2 + 20 + 30) / 3, (3 + 10) / 2, (4 + 40 + 70 + 60) / 4, 6])
    assert _compose(data, indices, updates, reduction="mean", use_init_val=0).tolist() == pytest.approx(
        [(20 + 30) / 2, 10, (40 + 70 + 60) / 3, 6])


def test_composition_integer_mean_floors_and_the_naive_div_truncates():
    data = np.array([-3, 5, 9], np.int32)
    indices = np.array([0, 1, 1])
    updates = np.array([-4, -2, 1], np.int32)
    # sums -7/2 and 4/3 (use_init_val=1); index 2 untouched
    assert _compose(data, indices, updates, reduction="mean").tolist() == [-4, 1, 9]
    assert _compose(data, indices, updates, reduction="mean", rounding="trunc").tolist() == [-3, 1, 9]
    # use_init_val=0: -4/1 and -1/2: floor -1, trunc 0
    assert _compose(data, indices, updates, reduction="mean", use_init_val=0).tolist() == [-4, -1, 9]
    assert _compose(data, indices, updates, reduction="mean", use_init_val=0, rounding="trunc").tolist() == [-4, 0, 9]


def test_composition_integer_mean_does_not_accumulate_in_the_element_type():
    output = _compose(np.array([1], np.uint8), np.array([0, 0]), np.array([253, 252], np.uint8), reduction="mean")
    assert output.tolist() == [168]  # (1 + 253 + 252) // 3


def test_composition_use_init_val_0_seed_example_2_and_other_reductions():
    data = np.array([2, 3, 4, 6], np.float32)
    indices = np.array([1, 0, 0, 2, 3, 2])
    updates = np.array([10, 20, 30, 40, 70, 60], np.float32)
    assert _compose(data, indices, updates, reduction="sum", use_init_val=0).tolist() == [50, 10, 100, 70]
    assert _compose(data, indices, updates, reduction="prod", use_init_val=0).tolist() == [600, 10, 2400, 70]
    ints = (np.array([5, -5, 7], np.int16), np.array([0, 0, 1]), np.array([9, 8, 100], np.int16))
    assert _compose(*ints, reduction="min", use_init_val=0).tolist() == [8, 100, 7]
    assert _compose(*ints, reduction="max", use_init_val=0).tolist() == [9, 100, 7]
    flags = (np.array([True, True, False]), np.array([0, 1, 1]), np.array([False, False, True]))
    assert _compose(*flags, reduction="sum", use_init_val=0).tolist() == [False, True, False]
    assert _compose(*flags, reduction="prod", use_init_val=0).tolist() == [False, False, False]


def test_composition_along_axis_1_of_a_matrix():
    data = np.array([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    indices = np.array([[2, 2], [0, -3]])
    updates = np.array([[3.0, 5.0], [4.0, 8.0]])
    assert _compose(data, indices, updates, axis=1, reduction="mean", use_init_val=0).tolist() == [
        [1.0, 1.0, 4.0], [6.0, 2.0, 2.0]]


@pytest.mark.parametrize("kwargs, match", [
    (dict(reduction="none"), "side_by_side"),
    (dict(reduction="sum", use_init_val=1), "side_by_side"),
    (dict(reduction="avg"), "must be one of"),
    (dict(reduction="mean", rounding="round"), "rounding"),
])
def test_composition_refuses(kwargs, match):
    with pytest.raises(ValueError, match=match):
        scatter_mean_composition(TensorProto.FLOAT, 1, axis=0, **kwargs)
    with pytest.raises(ValueError, match="bool"):
        scatter_mean_composition(TensorProto.BOOL, 1, axis=0, reduction="mean")


def test_composition_docstring_says_it_is_what_an_exporter_emits():
    assert "exporter would" in scatter_mean_composition.__doc__


def test_builders_never_import_onnxruntime():
    code = (
        "import sys\n"
        "from onnx import TensorProto\n"
        "from ortops.ops.scatter_elements_update.builder import *\n"
        "scatter_elements_update_model(TensorProto.FLOAT, 2)\n"
        "onnx_scatter_elements_model(18, TensorProto.FLOAT, 2, reduction='max')\n"
        "scatter_elements_update_side_by_side(16, TensorProto.FLOAT, 2, axis=0, reduction='sum')\n"
        "scatter_mean_composition(TensorProto.INT32, 2, axis=1)\n"
        "assert not [m for m in sys.modules if m.startswith('onnxruntime')], 'onnxruntime imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
