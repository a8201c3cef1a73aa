"""The ScatterElementsUpdate kernel against its reference, bit for bit.

The kernel (``ortops.ops.scatter_elements_update.kernel``) must give exactly what the pure-NumPy reference gives for every
dtype, rank, axis, reduction and ``use_init_val``: same dtype, same values, NaN where the
reference has NaN, and the same sign of zero. Hypothesis draws the inputs; a small ``CHUNK``
makes the kernel cross chunk boundaries on small inputs.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from conftest import assert_identical
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ortops.ops.scatter_elements_update import kernel as kernel_source
from ortops import OpError
from ortops.ops import SCATTER_ELEMENTS_UPDATE
from ortops.ops.scatter_elements_update.kernel import scatter_elements_update as kernel
from ortops.reference import scatter_elements_update as reference

# The kernel module (its monkeypatchable internals).
_kernel_module = kernel_source

FLOATS = [np.float32, np.float64]
INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
DTYPES = FLOATS + INTS + [np.bool_]
INDEX_DTYPES = INTS
REDUCTIONS = ["none", "sum", "prod", "min", "max", "mean"]


@pytest.fixture(params=[None, 5], ids=["chunk-default", "chunk-5"])
def chunk(request, monkeypatch):
    """Run with the kernel's own chunk size, and with 5 updates a chunk (many boundaries)."""
    if request.param is not None:
        monkeypatch.setattr(_kernel_module, "CHUNK", request.param)
    return request.param


# ----------------------------------------------------------------------------- property test


def _elements(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return st.booleans()
    if dtype.kind == "f":
        special = st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, 1.5, -2.5, 3e38, -3e38])
        return st.one_of(special, st.floats(-1e6, 1e6, width=32 if dtype == np.float32 else 64))
    info = np.iinfo(dtype)
    edges = st.sampled_from([int(info.min), int(info.max), 0, 1, -1 if info.min < 0 else 2])
    return st.one_of(edges, st.integers(max(int(info.min), -7), min(int(info.max), 7)),
                     st.integers(int(info.min), int(info.max)))


@st.composite
def scatter_inputs(draw):
    dtype = np.dtype(draw(st.sampled_from(DTYPES)))
    reductions = [r for r in REDUCTIONS if not (r == "mean" and dtype == np.bool_)]
    reduction = draw(st.sampled_from(reductions))
    use_init_val = draw(st.sampled_from([0, 1]))
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    ishape = tuple(
        draw(st.integers(0, 3 * n)) if d == axis % rank else draw(st.integers(0, n)) for d, n in enumerate(shape)
    )
    index_dtype = np.dtype(draw(st.sampled_from(INDEX_DTYPES)))
    dim = shape[axis]
    low = -dim if index_dtype.kind == "i" else 0
    indices = draw(hnp.arrays(index_dtype, ishape, elements=st.integers(low, dim - 1)))
    data = draw(hnp.arrays(dtype, shape, elements=_elements(dtype)))
    updates = draw(hnp.arrays(dtype, ishape, elements=_elements(dtype)))
    axis_dtype = draw(st.sampled_from([np.int64, np.int32, np.int8] if axis < 0 else INDEX_DTYPES))
    axis_value = np.array(axis, axis_dtype).reshape(draw(st.sampled_from([(), (1,)])))
    return data, indices, updates, axis_value, reduction, use_init_val


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(scatter_inputs())
def test_kernel_equals_reference(chunk, inputs):
    data, indices, updates, axis, reduction, use_init_val = inputs
    before = (data.copy(), indices.copy(), updates.copy())
    expected = reference(data, indices, updates, axis, reduction=reduction, use_init_val=use_init_val)
    with np.errstate(all="raise"):  # the kernel must not warn (or raise) on inf, NaN or overflow
        actual = kernel(data, indices, updates, axis, reduction=reduction, use_init_val=use_init_val)
    assert_identical(actual, expected)
    for array, copy in zip((data, indices, updates), before):
        np.testing.assert_array_equal(array, copy)  # inputs untouched


# ----------------------------------------------------------------------------- targeted cases


def test_kernel_is_the_one_the_bridge_uses():
    assert SCATTER_ELEMENTS_UPDATE.kernel.resolve() is kernel


@pytest.mark.parametrize("reduction, use_init_val, indices, expected", [
    ("sum", 1, [1, 0, 0, -2, -1, 2], [52, 13, 104, 76]),  # seed example 1
    ("sum", 0, [1, 0, 0, 2, 3, 2], [50, 10, 100, 70]),  # seed example 2
])
def test_seed_examples_1_and_2(chunk, reduction, use_init_val, indices, expected):
    data = np.array([2, 3, 4, 6], np.float32)
    updates = np.array([10, 20, 30, 40, 70, 60], np.float32)
    output = kernel(data, np.array(indices), updates, np.array([0]), reduction=reduction, use_init_val=use_init_val)
    assert_identical(output, np.array(expected, np.float32))


