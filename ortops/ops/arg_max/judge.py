"""The one judge of ``ortops.ncnn::ArgMax`` (ncnn's ArgMax layer): is an answer acceptable, and if
not, which known divergence (topic) explains it - for every caller: the conformance suite
(ortops in ORT against the reference, ORT's compositions and the expected outputs), the OpenVINO
and lowered-path oracles (:data:`OPENVINO`), real ncnn (:data:`NCNN`) and ``ortops compare``'s
node audits (:data:`AUDITS`).

How each oracle is compared, and what explains a difference: docs/conformance.md, "How each op
is judged", ArgMax.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ... import reference
from ...arrays import bitwise_same, describe_difference, first_difference, has_nan, has_ties, order_ranks, same, short
from ...divergences import reason
from ...errors import OpError
from ...graph import attribute
from ...sessions import ortops_session, plain_session
from ...verdicts import Audit, Capture, Case, Check, Finding, difference, verdict
from ..selection import judge_selection
from ..spec import NCNN_DOMAIN
from . import ARG_MAX
from .builder import arg_max_model, arg_max_side_by_side, onnx_arg_max_equivalent_model
from .checks import FLOAT32_EXACT_INT_MAX
from .ncnn import run

__all__ = ["OP", "EXACT", "NAIVE", "judge", "topics", "model", "expected", "OPENVINO", "NCNN", "AUDITS"]

OP = "ArgMax"
EXACT = "onnxruntime Reshape+ArgMax/TopK-11 (exact composition)"
NAIVE = "onnxruntime TopK-11 on the flattened tensor (naive)"
_NAN_NOTE = reason("nan", "onnxruntime", OP)
_TIE_NOTE = reason("ncnn-tie-rule", "onnxruntime", OP)
_ONNX_TIE_NOTE = reason("ncnn-tie-rule", "onnx", OP)


# ----------------------------------------------------------------------------- comparisons


def _identical(a: np.ndarray, b: np.ndarray) -> bool:
    """Same shape and the same float32 bits, except that any NaN equals any NaN."""
    return bitwise_same(np.asarray(a, np.float32), np.asarray(b, np.float32))


def _indices(output: np.ndarray) -> np.ndarray:
    return np.asarray(output[-1], np.int64)


def _describe(got: np.ndarray, want: np.ndarray) -> str:
    if got.shape != want.shape:
        return f"output shape {got.shape} vs {want.shape}"
    rows = ("indices",) if got.shape[0] == 1 else ("values", "indices")
    return "; ".join(describe_difference(f"{name} (ortops vs oracle)", g, w, bitwise=True)
                     for name, g, w in zip(rows, got, want) if not _identical(g, w))


def _short(values, limit: int = 12) -> str:
    """A list for a report line, cut after ``limit`` items."""
    values = list(values)
    if len(values) <= limit:
        return str(values)
    return str(values[:limit])[:-1] + f", ... ({len(values)} in all)]"


def _nan_detail(data: np.ndarray, got: np.ndarray, builtin: np.ndarray) -> str:
    nans = np.flatnonzero(np.isnan(data.reshape(-1))).tolist()
    return (f"NaN at flat indices {_short(nans)}; ortops indices {_short(_indices(got).tolist())} vs ORT "
            f"{_short(_indices(builtin).tolist())}")


def _boundary_tie(flat: np.ndarray, chosen: np.ndarray) -> bool:
    """Whether the k-th value also occurs among the elements not chosen."""
    kth = flat[chosen[-1]]
    return int(np.count_nonzero(flat == kth)) > int(np.count_nonzero(flat[chosen] == kth))


# ----------------------------------------------------------------------------- running


def model(case: Case):
    """The ONNX model ortops runs for ``case``: the ortops node alone."""
    attrs = dict(out_max_val=case.attrs.get("out_max_val", 0), topk=case.attrs.get("topk", 1))
    return arg_max_model(case.inputs["data"].ndim, **attrs)


def expected(inputs: dict, attrs: dict) -> list[np.ndarray]:
    """ortops' answer (the reference); OpError for an input ortops refuses."""
    return [reference.arg_max(inputs["data"], **attrs)]


