"""Tests for ortops.reference.top_k (OpenVINO TopK-11).

Expected values come from the spec's example, hand-computed cases, or ``_oracle``: a per-slice
Python ``sorted`` over exact Python numbers, independent of the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ortops.errors import OpError
from ortops.reference import TopKResult, top_k

from conftest import assert_identical
from strategies import FLOAT_DTYPES, NUMERIC_DTYPES, top_k_inputs

ALL_DTYPES = NUMERIC_DTYPES
MODES = ["max", "min"]
SORTS = ["value", "index", "none"]


# ----------------------------------------------------------------------------- oracle


def _order_key(value):
    """ortops' total order on Python numbers: NaN above +inf, NaNs equal, -0.0 == +0.0."""
    if isinstance(value, float) and math.isnan(value):
        return (1, 0)
    return (0, value)


def _oracle(data: np.ndarray, k: int, axis: int, mode: str, sort: str):
    """TopK slice by slice with Python's stable ``sorted`` over exact Python numbers."""
    moved = np.moveaxis(data, axis, -1)
    values = np.empty(moved.shape[:-1] + (k,), data.dtype)
    indices = np.empty(moved.shape[:-1] + (k,), np.int64)
    for outer in np.ndindex(moved.shape[:-1]):
        row = moved[outer].tolist()  # exact: Python ints for every integer type
        # sorted is stable, also with reverse=True: equal values keep the lower index first.
        by_value = sorted(range(len(row)), key=lambda i: _order_key(row[i]), reverse=(mode == "max"))
        chosen = by_value[:k]
        if sort == "index":
            chosen = sorted(chosen)
        indices[outer] = chosen
        values[outer] = moved[outer][chosen]
    return np.moveaxis(values, -1, axis), np.moveaxis(indices, -1, axis)


# ----------------------------------------------------------------------------- the spec's example


@pytest.mark.parametrize("stable", [0, 1])
def test_top_k_seed_example(stable):
    # OpenVINO's TopK-11 specification, example 2: with stable=true the single correct answer is [5,3,1,2] / [0,1,2,3].
    result = top_k(np.array([5, 3, 1, 2, 5, 5], np.int32), np.array(4), axis=0, mode="min", sort="index", stable=stable)
    assert isinstance(result, TopKResult)
    np.testing.assert_array_equal(result.values, [5, 3, 1, 2])
    np.testing.assert_array_equal(result.indices, [0, 1, 2, 3])
    assert result.values.dtype == np.int32
    assert result.indices.dtype == np.int32


def test_top_k_seed_example_sort_value():
    result = top_k(np.array([5, 3, 1, 2, 5, 5]), 4, axis=0, mode="min", sort="value", stable=1)
    np.testing.assert_array_equal(result.values, [1, 2, 3, 5])
    np.testing.assert_array_equal(result.indices, [2, 3, 1, 0])


def test_top_k_seed_layer_shape():
    # The spec's layer example: [1, 3, 224, 224], axis=3, k=10, i64 -> [1, 3, 224, 10].
    data = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    result = top_k(data, np.array([10]), axis=3, mode="max", sort="value", stable=1, index_element_type="i64")
    assert result.values.shape == result.indices.shape == (1, 3, 224, 10)
    assert result.indices.dtype == np.int64
    expected_indices = np.argsort(-data, axis=3, kind="stable")[..., :10]
    np.testing.assert_array_equal(result.indices, expected_indices)


# ----------------------------------------------------------------------------- hand-computed cases


@pytest.mark.parametrize(
    "mode, sort, values, indices",
    [
        ("max", "value", [9, 7, 7, 7], [4, 1, 2, 5]),
        ("max", "none", [9, 7, 7, 7], [4, 1, 2, 5]),
        ("max", "index", [7, 7, 9, 7], [1, 2, 4, 5]),
        ("min", "value", [1, 1, 3, 7], [0, 3, 6, 1]),
        ("min", "none", [1, 1, 3, 7], [0, 3, 6, 1]),
        ("min", "index", [1, 7, 1, 3], [0, 1, 3, 6]),
    ],
)
@pytest.mark.parametrize("stable", [0, 1])
def test_top_k_ties_keep_lower_index(mode, sort, values, indices, stable):
    data = np.array([1, 7, 7, 1, 9, 7, 3], np.int16)
    result = top_k(data, 4, axis=0, mode=mode, sort=sort, stable=stable)
    np.testing.assert_array_equal(result.values, values)
    np.testing.assert_array_equal(result.indices, indices)


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_top_k_nan_is_largest(dtype):
    nan, inf = np.nan, np.inf
    data = np.array([1, nan, 3, -inf, inf, nan, 2], dtype)
    result = top_k(data, 4, axis=0, mode="max", sort="value")
    assert_identical(result.values, np.array([nan, nan, inf, 3], dtype), bits=True)
    np.testing.assert_array_equal(result.indices, [1, 5, 4, 2])

    result = top_k(data, 7, axis=0, mode="min", sort="value")
    assert_identical(result.values, np.array([-inf, 1, 2, 3, inf, nan, nan], dtype), bits=True)
    np.testing.assert_array_equal(result.indices, [3, 0, 6, 2, 4, 1, 5])

    result = top_k(data, 2, axis=0, mode="min", sort="index")
    np.testing.assert_array_equal(result.indices, [0, 3])


