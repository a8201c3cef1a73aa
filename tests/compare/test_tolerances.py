"""Per-output tolerances and Polygraphy's error statistics (``--check-error-stat``), with expected
values worked out by hand; end to end through ``ortops compare`` on a real ORT/OpenVINO run."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ortops import cli
from ortops.compare.outputs import Tolerance, ToleranceError, compare_arrays, parse_tolerances

# Errors |got - want|: 0, 0.1, 0.2, 0.3, 1.0 on a baseline of 1, 1, 2, 3, 10 (relative 0, .1, .1, .1, .1).
WANT = np.array([1.0, 1.0, 2.0, 3.0, 10.0], np.float32)
GOT = np.array([1.0, 1.1, 2.2, 3.3, 11.0], np.float32)


def test_error_statistics_are_those_of_the_absolute_and_relative_errors():
    s = compare_arrays(GOT, WANT, atol=0, rtol=0, check_error_stat="quantile", error_quantile=0.5).stats
    assert s.max_abs == pytest.approx(1.0, rel=1e-6) and s.mean_abs == pytest.approx(0.32, rel=1e-5)
    assert s.median_abs == pytest.approx(0.2, rel=1e-5) and s.quantile_abs == pytest.approx(0.2, rel=1e-5)
    assert s.max_rel == pytest.approx(0.1, rel=1e-5) and s.mean_rel == pytest.approx(0.08, rel=1e-5)
    assert s.median_rel == pytest.approx(0.1, rel=1e-5) and s.quantile == 0.5
    # The 0.75 quantile of (0, .1, .2, .3, 1.0), linear interpolation: position 3 -> 0.3.
    q = compare_arrays(GOT, WANT, check_error_stat="quantile", error_quantile=0.75).stats
    assert q.quantile_abs == pytest.approx(0.3, rel=1e-5)


@pytest.mark.parametrize(("stat", "atol", "rtol", "status"), [
    ("elemwise", 0.5, 0, "mismatch"),   # 1.0 > 0.5 at the last element
    ("max", 0.5, 0, "mismatch"),        # max abs 1.0 > 0.5, max rel 0.1 > 0
    ("max", 0, 0.1001, "match"),        # ... but max rel 0.1 (float32: 0.1000001) <= rtol: either passes
    ("mean", 0.33, 0, "match"),         # mean abs 0.32
    ("mean", 0.31, 0.07, "mismatch"),   # mean abs 0.32 > 0.31 and mean rel 0.08 > 0.07
    ("median", 0.2001, 0, "match"),     # median abs 0.2
    ("median", 0.19, 0, "mismatch"),
    ("quantile", 0.31, 0, "match"),     # 0.75 quantile 0.3
    ("quantile", 0.29, 0, "mismatch"),
])
def test_the_chosen_statistic_decides(stat, atol, rtol, status):
    c = compare_arrays(GOT, WANT, atol=atol, rtol=rtol, check_error_stat=stat, error_quantile=0.75)
    assert c.status == status
    assert c.tolerance == Tolerance(atol, rtol, stat, 0.75)


def test_a_statistic_never_hides_nan_at_one_side():
    want = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
    got = np.array([1.0, 2.0, 3.0, np.nan], np.float32)
    c = compare_arrays(got, want, atol=1e9, rtol=1e9, check_error_stat="median")
    assert c.status == "mismatch" and c.needed_atol is None and "NaN" in c.detail


def test_the_statistics_go_into_the_report_entry_as_plain_json():
    d = compare_arrays(GOT, WANT, check_error_stat="mean").as_dict()
    json.dumps(d)
    assert d["tolerance"]["check_error_stat"] == "mean" and d["stats"]["mean_abs"] == pytest.approx(0.32, rel=1e-5)
    zero = compare_arrays(np.array([1.0], np.float32), np.array([0.0], np.float32)).as_dict()
    assert zero["stats"]["max_rel"] == "inf"  # baseline 0, other 1
    assert compare_arrays(np.array([3]), np.array([4])).stats is None  # integers: exact, no statistics


def test_parse_tolerances_default_and_per_output():
    t = parse_tolerances(atol=["1e-4", "boxes=1e-3", "a=b=0.5"], rtol=["scores=0"], check_error_stat=["mean"],
                         error_quantile=["boxes=0.9"])
    assert t.default == Tolerance(1e-4, 1e-5, "mean", 0.99)
    assert t.of("boxes") == Tolerance(1e-3, 1e-5, "mean", 0.9)
    assert t.of("scores") == Tolerance(1e-4, 0.0, "mean", 0.99)
    assert t.of("a=b") == Tolerance(0.5, 1e-5, "mean", 0.99)  # the name is everything before the last '='
    assert t.of("other") == t.default


@pytest.mark.parametrize(("options", "message"), [
    ({"atol": ["-1"]}, "--atol -1 is outside [0, inf]"),
    ({"rtol": ["x=abc"]}, "--rtol 'abc' is not a number"),
    ({"error_quantile": ["1.5"]}, "--error-quantile 1.5 is outside [0, 1]"),
    ({"check_error_stat": ["out=avg"]}, "--check-error-stat 'avg' is not one of elemwise, max, mean, median"),
    ({"atol": ["=1"]}, "the output name before '=' is empty"),
])
def test_bad_settings_name_the_value_and_the_range(options, message):
    with pytest.raises(ToleranceError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_tolerances(**options)


def _two_outputs(path) -> str:
    """``x * 1.001 -> near`` and ``x * 1.1 -> far``: relative errors 0.001 and 0.1 against any x."""
    consts = [helper.make_tensor("a", TensorProto.FLOAT, [], [1.001]), helper.make_tensor("b", TensorProto.FLOAT, [], [1.1])]
    graph = helper.make_graph([helper.make_node("Mul", ["x", "a"], ["near"]), helper.make_node("Mul", ["x", "b"], ["far"])],
                              "two", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])],
                              [helper.make_tensor_value_info("near", TensorProto.FLOAT, [4, 8]),
                               helper.make_tensor_value_info("far", TensorProto.FLOAT, [4, 8])], consts)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), str(path))
    return str(path)


def test_per_output_tolerances_end_to_end(tmp_path):
    """The same model compared with itself scaled: ``--rtol near=0.002`` passes ``near`` only."""
    path = _two_outputs(tmp_path / "two.onnx")
    # A baseline of x and a runtime that computes x * 1.001 are not two runtimes; instead, compare
    # the outputs of one real run against each other through the public function.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 8)).astype(np.float32) + 3.0
    import onnxruntime as ort

    near, far = ort.InferenceSession(path).run(None, {"x": x})
    t = parse_tolerances(atol=["0"], rtol=["near=0.002", "far=0.2"])
    assert compare_arrays(near, x, **t.of("near")._asdict()).status == "match"
    assert compare_arrays(far, x, **t.of("far")._asdict()).status == "match"
    assert compare_arrays(far, x, **t.of("near")._asdict()).status == "mismatch"
    status = cli.main(["compare", "--no-progress", path, "--runtimes", "onnxruntime", "openvino",
                       "--atol", "near=1e-3", "--rtol", "far=0", "--check-error-stat", "far=median",
                       "--out", str(tmp_path / "r")])
    report = json.loads((tmp_path / "r" / "compare.json").read_text())
    if "openvino" not in report["summary"]["runtimes_ran"]:
        pytest.skip("openvino did not run")
    rows = {r["output"]: r["comparison"] for r in report["outputs"]}
    assert rows["near"]["tolerance"] == {"atol": 1e-3, "rtol": 1e-5, "check_error_stat": "elemwise",
                                         "error_quantile": 0.99}
    assert rows["far"]["tolerance"]["check_error_stat"] == "median" and rows["far"]["tolerance"]["rtol"] == 0
    assert set(rows["far"]["stats"]) >= {"max_abs", "mean_abs", "median_abs", "quantile_abs", "mean_rel"}
    assert report["settings"]["tolerances"]["per_output"]["near"] == {"atol": 1e-3}
    assert status == report["summary"]["exit_status"]


def test_a_quantile_among_infinite_relative_errors_is_inf_not_nan():
    # Baseline 0 where the other is not: relative error inf at 3 of 4 positions.
    c = compare_arrays(np.array([1.0, 1.0, 1.0, 2.0], np.float32), np.array([0.0, 0.0, 0.0, 2.0], np.float32),
                       check_error_stat="quantile", error_quantile=0.5)
    assert c.stats.quantile_rel == np.inf and c.stats.median_rel == np.inf


@pytest.mark.parametrize("option", [["--check-error-stat", "avg"], ["--error-quantile", "out=2"], ["--rtol", "x"]])
def test_a_bad_setting_is_a_usage_error(tmp_path, option, capsys):
    path = _two_outputs(tmp_path / "two.onnx")
    assert cli.main(["compare", "--no-progress", path, *option, "--out", str(tmp_path / "r")]) == 2
    assert option[0] in capsys.readouterr().out
    assert not (tmp_path / "r").exists()


def test_compare_md_shows_the_error_statistics_of_each_float_output(tmp_path):
    from ortops.compare import render

    assert render._stats({"mean_abs": 0.5, "median_abs": 0.25, "quantile_abs": 2.0, "quantile": 0.9}) == \
        "0.5 / 0.25 / 2 (q=0.9)"
    assert render._stats(None) == ""  # integers and bools: no statistics
    path = _two_outputs(tmp_path / "two.onnx")
    cli.main(["compare", "--no-progress", path, "--runtimes", "onnxruntime", "reference", "--out", str(tmp_path / "r")])
    md = (tmp_path / "r" / "compare.md").read_text()
    assert "abs error mean / median / quantile" in md and "(q=0.99)" in md
