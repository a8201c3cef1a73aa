"""Tests for ortops.reference.scatter_elements_update (OpenVINO ScatterElementsUpdate-12).

Expected values come from the spec's six examples, hand-computed cases, or ``_oracle``: an
element-by-element loop over Python numbers written here, independent of the function under test.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from conftest import assert_identical
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ortops.errors import OpError
from ortops.reference import scatter_elements_update

FLOAT_DTYPES = [np.float32, np.float64]
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
ALL_DTYPES = FLOAT_DTYPES + INT_DTYPES + [np.bool_]
REDUCTIONS = ["none", "sum", "prod", "min", "max", "mean"]


# ----------------------------------------------------------------------------- oracle


def _to_dtype(value, dtype):
    """A Python number as one element of ``dtype``; integers wrap modulo 2**bits."""
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        unsigned = np.array(value % 2 ** (8 * dtype.itemsize), dtype=f"u{dtype.itemsize}")
        return unsigned.view(dtype)[()]
    with np.errstate(over="ignore"):
        return np.array(value, dtype=np.float64).astype(dtype)[()] if dtype.kind == "f" else np.bool_(value)


def _identity(reduction, dtype):
    """Where a target starts when use_init_val=0."""
    if dtype.kind == "b":
        return {"sum": False, "max": False, "prod": True, "min": True}[reduction]
    if dtype.kind == "f":
        return {"sum": 0.0, "mean": 0.0, "prod": 1.0, "min": math.inf, "max": -math.inf}[reduction]
    info = np.iinfo(dtype)
    return {"sum": 0, "mean": 0, "prod": 1, "min": int(info.max), "max": int(info.min)}[reduction]


def _combine(reduction, kind, start, values, count):
    """The reduction of ``start`` and ``values`` (Python numbers); mean divides by ``count``."""
    operands = [start] + values
    if reduction == "mean":
        if kind in "iu":
            return math.floor(Fraction(sum(operands), count))
        total = operands[0]
        for value in values:
            total += value
        return total / count
    if kind == "b":
        return {"sum": any, "max": any, "prod": all, "min": all}[reduction](operands)
    if kind == "f" and reduction in ("min", "max") and any(math.isnan(v) for v in operands):
        return math.nan
    if reduction == "min":
        return min(operands)  # the first of equal operands
    if reduction == "max":
        return max(operands)
    result = operands[0]
    for value in values:
        result = result + value if reduction == "sum" else result * value
    return result


def _oracle(data, indices, updates, axis, reduction="none", use_init_val=1):
    """Element by element: collect each target's updates, then reduce them."""
    axis %= data.ndim
    dim = data.shape[axis]
    received = {}
    for position in itertools.product(*(range(n) for n in indices.shape)):
        target = list(position)
        target[axis] = int(indices[position]) % dim
        received.setdefault(tuple(target), []).append(updates[position].item())
    expected = data.copy()
    for target, values in received.items():
        if reduction == "none":
            result = values[-1]
        elif use_init_val:
            result = _combine(reduction, data.dtype.kind, data[target].item(), values, len(values) + 1)
        else:
            result = _combine(reduction, data.dtype.kind, _identity(reduction, data.dtype), values, len(values))
        expected[target] = _to_dtype(result, data.dtype)
    return expected


# ----------------------------------------------------------------------------- the spec's examples


def test_scatter_elements_update_seed_example_1():
    data = np.array([2, 3, 4, 6], np.float32)
    indices = np.array([1, 0, 0, -2, -1, 2], np.int32)
    updates = np.array([10, 20, 30, 40, 70, 60], np.float32)
    output = scatter_elements_update(data, indices, updates, np.array([0]), reduction="sum", use_init_val=1)
    assert_identical(output, np.array([52, 13, 104, 76], np.float32))


def test_scatter_elements_update_seed_example_2():
    data = np.array([2, 3, 4, 6], np.float32)
    indices = np.array([1, 0, 0, 2, 3, 2], np.int64)
    updates = np.array([10, 20, 30, 40, 70, 60], np.float32)
    output = scatter_elements_update(data, indices, updates, np.array([0]), reduction="sum", use_init_val=0)
    assert_identical(output, np.array([50, 10, 100, 70], np.float32))


