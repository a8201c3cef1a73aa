"""The one judge of ``ortops.openvino::TopK`` (OpenVINO TopK-11): is an answer acceptable, and if
not, which known divergence (topic) explains it - for every caller: the conformance suite
(ortops in ORT against the reference and ORT's built-in TopK), the OpenVINO and lowered-path
oracles (:data:`OPENVINO`) and ``ortops compare``'s node audits (:data:`AUDITS`).

How each oracle is compared, and what explains a difference: docs/conformance.md, "How each op
is judged", TopK.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from onnx import TensorProto, helper
from onnx.helper import np_dtype_to_tensor_dtype

from ...arrays import bitwise_same, first_difference, has_nan, has_ties, order_ranks, preview, same, short
from ...builder import TOP_K_VERSIONS, dims, make_model, onnx_top_k, onnx_top_k_model, top_k, top_k_model, top_k_side_by_side
from ...divergences import reason
from ...errors import OpError
from ...graph import attribute
from ...interop.openvino import WORK_TYPES, to_work
from ...sessions import BuiltinUnavailable, ort_version, ortops_session, plain_session
from ...verdicts import Audit, Capture, Case, Check, Difference, Finding, difference, verdict
from ..selection import judge_selection, valid_selection
from ..spec import OPENVINO_DOMAIN
from . import TOP_K
from .checks import INDEX_ELEMENT_TYPES

__all__ = ["judge", "topics", "model", "expected", "case_model", "valid_top_k", "OPENVINO", "AUDITS"]

OP = "TopK"
_FLOATS = (np.float32, np.float64)
_NAN_NOTE = reason("nan", "onnxruntime", OP)


def model(case: Case):
    """The ONNX model ortops runs for ``case``: the ortops node alone."""
    data, k = case.inputs["data"], case.inputs["k"]
    return top_k_model(np_dtype_to_tensor_dtype(data.dtype), data.ndim, **case.attrs,
                       k_type=np_dtype_to_tensor_dtype(k.dtype), k_shape=k.shape)


def expected(inputs: dict, attrs: dict) -> list[np.ndarray]:
    """ortops' answer (the reference); float16 is ranked as float32 as ortops does (exact: the
    same values, the same order). Raises OpError where ortops does."""
    return list(TOP_K.run_reference(inputs, attrs))


def _run_ortops(case: Case):
    return ortops_session(model(case)).run(None, {"data": case.inputs["data"], "k": case.inputs["k"]})


def valid_top_k(data, axis, attrs, values, indices, want_values) -> bool:
    """Whether (values, indices) is a correct top-k of ``data`` when ties may go either way:
    a valid selection of the values ``want_values`` holds
    (:func:`ortops.ops.selection.valid_selection`), in the order ``sort`` asks for (value:
    monotone in the mode's direction; index: ascending indices)."""
    if not valid_selection(data, axis, values, indices, want_values):
        return False
    values, indices = np.asarray(values), np.asarray(indices, np.int64)
    if attrs["sort"] == "value" and values.shape[axis] > 1:
        before, after = np.delete(values, -1, axis=axis), np.delete(values, 0, axis=axis)
        return bool(np.all(before >= after) if attrs["mode"] == "max" else np.all(before <= after))
    if attrs["sort"] == "index":
        return bool(np.all(np.diff(indices, axis=axis) > 0))
    return True


def _order_defined(attrs) -> bool:
    return attrs["sort"] != "none" and bool(attrs["stable"])


def _matches(case: Case, got, want, *, exact: bool = False) -> tuple[bool, bool]:
    """(matches, only as another valid top-k): ``got`` is ``want``, or where the case leaves the
    order open (and not ``exact``) another valid top-k of ``want``'s values."""
    data, attrs = case.inputs["data"], case.attrs
    if same(got[0], want[0]) and same(got[1], want[1]):
        return True, False
    if not exact and not _order_defined(attrs) and valid_top_k(data, attrs["axis"], attrs, got[0], got[1], want[0]):
        return True, True
    return False, False


def _versus(oracle, case, got, want, *, exact: bool = False, left: str = "ortops") -> Check:
    """ortops' answer ``got`` against ``oracle``'s ``want`` (:func:`_matches`, ``exact`` for the reference)."""
    if _matches(case, want, got, exact=exact)[0]:  # the oracle's answer may be another valid top-k of ortops' values
        return Check(oracle, "agree")
    (values, indices), (w_values, w_indices) = got, want
    output = ("indices", indices, w_indices) if same(values, w_values) else ("values", values, w_values)
    diff = difference(*output, left=left, right=oracle)
    if has_nan(case.inputs["data"]):
        return Check(oracle, "explained", _NAN_NOTE, topic="nan", difference=diff)
    return Check(oracle, "unexplained", "results differ", difference=diff)


def _builtin_checks(case: Case, version: int, got) -> list[Check]:
    data, k, attrs = case.inputs["data"], case.inputs["k"], case.attrs
    oracle = f"onnxruntime TopK-{version}"
    if version in (1, 10):
        if attrs["mode"] == "min":
            return [Check(oracle, "skipped", f"TopK-{version} has no 'largest' attribute; mode=min cannot map")]
        if data.dtype not in _FLOATS:
            return [Check(oracle, "skipped", f"TopK-{version}'s spec allows float types only, not {data.dtype}")]
    model = top_k_side_by_side(version, np_dtype_to_tensor_dtype(data.dtype), data.ndim, k=int(k.reshape(())), **attrs)
    try:
        values, indices, b_values, b_indices = ortops_session(model).run(None, {"data": data})
    except BuiltinUnavailable as exc:
        return [Check(oracle, "skipped", f"ORT {ort_version()} has no {data.dtype} TopK-{version} kernel "
                      "(NOT_IMPLEMENTED); compared with the reference only", detail=str(exc),
                      topic="uint64" if data.dtype == np.uint64 else None)]
    if not (same(values, got[0]) and same(indices, got[1])):
        return [Check(oracle, "unexplained", "ortops gave a different answer in the side-by-side model")]
    builtin = (b_values, b_indices)
    if attrs["sort"] == "index":
        order = np.argsort(b_indices, axis=attrs["axis"], kind="stable")
        builtin = tuple(np.take_along_axis(b, order, axis=attrs["axis"]) for b in builtin)
    checks = [_versus(oracle, case, got, builtin)]
    if case.expected is not None:
        want = (case.expected["values"], case.expected["indices"])
        checks.append(_versus(f"{oracle} vs {case.expected_from}", case, builtin, want, left=oracle))
    return checks


def _judge_error(case: Case, error: OpError) -> list[Check]:
    """A case the spec rejects: ortops must raise OpError; ORT's built-in is observed."""
    data, k, attrs = case.inputs["data"], case.inputs["k"], case.attrs
    checks = [Check("reference", "agree")]
    try:
        _run_ortops(case)
    except OpError as exc:
        checks.append(Check("ortops", "agree", detail=f"OpError: {exc.detail}"))
    else:
        checks.append(Check("ortops", "unexplained", "the reference raises OpError, ortops returned a result",
                            detail=str(error)))
    for version in case.onnx_versions:
        oracle = f"onnxruntime TopK-{version}"
        model = onnx_top_k_model(version, np_dtype_to_tensor_dtype(data.dtype), data.ndim, axis=attrs["axis"],
                                 largest=int(attrs["mode"] == "max"))
        try:
            values, _ = plain_session(model).run(None, {"X": data, "K": k.astype(np.int64).reshape(1)})
        except Exception as exc:  # noqa: BLE001 - ORT's own rejection is the observation
            checks.append(Check(oracle, "agree", detail=f"rejects: {str(exc)[:160]}"))
        else:
            checks.append(Check(oracle, "explained", f"k outside [1, dim] is undefined in OpenVINO TopK-11 and ortops "
                                f"raises OpError; ORT's TopK-{version} returns a result", topic="k-range",
                                difference=Difference.outcome("ortops", f"OpError: {error.detail}", oracle,
                                                              f"values {preview(values)}")))
    return checks


def judge(case: Case) -> list[Check]:
    """Run one TopK case through ortops in ORT and judge it against every oracle it has."""
    if case.details.get("dtype") == "bfloat16":
        return _judge_bfloat16(case)
    attrs = case.attrs
    try:
        ref = expected(case.inputs, attrs)
    except OpError as error:
        return _judge_error(case, error)
    got = _run_ortops(case)
    checks = [_versus("reference", case, got, ref, exact=True)]
    if np.asarray(got[1]).dtype != INDEX_ELEMENT_TYPES[attrs["index_element_type"]]:
        checks.append(Check("index dtype", "unexplained", f"indices came back as {got[1].dtype}"))
    if case.expected is not None:
        want = (case.expected["values"], case.expected["indices"])
        checks.append(_versus(case.expected_from, case, got, want))
    for version in case.onnx_versions:
        checks += _builtin_checks(case, version, got)
    return checks


def _bfloat16_model(data: np.ndarray, k: int, attrs: dict, version: int | None):
    """float32 in, Cast to bfloat16, ortops TopK (and TopK-``version``), Cast back to float32.

    ORT takes no bfloat16 array from NumPy, so the cast happens inside the graph; the case's
    values are chosen exactly representable in bfloat16, so the float32 outputs are exact.
    """
    bf16, f32 = TensorProto.BFLOAT16, TensorProto.FLOAT
    nodes = [helper.make_node("Cast", ["data"], ["data_bf16"], to=bf16),
             top_k("data_bf16", "k", **attrs, outputs=("values_bf16", "indices"), name="ortops_top_k"),
             helper.make_node("Cast", ["values_bf16"], ["values"], to=f32)]
    index_type = np_dtype_to_tensor_dtype(INDEX_ELEMENT_TYPES[attrs["index_element_type"]])
    out_dims = [None] * data.ndim
    outputs = [("values", f32, out_dims), ("indices", index_type, out_dims)]
    if version is not None:
        nodes += [onnx_top_k(version, "data_bf16", "k", axis=attrs["axis"], largest=int(attrs["mode"] == "max"),
                             outputs=("onnx_values_bf16", "onnx_indices"), name=f"onnx_top_k_{version}"),
                  helper.make_node("Cast", ["onnx_values_bf16"], ["onnx_values"], to=f32)]
        outputs += [("onnx_values", f32, out_dims), ("onnx_indices", TensorProto.INT64, out_dims)]
    return make_model(nodes, [("data", f32, dims(data.ndim))], outputs, onnx_opset=TOP_K_VERSIONS.get(version, 24),
                      initializers=[helper.make_tensor("k", TensorProto.INT64, [1], [k])])


def case_model(case: Case):
    """The model a saved case holds (``--save-cases``) when it is not the plain ortops node:
    for bfloat16 data, float32 in, a Cast to bfloat16, the ortops TopK, a Cast back (k is an
    initializer). None for every other case."""
    if case.details.get("dtype") != "bfloat16":
        return None
    return _bfloat16_model(case.inputs["data"], int(case.inputs["k"].reshape(-1)[0]), case.attrs, None)


def _judge_bfloat16(case: Case) -> list[Check]:
    data, k, attrs = case.inputs["data"], int(case.inputs["k"].reshape(-1)[0]), case.attrs
    got = ortops_session(_bfloat16_model(data, k, attrs, None)).run(None, {"data": data})
    checks = [_versus("reference", case, got, expected(case.inputs, attrs), exact=True)]
    for version in case.onnx_versions:
        oracle = f"onnxruntime TopK-{version}"
        try:
            ortops_session(_bfloat16_model(data, k, attrs, version))
        except BuiltinUnavailable as exc:
            checks.append(Check(oracle, "skipped", f"ORT {ort_version()} has no bfloat16 TopK-{version} kernel "
                                "(NOT_IMPLEMENTED); compared with the reference only", detail=str(exc),
                                topic="float16-bfloat16"))
        else:
            checks.append(Check(oracle, "unexplained", "ORT ran a bfloat16 TopK: the skip reason is out of date"))
    return checks


def topics(case: Case) -> set[str]:
    """The divergence topics of a TopK case beyond its dtype (see :mod:`ortops.conformance.matrix`)."""
    data = case.inputs["data"]
    k, axis = int(np.asarray(case.inputs["k"]).reshape(-1)[0]), case.attrs["axis"]
    if data.ndim and -data.ndim <= axis < data.ndim and not 1 <= k <= data.shape[axis]:
        return {"k-range"}
    if data.size and not has_nan(data) and has_ties(data):
        return {"ties"}
    return set()


# --- OpenVINO -----------------------------------------------------------------------------------

def _openvino_check_output(case: Case, got) -> Check | None:
    """An unexplained check when OpenVINO's indices do not have the type index_element_type asks."""
    index_type = INDEX_ELEMENT_TYPES[case.attrs.get("index_element_type", "i32")]
    if got[1].dtype != index_type:
        return verdict("openvino", "unexplained", None, "OpenVINO's indices have the wrong type",
                        f"{got[1].dtype}, index_element_type={case.attrs.get('index_element_type')}")
    return None


def _narrowing(case: Case) -> tuple[str, str, np.dtype, np.ndarray] | None:
    """``(topic, what, work type, the data as the CPU plugin computes it)`` for TopK's known
    narrowing of the data type, when it changes some value of the data (one that changes none
    cannot be the cause of a difference), else None."""
    data = case.inputs["data"]
    if data.dtype not in WORK_TYPES:
        return None
    work, topic = WORK_TYPES[data.dtype]
    narrowed = to_work(data, work)
    if work.kind == "f":
        what = "ortops' answer on the data rounded to float32 (+-inf saturating to +-3.4e38)"
        unchanged = same(narrowed.astype(data.dtype), data)
    else:
        what = "ortops' answer on the data wrapped to int32"
        # as numbers: uint32 -> int32 loses nothing on the way back, but reorders
        unchanged = bool(np.all(narrowed.astype(object) == data.astype(object)))
    return None if unchanged else (topic, what, narrowed.dtype, narrowed)


def _explain_narrowing(case: Case, got, want, ov) -> Check | None:
    """A known TopK narrowing that accounts for OpenVINO's answer, compared in the type the CPU
    plugin computes in (so that order and ties are judged as OpenVINO sees the values)."""
    narrowing = _narrowing(case)
    if narrowing is None:
        return None
    topic, what, work, narrowed = narrowing
    seen = Case(case.name, case.op, case.source, {**case.inputs, "data": narrowed}, case.attrs)
    model = expected(seen.inputs, case.attrs)
    got_seen = [to_work(got[0], work), got[1]]
    ok, _ = _matches(seen, got_seen, model)
    ties = ""
    if not ok:  # sort=index keeps its own equal values at the k boundary
        evidence = index_ties_evidence(case, got_seen, model, ov, work)
        ok, ties = bool(evidence), f", up to equal values at the k boundary ({evidence})"
    if not ok:
        return None
    return verdict("openvino", "explained", topic, reason(topic, "openvino", case.op),
                   f"{first_difference(TOP_K.outputs, got, want)}; OpenVINO's answer equals {what}{ties}: {short(got)}")


def index_ties_evidence(case: Case, got, want, ov, work=None) -> str | None:
    """TopK sort=index: OpenVINO's answer is a valid top-k that keeps other equal values than
    ortops at the k boundary, and OpenVINO's own sort=value answer, re-ordered by index, is
    ortops' answer: the difference is only which equal values sort=index selects.

    ``ov`` runs OpenVINO again (:class:`ortops.conformance.contracts.OpenVinoTools`). With
    ``work``, values are compared as OpenVINO's CPU plugin computes them (``got`` and
    ``want`` already in that type)."""
    attrs = case.attrs
    data = case.inputs["data"] if work is None else to_work(case.inputs["data"], work)
    axis = attrs["axis"]
    if attrs["sort"] != "index" or not valid_top_k(data, axis, attrs, got[0], got[1], want[0]):
        return None
    by_value = ov.run_openvino(Case(case.name, case.op, case.source, case.inputs, {**attrs, "sort": "value"}))
    if work is not None:
        by_value[0] = to_work(by_value[0], work)
    order = np.argsort(by_value[1], axis=axis, kind="stable")
    reordered = [np.take_along_axis(a, order, axis=axis) for a in by_value]
    if not (same(reordered[0], want[0]) and same(reordered[1], want[1])):
        return None
    return ("OpenVINO's answer is a valid top-k (same values, ascending indices) holding other equal values at the "
            "k boundary; OpenVINO's own sort='value' answer, re-ordered by index, equals ortops'")


def _openvino_explain(case: Case, got, want, ov) -> Check | None:
    """An explained check when a known behaviour of OpenVINO accounts for the difference."""
    check = _explain_narrowing(case, got, want, ov)
    if check is not None:
        return check
    if has_nan(case.inputs["data"]):  # the NaN row is every op's; sort=index picks its own equal values
        topic, op = "nan", None
        evidence = ov.nan_evidence(case, fallback=lambda c, g, w: index_ties_evidence(c, g, w, ov))
    else:
        topic, op, evidence = "ties", case.op, index_ties_evidence(case, got, want, ov)
    if not evidence:
        return None
    return verdict("openvino", "explained", topic, reason(topic, "openvino", op),
                   f"{first_difference(TOP_K.outputs, got, want)}; {evidence}; OpenVINO: {short(got)}")


# --- the standalone lowering, run natively in OpenVINO ------------------------------------------


def _explain_standalone(case: Case, got, want) -> Check | None:
    """The standalone lowering run in OpenVINO (:mod:`ortops.conformance.lowering`): an
    explained check when OpenVINO's answer is another valid top-k in ortops' order.

    OpenVINO's ONNX frontend reads ONNX TopK as its TopK-11 with ``stable=false``, so among
    equal values it does not put the lower index first, as ONNX TopK specifies and the lowering
    relies on. The evidence, on the data as the CPU plugin computes it (int64/uint32 wrapped to
    int32, float64 rounded to float32): every returned value is the data's value at its index
    (bit for bit), the indices are distinct, and they select the same values as ortops in
    ortops' order (NaN above +inf, all NaNs equal, -0.0 == +0.0) and in the order ``sort``
    asks for. The topic is ``"ties"``, or the narrowing's when the type changed a value."""
    data, attrs = case.inputs["data"], case.attrs
    narrowing = _narrowing(case)  # the topic is the narrowing's when it changed a value, else "ties"
    topic, work = (narrowing[0], narrowing[2]) if narrowing else ("ties", data.dtype)
    seen = to_work(data, work)
    axis = attrs["axis"]
    indices = np.asarray(got[1]).astype(np.int64)
    if indices.shape != want[1].shape or np.any(indices < 0) or np.any(indices >= data.shape[axis]):
        return None
    if not bitwise_same(np.take_along_axis(seen, indices, axis=axis), to_work(np.asarray(got[0]), work)):
        return None
    ranks = order_ranks(seen).astype(np.float64)
    want_seen = expected({**case.inputs, "data": seen}, attrs)[1].astype(np.int64)
    if not valid_top_k(ranks, axis, attrs, np.take_along_axis(ranks, indices, axis=axis), indices,
                       np.take_along_axis(ranks, want_seen, axis=axis)):
        return None
    runtime = "openvino" if topic != "ties" else "openvino-onnx"
    return Check("", "explained", reason(topic, runtime, case.op),
                 f"{first_difference(TOP_K.outputs, got, want)}; OpenVINO's answer is another valid top-k: the data's own "
                 f"values{' as the CPU plugin computes them' if topic != 'ties' else ''}, the same selection in "
                 f"ortops' order (NaN above +inf, -0.0 == +0.0), other indices among equal values: {short(got)}",
                 topic=topic)


#: How OpenVINO's answer is judged (:class:`ortops.conformance.contracts.OpenVinoJudge`).
OPENVINO = SimpleNamespace(
    ALTERNATIVE="another valid top-k among equal values",  # what an accepted different answer is
    matches=_matches, check_output=_openvino_check_output, explain=_openvino_explain,
    explain_standalone=_explain_standalone,
)


# --- ortops compare: two runtimes at a TopK node ------------------------------------------------

def _k(node, inputs) -> int | None:
    if len(inputs) > 1 and inputs[1] is not None:
        return int(np.asarray(inputs[1]).reshape(-1)[0])
    return attribute(node, "k")  # TopK-1


def _check_k(node, inputs) -> Finding | None:
    data = inputs[0]
    if data is None:
        return None
    k, axis = _k(node, inputs), attribute(node, "axis", -1)
    if not -data.ndim <= axis < data.ndim:
        return None
    size = data.shape[axis]
    if k is not None and not 1 <= k <= size:
        return Finding("k-range", True, f"k={k} is outside [1, {size}] for axis {axis} of shape {data.shape}")
    return None


def _classify(capture: Capture, *, largest: bool, ordered: str) -> Finding:
    data = np.asarray(capture.inputs[0])
    k = _k(capture.node, capture.inputs)
    axis = attribute(capture.node, "axis", -1)
    other = None if capture.other_inputs is None else capture.other_inputs[0]
    return judge_selection(data, axis, k, largest, [tuple(capture.base[:2]), tuple(capture.other[:2])],
                           (capture.base_runtime, capture.other_runtime), ordered=ordered, other_data=other,
                           atol=capture.atol, rtol=capture.rtol)


def _onnx(capture: Capture) -> Finding:
    node = capture.node
    ordered = "value" if attribute(node, "sorted", 1) else "none"
    return _classify(capture, largest=bool(attribute(node, "largest", 1)), ordered=ordered)


def _ortops(capture: Capture) -> Finding:
    node = capture.node
    return _classify(capture, largest=attribute(node, "mode") == "max", ordered=attribute(node, "sort", "value"))


AUDITS = {
    ("", "TopK"): Audit(_onnx, precheck=_check_k),
    (OPENVINO_DOMAIN, "TopK"): Audit(_ortops, precheck=_check_k),
}
