"""ScatterElementsUpdate lowered to standard ONNX (guarded and standalone) against
ortops.reference, bit for bit (signed zeros, NaN), duplicate indices included."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
import onnx.numpy_helper
from onnx import TensorProto

import ortops
from ortops import builder, dtypes, reference
from ortops.builder.common import set_static_shapes

from conftest import assert_identical
from lowering_cases import MODES, session
from strategies import values

REDUCTIONS = ("none", "sum", "prod", "min", "max", "mean")
DATA_DTYPES = (np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
               np.uint32, np.uint64, np.bool_)
INDEX_DTYPES = (np.int64, np.int32, np.int8, np.uint8, np.int16, np.uint32)


def lowerable(dtype, reduction) -> bool:
    dtype = np.dtype(dtype)
    if reduction == "mean":
        return dtype.kind == "f" and dtype != np.float16 or dtype.kind in "iu" and dtype.itemsize <= 4
    return not (dtype == np.float16 and reduction in ("sum", "prod"))


@st.composite
def scatter_cases(draw):
    reduction = draw(st.sampled_from(REDUCTIONS))
    dtype = np.dtype(draw(st.sampled_from([d for d in DATA_DTYPES if lowerable(d, reduction)])))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4))
    rank = len(shape)
    axis = draw(st.integers(-rank, rank - 1))
    dim = shape[axis]
    index_shape = tuple(draw(st.integers(1, dim + 3)) if d == axis % rank else draw(st.integers(1, side))
                        for d, side in enumerate(shape))
    index_dtype = np.dtype(draw(st.sampled_from(INDEX_DTYPES)))
    low = 0 if index_dtype.kind == "u" else -dim
    indices = draw(hnp.arrays(index_dtype, index_shape, elements=st.integers(low, dim - 1)))
    elements = st.booleans() if dtype == np.bool_ else values(dtype)
    data = draw(hnp.arrays(dtype, shape, elements=elements))
    updates = draw(hnp.arrays(dtype, index_shape, elements=elements))
    return data, indices, updates, axis, dict(reduction=reduction, use_init_val=draw(st.integers(0, 1)))


def _session(data, indices, axis, attrs, mode):
    elem = dtypes.from_numpy(data.dtype).onnx
    index_elem = dtypes.from_numpy(indices.dtype).onnx
    key = ("scatter", data.dtype.str, data.ndim, indices.dtype.str, axis, tuple(sorted(attrs.items())))

    def make():  # the axis must be a constant to lower
        return _constant_axis(builder.scatter_elements_update_model(elem, data.ndim, indices_type=index_elem,
                                                                    **attrs), axis)

    return session(key, make, mode)


def _reference(data, indices, updates, axis, attrs):
    if data.dtype == np.float16:  # ortops carries float16 as float64 and rounds once
        out = reference.scatter_elements_update(data.astype(np.float64), indices, updates.astype(np.float64), axis,
                                                **attrs)
        return out.astype(np.float16)
    return reference.scatter_elements_update(data, indices, updates, axis, **attrs)


@pytest.mark.parametrize("mode", MODES)
@given(case=scatter_cases())
def test_lowered_scatter_matches_reference(mode, case):
    data, indices, updates, axis, attrs = case
    want = _reference(data, indices, updates, axis, attrs)
    got = _session(data, indices, axis, attrs, mode).run(None, {"data": data, "indices": indices, "updates": updates})
    assert_identical(got[0], want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reduction", ["min", "max"])
@pytest.mark.parametrize("use_init_val", [0, 1])
def test_min_max_signed_zeros_and_nan(mode, reduction, use_init_val):
    attrs = dict(reduction=reduction, use_init_val=use_init_val)
    cases = [
        ([0.0, -0.0, 5.0, np.nan], [0, 0, 1, 1, 2, 3], [-0.0, 0.0, 0.0, -0.0, np.nan, 1.0]),
        ([-0.0, 0.0, -1.0, 1.0], [1, 0, 1, 0, 2, 3], [-0.0, 0.0, -0.0, 0.0, 0.0, -0.0]),
    ]
    for data, indices, updates in cases:
        data = np.array(data, np.float32)
        indices, updates = np.array(indices, np.int64), np.array(updates, np.float32)
        want = reference.scatter_elements_update(data, indices, updates, 0, **attrs)
        got = _session(data, indices, 0, attrs, mode).run(None, {"data": data, "indices": indices,
                                                                   "updates": updates})
        assert_identical(got[0], want)


def test_bad_index_guarded_raises_op_error_and_standalone_names_the_reason():
    data, indices, updates = np.zeros(4, np.float32), np.array([4], np.int64), np.ones(1, np.float32)
    feed = {"data": data, "indices": indices, "updates": updates}
    with pytest.raises(ortops.OpError) as info:
        _session(data, indices, 0, dict(reduction="sum", use_init_val=1), "pyop").run(None, feed)
    assert info.value.kind == "index_range" and info.value.node_name == "scatter_elements_update"
    with pytest.raises(Exception, match="rejects its input: every index must be in"):
        _session(data, indices, 0, dict(reduction="sum", use_init_val=1), "none").run(None, feed)


@pytest.mark.parametrize("dtype, reduction, why", [
    (TensorProto.INT64, "mean", "overflow"), (TensorProto.UINT64, "mean", "overflow"),
    (TensorProto.FLOAT16, "sum", "two roundings"), (TensorProto.BFLOAT16, "mean", "two roundings"),
])
def test_kept_with_reason(dtype, reduction, why):
    model = _constant_axis(builder.scatter_elements_update_model(dtype, 2, reduction=reduction))
    _, report = ortops.lower(model)
    assert not report.lowered and why in report.kept[0].reason
    with pytest.raises(ValueError, match="scatter_elements_update"):
        ortops.lower(model, fallback="none")


def test_axis_that_is_not_constant_is_kept():
    model = builder.scatter_elements_update_model(TensorProto.FLOAT, 2)
    _, report = ortops.lower(model)
    assert "constant" in report.kept[0].reason


def test_uint64_indices_are_kept():
    model = _constant_axis(builder.scatter_elements_update_model(TensorProto.FLOAT, 1, indices_type=TensorProto.UINT64))
    _, report = ortops.lower(model)
    assert "uint64 indices" in report.kept[0].reason


def _static_model(dtype, data_shape, updates_shape, axis=0, **attrs):
    """ScatterElementsUpdate on static shapes, the axis a constant (or an input: ``axis=None``)."""
    model = builder.scatter_elements_update_model(dtypes.from_numpy(np.dtype(dtype)).onnx, len(data_shape), **attrs)
    set_static_shapes(model, data=data_shape, indices=updates_shape, updates=updates_shape)
    return _constant_axis(model, axis) if axis is not None else model


def _constant_axis(model: onnx.ModelProto, axis: int = 0) -> onnx.ModelProto:
    """``model`` with its ``axis`` input made an initializer (a graph input with one would only
    be a default)."""
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([axis], np.int64), "axis"))
    kept = [i for i in model.graph.input if i.name != "axis"]
    del model.graph.input[:]
    model.graph.input.extend(kept)
    return model


def test_auto_lowers_small_static_shapes():
    """path="auto" lowers ScatterElementsUpdate where data and updates are static and hold at most
    8192 elements each (measured faster than the PyOp there); the guard still routes a bad index
    to the PyOp's OpError. Elsewhere, and where the node cannot be lowered, the PyOp stays."""
    rng = np.random.default_rng(0)
    for data_shape, updates_shape, dtype in (((2, 4), (4, 4), np.float32), ((64, 128), (64, 128), np.int32)):
        for reduction in ("sum", "mean", "max"):
            sess = ortops.InferenceSession(_static_model(dtype, data_shape, updates_shape, reduction=reduction))
            assert [n.op for n in sess.lowering.lowered] == ["ortops.openvino::ScatterElementsUpdate"]
            data = rng.integers(-9, 9, data_shape).astype(dtype)
            indices = rng.integers(-data_shape[0], data_shape[0], updates_shape).astype(np.int64)
            updates = rng.integers(-9, 9, updates_shape).astype(dtype)
            got = sess.run(None, {"data": data, "indices": indices, "updates": updates})[0]
            assert_identical(got, reference.scatter_elements_update(data, indices, updates, 0, reduction=reduction))
            indices[-1, -1] = data_shape[0]
            with pytest.raises(ortops.OpError) as info:
                sess.run(None, {"data": data, "indices": indices, "updates": updates})
            assert info.value.kind == "index_range"
    for model in (_static_model(np.float32, (91, 91), (4, 91)),  # 8281 elements of data
                  _static_model(np.float32, (2, 4), (8193, 4)),
                  builder.scatter_elements_update_model(TensorProto.FLOAT, 2)):  # shapes not static
        kept = ortops.InferenceSession(model).lowering.kept
        assert len(kept) == 1 and "path='auto' keeps ScatterElementsUpdate as a PyOp" in kept[0].reason
    for model, why in ((_static_model(np.float16, (2, 4), (4, 4), reduction="sum"), "float16"),
                       (_static_model(np.float32, (2, 4), (4, 4), axis=None), "not a constant")):
        kept = ortops.InferenceSession(model).lowering.kept
        assert len(kept) == 1 and why in kept[0].reason


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.int32])
@pytest.mark.parametrize("reduction", ["none", "min", "max"])
def test_static_empty_updates_are_data_in_onnxruntime_and_openvino(dtype, reduction):
    """No update: the result is data. OpenVINO 2026.4 failed to compile the float16 min/max
    model (the If between the fast and the exact composition, with zero-size static branches)."""
    ov = pytest.importorskip("openvino")
    import onnxruntime as ort

    data = np.array([[-0.0], [np.nan if np.dtype(dtype).kind == "f" else 7]], dtype)
    feed = {"data": data, "indices": np.zeros((0, 1), np.int64), "updates": np.zeros((0, 1), dtype)}
    for use_init_val in (1, 0):
        model = _static_model(dtype, (2, 1), (0, 1), reduction=reduction, use_init_val=use_init_val)
        standalone = ortops.lower(model, fallback="none").model.SerializeToString()
        got, = ort.InferenceSession(standalone, providers=["CPUExecutionProvider"]).run(None, feed)
        assert_identical(got, data)
        compiled = ov.Core().compile_model(ov.Core().read_model(standalone, b""), "CPU")
        assert_identical(compiled(feed)[compiled.outputs[0]], data)


def test_an_ir_3_models_initializers_are_constants():
    """In IR 3 every initializer is also a graph input, and a constant: the axis is one (it was
    taken as a default the feed may replace, and the node had no standalone composition)."""
    model = builder.scatter_elements_update_model(TensorProto.FLOAT, 2, reduction="none")
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array([1], np.int64), "axis"))
    model.ir_version = 3
    del model.opset_import[:]
    model.opset_import.extend([onnx.helper.make_opsetid("", 9), onnx.helper.make_opsetid("ortops.openvino", 1)])
    lowered, report = ortops.lower(model, fallback="none")
    assert [n.name for n in report.lowered] == ["scatter_elements_update"]
    assert "axis" not in [i.name for i in lowered.graph.input]  # raised past IR 3: no input to feed over it
