"""Tests for ortops.conformance.arg_max: the ArgMax cases and their judge.

The whole suite runs once (module fixture) and must have no unexplained case; the verdicts
of chosen cases are checked against what was worked out by hand. The judge is also shown
failing: with a wrong expected output, a broken reference, a missing error.
"""

from __future__ import annotations

import numpy as np
import pytest

from ortops.ops.arg_max import cases as suite_cases, judge as suite_judge
from ortops import real_model
from ortops.conformance.cases import Case, combine
from ortops.conformance.runner import collect_cases, judge_case, suite as suite_of


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    found = []
    for source, make in suite_cases.CASE_SOURCES.items():
        if source == "real-model" and not real_model.available():
            continue
        found += make()
    return found


@pytest.fixture(scope="module")
def verdicts(cases) -> dict[str, tuple[Case, list]]:
    return {case.name: (case, suite_judge.judge(case)) for case in cases}


def _status(checks) -> str:
    return combine(checks)[0]


def _check(checks, oracle_prefix: str):
    (check,) = [c for c in checks if c.oracle.startswith(oracle_prefix)]
    return check


# ----------------------------------------------------------------------------- the suite as data


def test_suite_is_found_by_the_runner():
    assert suite_of("ArgMax") is suite_cases
    assert suite_judge.OP == "ArgMax"
    assert set(suite_cases.CASE_SOURCES) == {"seed-example", "onnx-backend-test", "generated", "real-model"}


def test_cases_are_data(cases):
    names = [c.name for c in cases]
    assert len(names) == len(set(names))
    for case in cases:
        assert case.op == "ArgMax"
        assert set(case.inputs) == {"data"} and case.inputs["data"].dtype == np.float32
        assert set(case.attrs) == {"out_max_val", "topk"}


def test_case_counts(cases):
    by_source = {}
    for case in cases:
        by_source[case.source] = by_source.get(case.source, 0) + 1
    assert by_source["seed-example"] >= 10
    assert by_source["onnx-backend-test"] >= 16
    assert by_source["generated"] >= 50
    generated = [c for c in cases if c.source == "generated" and "expected_error" not in c.details]
    assert {c.inputs["data"].ndim for c in generated} >= {1, 2, 3, 4, 5}
    assert {c.attrs["out_max_val"] for c in generated} == {0, 1}
    assert any(c.attrs["topk"] == c.inputs["data"].size > 1 for c in generated)
    if real_model.available():
        assert by_source["real-model"] == 2 * len(real_model.TEXTS)


def test_no_unexplained(verdicts):
    bad = {name: [c for c in checks if c.status == "unexplained"] for name, (_, checks) in verdicts.items()
           if _status(checks) == "unexplained"}
    assert not bad


# ----------------------------------------------------------------------------- verdicts worked out by hand


def test_seed_cases_agree_with_the_walk_through(verdicts):
    for name, (case, checks) in verdicts.items():
        if case.source == "seed-example":
            assert _status(checks) == "agree", name
    checks = verdicts["seed_arange_top1"][1]
    assert _check(checks, "seed walk-through").status == "agree"


def test_seed_expected_values_by_hand(cases):
    by_name = {c.name: c for c in cases}
    np.testing.assert_array_equal(by_name["seed_arange_top1"].expected["output"], [[5]])
    np.testing.assert_array_equal(by_name["seed_arange_top3_out_max_val"].expected["output"],
                                  [[15, 14, 13], [5, 4, 3]])
    np.testing.assert_array_equal(by_name["seed_column2_as_axis0"].inputs["data"], [12, 15])


def test_onnx_example_without_select_last_index_is_an_explained_tie(verdicts):
    # ONNX's example [[2, 2], [3, 10]] along axis 1: row 0 ties, ONNX says 0, ncnn says 1.
    checks = verdicts["test_argmax_no_keepdims_example"][1]
    check = _check(checks, "ONNX backend test vectors")
    assert check.status == "explained"
    assert "slice (0,): [2.0, 2.0] -> ortops 1, ONNX 0" in check.detail
    checks = verdicts["test_argmax_no_keepdims_example_select_last_index"][1]
    assert _check(checks, "ONNX backend test vectors").status == "agree"
    assert _status(checks) == "agree"


def test_onnx_vectors_are_onnx_own():
    vectors = {v.name: v for v in suite_cases.onnx_arg_max_vectors()}
    assert len(vectors) == 16
    example = vectors["test_argmax_keepdims_example_select_last_index"]
    np.testing.assert_array_equal(example.inputs[0], [[2, 2], [3, 10]])
    np.testing.assert_array_equal(example.outputs[0], [[1], [1]])
    assert vectors["test_argmax_default_axis_random"].inputs[0].shape == (2, 3, 4)