def test_seed_examples_3_to_5(chunk):
    indices = np.array([[1, 1], [0, 3]])
    updates = np.array([[11, 12], [13, 14]], np.int32)
    none = kernel(np.zeros((3, 4), np.int32), np.array([[1, 2], [0, 3]]), updates, np.array([1]))
    assert none.tolist() == [[0, 11, 12, 0], [13, 0, 0, 14], [0, 0, 0, 0]]
    total = kernel(np.ones((3, 4), np.int32), indices, updates, np.array([1]), reduction="sum")
    assert total.tolist() == [[1, 24, 1, 1], [14, 1, 1, 15], [1, 1, 1, 1]]
    product = kernel(np.full((3, 4), 2, np.int32), indices, updates, np.array([1]), reduction="prod")
    assert product.tolist() == [[2, 264, 2, 2], [26, 2, 2, 28], [2, 2, 2, 2]]


def test_none_last_update_in_row_major_order_wins_across_chunks(chunk):
    data = np.zeros(3, np.int64)
    indices = np.array([2, 0, 2, 2, -1, 0, 1, 2, 0, -3, 2, 1])
    updates = np.arange(1, 13, dtype=np.int64)
    output = kernel(data, indices, updates, np.array(0))
    assert output.tolist() == [10, 12, 11]


@pytest.mark.parametrize("dtype, values, expected_floor", [
    (np.int32, [-3, -4], -4),  # spec: toward -inf (truncation would give -3)
    (np.int8, [-2, 1], -1),  # with use_init_val=0
    (np.uint8, [1, 253, 252], 168),  # no accumulation in the element type
    (np.int64, [2**63 - 1, 2**63 - 2, -(2**63)], math.floor(Fraction(2**63 - 3, 3))),
    (np.uint64, [2**64 - 1, 2**64 - 2, 2**63], math.floor(Fraction(2**64 - 1 + 2**64 - 2 + 2**63, 3))),
    (np.int64, [-(2**63), -(2**63), -(2**63) + 1], -(2**63)),
])
def test_integer_mean_is_exact_and_floored(chunk, dtype, values, expected_floor):
    updates = np.array(values, dtype)
    output = kernel(np.array([99], dtype), np.zeros(len(values), np.int64), updates, 0, reduction="mean",
                    use_init_val=0)
    assert int(output[0]) == expected_floor
    assert output.dtype == dtype