def _run_ortops(case: Case) -> np.ndarray:
    return ortops_session(model(case)).run(None, {"data": case.inputs["data"]})[0]


def _run_builtin(data: np.ndarray, attrs: dict, exact_ties: bool) -> np.ndarray:
    model = onnx_arg_max_equivalent_model(data.ndim, **attrs, exact_ties=exact_ties)
    return plain_session(model).run(None, {"data": data})[0]


def _first_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else type(exc).__name__


# ----------------------------------------------------------------------------- the judge


def _versus(oracle: str, got: np.ndarray, want: np.ndarray) -> Check:
    if _identical(got, want):
        return Check(oracle, "agree")
    return Check(oracle, "unexplained", "results differ", detail=_describe(got, want),
                 difference=difference("output", got, want, right=oracle))


def _builtin_check(oracle: str, case: Case, got: np.ndarray, builtin: np.ndarray) -> Check | None:
    """agree when identical; explained (``nan``) when they differ on data holding NaN; else None."""
    data = case.inputs["data"]
    if _identical(builtin, got):
        return Check(oracle, "agree")
    if has_nan(data):
        return Check(oracle, "explained", _NAN_NOTE, detail=_nan_detail(data, got, builtin), topic="nan",
                     difference=difference("output", got, builtin, right=oracle))
    return None


def _naive_check(case: Case, got: np.ndarray) -> Check:
    data, attrs = case.inputs["data"], case.attrs
    naive = _run_builtin(data, attrs, exact_ties=False)
    check = _builtin_check(NAIVE, case, got, naive)
    if check is not None:
        return check
    diff = difference("output", got, naive, right=NAIVE)
    flat = data.reshape(-1)
    ours, theirs = _indices(got), _indices(naive)
    rule = np.argsort(-flat, kind="stable")[:attrs["topk"]]  # TopK-11's order: the lower index first among equals
    if not np.array_equal(theirs, rule):
        return Check(NAIVE, "unexplained", "ORT's TopK-11 did not follow its lower-index-first tie rule",
                     detail=f"ORT indices {theirs.tolist()}, the rule gives {rule.tolist()}", difference=diff)
    if np.array_equal(np.sort(ours), np.sort(theirs)):
        return Check(NAIVE, "agree", detail="the same elements; among equal values ortops puts the higher index "
                     f"first: ortops {_short(ours.tolist())} vs ORT {_short(theirs.tolist())}")
    if _boundary_tie(flat, ours):
        kth = float(flat[ours[-1]])
        ortops_only = sorted(set(ours.tolist()) - set(theirs.tolist()))
        ort_only = sorted(set(theirs.tolist()) - set(ours.tolist()))
        return Check(NAIVE, "explained", _TIE_NOTE, topic="ncnn-tie-rule", difference=diff,
                     detail=f"the k-th value {kth} is tied at the boundary ({int(np.count_nonzero(flat == kth))} "
                     f"elements hold it): ortops keeps {_short(ortops_only)}, ORT keeps {_short(ort_only)} instead; "
                     f"ortops {_short(ours.tolist())} vs ORT {_short(theirs.tolist())}")
    return Check(NAIVE, "unexplained", "different elements without a tie at the boundary",
                 detail=f"ortops {_short(ours.tolist())} vs ORT {_short(theirs.tolist())}", difference=diff)