def test_boundary_tie_is_explained_by_the_naive_mapping(verdicts):
    check = _check(verdicts["gen_all_equal_r4_top1"][1], suite_judge.NAIVE)
    assert check.status == "explained" and check.reason == suite_judge._TIE_NOTE
    assert "ortops keeps [11], ORT keeps [0]" in check.detail
    assert _check(verdicts["gen_all_equal_r4_top1"][1], suite_judge.EXACT).status == "agree"


def test_nan_against_ort_is_agree_or_explained(verdicts):
    # [1, 2, nan]: ortops gives index 2 (NaN ranks highest). ORT's ArgMax leaves NaN to its
    # implementation (1.31 and 1.32 give index 1): observed, never assumed.
    checks = verdicts["gen_nan_last_top1"][1]
    assert _check(checks, "reference").status == "agree"
    check = _check(checks, suite_judge.EXACT)
    assert check.status in ("agree", "explained"), check
    if check.status == "explained":
        assert "NaN at flat indices [2]" in check.detail


def test_error_cases_agree_on_op_error(verdicts):
    for name in ("seed_arange_top7_over_size", "gen_error_top_over_size", "gen_error_empty_1d"):
        checks = verdicts[name][1]
        assert _status(checks) == "agree", name
        assert "both raise OpError" in _check(checks, "reference").detail
    check = _check(verdicts["gen_error_index_above_2_24"][1], suite_judge.EXACT)
    assert check.status == "explained" and "[[16777216.0]]" in check.detail


@pytest.mark.skipif(not real_model.available(), reason="needs the ocr extra")
def test_real_model_details(verdicts):
    case, checks = verdicts["ocr_line1_argmax_top1"]
    assert _status(checks) == "agree"
    found = case.details["most_confident"]
    probs = case.inputs["data"]
    assert probs.shape == (1, 40, 6625)
    assert float(probs[0, found["step"], found["class"]]) == found["value"] == probs.max()
    assert found["flat_index"] == found["step"] * 6625 + found["class"]
    assert case.details["decoded"] == case.details["rendered"] == "TopK 2026 ONNX"
    assert len(verdicts["ocr_line1_argmax_top5"][0].details["top5"]) == 5


# ----------------------------------------------------------------------------- the judge can fail


def test_naive_ties_inside_the_top_k_agree_as_sets():
    case = suite_cases._case("t", "generated", np.array([3, 3, 1], np.float32), topk=2)
    check = _check(suite_judge.judge(case), suite_judge.NAIVE)
    assert check.status == "agree" and "ortops [1, 0] vs ORT [0, 1]" in check.detail


def test_wrong_expected_output_is_unexplained():
    case = suite_cases._case("t", "seed-example", np.array([1, 5, 2], np.float32), expected_from="by hand",
                       expected={"output": np.array([[2]], np.float32)})
    check = _check(suite_judge.judge(case), "by hand")
    assert check.status == "unexplained"


def test_broken_reference_is_unexplained(monkeypatch):
    monkeypatch.setattr(suite_judge.reference, "arg_max", lambda data, **attrs: np.array([[0]], np.float32))
    case = suite_cases._case("t", "generated", np.array([1, 5, 2], np.float32))
    assert _check(suite_judge.judge(case), "reference").status == "unexplained"


def test_missing_error_is_unexplained():
    case = suite_cases._error_case("t", "generated", np.array([1, 5, 2], np.float32), "pretend it fails", topk=2)
    result = judge_case(case)
    assert result.status == "unexplained"


def test_collect_cases_for_arg_max():
    found, _ = collect_cases(["ArgMax"], ["seed-example"])
    assert found and all(c.op == "ArgMax" and c.source == "seed-example" for c in found)


def test_a_max_value_differing_only_in_the_sign_of_zero_is_described():
    # -0.0 and +0.0 are equal as numbers but not as float32 bits, which is how ArgMax answers compare.
    got = np.array([[-0.0], [0.0]], np.float32)
    want = np.array([[0.0], [0.0]], np.float32)
    check = suite_judge._versus("ncnn", got, want)
    assert check.status == "unexplained"
    assert check.detail == "values (ortops vs oracle): 1 of 1 differ, first at (0,): np.float32(-0.0) vs np.float32(0.0)"