def test_integer_mean_64_bit_with_init_value(chunk):
    data = np.array([2**64 - 5, 7], np.uint64)
    updates = np.array([2**64 - 1, 2**64 - 2, 1, 2], np.uint64)
    output = kernel(data, np.array([0, 0, 1, 1]), updates, 0, reduction="mean")
    assert output.tolist() == [(2**64 - 5 + 2**64 - 1 + 2**64 - 2) // 3, (7 + 1 + 2) // 3]


@pytest.mark.parametrize("reduction", ["min", "max"])
@pytest.mark.parametrize("use_init_val", [0, 1])
def test_float_min_max_earliest_of_equal_operands_wins(chunk, reduction, use_init_val):
    data = np.array([0.0, -0.0, 0.0, -0.0], np.float32)
    indices = np.array([0, 0, 1, 2, 2, 3])
    updates = np.array([-0.0, 0.0, 0.0, -0.0, -0.0, 0.0], np.float32)
    output = kernel(data, indices, updates, 0, reduction=reduction, use_init_val=use_init_val)
    assert_identical(output, reference(data, indices, updates, 0, reduction=reduction, use_init_val=use_init_val))
    first_operand = [0.0, -0.0, 0.0, -0.0] if use_init_val else [-0.0, 0.0, -0.0, 0.0]
    assert np.signbit(output).tolist() == np.signbit(np.array(first_operand)).tolist()
    # Many equal operands for one target, across chunks: the earliest still wins.
    for first in (-0.0, 0.0):
        updates = np.array([first] + [-first] * 11, np.float64)
        output = kernel(np.array([7.0 if reduction == "min" else -7.0]), np.zeros(12, np.int64), updates, 0,
                        reduction=reduction, use_init_val=use_init_val)
        assert np.signbit(output[0]) == np.signbit(first)


def test_float_nan_propagates_in_min_max_whatever_the_order(chunk):
    data = np.array([1.0, np.nan, 1.0], np.float64)
    indices = np.array([0, 1, 2, 2])
    updates = np.array([np.nan, 2.0, np.nan, 0.5])
    for reduction in ("min", "max"):
        output = kernel(data, indices, updates, 0, reduction=reduction)
        assert np.isnan(output).all()


def test_float32_sums_in_float64_rounded_once(chunk):
    data = np.array([1e8], np.float32)
    updates = np.array([1, 1, -1e8, 3, 4], np.float32)
    output = kernel(data, np.zeros(5, np.int64), updates, 0, reduction="sum")
    assert output.tolist() == [9.0]  # float32 steps would give 7.0 (1e8 + 1 == 1e8 in float32)
    big = kernel(np.array([3e38], np.float32), np.array([0]), np.array([3e38], np.float32), 0, reduction="sum")
    assert big.tolist() == [math.inf]


def test_integer_sum_and_prod_wrap_around(chunk):
    output = kernel(np.array([100, 3], np.int8), np.array([0, 0, 1, 1]), np.array([100, 100, 100, 3], np.int8), 0,
                    reduction="sum")
    assert output.tolist() == [44, 106]
    output = kernel(np.array([200], np.uint8), np.array([0, 0]), np.array([3, 5], np.uint8), 0, reduction="prod")
    assert output.tolist() == [(200 * 15) % 256]


def test_bool_sum_is_or_prod_is_and(chunk):
    data = np.array([False, True, False, True])
    indices = np.array([0, 1, 2, 2, 3])
    updates = np.array([True, False, True, False, True])
    assert kernel(data, indices, updates, 0, reduction="sum").tolist() == [True, True, True, True]
    assert kernel(data, indices, updates, 0, reduction="prod").tolist() == [False, False, False, True]
    assert kernel(data, indices, updates, 0, reduction="prod", use_init_val=0).tolist() == [True, False, False, True]


def test_long_last_dimension_and_every_axis(chunk):
    rng = np.random.default_rng(3)
    data = rng.standard_normal((2, 3, 70)).astype(np.float32)
    for axis in range(-3, 3):
        shape = list(data.shape)
        shape[axis] *= 2
        indices = rng.integers(-data.shape[axis], data.shape[axis], shape)
        updates = rng.standard_normal(shape).astype(np.float32)
        for reduction in REDUCTIONS:
            expected = reference(data, indices, updates, axis, reduction=reduction, use_init_val=axis % 2)
            assert_identical(kernel(data, indices, updates, axis, reduction=reduction, use_init_val=axis % 2), expected)


@pytest.mark.parametrize("index_dtype", INDEX_DTYPES)
def test_small_index_dtypes_do_not_overflow_the_flat_position(chunk, index_dtype):
    # index * stride (4 * 300) is far beyond int8/uint8: the position must be computed in int64
    data = np.zeros((5, 300), np.int32)
    indices = np.full((2, 300), 4, index_dtype)
    if np.dtype(index_dtype).kind == "i":
        indices[1] = -1  # the same row, counted from the back
    updates = np.arange(600, dtype=np.int32).reshape(2, 300)
    output = kernel(data, indices, updates, 0, reduction="sum")
    assert output[4].tolist() == (updates[0] + updates[1]).tolist()
    assert_identical(output, reference(data, indices, updates, 0, reduction="sum"))


def test_non_contiguous_inputs():
    rng = np.random.default_rng(4)
    data = rng.standard_normal((6, 8))[:, ::2]
    indices = rng.integers(-6, 6, (10, 8))[::2, ::2]
    updates = np.asfortranarray(rng.standard_normal((5, 4)))
    for reduction in REDUCTIONS:
        assert_identical(kernel(data, indices, updates, 0, reduction=reduction),
                         reference(data, indices, updates, 0, reduction=reduction))


def test_empty_indices_return_a_copy_of_data():
    data = np.arange(6, dtype=np.int16).reshape(2, 3)
    output = kernel(data, np.zeros((0, 3), np.int64), np.zeros((0, 3), np.int16), 0, reduction="sum")
    assert_identical(output, data)
    assert output is not data


@pytest.mark.parametrize("bad, match", [
    (dict(indices=np.array([4])), r"index 4 is outside \[-4, 3\]"),
    (dict(indices=np.array([-5])), r"index -5 is outside \[-4, 3\]"),
    (dict(axis=np.array([1])), r"axis=1 is outside \[-1, 0\]"),
    (dict(indices=np.array([[0]]), updates=np.array([[1.0]])), "rank"),
    (dict(updates=np.array([1.0, 2.0])), "shape"),
    (dict(indices=np.array([0.0])), "integer"),
])
def test_bad_inputs_raise_op_error(bad, match):
    args = dict(data=np.zeros(4), indices=np.array([0]), updates=np.array([1.0]), axis=np.array([0]))
    args.update(bad)
    with pytest.raises(OpError, match=match):
        kernel(args["data"], args["indices"], args["updates"], args["axis"])


def test_mean_on_bool_raises_op_error():
    with pytest.raises(OpError, match="mean"):
        kernel(np.zeros(2, bool), np.array([0]), np.array([True]), 0, reduction="mean")


def test_through_ort_with_every_index_and_axis_dtype():
    from onnx import TensorProto, helper

    import ortops
    from ortops.ops.scatter_elements_update.builder import scatter_elements_update_model

    data = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    updates = np.array([[10, 20], [30, 40]], np.int32)
    for index_dtype in INDEX_DTYPES:
        axis_dtype = np.int8 if index_dtype == np.uint64 else index_dtype
        model = scatter_elements_update_model(TensorProto.INT32, 2, reduction="sum",
                                              indices_type=helper.np_dtype_to_tensor_dtype(np.dtype(index_dtype)),
                                              axis_type=helper.np_dtype_to_tensor_dtype(np.dtype(axis_dtype)),
                                              axis_shape=())
        session = ortops.InferenceSession(model)
        output, = session.run(None, {"data": data, "indices": np.array([[2, 2], [0, 1]], index_dtype),
                                     "updates": updates, "axis": np.array(1, axis_dtype)})
        assert output.tolist() == [[1, 2, 33], [34, 45, 6]], index_dtype
