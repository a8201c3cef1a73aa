"""TopK lowered to standard ONNX (guarded and standalone) against ortops.reference, bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, numpy_helper

import ortops
from ortops import builder, dtypes, reference
from ortops.graph import graphs

from conftest import assert_identical
from lowering_cases import MODES, session
from strategies import top_k_attributes, top_k_inputs

from ..test_prefilter import _pool

LOWERED_DTYPES = (np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                  np.uint32)


def _session(dtype, rank, attrs, mode, k_type=np.int64):
    elem = dtypes.from_numpy(np.dtype(dtype)).onnx
    k_elem = dtypes.from_numpy(np.dtype(k_type)).onnx
    key = ("top_k", np.dtype(dtype).str, rank, tuple(sorted(attrs.items())), np.dtype(k_type).str)
    return session(key, lambda: builder.top_k_model(elem, rank, k_type=k_elem, **attrs), mode)


@pytest.mark.parametrize("mode", MODES)
@settings(max_examples=150, deadline=None)
@given(case=top_k_inputs(dtypes=LOWERED_DTYPES, max_dims=4), attrs=top_k_attributes(),
       k_type=st.sampled_from([np.int64, np.int32, np.uint8]))
def test_lowered_top_k_matches_reference(mode, case, attrs, k_type):
    data, k, axis = case
    attrs = dict(attrs, axis=axis)
    want = reference.top_k(data.astype(np.float32) if data.dtype == np.float16 else data, k, **attrs)
    got = _session(data.dtype, data.ndim, attrs, mode, k_type).run(None, {"data": data, "k": np.array([k], k_type)})
    want_values = want.values.astype(data.dtype) if data.dtype == np.float16 else want.values
    assert_identical(got[0], want_values)
    assert_identical(got[1], want.indices)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("mode_attr", ["max", "min"])
def test_nan_ties_and_signed_zeros(mode, mode_attr):
    data = np.array([[1, np.nan, 0.0, -0.0, 3, -np.nan, -np.inf, np.inf, 0.0, 3]], np.float32)
    for sort in ("value", "index"):
        attrs = dict(axis=1, mode=mode_attr, sort=sort)
        for k in range(1, data.shape[1] + 1):
            got = _session(np.float32, 2, attrs, mode).run(None, {"data": data, "k": np.array([k])})
            want = reference.top_k(data, k, **attrs)
            assert_identical(got[0], want.values)
            assert_identical(got[1], want.indices)


@pytest.mark.parametrize("mode", ["pyop", "guarded"])
@pytest.mark.parametrize("k", [0, -1, 5, -2 ** 63])
def test_bad_k_guarded_raises_op_error_naming_the_node(k, mode):
    sess = _session(np.float32, 2, dict(axis=1, mode="max", sort="value"), mode)
    with pytest.raises(ortops.OpError) as info:
        sess.run(None, {"data": np.ones((2, 4), np.float32), "k": np.array([k])})
    assert info.value.node_name == "top_k" and info.value.kind == "k_range"


@pytest.mark.parametrize("k", [0, -1, 5, -2 ** 63])
def test_bad_k_standalone_fails_in_ort_naming_node_and_reason(k):
    sess = _session(np.float32, 2, dict(axis=1, mode="max", sort="value"), "none")
    with pytest.raises(Exception) as info:  # ORT's own error type
        sess.run(None, {"data": np.ones((2, 4), np.float32), "k": np.array([k])})
    assert "TopK node 'top_k' rejects its input: k must be" in str(info.value)


def test_k_of_two_elements_is_refused_in_both_modes():
    for mode in MODES:
        sess = session(("top_k_k2", mode), lambda: builder.top_k_model(TensorProto.FLOAT, 1, axis=0, mode="max",
                                                                       sort="value", k_shape=(2,)), mode)
        with pytest.raises(Exception, match="k"):
            sess.run(None, {"data": np.ones(4, np.float32), "k": np.array([1, 1])})


def test_uint64_is_kept_with_its_reason_and_standalone_refuses():
    model = builder.top_k_model(TensorProto.UINT64, 1, axis=0, mode="max", sort="value")
    lowered, report = ortops.lower(model)
    assert not report.lowered and "uint64" in report.kept[0].reason
    with pytest.raises(ValueError, match="top_k.*uint64"):
        ortops.lower(model, fallback="none")


@pytest.mark.parametrize("path", ["session", "guarded"])
@pytest.mark.parametrize("shape, axis", [((672, 12), 1), ((2, 12, 336), 1)])
@settings(max_examples=8, deadline=None)
@given(dtype=st.sampled_from([np.float32, np.float64, np.int32, np.uint8]), mode=st.sampled_from(["max", "min"]),
       nan=st.booleans(), seed=st.integers(0, 2 ** 32 - 1))
def test_sort_index_of_many_short_slices_pads_the_sort_of_indices(path, shape, axis, dtype, mode, nan, seed):
    """672 slices, k=10: the sort of the selected indices is padded to 40 per slice (so that ORT
    runs it on two threads), and the sentinel never shows in the result: ties, NaN, ±0.0, ±inf."""
    pool = _pool(dtype)
    if not nan and pool.dtype.kind == "f":
        pool = pool[~np.isnan(pool)]
    data = np.random.default_rng(seed).choice(pool, size=shape)
    attrs = dict(mode=mode, sort="index", stable=1, index_element_type="i32")
    m = builder.top_k_model(dtypes.from_numpy(np.dtype(dtype)).onnx, len(shape), axis=axis, **attrs)
    m.graph.initializer.append(numpy_helper.from_array(np.array([10], np.int64), "k"))
    del m.graph.input[1]
    for dim, value in zip(m.graph.input[0].type.tensor_type.shape.dim, shape):
        dim.Clear()
        dim.dim_value = value
    if path == "session":
        sess = ortops.InferenceSession(m, path="auto")
        lowered = sess.model
    else:
        lowered = ortops.lower(m).model
        sess = ortops.InferenceSession(lowered, path="pyop")
    assert any(n.op_type == "Pad" for g in graphs(lowered.graph) for n in g.node)
    values, indices = sess.run(None, {"data": data})
    want = reference.top_k(data, 10, axis=axis, **attrs)
    assert_identical(values, want.values, bits=True)
    assert_identical(indices, want.indices)


@pytest.mark.parametrize("path", ["auto", "lowered"])
@pytest.mark.parametrize("shape", [(0, 12), (2, 0, 12)])
def test_sort_index_of_an_empty_static_batch(path, shape):
    """No slice at all: the padding rule counts none (it divided by that count once)."""
    m = builder.top_k_model(TensorProto.FLOAT, len(shape), axis=-1, mode="max", sort="index", stable=1)
    m.graph.initializer.append(numpy_helper.from_array(np.array([10], np.int64), "k"))
    del m.graph.input[1]
    for dim, value in zip(m.graph.input[0].type.tensor_type.shape.dim, shape):
        dim.Clear()
        dim.dim_value = value
    values, indices = ortops.InferenceSession(m, path=path).run(None, {"data": np.zeros(shape, np.float32)})
    assert values.shape == indices.shape == shape[:-1] + (10,)