def test_top_k_nan_sign_does_not_matter():
    negative_nan = -np.float64(np.nan)
    assert np.signbit(negative_nan)
    data = np.array([negative_nan, np.inf, np.nan, 5.0])
    result = top_k(data, 3, axis=0, mode="max", sort="value")
    np.testing.assert_array_equal(result.indices, [0, 2, 1])
    result = top_k(data, 1, axis=0, mode="min", sort="value")
    np.testing.assert_array_equal(result.indices, [3])


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_top_k_signed_zeros_tie(dtype):
    data = np.array([0.0, -0.0, 0.0, -1.0], dtype)
    result = top_k(data, 3, axis=0, mode="max", sort="value")
    np.testing.assert_array_equal(result.indices, [0, 1, 2])
    np.testing.assert_array_equal(np.signbit(result.values), [False, True, False])

    data = np.array([-0.0, 0.0], dtype)
    for mode in MODES:
        result = top_k(data, 1, axis=0, mode=mode, sort="value")
        np.testing.assert_array_equal(result.indices, [0])
        assert np.signbit(result.values[0])


def test_top_k_uint64_exact_near_2_64():
    # 2**64-2 and 2**64-1 are the same float64; a float-based comparison would tie them.
    top = 2**64 - 1
    data = np.array([top - 1, 3, top, top - 2, 0], np.uint64)
    result = top_k(data, 3, axis=0, mode="max", sort="value")
    np.testing.assert_array_equal(result.indices, [2, 0, 3])
    assert result.values.tolist() == [top, top - 1, top - 2]
    result = top_k(data, 2, axis=0, mode="min", sort="value")
    assert result.values.tolist() == [0, 3]


def test_top_k_int64_exact_above_2_53():
    base = 2**62  # neighbours 2**62 + 1, + 2 round to the same float64
    data = np.array([base + 1, -(2**63), base + 2, 2**63 - 1, base], np.int64)
    result = top_k(data, 4, axis=0, mode="max", sort="value")
    np.testing.assert_array_equal(result.indices, [3, 2, 0, 4])
    assert result.values.tolist() == [2**63 - 1, base + 2, base + 1, base]
    result = top_k(data, 2, axis=0, mode="min", sort="index")
    assert result.values.tolist() == [-(2**63), base]
    np.testing.assert_array_equal(result.indices, [1, 4])


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("index_element_type, index_dtype", [("i32", np.int32), ("i64", np.int64)])
def test_top_k_every_dtype(dtype, index_element_type, index_dtype):
    info = np.iinfo(dtype) if np.issubdtype(dtype, np.integer) else np.finfo(dtype)
    high, low = info.max, info.min
    data = np.array([[3, high, 1, low], [low, low, 3, 3]], dtype)
    result = top_k(data, 2, axis=1, mode="max", sort="value", index_element_type=index_element_type)
    assert result.values.dtype == np.dtype(dtype)
    assert result.indices.dtype == index_dtype
    np.testing.assert_array_equal(result.indices, [[1, 0], [2, 3]])
    np.testing.assert_array_equal(result.values, np.array([[high, 3], [3, 3]], dtype))
    result = top_k(data, 2, axis=1, mode="min", sort="value", index_element_type=index_element_type)
    np.testing.assert_array_equal(result.indices, [[3, 2], [0, 1]])


@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2, -3])
def test_top_k_negative_axis_is_the_same_axis(axis):
    data = np.random.default_rng(1).integers(0, 4, (3, 4, 5)).astype(np.int32)
    result = top_k(data, 2, axis=axis, mode="max", sort="value")
    normalised = axis % 3
    expected_shape = list(data.shape)
    expected_shape[normalised] = 2
    assert result.values.shape == tuple(expected_shape)
    same = top_k(data, 2, axis=normalised, mode="max", sort="value")
    np.testing.assert_array_equal(result.values, same.values)
    np.testing.assert_array_equal(result.indices, same.indices)
    expected_values, expected_indices = _oracle(data, 2, normalised, "max", "value")
    np.testing.assert_array_equal(result.values, expected_values)
    np.testing.assert_array_equal(result.indices, expected_indices)


@pytest.mark.parametrize("k", [5, np.array(5), np.array([5]), np.array(5, np.uint8), np.array([5], np.int64)])
def test_top_k_k_forms(k):
    data = np.arange(40, dtype=np.float32).reshape(5, 8)
    result = top_k(data, k, axis=1, mode="max", sort="value")
    np.testing.assert_array_equal(result.indices, np.tile([7, 6, 5, 4, 3], (5, 1)))