def test_scatter_elements_update_seed_example_3():
    data = np.zeros((3, 4), np.int32)
    indices = np.array([[1, 2], [0, 3]])
    updates = np.array([[11, 12], [13, 14]], np.int32)
    output = scatter_elements_update(data, indices, updates, np.array([1]), reduction="none", use_init_val=1)
    assert_identical(output, np.array([[0, 11, 12, 0], [13, 0, 0, 14], [0, 0, 0, 0]], np.int32))


def test_scatter_elements_update_seed_example_4():
    data = np.ones((3, 4), np.int32)
    indices = np.array([[1, 1], [0, 3]])
    updates = np.array([[11, 12], [13, 14]], np.int32)
    output = scatter_elements_update(data, indices, updates, np.array([1]), reduction="sum", use_init_val=1)
    assert_identical(output, np.array([[1, 24, 1, 1], [14, 1, 1, 15], [1, 1, 1, 1]], np.int32))


def test_scatter_elements_update_seed_example_5():
    data = np.full((3, 4), 2, np.int32)
    indices = np.array([[1, 1], [0, 3]])
    updates = np.array([[11, 12], [13, 14]], np.int32)
    output = scatter_elements_update(data, indices, updates, np.array([1]), reduction="prod", use_init_val=1)
    assert_identical(output, np.array([[2, 264, 2, 2], [26, 2, 2, 28], [2, 2, 2, 2]], np.int32))


def test_scatter_elements_update_seed_example_6_big_shapes():
    # Shapes from the spec; values seeded. Defaults: reduction none, use_init_val true.
    rng = np.random.default_rng(6)
    data = rng.standard_normal((1000, 256, 7, 7), dtype=np.float32)
    indices = rng.integers(-1000, 1000, (125, 20, 7, 6), dtype=np.int32)
    updates = rng.standard_normal((125, 20, 7, 6), dtype=np.float32)
    data_before = data.copy()
    output = scatter_elements_update(data, indices, updates, np.array([0]))
    assert output.shape == (1000, 256, 7, 7)
    assert output.dtype == np.float32
    np.testing.assert_array_equal(data, data_before)

    # A hand loop over all updates: the last one in row-major order wins.
    last = {}
    for (i, j, k, m), index in np.ndenumerate(indices):
        last[(index % 1000, j, k, m)] = updates[i, j, k, m]
    for target, value in itertools.islice(last.items(), 0, None, 997):
        assert output[target] == value
    untouched = [(t, j, k, 6) for t in (0, 500, 999) for j in (0, 19, 20, 255) for k in (0, 6)]
    untouched += [(t, 20, 3, 2) for t in range(0, 1000, 111)]
    for target in untouched:
        assert target not in last
        assert output[target] == data[target]
    expected = data.copy()
    for target, value in last.items():
        expected[target] = value
    assert_identical(output, expected)


# ----------------------------------------------------------------------------- hand-computed cases


def test_scatter_elements_update_none_last_update_wins():
    data = np.zeros((2, 3), np.int32)
    # axis 0: row-major order visits [0,0] then [1,0]; both go to output[0,0].
    output = scatter_elements_update(data, np.array([[0], [0]]), np.array([[1], [2]], np.int32), 0)
    np.testing.assert_array_equal(output, [[2, 0, 0], [0, 0, 0]])
    # axis 1: duplicates within a row, and a negative index for the same target.
    output = scatter_elements_update(data, np.array([[2, -1, 0]]), np.array([[5, 6, 7]], np.int32), 1)
    np.testing.assert_array_equal(output, [[7, 0, 6], [0, 0, 0]])


@pytest.mark.parametrize("use_init_val", [0, 1])
def test_scatter_elements_update_none_ignores_use_init_val(use_init_val):
    data = np.array([1.5, 2.5, 3.5])
    output = scatter_elements_update(data, np.array([2]), np.array([-1.0]), 0, use_init_val=use_init_val)
    assert_identical(output, np.array([1.5, 2.5, -1.0]))