def _onnx_slice_check(case: Case) -> Check:
    """ortops topk=1 on every 1-D slice along the ONNX vector's axis vs ONNX's expected output."""
    data = case.inputs["data"]
    spec = case.details["onnx_attributes"]
    axis = spec["axis"]  # ONNX ArgMax's axis
    expected = case.expected["onnx_output"]
    if not spec["keepdims"]:
        expected = np.expand_dims(expected, axis)
    moved, want = np.moveaxis(data, axis, -1), np.moveaxis(expected, axis, -1)[..., 0]
    session = ortops_session(arg_max_model(1))
    agree, tied, wrong = 0, [], []
    ours = np.zeros(want.shape, np.int64)
    for position in np.ndindex(moved.shape[:-1]):
        row = np.ascontiguousarray(moved[position])
        got = int(session.run(None, {"data": row})[0][0, 0])
        ours[position] = got
        if got == int(want[position]):
            agree += 1
            continue
        line = f"slice {position}: {row.tolist()} -> ortops {got}, ONNX {int(want[position])}"
        (tied if not spec["select_last_index"] and np.count_nonzero(row == row.max()) > 1 else wrong).append(line)
    oracle = f"{case.expected_from} (per slice along axis {spec['axis']})"
    summary = f"{agree} of {want.size} slices agree"
    diff = difference("index of each slice's maximum", ours, want, right=oracle)
    if wrong:
        return Check(oracle, "unexplained", "results differ", detail=f"{summary}; " + "; ".join(wrong),
                     difference=diff)
    if tied:
        return Check(oracle, "explained", _ONNX_TIE_NOTE, detail=f"{summary}; " + "; ".join(tied),
                     topic="ncnn-tie-rule", difference=diff)
    return Check(oracle, "agree", detail=summary)


def _error_checks(case: Case) -> list[Check]:
    data, attrs = case.inputs["data"], case.attrs
    checks = []
    try:
        got = _run_ortops(case)
    except OpError as exc:
        ours = exc
    else:
        return [Check("ortops", "unexplained", f"expected OpError ({case.details['expected_error']}), got an output",
                      detail=f"output {got.tolist() if got.size < 20 else got.shape}")]
    try:
        reference.arg_max(data, **attrs)
    except OpError as exc:
        checks.append(Check("reference", "agree", detail=f"both raise OpError; ortops: {ours}; reference: {exc}"))
    else:
        checks.append(Check("reference", "unexplained", "ortops raised OpError but the reference returned",
                            detail=str(ours)))
    try:
        builtin = _run_builtin(data, attrs, exact_ties=True)
    except Exception as exc:  # noqa: BLE001 - ORT's own words go into the report
        checks.append(Check(EXACT, "agree", detail=f"ORT rejects it too: {_first_line(exc)}"))
    else:
        if "2**24" in str(ours) and int(_indices(builtin).max()) >= FLOAT32_EXACT_INT_MAX:
            checks.append(Check(EXACT, "explained", "an index above 2**24 cannot be written exactly as float32: "
                                "ortops raises OpError, ORT's Cast rounds it silently", topic="float-index-precision",
                                detail=f"ORT returned {builtin.tolist()}; ortops: {ours}"))
        else:
            checks.append(Check(EXACT, "unexplained", "ortops raised OpError but ORT's composition returned",
                                detail=f"ORT returned {builtin.tolist()}; ortops: {ours}"))
    return checks


def judge(case: Case) -> list[Check]:
    """Run one ArgMax case through ortops in ORT and judge it against every oracle it has."""
    if "expected_error" in case.details:
        return _error_checks(case)
    data, attrs = case.inputs["data"], case.attrs
    # ortops' answer from the side-by-side model: creating an ortops session costs tens of milliseconds
    got, builtin = ortops_session(arg_max_side_by_side(data.ndim, **attrs)).run(None, {"data": data})
    ref = reference.arg_max(data, **attrs)
    checks = [_versus("reference", got, ref)]
    if case.expected is not None and "output" in case.expected:
        checks.append(_versus(case.expected_from, got, case.expected["output"]))
    if case.expected is not None and "onnx_output" in case.expected:
        checks.append(_onnx_slice_check(case))
    checks.append(_builtin_check(EXACT, case, got, builtin) or _versus(EXACT, got, builtin))
    checks.append(_naive_check(case, got))
    return checks


