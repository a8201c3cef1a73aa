"""The audits' judgement of two selections: ties and NaN explained, anything else not.

Expected answers come from the independent brute-force top-k of tests/conftest.py.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ortops.ops.selection import judge_selection
from conftest import brute_top_k


def _answer(data, picks):
    idx = np.array(picks, np.int64)
    return data[np.arange(data.shape[0])[:, None], idx], idx


def _highest_index_first(row, k):
    """A valid top-k that prefers the HIGHER index among equal values (as ncnn does)."""
    return sorted(range(len(row)), key=lambda i: (-row[i], -i))[:k]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(2, 9), st.integers(0, 2**31 - 1))
def test_two_valid_tie_breaks_are_explained_as_ties(rows, n, seed):
    data = np.random.default_rng(seed).integers(0, 3, (rows, n)).astype(np.float32)
    k = max(1, n // 2)
    low = _answer(data, [brute_top_k(list(r), k) for r in data])
    high = _answer(data, [_highest_index_first(list(r), k) for r in data])
    finding = judge_selection(data, 1, k, True, [low, high], ("ort", "other"))
    assert finding.explained, finding
    same = all(np.array_equal(a, b) for a, b in zip(low, high))
    if not same:
        assert finding.topic == "ties" and "ort takes the lower index" in finding.detail


def test_a_wrong_value_is_unexplained():
    data = np.array([[3, 1, 2, 0]], np.float32)
    right = _answer(data, [[0, 2]])
    wrong = _answer(data, [[0, 1]])  # 1 is not among the two largest
    finding = judge_selection(data, 1, 2, True, [right, wrong], ("ort", "other"))
    assert not finding.explained and "other's answer is not" in finding.detail


def test_a_value_not_sorted_is_unexplained_when_sorted_but_allowed_unsorted():
    data = np.array([[3, 1, 2, 0]], np.float32)
    sorted_answer = _answer(data, [[0, 2]])
    unsorted = _answer(data, [[2, 0]])
    assert not judge_selection(data, 1, 2, True, [sorted_answer, unsorted], ("a", "b")).explained
    finding = judge_selection(data, 1, 2, True, [sorted_answer, unsorted], ("a", "b"), ordered="none")
    assert finding.explained and finding.topic is None and "order" in finding.detail


def test_nan_slices_are_topic_nan():
    data = np.array([[np.nan, 1, 2, np.nan]], np.float32)
    a = (np.array([[np.nan, np.nan]], np.float32), np.array([[0, 3]]))
    b = (np.array([[2, 1]], np.float32), np.array([[2, 1]]))
    finding = judge_selection(data, 1, 2, True, [a, b], ("a", "b"))
    assert finding.explained and finding.topic == "nan"


def test_the_axis_is_respected():
    data = np.array([[1, 5], [1, 5], [0, 7]], np.float32)  # ties along axis 0 in column 0
    a = (np.array([[1, 7]], np.float32), np.array([[0, 2]]))
    b = (np.array([[1, 7]], np.float32), np.array([[1, 2]]))
    finding = judge_selection(data, 0, 1, True, [a, b], ("a", "b"))
    assert finding.explained and finding.topic == "ties" and "1 of 2 slices" in finding.detail


def test_near_ties_within_tolerance_are_explained_only_when_each_answer_fits_its_own_input():
    base = np.array([[1.0, 0.5000001, 0.5, 0.1]], np.float32)
    other = np.array([[1.0, 0.5, 0.5000001, 0.1]], np.float32)  # within 1e-5 of base
    a = (np.array([[1.0, 0.5000001]], np.float32), np.array([[0, 1]]))
    b = (np.array([[1.0, 0.5000001]], np.float32), np.array([[0, 2]]))
    finding = judge_selection(base, 1, 2, True, [a, b], ("ort", "ov"), other_data=other, atol=1e-5, rtol=1e-5)
    assert finding.explained and finding.topic == "near-ties" and "near-ties" in finding.detail
    assert "equal" not in finding.detail
    wrong = (np.array([[1.0, 0.1]], np.float32), np.array([[0, 3]]))
    assert not judge_selection(base, 1, 2, True, [a, wrong], ("ort", "ov"), other_data=other, atol=1e-5,
                               rtol=1e-5).explained
    same = (np.array([[1.0, 0.5000002]], np.float32), np.array([[0, 1]]))  # same indices, values within tolerance
    assert judge_selection(base, 1, 2, True, [a, same], ("ort", "ov"), other_data=other, atol=1e-5,
                           rtol=1e-5).detail == "no slice differs"


def test_near_ties_have_their_own_reason():
    from ortops.compare.audit import reason_for

    for runtime in ("openvino", "reference", "onnxruntime"):
        reason = reason_for("near-ties", runtime, "TopK")
        assert "within the tolerance but not equal" in reason and "equal values" not in reason, reason
        assert reason != reason_for("ties", runtime, "TopK")
