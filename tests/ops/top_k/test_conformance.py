"""The TopK conformance suite and the runner: verdicts can fail, reports are written."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ortops import cli, conformance
from ortops.ops.top_k import cases as top_k_cases, judge as top_k_judge
from ortops.conformance.cases import Check, combine


def test_seed_cases_agree():
    results = conformance.run(top_k_cases.seed_cases(), progress=False)
    assert [r.status for r in results] == ["agree"] * len(results)


def test_onnx_backend_cases_cover_all_seven_vectors_and_agree():
    results = conformance.run(top_k_cases.onnx_backend_cases(), progress=False)
    assert len(results) == 7
    assert all(r.status == "agree" for r in results), [(r.case.name, r.reason) for r in results]
    uint64 = next(r for r in results if r.case.name == "test_top_k_uint64")
    builtin = next(c for c in uint64.checks if c.oracle == "onnxruntime TopK-24")
    # Whether ORT has a uint64 TopK-24 kernel depends on its version: observed, never assumed.
    if builtin.status == "skipped":
        assert "NOT_IMPLEMENTED" in builtin.reason and builtin.detail
    else:
        assert builtin.status == "agree"


def test_a_wrong_answer_is_unexplained(monkeypatch):
    case = top_k_cases.seed_cases()[0]
    real = top_k_judge._run_ortops

    def corrupted(case):
        values, indices = real(case)
        return values, indices[::-1].copy()

    monkeypatch.setattr(top_k_judge, "_run_ortops", corrupted)
    result = conformance.judge_case(case)
    assert result.status == "unexplained"
    assert "indices" in " ".join(c.detail for c in result.checks)


def test_nan_case_against_builtin_is_agree_or_explained_never_hidden():
    # ORT's NaN order changed between releases (1.31: [inf, 3, 1, nan]; 1.32: NaN first, as in
    # ortops). Whatever the installed ORT does, the case is agree, or explained with the NaN reason.
    case = next(c for c in top_k_cases.generated_cases() if c.name == "gen_nan_inf_float32_max_value")
    result = conformance.judge_case(case)
    reference_check = next(c for c in result.checks if c.oracle == "reference")
    assert reference_check.status == "agree"
    for check in result.checks:
        assert check.status in ("agree", "explained"), check
        if check.status == "explained":
            assert "NaN" in check.reason and check.detail


@pytest.mark.parametrize("other", [
    ([np.inf, 3, 1, np.nan], [4, 2, 0, 1]),  # NaN ranked below the finite values
    ([1, np.nan, np.inf, 3], [0, 1, 4, 2]),  # not even sorted
])
def test_a_nan_difference_is_explained_with_the_difference_shown(other):
    data = np.array([1, np.nan, 3, -np.inf, np.inf, np.nan, 2], np.float32)
    case = top_k_cases._case("t", "generated", data, 4, axis=0, mode="max", sort="value", stable=1)
    got = top_k_judge.expected(case.inputs, case.attrs)
    values, indices = np.array(other[0], np.float32), np.array(other[1], np.int32)
    check = top_k_judge._versus("onnxruntime TopK-11", case, got, (values, indices), exact=True)
    assert check.status == "explained" and "NaN" in check.reason
    assert "values" in check.detail


def test_the_same_difference_without_nan_is_unexplained():
    data = np.array([1, 0, 3, -np.inf, np.inf, 0, 2], np.float32)
    case = top_k_cases._case("t", "generated", data, 4, axis=0, mode="max", sort="value", stable=1)
    got = top_k_judge.expected(case.inputs, case.attrs)
    other = (np.array([np.inf, 3, 1, 0], np.float32), np.array([4, 2, 0, 1], np.int32))
    assert top_k_judge._versus("onnxruntime TopK-11", case, got, other, exact=True).status == "unexplained"


def test_combine_orders_verdicts():
    agree, skip = Check("reference", "agree"), Check("onnxruntime TopK-11", "skipped", "no kernel")
    assert combine([agree, skip])[0] == "skipped"
    assert combine([agree, Check("x", "agree"), skip])[0] == "agree"
    assert combine([agree, Check("x", "explained", "why")]) == ("explained", "x: why")
    assert combine([Check("x", "explained", "why"), Check("y", "unexplained", "bug")])[0] == "unexplained"
    with pytest.raises(ValueError, match="needs a reason"):
        Check("x", "explained")


def test_cli_writes_reports_and_exit_code_tracks_unexplained(tmp_path, monkeypatch):
    out = tmp_path / "rep"
    code = cli.main(["conformance", "--ops", "TopK", "--sources", "seed-example", "--out", str(out), "--no-progress"])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["summary"]["total"] == len(report["cases"]) > 0
    assert report["summary"]["unexplained"] == 0
    assert {"name", "op", "source", "status", "reason"} <= set(report["cases"][0])
    assert "# ortops conformance report" in (out / "report.md").read_text()
    monkeypatch.setattr(top_k_judge, "judge", lambda case: [Check("reference", "unexplained", "forced")])
    assert cli.main(["conformance", "--ops", "TopK", "--sources", "seed-example", "--out", str(out),
                     "--no-progress"]) == 1


def test_generated_cases_cover_every_dtype_and_attribute_combination():
    cases = top_k_cases.generated_cases()
    combos = {(str(c.inputs["data"].dtype), c.attrs["mode"], c.attrs["sort"], c.attrs["stable"]) for c in cases}
    assert {c[0] for c in combos} >= {"float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16",
                                      "uint32", "uint64", "float16"}
    assert len(combos) >= 10 * 12
    assert any(c.details.get("dtype") == "bfloat16" for c in cases)
    assert any(int(c.inputs["k"][0]) == 0 for c in cases)
    assert any(np.isnan(c.inputs["data"]).any() for c in cases if c.inputs["data"].dtype.kind == "f")


def test_oracle_openvino_adds_a_verdict_per_case(tmp_path):
    pytest.importorskip("openvino", reason="the openvino extra is not installed: pip install 'ortops[openvino]'")
    out = tmp_path / "rep"
    assert cli.main(["conformance", "--ops", "TopK", "--sources", "seed-example", "--oracle", "openvino",
                     "--out", str(out), "--no-progress"]) == 0
    cases = json.loads((out / "report.json").read_text())["cases"]
    assert all(c["oracles"]["openvino"] in ("agree", "explained") for c in cases)
    assert all(c["oracles"]["reference"] == "agree" for c in cases)


def test_oracles_map_groups_checks_by_family():
    from ortops.conformance.cases import Case, Result

    case = Case("c", "TopK", "generated", {"data": np.zeros(3, np.float32)}, {})
    result = Result(case, [Check("reference", "agree"), Check("onnxruntime TopK-11", "skipped", "no kernel"),
                           Check("openvino", "explained", "NaN order")], 0.0)
    oracles = result.to_json()["oracles"]
    assert oracles == {"reference": "agree", "onnxruntime": "skipped", "openvino": "explained"}
    assert result.to_json()["oracle_reasons"]["openvino"] == "openvino: NaN order"


def test_real_model_cases_are_collected_with_the_ocr_extra():
    from ortops import real_model

    if not real_model.available():
        pytest.skip("the ocr extra is not installed")
    cases = top_k_cases.CASE_SOURCES["real-model"]()
    assert len(cases) == 2 * len(real_model.TEXTS)
    assert all(c.source == "real-model" and c.op == "TopK" for c in cases)
