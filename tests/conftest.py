"""Shared test fixtures and helpers: a TopK session, an independent brute-force top-k, the one
comparison of arrays (``assert_identical``), and the Hypothesis profiles."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings
from onnx import TensorProto

import ortops
from ortops import builder

# Hypothesis profiles: a property test draws 50 examples in the default run (the README's test
# command) and 300 in CI's slow step (pytest -m "hypothesis and not slow"
# --hypothesis-profile=thorough).
# A test that costs more per example sets its own, smaller max_examples, the same in both.
settings.register_profile("quick", max_examples=50, deadline=None)
settings.register_profile("thorough", max_examples=300, deadline=None)
settings.load_profile("quick")


@pytest.fixture(scope="session")
def top_k_session():
    """ortops session: TopK over the last axis of float32 [N, M], mode max, sort value, stable."""
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1)
    return ortops.InferenceSession(model)


def brute_top_k(row, k, largest=True):
    """Indices of the k largest (smallest) of a 1-D sequence, ties to the lower index, NaN largest.

    Written independently of ortops: Python's sorted with an explicit key.
    """
    def key(i):
        v = row[i]
        nan = isinstance(v, float) and v != v
        rank = (1, 0) if nan else (0, v)
        return (tuple(-x for x in rank) if largest else rank, i)

    return sorted(range(len(row)), key=key)[:k]


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


def assert_identical(actual: np.ndarray, expected: np.ndarray, *, bits: bool = False) -> None:
    """Same dtype, shape and values; NaN where NaN; the same sign of every zero. With ``bits``,
    the same bytes (also each NaN's payload and sign)."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if bits:
        as_bits = np.dtype(f"u{actual.dtype.itemsize}") if actual.dtype.kind in "fiu" else actual.dtype
        np.testing.assert_array_equal(actual.view(as_bits), expected.view(as_bits))
        return
    if actual.dtype.kind == "f":
        np.testing.assert_array_equal(np.isnan(actual), np.isnan(expected))
        np.testing.assert_array_equal(np.signbit(actual) | np.isnan(actual), np.signbit(expected) | np.isnan(expected))
    np.testing.assert_array_equal(actual, expected)
