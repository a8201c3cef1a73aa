"""The conformance runner judges the lowered paths: verdicts per path, and a path that
disagrees with the reference is unexplained."""

from __future__ import annotations

import numpy as np

from ortops import OpError
from ortops.conformance import lowering, runner
from ortops.conformance.cases import Case


def _top_k_case(data, k, **attrs):
    attrs = dict(dict(axis=-1, mode="max", sort="value", stable=1, index_element_type="i32"), **attrs)
    return Case("t", "TopK", "generated", {"data": data, "k": np.array([k], np.int64)}, attrs)


def test_both_paths_agree_on_signed_zero_ties_and_errors():
    for case in (_top_k_case(np.array([[0.0, -0.0, 1, -0.0]], np.float32), 3), _top_k_case(np.ones((1, 4), np.float32), 0)):
        checks = [c for c in runner.judge_case(case).checks if c.oracle in lowering.ORACLES]
        assert [(c.oracle, c.status) for c in checks] == [(o, "agree") for o in lowering.ORACLES], checks


def test_a_path_that_disagrees_with_the_reference_is_unexplained():
    want = (np.array([[-0.0]], np.float32), np.array([[1]], np.int32))
    got = [np.array([[0.0]], np.float32), np.array([[1]], np.int32)]  # the sign of the zero lost
    check = lowering._judge("lowered (standalone)", lambda: got, want, guarded=False)
    assert check.status == "unexplained" and "differ" in check.reason
    check = lowering._judge("lowered (standalone)", lambda: got, OpError("TopK", "bad k", kind="k_range"),
                            guarded=False)
    assert check.status == "unexplained"


def test_no_composition_is_skipped_with_the_reason():
    case = _top_k_case(np.array([[1, 2]], np.uint64), 1)
    checks = {c.oracle: c for c in runner.judge_case(case).checks}
    assert checks["lowered (standalone)"].status == "skipped" and "uint64" in checks["lowered (standalone)"].detail
    assert checks["lowered (guarded)"].status == "agree"
