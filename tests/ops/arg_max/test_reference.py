"""Tests for ortops.reference.arg_max (ncnn ArgMax).

Expected values come from the seed's example, hand-computed cases, or ``_oracle``: ncnn's
pair sort written with Python's ``sorted``, independent of the function under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ortops.errors import OpError
from ortops.reference import arg_max

from conftest import assert_identical


def _oracle(data: np.ndarray, out_max_val: int, topk: int) -> np.ndarray:
    """ncnn: vec[i] = (ptr[i], i); partial_sort with std::greater; NaN above +inf."""
    flat = data.ravel().tolist()

    def value_key(value):
        return (1, 0.0) if math.isnan(value) else (0, value)

    pairs = sorted(((value_key(v), i) for i, v in enumerate(flat)), reverse=True)[:topk]
    chosen = [i for _, i in pairs]
    indices = np.array(chosen, np.float32)
    if out_max_val:
        return np.stack([data.ravel()[chosen], indices])  # the values keep their exact bits
    return indices.reshape(1, topk)


# ----------------------------------------------------------------------------- the seed's example


def test_arg_max_seed_example():
    data = (np.arange(6).reshape(2, 3) + 10).astype(np.float32)
    assert_identical(arg_max(data), np.array([[5.0]], np.float32), bits=True)
    assert_identical(arg_max(data, out_max_val=1, topk=3), np.array([[15, 14, 13], [5, 4, 3]], np.float32), bits=True)
    assert_identical(arg_max(data, topk=6), np.array([[5, 4, 3, 2, 1, 0]], np.float32), bits=True)


# ----------------------------------------------------------------------------- hand-computed cases


def test_arg_max_ties_higher_index_first():
    data = np.array([1, 3, 3, 2, 3], np.float32)
    assert_identical(arg_max(data, topk=4), np.array([[4, 2, 1, 3]], np.float32), bits=True)
    assert_identical(arg_max(data, out_max_val=1, topk=2), np.array([[3, 3], [4, 2]], np.float32), bits=True)


def test_arg_max_all_equal():
    data = np.full((2, 2, 2), 7.0, np.float32)
    assert_identical(arg_max(data, topk=8), np.array([[7, 6, 5, 4, 3, 2, 1, 0]], np.float32), bits=True)


def test_arg_max_nan_is_largest():
    nan, inf = np.nan, np.inf
    data = np.array([nan, inf, -nan, 1, -inf], np.float32)
    output = arg_max(data, out_max_val=1, topk=5)
    np.testing.assert_array_equal(output[1], [2, 0, 1, 3, 4])
    np.testing.assert_array_equal(output[0], [nan, nan, inf, 1, -inf])


def test_arg_max_signed_zeros_tie():
    data = np.array([0.0, -0.0, -1.0], np.float32)
    output = arg_max(data, out_max_val=1, topk=3)
    assert_identical(output, np.array([[-0.0, 0.0, -1.0], [1, 0, 2]], np.float32), bits=True)
    assert np.signbit(output[0, 0]) and not np.signbit(output[0, 1])


@pytest.mark.parametrize("shape", [(), (5,), (2, 3), (2, 1, 3), (1, 2, 2, 2), (2, 1, 2, 1, 2)])
def test_arg_max_any_rank_is_flattened_c_order(shape):
    size = math.prod(shape)
    data = np.arange(size, dtype=np.float32)[::-1].copy().reshape(shape)  # the largest first
    output = arg_max(data, out_max_val=1, topk=size)
    assert_identical(output, np.array([np.arange(size)[::-1], np.arange(size)], np.float32), bits=True)


def test_arg_max_non_contiguous_input_uses_logical_order():
    base = np.array([[1, 9, 2], [8, 3, 7]], np.float32)
    data = base.T  # logical C order: 1, 8, 9, 3, 2, 7
    assert_identical(arg_max(data, out_max_val=1, topk=3), np.array([[9, 8, 7], [2, 1, 5]], np.float32), bits=True)


def test_arg_max_does_not_modify_input():
    data = np.array([3, 1, 2], np.float32)
    before = data.copy()
    arg_max(data, out_max_val=1, topk=3)
    np.testing.assert_array_equal(data, before)


def test_arg_max_index_limit_of_float32():
    # Indices up to 2**24 are exact in float32; 2**24 + 1 is not, and must raise, not round.
    data = np.zeros(2**24 + 2, np.float32)
    data[2**24] = 1.0
    assert_identical(arg_max(data, out_max_val=1), np.array([[1.0], [2**24]], np.float32), bits=True)
    data[2**24 + 1] = 2.0
    with pytest.raises(OpError, match=r"index 16777217 is above 16777216"):
        arg_max(data)
    with pytest.raises(OpError, match=r"index 16777217"):
        arg_max(data, topk=2)


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.uint8, np.bool_])
def test_arg_max_only_float32(dtype):
    with pytest.raises(OpError, match=f"has dtype {np.dtype(dtype)}; ncnn ArgMax takes float32 only"):
        arg_max(np.zeros(3, dtype))


def test_arg_max_python_list_is_float64():
    with pytest.raises(OpError, match="float64"):
        arg_max([1.0, 2.0])


def test_arg_max_empty():
    with pytest.raises(OpError, match="is empty"):
        arg_max(np.zeros((2, 0), np.float32))


@pytest.mark.parametrize(
    "attrs, match",
    [
        ({"topk": 7}, r"topk=7 is outside \[1, 6\]"),
        ({"topk": 0}, "topk=0 must be an integer >= 1"),
        ({"topk": -1}, "topk=-1"),
        ({"topk": 1.5}, "topk=1.5 is not an integer"),
        ({"out_max_val": 2}, "out_max_val=2 is invalid"),
        ({"out_max_val": True}, "out_max_val=True is not an integer"),
    ],
)
def test_arg_max_bad_attribute(attrs, match):
    with pytest.raises(OpError, match=match):
        arg_max(np.zeros((2, 3), np.float32), **attrs)


# ----------------------------------------------------------------------------- properties


_ELEMENTS = st.one_of(
    st.sampled_from([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5]),
    st.floats(width=32),
)


@st.composite
def _arg_max_cases(draw):
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=5, min_side=1, max_side=4))
    data = draw(hnp.arrays(np.float32, shape, elements=_ELEMENTS))
    topk = draw(st.integers(1, data.size))
    return data, topk


@given(case=_arg_max_cases(), out_max_val=st.sampled_from([0, 1]))
def test_arg_max_matches_pair_sort_oracle(case, out_max_val):
    data, topk = case
    assert_identical(arg_max(data, out_max_val=out_max_val, topk=topk), _oracle(data, out_max_val, topk), bits=True)