def topics(case: Case) -> set[str]:
    """The divergence topics of an ArgMax case beyond its dtype (see :mod:`ortops.conformance.matrix`)."""
    data = case.inputs["data"]
    if not 1 <= case.attrs.get("topk", 1) <= data.size:
        return {"k-range"}
    if not has_nan(data) and has_ties(data):
        return {"ncnn-tie-rule"}
    return set()


# --- OpenVINO -----------------------------------------------------------------------------------


def _openvino_matches(case: Case, got, want) -> tuple[bool, bool]:
    """(matches, only as another allowed answer): exact."""
    return same(got[0], want[0]), False


def _openvino_explain(case: Case, got, want, ov) -> Check | None:
    """An explained check when NaN order accounts for the difference."""
    if not has_nan(case.inputs["data"]):
        return None
    evidence = ov.nan_evidence(case)
    if evidence:
        return verdict("openvino", "explained", "nan", reason("nan", "openvino"),
                        f"{first_difference(ARG_MAX.outputs, got, want)}; {evidence}; OpenVINO: {short(got)}")
    return None


# --- the standalone lowering, run natively in OpenVINO ------------------------------------------


def _explain_standalone(case: Case, got, want) -> Check | None:
    """The standalone lowering run in OpenVINO (:mod:`ortops.conformance.lowering`): an
    explained check (topic ``"ties"``) when OpenVINO's answer is another valid selection.

    The lowering is ONNX TopK on the reversed data; OpenVINO's ONNX frontend reads ONNX TopK as
    its TopK-11 with ``stable=false``, so among equal values it does not keep ncnn's rule (the
    higher index first). The evidence: distinct flat indices, with values (``out_max_val``) equal
    to the data's there, selecting the same values as ortops in ortops' order (NaN above +inf,
    all NaNs equal, -0.0 == +0.0), in descending order."""
    flat = case.inputs["data"].reshape(-1)
    topk = case.attrs.get("topk", 1)
    out = np.asarray(got[0])
    if out.shape != want[0].shape:
        return None
    indices = out[-1].astype(np.int64)
    if np.any(indices < 0) or np.any(indices >= flat.size) or len(set(indices.tolist())) != indices.size:
        return None
    if not np.array_equal(out[-1], indices.astype(np.float32)):
        return None
    if case.attrs.get("out_max_val", 0) and not bitwise_same(out[0], flat[indices].astype(out.dtype)):
        return None
    ranks = order_ranks(flat).astype(np.float64)
    chosen, ours = ranks[indices], np.sort(ranks)[::-1][:topk]  # the values ortops selects, whichever equal ones
    if not (np.array_equal(np.sort(chosen), np.sort(ours)) and np.all(np.diff(chosen) <= 0)):
        return None
    return Check("", "explained", reason("ties", "openvino-onnx", case.op),
                 f"{first_difference(ARG_MAX.outputs, got, want)}; OpenVINO's answer is another valid selection: the same values "
                 f"in ortops' order (NaN above +inf, -0.0 == +0.0), descending, other flat indices among equal "
                 f"values: {short(got)}", topic="ties")


#: How OpenVINO's answer is judged (:class:`ortops.conformance.contracts.OpenVinoJudge`).
OPENVINO = SimpleNamespace(matches=_openvino_matches, explain=_openvino_explain,
                           explain_standalone=_explain_standalone)


# --- real ncnn ----------------------------------------------------------------------------------


def _ncnn_explain(case: Case, got, want, run) -> Check | None:
    """An explained check (topic ``nan``) when NaN order accounts for the difference, else None.

    ``run(inputs) -> Outcome`` runs ncnn on other inputs of the case.
    """
    data = case.inputs["data"]
    if not has_nan(data) or np.unique(data).size >= 2**24:
        return None
    ranked = run({**case.inputs, "data": order_ranks(data)})
    if not ranked.ok or not np.array_equal(np.asarray(ranked.value)[-1], np.asarray(want)[-1]):
        return None
    nans = np.flatnonzero(np.isnan(data.reshape(-1))).tolist()
    got = np.asarray(got)
    values = f"; its values {_short(got[0].tolist())}" if got.shape[0] == 2 else ""
    return Check("ncnn", "explained", reason("nan", "ncnn", case.op), topic="nan", detail=
                 f"NaN at flat indices {_short(nans)}: ncnn returned indices {_short(got[-1].astype(int).tolist())}"
                 f"{values}; ortops {_short(np.asarray(want)[-1].astype(int).tolist())}. On the data replaced by its "
                 "ranks in ortops' order (NaN above +inf) - the same selection without NaN - ncnn agrees with ortops")