@pytest.mark.parametrize(
    "reduction, use_init_val, expected",
    [
        ("sum", 1, [10 + 1 + 2, 20, 30 + 4]),
        ("sum", 0, [1 + 2, 20, 4]),
        ("prod", 1, [10 * 1 * 2, 20, 30 * 4]),
        ("prod", 0, [1 * 2, 20, 4]),
        ("min", 1, [1, 20, 4]),
        ("min", 0, [1, 20, 4]),
        ("max", 1, [10, 20, 30]),
        ("max", 0, [2, 20, 4]),
        ("mean", 1, [(10 + 1 + 2) // 3, 20, (30 + 4) // 2]),
        ("mean", 0, [(1 + 2) // 2, 20, 4]),
        ("none", 1, [2, 20, 4]),
    ],
)
def test_scatter_elements_update_reductions_1d(reduction, use_init_val, expected):
    data = np.array([10, 20, 30], np.int64)
    output = scatter_elements_update(
        data, np.array([0, 2, 0]), np.array([1, 4, 2], np.int64), 0, reduction=reduction, use_init_val=use_init_val
    )
    np.testing.assert_array_equal(output, expected)


@pytest.mark.parametrize(
    "dtype, reduction, data, updates, expected",
    [
        (np.int8, "sum", 100, [100], -56),
        (np.int8, "sum", -128, [-1], 127),
        (np.int8, "prod", -128, [-1], -128),
        (np.uint8, "prod", 16, [16], 0),
        (np.uint8, "sum", 255, [1, 1], 1),
        (np.int16, "prod", 300, [300], (90000 + 2**15) % 2**16 - 2**15),
        (np.uint32, "sum", 2**32 - 1, [2**32 - 1], 2**32 - 2),
        (np.int64, "sum", 2**63 - 1, [1], -(2**63)),
        (np.int64, "prod", 2**62, [4], 0),
        (np.uint64, "sum", 2**64 - 1, [2], 1),
        (np.uint64, "prod", 2**63 + 1, [3], (3 * (2**63 + 1)) % 2**64),
    ],
)
def test_scatter_elements_update_integer_wraps(dtype, reduction, data, updates, expected):
    output = scatter_elements_update(
        np.array([data], dtype), np.zeros(len(updates), np.int8), np.array(updates, dtype), 0, reduction=reduction
    )
    assert output.dtype == dtype
    assert output.tolist() == [expected]


@pytest.mark.parametrize(
    "dtype, data, updates, use_init_val, expected",
    [
        (np.int32, 0, [-3, -4], 0, -4),  # floor(-3.5); the OpenVINO CPU plugin gives -3
        (np.int32, -2, [1], 1, -1),  # floor(-0.5); the OpenVINO CPU plugin gives 0
        (np.int8, 0, [-1, -1, 1], 0, -1),  # floor(-1/3)
        (np.int8, 0, [1, 1, -1], 0, 0),  # floor(1/3)
        (np.uint8, 1, [253, 252], 1, 168),  # exact; uint8 accumulation would give 83
        (np.int64, 2**63 - 1, [2**63 - 1, 2**63 - 2], 1, 2**63 - 2),  # floor((3 * 2**63 - 4) / 3)
        (np.int64, -(2**63), [-(2**63)], 1, -(2**63)),
        (np.uint64, 2**64 - 1, [2**64 - 1, 2**64 - 2], 1, 2**64 - 2),  # floor(2**64 - 4/3)
    ],
)
def test_scatter_elements_update_integer_mean_is_exact_floor(dtype, data, updates, use_init_val, expected):
    output = scatter_elements_update(
        np.array([data, 7], dtype), np.zeros(len(updates), np.int32), np.array(updates, dtype), 0,
        reduction="mean", use_init_val=use_init_val,
    )
    assert output.tolist() == [expected, 7]


def test_scatter_elements_update_float_mean():
    data = np.array([1.0, 2.0], np.float32)
    output = scatter_elements_update(data, np.array([0, 0]), np.array([2.0, 4.0], np.float32), 0, reduction="mean")
    assert_identical(output, np.array([7 / 3, 2.0], np.float32))
    output = scatter_elements_update(
        data, np.array([0, 0]), np.array([-3.0, -4.0], np.float32), 0, reduction="mean", use_init_val=0
    )
    assert_identical(output, np.array([-3.5, 2.0], np.float32))


def test_scatter_elements_update_float32_accumulates_in_float64():
    # float32 step by step: 1 + 2**24 -> 2**24, then +1 twice -> 2**24. float64: 2**24 + 3,
    # rounded once to float32 -> 2**24 + 4.
    data = np.array([1.0], np.float32)
    updates = np.array([2**24, 1, 1], np.float32)
    output = scatter_elements_update(data, np.zeros(3, np.int64), updates, 0, reduction="sum")
    assert output.tolist() == [2**24 + 4]
    # No overflow in the middle: 3e38 + 3e38 - 3e38 is finite in float64.
    big = np.float32(3e38)
    updates = np.array([big, -big], np.float32)
    output = scatter_elements_update(np.array([big]), np.zeros(2, np.int64), updates, 0, reduction="sum")
    assert output.tolist() == [float(big)]
    # Rounded once at the end: overflow to +inf there.
    output = scatter_elements_update(np.array([big]), np.zeros(1, np.int64), np.array([big]), 0, reduction="sum")
    assert output.tolist() == [math.inf]
    output = scatter_elements_update(np.array([big]), np.zeros(1, np.int64), np.array([-big]), 0, reduction="prod")
    assert output.tolist() == [-math.inf]


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_scatter_elements_update_float_special_values(dtype):
    nan, inf = np.nan, np.inf
    data = np.array([1.0, 1.0, inf, 0.0, -0.0, 5.0], dtype)
    indices = np.array([0, 1, 2, 3, 4, 5])
    cases = {
        "min": ([nan, -inf, -inf, -0.0, 0.0, 5.0], [nan, -inf, -inf, 0.0, -0.0, 5.0]),
        "max": ([nan, -inf, -inf, -0.0, 0.0, 5.0], [nan, 1.0, inf, 0.0, -0.0, 5.0]),
        "sum": ([nan, -inf, -inf, -0.0, 0.0, 5.0], [nan, -inf, nan, 0.0, 0.0, 10.0]),
        "prod": ([nan, -inf, 0.0, -0.0, 0.0, 5.0], [nan, -inf, nan, -0.0, -0.0, 25.0]),
    }
    for reduction, (updates, expected) in cases.items():
        output = scatter_elements_update(data, indices, np.array(updates, dtype), 0, reduction=reduction)
        assert_identical(output, np.array(expected, dtype))


@pytest.mark.parametrize(
    "reduction, use_init_val, expected",
    [
        ("sum", 1, [True, True, False, True]),
        ("sum", 0, [True, False, False, True]),
        ("max", 1, [True, True, False, True]),
        ("max", 0, [True, False, False, True]),
        ("prod", 1, [False, False, False, True]),
        ("prod", 0, [False, False, False, True]),
        ("min", 1, [False, False, False, True]),
        ("min", 0, [False, False, False, True]),
        ("none", 1, [False, False, False, True]),
    ],
)
def test_scatter_elements_update_bool(reduction, use_init_val, expected):
    data = np.array([True, True, False, True])
    # Target 0 gets (True, False); target 1 gets (False); target 2 nothing; target 3 (True).
    indices = np.array([0, 0, 1, 3])
    updates = np.array([True, False, False, True])
    output = scatter_elements_update(data, indices, updates, 0, reduction=reduction, use_init_val=use_init_val)
    assert output.dtype == np.bool_
    np.testing.assert_array_equal(output, expected)


def test_scatter_elements_update_use_init_val_0_keeps_untouched_positions():
    data = np.array([[5, 5, 5], [5, 5, 5]], np.int16)
    indices = np.array([[1, 1]])
    updates = np.array([[7, 9]], np.int16)
    for reduction in ["min", "max", "sum", "prod", "mean"]:
        output = scatter_elements_update(data, indices, updates, 0, reduction=reduction, use_init_val=0)
        np.testing.assert_array_equal(output, [[5, 5, 5], [7, 9, 5]])
    output = scatter_elements_update(data, indices, updates, 0, reduction="min", use_init_val=1)
    np.testing.assert_array_equal(output, [[5, 5, 5], [5, 5, 5]])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize(
    "reduction, updates, expected",
    [
        ("sum", [-0.0], 0.0),  # starts from +0.0, as OpenVINO's T{0}
        ("sum", [-0.0, -0.0], 0.0),
        ("mean", [-0.0], 0.0),
        ("prod", [-0.0], -0.0),
        ("min", [np.inf], np.inf),  # starts from +inf; OpenVINO's reference gives FLT_MAX
        ("min", [np.nan, 1.0], np.nan),
        ("max", [-np.inf], -np.inf),
        ("max", [0.0, -0.0], 0.0),  # of equal operands the earlier is kept
        ("max", [-0.0, 0.0], -0.0),
    ],
)
def test_scatter_elements_update_float_identities(dtype, reduction, updates, expected):
    data = np.array([7.0, 7.0], dtype)
    output = scatter_elements_update(
        data, np.zeros(len(updates), np.int32), np.array(updates, dtype), 0, reduction=reduction, use_init_val=0
    )
    assert_identical(output, np.array([expected, 7.0], dtype))


@pytest.mark.parametrize("axis", [1, -1, np.array(1), np.array([-1]), np.array(1, np.uint8), np.array([1], np.int64)])
def test_scatter_elements_update_axis_forms(axis):
    data = np.zeros((2, 3), np.float64)
    output = scatter_elements_update(data, np.array([[2], [0]]), np.array([[1.0], [2.0]]), axis)
    assert_identical(output, np.array([[0, 0, 1.0], [2.0, 0, 0]]))


def test_scatter_elements_update_indices_longer_than_data_along_axis():
    data = np.zeros((2, 2), np.int32)
    indices = np.array([[0, 1], [1, 0], [1, 1], [-2, -1]])
    updates = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], np.int32)
    output = scatter_elements_update(data, indices, updates, 0, reduction="sum")
    # column 0: row 0 <- 1 + 7, row 1 <- 3 + 5; column 1: row 1 <- 2 + 6 + 8, row 0 <- 4.
    np.testing.assert_array_equal(output, [[8, 4], [8, 16]])


def test_scatter_elements_update_empty_indices():
    data = np.arange(6, dtype=np.uint16).reshape(2, 3)
    output = scatter_elements_update(data, np.zeros((0, 3), np.int32), np.zeros((0, 3), np.uint16), 0, reduction="sum")
    np.testing.assert_array_equal(output, data)
    assert output is not data


def test_scatter_elements_update_does_not_modify_inputs():
    data = np.array([1, 2, 3], np.int32)
    indices = np.array([0, -1])
    updates = np.array([5, 6], np.int32)
    copies = [a.copy() for a in (data, indices, updates)]
    output = scatter_elements_update(data, indices, updates, 0, reduction="sum")
    np.testing.assert_array_equal(output, [6, 2, 9])
    for array, copy in zip((data, indices, updates), copies):
        np.testing.assert_array_equal(array, copy)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("index_dtype", [np.int8, np.uint8, np.int32, np.uint64])
def test_scatter_elements_update_every_dtype(dtype, index_dtype):
    data = np.zeros((2, 2), dtype)
    indices = np.array([[1, 0]], index_dtype)
    updates = np.ones((1, 2), dtype)
    for reduction in ["none", "sum", "max"]:
        output = scatter_elements_update(data, indices, updates, 0, reduction=reduction)
        assert output.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(output, np.array([[0, 1], [1, 0]], dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_scatter_elements_update_integer_extremes_exact(dtype):
    info = np.iinfo(dtype)
    high, low = int(info.max), int(info.min)
    data = np.array([high, low, high], dtype)
    updates = np.array([high - 1, low + 1, high], dtype)
    assert scatter_elements_update(data, [0, 1, 2], updates, 0, reduction="min").tolist() == [high - 1, low, high]
    assert scatter_elements_update(data, [0, 1, 2], updates, 0, reduction="max").tolist() == [high, low + 1, high]
    assert scatter_elements_update(data, [0, 1, 2], updates, 0, reduction="none").tolist() == [high - 1, low + 1, high]
    assert scatter_elements_update(data, [0, 1, 2], updates, 0, reduction="mean").tolist() == [
        (2 * high - 1) // 2, (2 * low + 1) // 2, high
    ]


# ----------------------------------------------------------------------------- errors


def _inputs():
    return np.zeros((3, 4), np.float32), np.array([[0, 1]]), np.array([[1.0, 2.0]], np.float32)


@pytest.mark.parametrize(
    "index, match",
    [
        (3, r"index 3 is outside \[-3, 2\] for axis 0"),
        (-4, r"index -4 is outside \[-3, 2\]"),
        (100, "index 100"),
    ],
)
def test_scatter_elements_update_index_out_of_range(index, match):
    data, _, updates = _inputs()
    with pytest.raises(OpError, match=match):
        scatter_elements_update(data, np.array([[0, index]]), updates, 0)


@pytest.mark.parametrize(
    "indices, updates, match",
    [
        (np.array([[0, 1]]), np.array([[1.0]], np.float32), "updates has shape"),
        (np.array([0, 1]), np.array([1.0, 2.0], np.float32), "indices has rank 1"),
        (np.zeros((1, 5), np.int64), np.zeros((1, 5), np.float32), r"indices.shape\[1\]=5 exceeds data.shape\[1\]=4"),
        (np.array([[0.0, 1.0]]), np.array([[1.0, 2.0]], np.float32), "'indices' has dtype float64"),
        (np.array([[0, 1]]), np.array([[1, 2]], np.int32), "'updates' has dtype int32"),
    ],
)
def test_scatter_elements_update_bad_shapes_and_types(indices, updates, match):
    data, _, _ = _inputs()
    with pytest.raises(OpError, match=match):
        scatter_elements_update(data, indices, updates, 0)


@pytest.mark.parametrize(
    "axis, match",
    [
        (2, r"axis=2 is outside \[-2, 1\]"),
        (-3, r"axis=-3 is outside \[-2, 1\]"),
        (np.array(0.0), "'axis' has dtype float64"),
        (np.array([0, 1]), "'axis' has shape"),
    ],
)
def test_scatter_elements_update_bad_axis(axis, match):
    data, indices, updates = _inputs()
    with pytest.raises(OpError, match=match):
        scatter_elements_update(data, indices, updates, axis)


@pytest.mark.parametrize(
    "attrs, match",
    [
        ({"reduction": "add"}, "reduction='add' is invalid"),
        ({"reduction": ""}, "reduction='' is invalid"),
        ({"use_init_val": 2}, "use_init_val=2"),
        ({"use_init_val": "true"}, "use_init_val='true' is not an integer"),
    ],
)
def test_scatter_elements_update_bad_attribute(attrs, match):
    data, indices, updates = _inputs()
    with pytest.raises(OpError, match=match):
        scatter_elements_update(data, indices, updates, 0, **attrs)


def test_scatter_elements_update_mean_on_bool():
    with pytest.raises(OpError, match="'mean' is not defined for bool"):
        scatter_elements_update(np.array([True, False]), np.array([0]), np.array([True]), 0, reduction="mean")


@pytest.mark.parametrize("dtype", [np.float16, np.complex64, object])
def test_scatter_elements_update_unsupported_dtype(dtype):
    with pytest.raises(OpError, match="input 'data' has dtype"):
        scatter_elements_update(np.zeros(2, dtype), np.array([0]), np.zeros(1, dtype), 0)


def test_scatter_elements_update_rank_0_data():
    with pytest.raises(OpError, match="axis=0"):
        scatter_elements_update(np.float32(1), np.array(0), np.float32(2), 0)


# ----------------------------------------------------------------------------- properties


def _elements(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind == "f":
        # Small values keep float64 sums exact, so the oracle need not match the summation order.
        tiny = st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, 1.0, -2.0, 3.0])
        return st.one_of(tiny, st.integers(-100, 100).map(float))
    info = np.iinfo(dtype)
    return st.one_of(
        st.integers(max(int(info.min), -3), 3),
        st.integers(int(info.max) - 3, int(info.max)),
        st.integers(int(info.min), int(info.min) + 3),
        hnp.from_dtype(dtype),
    )


@st.composite
def _scatter_cases(draw):
    dtype = np.dtype(draw(st.sampled_from(ALL_DTYPES)))
    data_shape = draw(hnp.array_shapes(min_dims=1, max_dims=5, min_side=1, max_side=3))
    axis = draw(st.integers(-len(data_shape), len(data_shape) - 1))
    index_shape = [draw(st.integers(0, n)) for n in data_shape]
    index_shape[axis] = draw(st.integers(0, 2 * data_shape[axis] + 1))
    dim = data_shape[axis]
    index_dtype = draw(st.sampled_from([np.int8, np.int32, np.int64]))
    indices = draw(hnp.arrays(index_dtype, index_shape, elements=st.integers(-dim, dim - 1)))
    data = draw(hnp.arrays(dtype, data_shape, elements=_elements(dtype)))
    updates = draw(hnp.arrays(dtype, index_shape, elements=_elements(dtype)))
    reductions = [r for r in REDUCTIONS if not (r == "mean" and dtype == np.bool_)]
    reduction = draw(st.sampled_from(reductions))
    return data, indices, updates, axis, reduction


@given(case=_scatter_cases(), use_init_val=st.sampled_from([0, 1]))
def test_scatter_elements_update_matches_element_loop(case, use_init_val):
    data, indices, updates, axis, reduction = case
    copies = [a.copy() for a in (data, indices, updates)]
    output = scatter_elements_update(data, indices, updates, np.array(axis), reduction=reduction,
                                     use_init_val=use_init_val)
    assert_identical(output, _oracle(data, indices, updates, axis, reduction, use_init_val))
    for array, copy in zip((data, indices, updates), copies):
        assert_identical(array, copy)
