"""The divergence matrix: topics come from the cases' inputs, cells from observed verdicts."""

from __future__ import annotations

import numpy as np

from ortops.conformance.cases import Case, Check, Result
from ortops.conformance.matrix import COLUMNS, ROWS, case_topics, matrix


def _top_k(data, k=1, **attrs):
    attrs = dict(axis=0, mode="max", sort="value", stable=1, index_element_type="i32", **attrs)
    return Case("c", "TopK", "generated", {"data": np.asarray(data), "k": np.array([k])}, attrs)


def test_topics_are_read_off_the_inputs():
    assert case_topics(_top_k(np.array([1, 2, 2], np.float32))) == {"ties"}
    assert case_topics(_top_k(np.array([1, np.nan, np.nan], np.float32))) == {"nan"}
    assert case_topics(_top_k(np.array([3, 1], np.uint64))) == {"uint64"}
    assert case_topics(_top_k(np.array([3, 1], np.float32), k=0)) == {"k-range"}
    assert case_topics(_top_k(np.array([3, 1], np.float32))) == set()
    scatter = Case("s", "ScatterElementsUpdate", "generated",
                   {"data": np.zeros(3, np.int8), "indices": np.array([5]), "updates": np.ones(1, np.int8),
                    "axis": np.array([0])}, {"reduction": "mean", "use_init_val": 1})
    assert case_topics(scatter) == {"integer-mean-rounding", "narrow-type-overflow", "out-of-range-indices"}
    arg_max = Case("a", "ArgMax", "generated", {"data": np.array([1, 1], np.float32)}, {"topk": 1})
    assert case_topics(arg_max) == {"ncnn-tie-rule"}


def test_cells_count_cases_not_checks():
    two_checks = [Check("reference", "agree"), Check("onnxruntime TopK-11", "agree"),
                  Check("onnxruntime TopK-24", "skipped", "no kernel")]
    results = [
        Result(_top_k(np.array([1, 2, 2], np.float32)), two_checks, 0),
        Result(_top_k(np.array([1, np.nan], np.float32)), [
            Check("reference", "agree"), Check("onnxruntime TopK-11", "explained", "NaN order", topic="nan"),
            Check("onnxruntime TopK-24", "explained", "NaN order", topic="nan")], 0),
    ]
    table = matrix(results)
    assert list(table)[:len(ROWS)] == list(ROWS)
    assert set(table["ties"]) == set(COLUMNS)
    assert table["ties"]["ORT built-in"].counts == {"agree": 1}  # one case, whatever its checks
    assert table["ties"]["ORT built-in"].text() == "1 agree"
    assert table["nan"]["ORT built-in"].counts == {"explained": 1}
    assert table["nan"]["ORT built-in"].reasons == [("explained", 1, "NaN order")]
    assert table["nan"]["ortops"].text() == "1 agree"
    assert table["uint64"]["ORT built-in"].text() == "no case in this run"
    assert table["ties"]["OpenVINO runtime"].text().startswith("not run on these 1 cases")


def test_a_row_quotes_only_reasons_of_its_own_topic():
    """A case in two rows (ties by its inputs, nan by its check) is explained under nan; the
    ties row counts it under `nan` and never quotes nan's reason."""
    case = _top_k(np.array([1, 2, 2], np.float32))
    result = Result(case, [Check("reference", "agree"),
                           Check("openvino", "explained", "the nan story", topic="nan")], 0)
    table = matrix([result])
    ties = table["ties"]["OpenVINO runtime"]
    assert ties.counts == {"explained": 1} and ties.reasons == [] and ties.elsewhere == {"nan": {"explained": 1}}
    assert "the nan story" not in ties.text() and "1 explained under nan" in ties.text()
    assert table["nan"]["OpenVINO runtime"].reasons == [("explained", 1, "the nan story")]


def test_out_of_range_indices_has_cases_that_ortops_and_ort_judge():
    from ortops.conformance import judge_case
    from ortops.ops.scatter_elements_update import cases as scatter_cases

    cases = [c for c in scatter_cases.generated_cases() if "out-of-range-indices" in case_topics(c)]
    assert len(cases) >= 2
    for case in cases:
        result = judge_case(case)
        assert {"reference", "onnxruntime"} <= {k.family for k in result.checks}
        assert result.status in ("agree", "explained"), result.checks
        assert "out-of-range-indices" in {row for row, cells in matrix([result]).items()
                                          if cells["ortops"].counts.get("agree")}
