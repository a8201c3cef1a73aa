"""The registered TopK kernel against the NumPy reference and an independent brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ortops
from ortops import reference
from ortops.ops.top_k import kernel
from ortops import runtime
from ortops.kernels import selection
from conftest import assert_identical, brute_top_k
from strategies import top_k_attributes, top_k_inputs



@st.composite
def top_k_cases(draw):
    data, k, axis = draw(top_k_inputs())
    attrs = dict(axis=axis, **draw(top_k_attributes()))
    k_dtype = draw(st.sampled_from([np.int64, np.int32, np.uint8, np.int8]))
    return data, np.array([k], k_dtype) if draw(st.booleans()) else np.array(k, k_dtype), attrs


@pytest.fixture(params=["default", "chunked", "numpy-fallback"])
def selection_path(request, monkeypatch):
    """Run a test as is, with every single long slice cut into chunks (tiny CHUNK_MIN), and
    on the NumPy selection a process uses when ORT's TopK-11 fails the tie probe."""
    if request.param == "chunked":
        monkeypatch.setattr(selection, "CHUNK_MIN", 4)
    if request.param == "numpy-fallback":
        monkeypatch.setattr(selection, "_probe", lambda *args: False)
        runtime.clear(selection.PROBE_CACHE)
    yield request.param
    runtime.clear(selection.PROBE_CACHE)


def test_the_probe_reports_what_it_found():
    """Every selection used so far has a finding; on today's ORT, whichever it is, the kernel
    is exact (the tests above run on both outcomes)."""
    kernel.top_k(np.array([[1, 3, 3, 2]], np.int16), np.array([2]), axis=1, mode="max", sort="value", stable=1)
    findings = selection.probe_results()
    assert ("INT16", "largest", 2, False) in findings
    assert all(isinstance(ok, bool) for ok in findings.values())


def test_the_probe_rejects_a_selection_that_breaks_ties_the_other_way():
    """The probe is a real check: ORT's own TopK-11 run on the slices reversed (so that the
    higher index comes first among equal values, values unchanged) fails it."""
    import onnxruntime as ort
    from onnx import TensorProto

    honest = ort.InferenceSession(selection._make_session(TensorProto.FLOAT, 1, 2, False),
                                  providers=["CPUExecutionProvider"])
    assert selection._probe(honest, TensorProto.FLOAT, 1, 2, False) is True
    assert selection._probe(_Reversed(honest), TensorProto.FLOAT, 1, 2, False) is False


class _Reversed:
    """An inner session whose answer among equal values is the higher index: it runs the
    real session on the slices reversed along the axis and maps the indices back."""

    def __init__(self, session):
        self.session = session

    def run(self, names, feed):
        x = feed["x"][:, ::-1]
        values, indices = self.session.run(names, {"x": np.ascontiguousarray(x), "k": feed["k"]})
        return values, x.shape[1] - 1 - indices


_FIXTURE_OK = [HealthCheck.function_scoped_fixture]


@settings(suppress_health_check=_FIXTURE_OK)
@given(case=top_k_cases())
def test_kernel_equals_reference(selection_path, case):
    data, k, attrs = case
    got = kernel.top_k(data, k, **attrs)
    want = reference.top_k(data, k, **attrs)
    assert_identical(got[0], want.values)
    assert_identical(got[1], want.indices)


@settings(suppress_health_check=_FIXTURE_OK)
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
        assert_identical(got[1], want.indices)
        assert_identical(got[0], want.values)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint64])
@pytest.mark.parametrize("sort", ["value", "index"])
def test_one_long_slice_is_chunked_exactly(dtype, sort):
    rng = np.random.default_rng(8)
    data = rng.integers(0, 300, size=(1, selection.CHUNK_MIN * 2 + 1)).astype(dtype)  # ties across chunks, a tail
    for mode in ("max", "min"):
        got = kernel.top_k(data, np.array(500), axis=1, mode=mode, sort=sort, stable=1, index_element_type="i64")
        want = reference.top_k(data, np.array(500), axis=1, mode=mode, sort=sort, stable=1, index_element_type="i64")
        assert_identical(got[0], want.values)
        assert_identical(got[1], want.indices)
