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


# --- the standalone model natively in OpenVINO (--oracle openvino) ----------------------------


def _openvino():
    import pytest

    return pytest.importorskip("openvino")


def _scatter_case(data, indices, updates, axis, **attrs):
    attrs = dict(dict(reduction="none", use_init_val=1), **attrs)
    return Case("s", "ScatterElementsUpdate", "generated",
                {"data": data, "indices": indices, "updates": updates, "axis": np.array([axis], np.int64)}, attrs)


def test_openvino_runs_the_standalone_model_and_each_verdict_is_shown():
    _openvino()
    cases = [_top_k_case(np.array([[4, 1, 3, 1.5, 2, 0.5]], np.float32), 3, mode="min"),  # no ties: agree
             _top_k_case(np.array([[3, 3, 3, 3, 1, 1, 0.0, -0.0, np.nan, 2, np.nan]] * 3, np.float32), 7),
             _top_k_case(np.ones((1, 4), np.float32), 0),  # the reference raises: OpenVINO must fail
             _scatter_case(np.zeros((2, 3), np.float32), np.array([[0, -1, 2]]), np.ones((1, 3), np.float32), 1,
                           reduction="sum")]
    verdicts = []
    for case in cases:
        checks = [c for c in runner.judge_case(case, openvino=True).checks if c.oracle == lowering.OPENVINO]
        assert len(checks) == 1, checks
        verdicts.append(checks[0])
    assert [v.status for v in verdicts] != ["unexplained"] * 4
    assert verdicts[0].status == "agree" and verdicts[2].status == "agree" and verdicts[3].status == "agree"
    # Ties and NaN: exact, or another valid top-k explained by OpenVINO's ONNX TopK (stable=false).
    assert verdicts[1].status == "agree" or (verdicts[1].status, verdicts[1].topic) == ("explained", "ties"), verdicts[1]
    assert all(c.status != "unexplained" for c in verdicts), verdicts


def test_openvino_standalone_explanations_reject_wrong_answers():
    from ortops.ops.arg_max.judge import OPENVINO as arg_max_oracle
    from ortops.ops.top_k.judge import OPENVINO as top_k_oracle

    data = np.array([[5, 3, 3, 1, 0.0, -0.0]], np.float32)
    case = _top_k_case(data, 3)
    want = [np.array([[5, 3, 3]], np.float32), np.array([[0, 1, 2]], np.int32)]
    other_tie = [np.array([[5, 3, 3]], np.float32), np.array([[0, 2, 1]], np.int32)]
    assert top_k_oracle.explain_standalone(case, other_tie, want).topic == "ties"
    wrong = [np.array([[5, 3, 1]], np.float32), np.array([[0, 1, 3]], np.int32)]  # not a top-3
    assert top_k_oracle.explain_standalone(case, wrong, want) is None
    repeated = [np.array([[5, 3, 3]], np.float32), np.array([[0, 1, 1]], np.int32)]  # one element twice
    assert top_k_oracle.explain_standalone(case, repeated, want) is None
    signs = _top_k_case(data, 6, mode="max")
    want6 = [np.array([[5, 3, 3, 1, 0.0, -0.0]], np.float32), np.array([[0, 1, 2, 3, 4, 5]], np.int32)]
    swapped_zero_values = [np.array([[5, 3, 3, 1, -0.0, 0.0]], np.float32), np.array([[0, 1, 2, 3, 4, 5]], np.int32)]
    assert top_k_oracle.explain_standalone(signs, swapped_zero_values, want6) is None  # values not the data's

    arg = Case("a", "ArgMax", "generated", {"data": np.array([1, 7, 7, 2], np.float32)}, {"out_max_val": 1, "topk": 2})
    want = [np.array([[7, 7], [2, 1]], np.float32)]  # ncnn: the higher index first among ties
    assert arg_max_oracle.explain_standalone(arg, [np.array([[7, 7], [1, 2]], np.float32)], want).topic == "ties"
    assert arg_max_oracle.explain_standalone(arg, [np.array([[7, 2], [1, 3]], np.float32)], want) is None
    assert arg_max_oracle.explain_standalone(arg, [np.array([[7, 7], [1, 1]], np.float32)], want) is None

    from ortops.ops.scatter_elements_update.judge import OPENVINO as scatter_oracle

    # The composition carries NaN through min itself: a NaN lost (or a zero's sign) is not "nan".
    scatter = _scatter_case(np.array([5.0, 1.0], np.float32), np.array([0, 0, 1]),
                            np.array([np.nan, -0.0, -0.0], np.float32), 0, reduction="min")
    want = [np.array([np.nan, -0.0], np.float32)]
    assert scatter_oracle.explain_standalone(scatter, [np.array([0.0, 0.0], np.float32)], want) is None


def test_standalone_check_nodes_fail_in_openvino_too():
    """The standalone model's checks fail on bad input in OpenVINO as in ONNX Runtime (a failing
    Concat named after the reason: OpenVINO's Gather returns 0 out of range instead of failing)."""
    ov = _openvino()
    import onnxruntime as ort
    import pytest
    from onnx import TensorProto

    from ortops import builder, lower

    model = lower(builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value"), fallback="none").model
    data = np.array([[1, 2, 3]], np.float32)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(model.SerializeToString(), b""), "CPU")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for k in (0, 4, -1):
        with pytest.raises(RuntimeError):
            compiled([data, np.array([k], np.int64)])
        with pytest.raises(Exception, match="rejects its input: k must be"):
            session.run(None, {"data": data, "k": np.array([k], np.int64)})
    assert np.array_equal(compiled([data, np.array([2], np.int64)])[compiled.outputs[1]], [[2, 1]])