#: How real ncnn's answer is judged (:class:`ortops.conformance.contracts.NcnnJudge`).
NCNN = SimpleNamespace(
    RUNNER=run,  # runs ncnn's layer in the oracle's child process
    # OpError kinds whose cases are not sent to ncnn, with the reason: ncnn's layer has no dtype
    # (it reads float32 from whatever buffer it is given), so another dtype has no ncnn meaning.
    NOT_RUN={"dtype": "ncnn's ArgMax reads float32 only (a Mat has no dtype); ortops refuses other dtypes: "
                      "not run in ncnn"},
    expected=lambda inputs, attrs: expected(inputs, attrs)[0],  # ortops' answer in ncnn's layout
    isolate=lambda case: has_nan(case.inputs["data"]),  # a child process of its own: NaN in the data
    matches=lambda case, got, want: _identical(got, want),  # bit for bit (NaN equal to NaN)
    difference=lambda got, want: _describe(np.asarray(got), np.asarray(want)),  # what differs, row by row
    explain=_ncnn_explain,
)


# --- ortops compare: two runtimes at an arg-max node --------------------------------------------

def _standard(largest: bool):
    def classify(capture: Capture) -> Finding:
        node = capture.node
        data = np.asarray(capture.inputs[0])
        axis = attribute(node, "axis", 0)
        other_data = None if capture.other_inputs is None else np.asarray(capture.other_inputs[0])
        answers = []
        for out, own in ((capture.base[0], data), (capture.other[0], data if other_data is None else other_data)):
            idx = np.asarray(out).astype(np.int64)
            if not attribute(node, "keepdims", 1):
                idx = np.expand_dims(idx, axis)
            if np.any(idx < 0) or np.any(idx >= data.shape[axis]):
                return Finding(None, False, f"an index is outside [0, {data.shape[axis] - 1}]")
            answers.append((np.take_along_axis(own, idx, axis), idx))
        what = "maximum" if largest else "minimum"
        return judge_selection(data, axis, 1, largest, answers, (capture.base_runtime, capture.other_runtime),
                               what=what, other_data=other_data, atol=capture.atol, rtol=capture.rtol)

    return classify


def _ncnn(capture: Capture) -> Finding:
    data = np.asarray(capture.inputs[0]).reshape(1, -1)
    topk = attribute(capture.node, "topk", 1)
    answers = []
    for out in (capture.base[0], capture.other[0]):
        out = np.asarray(out)
        idx = out[-1].astype(np.int64).reshape(1, -1)
        if np.any(idx < 0) or np.any(idx >= data.shape[1]):
            return Finding(None, False, f"an index is outside [0, {data.shape[1] - 1}]")
        answers.append((data[:, idx[0]].astype(data.dtype), idx))
    return judge_selection(data, 1, topk, True, answers, (capture.base_runtime, capture.other_runtime))


def _check_topk(node, inputs) -> Finding | None:
    data = inputs[0]
    topk = attribute(node, "topk", 1)
    if data is not None and not 1 <= topk <= data.size:
        return Finding("k-range", True, f"topk={topk} is outside [1, {data.size}] (the data's element count)")
    return None


AUDITS = {
    ("", "ArgMax"): Audit(_standard(True)),
    ("", "ArgMin"): Audit(_standard(False)),
    (NCNN_DOMAIN, "ArgMax"): Audit(_ncnn, precheck=_check_topk),
}
