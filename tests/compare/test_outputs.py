"""Per-output comparison in the manner of Polygraphy: exact integers, float tolerances, NaN, shapes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from ortops.compare.outputs import compare_arrays


def test_integers_compare_exactly_and_the_worst_position_is_reported():
    want = np.array([[1, 2], [3, 4]], np.int64)
    got = np.array([[1, 2], [3, 9]], np.int64)
    c = compare_arrays(got, want, atol=100, rtol=100)
    assert (c.status, c.mismatches, c.worst, c.worst_values) == ("mismatch", 1, (1, 1), (4, 9))
    assert compare_arrays(want.copy(), want).status == "match"


def test_float_statistics():
    want = np.array([1.0, 2.0, 4.0, 8.0], np.float32)
    got = np.array([1.0, 2.5, 4.0, 8.1], np.float32)
    c = compare_arrays(got, want, atol=1e-5, rtol=1e-5)
    assert c.status == "mismatch" and c.mismatches == 2 and c.share == 0.5
    assert c.worst == (1,) and abs(c.max_abs - 0.5) < 1e-6 and abs(c.max_rel - 0.25) < 1e-6
    assert compare_arrays(got, want, atol=c.needed_atol, rtol=0).status == "match"
    assert compare_arrays(got, want, atol=0, rtol=c.needed_rtol).status == "match"


def test_nan_equals_nan_only_at_the_same_positions():
    want = np.array([np.nan, 1.0, np.inf], np.float32)
    assert compare_arrays(want.copy(), want).status == "match"
    moved = np.array([1.0, np.nan, np.inf], np.float32)
    c = compare_arrays(moved, want, atol=1e9, rtol=1e9)
    assert c.status == "mismatch" and c.mismatches == 2 and c.needed_atol is None and "NaN" in c.detail
    assert compare_arrays(np.array([np.nan, 1.0, -np.inf], np.float32), want, atol=1e9).mismatches == 1


def test_shape_and_dtype_mismatches_are_results_not_exceptions():
    assert compare_arrays(np.zeros((2, 3)), np.zeros((3, 2))).status == "shape"
    assert compare_arrays(np.zeros(3, np.int64), np.zeros(3, np.float32)).status == "dtype"
    assert compare_arrays(np.zeros(0, np.float32), np.zeros(0, np.float32)).status == "match"


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 30), elements=st.floats(-1e6, 1e6)),
       hnp.arrays(np.float64, st.integers(1, 30), elements=st.floats(-1e3, 1e3)))
def test_the_needed_tolerance_is_the_smallest_that_passes(want, noise):
    n = min(want.size, noise.size)
    want, got = want[:n], want[:n] + noise[:n]
    c = compare_arrays(got, want, atol=0, rtol=0)
    assert compare_arrays(got, want, atol=c.needed_atol, rtol=0).status == "match"
    if c.needed_atol and c.needed_atol > 1e-9:
        assert compare_arrays(got, want, atol=c.needed_atol * 0.99, rtol=0).status == "mismatch"
    independent = np.abs(got - want)
    assert c.mismatches == int(np.count_nonzero(independent > 0))


@settings(max_examples=40, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 40), elements=st.floats(0.5, 100)),
       hnp.arrays(np.float64, st.integers(1, 40), elements=st.floats(-2, 2)),
       st.sampled_from(["elemwise", "max", "mean", "median", "quantile"]), st.sampled_from([0.0, 1e-3, 0.1, 1.0]),
       st.sampled_from([0.0, 1e-3, 0.05]), st.sampled_from([0.5, 0.9, 0.99]))
def test_the_statistic_verdicts_are_polygraphys(want, noise, stat, atol, rtol, quantile):
    """Polygraphy's own comparator (``SimpleCompareFunc``) as the oracle: the same verdict for the
    statistics; for ``elemwise`` ortops' rule is looser (``atol + rtol*|b|`` against Polygraphy's
    ``atol`` or ``rtol*|b|``), so where Polygraphy passes, ortops passes."""
    pytest.importorskip("polygraphy")
    from polygraphy.comparator import SimpleCompareFunc
    from polygraphy.comparator.struct import IterationResult
    from polygraphy.logger import G_LOGGER

    n = min(want.size, noise.size)
    want, got = want[:n], want[:n] + noise[:n]
    check = SimpleCompareFunc(atol=atol, rtol=rtol, check_error_stat=stat, error_quantile=quantile)
    with G_LOGGER.verbosity(G_LOGGER.CRITICAL):
        theirs = bool(check(IterationResult({"out": got}, runner_name="other"),
                            IterationResult({"out": want}, runner_name="base"))["out"])
    ours = compare_arrays(got, want, atol=atol, rtol=rtol, check_error_stat=stat, error_quantile=quantile).status
    if stat == "elemwise":
        assert ours == "match" or not theirs
    else:
        assert (ours == "match") == theirs