def test_top_k_k_equal_to_axis_length_sorts_whole_slice():
    data = np.array([[2.0, -1.0, 2.0], [0.5, 0.5, -0.5]])
    result = top_k(data, 3, axis=1, mode="min", sort="value")
    np.testing.assert_array_equal(result.indices, [[1, 0, 2], [2, 0, 1]])


def test_top_k_empty_other_axis():
    data = np.zeros((0, 4), np.float32)
    result = top_k(data, 2, axis=1, mode="max", sort="value")
    assert result.values.shape == result.indices.shape == (0, 2)


def test_top_k_does_not_modify_input():
    data = np.array([[3, 1, 2], [0, 5, 4]], np.int8)
    before = data.copy()
    top_k(data, 2, axis=1, mode="min", sort="index")
    np.testing.assert_array_equal(data, before)


def test_top_k_large_vocabulary_slice():
    # The OCR use: [40, 6625] scores, top-5 per time step.
    data = np.random.default_rng(2).random((40, 6625), dtype=np.float32)
    result = top_k(data, 5, axis=1, mode="max", sort="value")
    expected = np.argsort(-data.astype(np.float64), axis=1, kind="stable")[:, :5]
    np.testing.assert_array_equal(result.indices, expected)
    np.testing.assert_array_equal(result.values, np.take_along_axis(data, expected, axis=1))


# ----------------------------------------------------------------------------- errors


def _data():
    return np.arange(12, dtype=np.float32).reshape(3, 4)


@pytest.mark.parametrize(
    "k, match",
    [
        (0, r"k=0 is outside \[1, 4\] for axis 1"),
        (5, r"k=5 is outside \[1, 4\]"),
        (-1, r"k=-1 is outside"),
        (np.array(2.0), "must be an integer type"),
        (np.array([1, 2]), "must be a scalar"),
        (np.array([[1]]), "must be a scalar"),
        (np.array(True), "must be an integer type"),
    ],
)
def test_top_k_bad_k(k, match):
    with pytest.raises(OpError, match=match):
        top_k(_data(), k, axis=1, mode="max", sort="value")


@pytest.mark.parametrize("axis", [2, -3, 7])
def test_top_k_bad_axis(axis):
    with pytest.raises(OpError, match=rf"axis={axis} is outside \[-2, 1\]"):
        top_k(_data(), 1, axis=axis, mode="max", sort="value")


@pytest.mark.parametrize(
    "attrs, match",
    [
        ({"mode": "largest"}, "mode='largest' is invalid"),
        ({"mode": ""}, "mode"),
        ({"sort": "ascending"}, "sort='ascending' is invalid"),
        ({"stable": 2}, "stable=2"),
        ({"stable": "yes"}, "stable='yes' is not an integer"),
        ({"index_element_type": "i16"}, "index_element_type='i16' is invalid"),
        ({"axis": 1.0}, "axis=1.0 is not an integer"),
    ],
)
def test_top_k_bad_attribute(attrs, match):
    kwargs = {"axis": 1, "mode": "max", "sort": "value", **attrs}
    with pytest.raises(OpError, match=match):
        top_k(_data(), 1, **kwargs)


@pytest.mark.parametrize("dtype", [np.bool_, np.float16, np.complex64, object])
def test_top_k_unsupported_dtype(dtype):
    with pytest.raises(OpError, match="input 'data' has dtype"):
        top_k(np.zeros(4, dtype), 1, axis=0, mode="max", sort="value")


def test_top_k_rank_0_data():
    with pytest.raises(OpError, match="axis=0"):
        top_k(np.float32(3.0), 1, axis=0, mode="max", sort="value")


def test_top_k_error_is_a_value_error():
    with pytest.raises(ValueError):
        top_k(_data(), 9, axis=1, mode="max", sort="value")


# ----------------------------------------------------------------------------- properties


@given(
    case=top_k_inputs(max_side=4),
    mode=st.sampled_from(MODES),
    sort=st.sampled_from(SORTS),
    stable=st.sampled_from([0, 1]),
    index_element_type=st.sampled_from(["i32", "i64"]),
)
def test_top_k_matches_sorted_oracle(case, mode, sort, stable, index_element_type):
    data, k, axis = case
    result = top_k(data, np.array(k), axis=axis, mode=mode, sort=sort, stable=stable,
                   index_element_type=index_element_type)
    expected_values, expected_indices = _oracle(data, k, axis % data.ndim, mode, sort)
    assert_identical(result.values, expected_values, bits=True)
    assert result.indices.dtype == {"i32": np.int32, "i64": np.int64}[index_element_type]
    np.testing.assert_array_equal(result.indices, expected_indices)
