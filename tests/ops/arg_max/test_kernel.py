"""Tests for ortops.ops.arg_max.kernel, the registered ncnn ArgMax kernel.

Expected values come from hand-computed cases, from ``_brute_force`` (ncnn's pair sort with
Python's ``sorted``, independent of both the kernel and the reference) and, for large
tensors, from :func:`ortops.reference.arg_max`. The large cases are built so that every
path of the kernel runs: block maxima with and without ties at the k-th value, NaN blocks,
a shorter last block, and the direct selection.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ortops.ops.arg_max import kernel as kernel_source
from ortops import InferenceSession, OpError, reference
from ortops.builder import make_model
from ortops.ops.arg_max.builder import arg_max_model
from ortops.ops.arg_max.kernel import arg_max

from conftest import assert_identical

kernel_module = kernel_source

SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.0]


def _brute_force(data: np.ndarray, out_max_val: int, topk: int) -> np.ndarray:
    """ncnn: vec[i] = (ptr[i], i); std::partial_sort with std::greater; NaN above +inf."""
    flat = data.ravel().tolist()
    pairs = sorted(((math.isnan(v), 0.0 if math.isnan(v) else v, i) for i, v in enumerate(flat)), reverse=True)
    chosen = [i for _, _, i in pairs[:topk]]
    indices = np.array(chosen, np.float32)
    if out_max_val:
        return np.stack([data.ravel()[chosen], indices])
    return indices.reshape(1, topk)


# ----------------------------------------------------------------------------- by hand


def test_seed_example():
    data = (np.arange(6).reshape(2, 3) + 10).astype(np.float32)
    assert_identical(arg_max(data), np.array([[5]], np.float32))
    assert_identical(arg_max(data, out_max_val=1, topk=3), np.array([[15, 14, 13], [5, 4, 3]], np.float32))


def test_ties_go_to_the_higher_index():
    data = np.array([[1, 3, 3], [2, 3, 0]], np.float32)
    assert_identical(arg_max(data), np.array([[4]], np.float32))
    assert_identical(arg_max(data, topk=4), np.array([[4, 2, 1, 3]], np.float32))


def test_nan_is_the_largest_and_nans_tie():
    data = np.array([np.nan, np.inf, 1, np.nan, -np.inf], np.float32)
    output = arg_max(data, out_max_val=1, topk=4)
    np.testing.assert_array_equal(output[1], [3, 0, 1, 2])
    np.testing.assert_array_equal(output[0], [np.nan, np.nan, np.inf, 1])


def test_signed_zeros_tie_and_keep_their_sign():
    output = arg_max(np.array([0.0, -0.0, -1.0], np.float32), out_max_val=1, topk=2)
    assert_identical(output, np.array([[-0.0, 0.0], [1, 0]], np.float32))


@pytest.mark.parametrize(
    "data, topk, match",
    [
        (np.zeros((2, 3), np.float32), 7, r"topk=7 is outside \[1, 6\]"),
        (np.zeros((2, 0), np.float32), 1, "is empty"),
        (np.zeros(3, np.float64), 1, "float32 only"),
    ],
)
def test_errors(data, topk, match):
    with pytest.raises(OpError, match=match):
        arg_max(data, topk=topk)


def test_index_above_2_24_raises_and_2_24_itself_is_exact():
    data = np.zeros(2**24 + 2, np.float32)
    data[2**24] = 1.0  # 2**24 is exactly representable in float32
    assert_identical(arg_max(data, out_max_val=1), np.array([[1.0], [16777216.0]], np.float32))
    data[2**24 + 1] = 2.0  # 2**24 + 1 is not: float32 would round it to 2**24
    with pytest.raises(OpError, match="16777217 is above 2\\*\\*24"):
        arg_max(data)
    with pytest.raises(OpError, match="16777217"):
        arg_max(data, out_max_val=1, topk=2)
    assert_identical(arg_max(data[: 2**24 + 1], topk=2), np.array([[16777216, 16777215]], np.float32))


# ----------------------------------------------------------------------------- properties, small


@st.composite
def tie_heavy(draw):
    rank = draw(st.integers(1, 5))
    shape = draw(hnp.array_shapes(min_dims=rank, max_dims=rank, min_side=1, max_side=4))
    pool = draw(st.lists(st.sampled_from(SPECIAL), min_size=1, max_size=4, unique_by=str))
    data = draw(hnp.arrays(np.float32, shape, elements=st.sampled_from(pool).map(np.float32)))
    topk = draw(st.integers(1, data.size))
    return data, topk


@given(tie_heavy(), st.sampled_from([0, 1]))
def test_matches_brute_force_small(case, out_max_val):
    data, topk = case
    assert_identical(arg_max(data, out_max_val=out_max_val, topk=topk), _brute_force(data, out_max_val, topk))


@given(hnp.arrays(np.float32, hnp.array_shapes(min_dims=1, max_dims=5, max_side=6),
                  elements=st.floats(width=32, allow_nan=True, allow_infinity=True)),
       st.sampled_from([0, 1]), st.data())
def test_matches_reference_any_float(data, out_max_val, draw):
    topk = draw.draw(st.integers(1, data.size))
    expected = reference.arg_max(data, out_max_val=out_max_val, topk=topk)
    assert_identical(arg_max(data, out_max_val=out_max_val, topk=topk), expected)


# ----------------------------------------------------------------------------- properties, large

KINDS = ("normal", "ties_at_top", "small_integers", "few_high", "nan_scattered", "nan_many", "specials",
         "prefix_low", "zeros")


def _large(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    data = rng.standard_normal(n).astype(np.float32)
    if kind == "ties_at_top":
        data[rng.integers(0, n, 40)] = data.max()
    elif kind == "small_integers":
        data = rng.integers(0, 4, n).astype(np.float32)
    elif kind == "few_high":  # fewer 4s than topk: the rest are the LAST 3s, not those near the 4s
        data = rng.integers(0, 4, n).astype(np.float32)
        data[rng.integers(0, n // 2, 5)] = 4.0
    elif kind == "nan_scattered":
        data[rng.integers(0, n, 7)] = np.nan
    elif kind == "nan_many":
        data[rng.integers(0, n, 400)] = np.nan
    elif kind == "specials":
        data = rng.choice(np.array(SPECIAL, np.float32), n)
    elif kind == "prefix_low":  # the ties at the k-th value sit only near the start
        data = np.round(data * 2).astype(np.float32)
        data[n // 3 :] = -5.0
    elif kind == "zeros":
        data = np.where(rng.random(n) < 0.5, np.float32(0.0), np.float32(-0.0))
        data[rng.integers(0, n, 30)] = 1.0
    return data


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(KINDS), st.integers(5_000, 200_000), st.integers(0, 2**32 - 1), st.data())
def test_matches_reference_large(kind, n, seed, draw):
    rng = np.random.default_rng(seed)
    data = _large(kind, n, rng)
    topk = draw.draw(st.one_of(st.integers(1, 8), st.integers(9, 200), st.just(n)))
    out_max_val = draw.draw(st.sampled_from([0, 1]))
    assert_identical(arg_max(data, out_max_val=out_max_val, topk=topk),
                 reference.arg_max(data, out_max_val=out_max_val, topk=topk))


@pytest.mark.parametrize("kind", KINDS)
def test_every_kernel_path_runs(kind, monkeypatch):
    """Each large kind goes through the block maxima; ties at the k-th value use the scan."""
    calls = []
    for name in ("_block_maxima", "_last_matches", "_select"):
        original = getattr(kernel_module, name)
        monkeypatch.setattr(kernel_module, name,
                            lambda *a, _f=original, _n=name: calls.append(_n) or _f(*a))
    data = _large(kind, 100_003, np.random.default_rng(7))  # 100003: a shorter last block
    for topk in (1, 2, 50):
        assert_identical(arg_max(data, out_max_val=1, topk=topk), reference.arg_max(data, out_max_val=1, topk=topk))
    assert "_block_maxima" in calls
    if kind in ("small_integers", "few_high", "specials", "nan_many", "zeros", "prefix_low"):
        assert "_last_matches" in calls


def test_shape_of_data_does_not_matter():
    rng = np.random.default_rng(3)
    data = rng.integers(0, 5, (4, 3, 2, 5, 7)).astype(np.float32)
    for topk in (1, 17, data.size):
        assert_identical(arg_max(data, topk=topk), arg_max(data.reshape(-1), topk=topk))


# ----------------------------------------------------------------------------- through ORT


def test_through_inference_session():
    data = np.array([[2, 7, 7], [1, 7, 0]], np.float32)
    session = InferenceSession(arg_max_model(2, out_max_val=1, topk=4))
    assert_identical(session.run(None, {"data": data})[0], np.array([[7, 7, 7, 2], [4, 2, 1, 0]], np.float32))


def test_through_inference_session_errors_stay_usable():
    session = InferenceSession(arg_max_model(1, topk=3))
    with pytest.raises(OpError, match=r"ArgMax node 'arg_max': topk=3 is outside \[1, 2\]"):
        session.run(None, {"data": np.zeros(2, np.float32)})
    with pytest.raises(OpError, match="is empty"):
        session.run(None, {"data": np.zeros(0, np.float32)})
    assert_identical(session.run(None, {"data": np.array([5, 5, 5], np.float32)})[0],
                 np.array([[2, 1, 0]], np.float32))


def test_non_float32_input_fails_at_load():
    from onnx import TensorProto

    from ortops.ops.arg_max.builder import arg_max as node

    model = make_model([node("data", name="am")], [("data", TensorProto.DOUBLE, [3])],
                       [("output", TensorProto.FLOAT, [1, 1])], onnx_opset=13)
    with pytest.raises(OpError, match="ArgMax node 'am'.*float32"):
        InferenceSession(model)
