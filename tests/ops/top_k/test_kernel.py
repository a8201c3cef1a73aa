"""The registered TopK kernel against the NumPy reference and an independent brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ortops
from ortops import reference
from ortops.ops.top_k import kernel
from ortops.kernels import selection
from conftest import brute_top_k

DTYPES = [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


def _values(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        tie_heavy = st.sampled_from([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 2.5])
        return st.one_of(tie_heavy, st.floats(width=dtype.itemsize * 8, allow_nan=True))
    info = np.iinfo(dtype)
    return st.one_of(st.sampled_from([info.min, info.max, 0, 1]), st.integers(int(info.min), int(info.max)))


@st.composite
def top_k_cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=5, min_side=1, max_side=6))
    data = draw(hnp.arrays(dtype, shape, elements=_values(dtype)))
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    k = draw(st.integers(1, shape[axis]))
    attrs = dict(axis=axis, mode=draw(st.sampled_from(["max", "min"])),
                 sort=draw(st.sampled_from(["value", "index", "none"])), stable=draw(st.integers(0, 1)),
                 index_element_type=draw(st.sampled_from(["i32", "i64"])))
    k_dtype = draw(st.sampled_from([np.int64, np.int32, np.uint8, np.int8]))
    return data, np.array([k], k_dtype) if draw(st.booleans()) else np.array(k, k_dtype), attrs


def _same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


@pytest.fixture(params=["default", "chunked"])
def selection_path(request, monkeypatch):
    """Run a test as is, and with every single long slice cut into chunks (tiny CHUNK_MIN)."""
    if request.param == "chunked":
        monkeypatch.setattr(selection, "CHUNK_MIN", 4)
    return request.param


_FIXTURE_OK = [HealthCheck.function_scoped_fixture]


@settings(max_examples=300, deadline=None, suppress_health_check=_FIXTURE_OK)
@given(case=top_k_cases())
def test_kernel_equals_reference(selection_path, case):
    data, k, attrs = case
    got = kernel.top_k(data, k, **attrs)
    want = reference.top_k(data, k, **attrs)
    _same(got[0], want.values)
    _same(got[1], want.indices)


@settings(max_examples=150, deadline=None, suppress_health_check=_FIXTURE_OK)
@given(case=top_k_cases())
def test_kernel_equals_brute_force_on_every_slice(selection_path, case):
    data, k, attrs = case
    values, indices = kernel.top_k(data, k, **attrs)
    k = int(np.asarray(k).reshape(()))
    moved = np.moveaxis(data, attrs["axis"], -1)
    got_idx = np.moveaxis(indices, attrs["axis"], -1)
    for pos in np.ndindex(moved.shape[:-1]):
        row = [x.item() for x in moved[pos]]
        want = brute_top_k(row, k, largest=attrs["mode"] == "max")
        if attrs["sort"] == "index":
            want = sorted(want)
        assert list(got_idx[pos]) == want


def test_spec_example_min_index_stable():
    values, indices = kernel.top_k(np.array([5, 3, 1, 2, 5, 5], np.float32), np.array(4), axis=0, mode="min",
                                    sort="index", stable=1)
    np.testing.assert_array_equal(values, [5, 3, 1, 2])
    np.testing.assert_array_equal(indices, [0, 1, 2, 3])


def test_int64_and_uint64_stay_exact():
    big = np.array([2**53 + 1, 2**53, 2**53 + 3], np.int64)
    values, indices = kernel.top_k(big, np.array(3), axis=0, mode="max", sort="value")
    assert values.tolist() == [2**53 + 3, 2**53 + 1, 2**53]
    huge = np.array([2**64 - 2, 2**63, 2**64 - 1, 0], np.uint64)
    values, indices = kernel.top_k(huge, np.array(2), axis=0, mode="max", sort="value")
    assert values.tolist() == [2**64 - 1, 2**64 - 2] and indices.tolist() == [2, 0]


def test_nan_ranks_above_inf_in_every_mode():
    data = np.array([1, np.nan, 3, -np.inf, np.inf, np.nan, 2], np.float32)
    values, indices = kernel.top_k(data, np.array(4), axis=0, mode="max", sort="value", stable=1)
    assert indices.tolist() == [1, 5, 4, 2]
    values, indices = kernel.top_k(data, np.array(7), axis=0, mode="min", sort="value", stable=1)
    assert indices.tolist() == [3, 0, 6, 2, 4, 1, 5]


@pytest.mark.parametrize("k, message", [
    (np.array([0]), r"k=0 is outside \[1, 3\]"),
    (np.array([4]), r"k=4 is outside \[1, 3\]"),
    (np.array([-1]), r"k=-1 is outside"),
    (np.array([1, 2]), r"it must be a scalar"),
    (np.array([1.0]), r"must be an integer type"),
])
def test_bad_k(k, message):
    with pytest.raises(ortops.OpError, match=message):
        kernel.top_k(np.ones((2, 3), np.float32), k, axis=1, mode="max", sort="value")


def test_axis_out_of_range():
    with pytest.raises(ortops.OpError, match=r"axis=2 is outside \[-2, 1\] for rank 2"):
        kernel.top_k(np.ones((2, 3), np.float32), np.array(1), axis=2, mode="max", sort="value")


def test_zero_sized_other_dimension_gives_an_empty_result():
    values, indices = kernel.top_k(np.ones((0, 3), np.float32), np.array(2), axis=1, mode="max", sort="value")
    assert values.shape == (0, 2) and indices.shape == (0, 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_large_tie_heavy_inputs_with_nan(dtype):
    rng = np.random.default_rng(3)
    data = rng.integers(0, 50, size=(64, 32000)).astype(dtype)  # tie-heavy
    data[5, [7, 900]] = np.nan
    data[6, 3] = -np.inf
    for mode in ("max", "min"):
        got = kernel.top_k(data, np.array(60), axis=1, mode=mode, sort="value", stable=1)
        want = reference.top_k(data, np.array(60), axis=1, mode=mode, sort="value", stable=1)
        _same(got[1], want.indices)
        _same(got[0], want.values)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint64])
@pytest.mark.parametrize("sort", ["value", "index"])
def test_one_long_slice_is_chunked_exactly(dtype, sort):
    rng = np.random.default_rng(8)
    data = rng.integers(0, 300, size=(1, selection.CHUNK_MIN * 2 + 1)).astype(dtype)  # ties across chunks, a tail
    for mode in ("max", "min"):
        got = kernel.top_k(data, np.array(500), axis=1, mode=mode, sort=sort, stable=1, index_element_type="i64")
        want = reference.top_k(data, np.array(500), axis=1, mode=mode, sort=sort, stable=1, index_element_type="i64")
        _same(got[0], want.values)
        _same(got[1], want.indices)
