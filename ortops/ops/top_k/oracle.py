"""How OpenVINO's answer on a TopK case is judged (see :mod:`ortops.conformance.openvino_oracle`).

* Selections compare exactly. With ``stable=0`` or ``sort="none"`` any valid top-k is accepted
  (:func:`~ortops.ops.top_k.conformance.valid_top_k`).
* A difference is explained when a known narrowing of the CPU plugin (int32 for
  int64/uint32/uint64, float32 for float64) reproduces it, when ``sort="index"`` only kept other
  equal values at the k boundary (OpenVINO's own ``sort="value"`` answer, re-ordered by index,
  is ortops'), or, with NaN, when OpenVINO agrees on the data replaced by its ranks.
"""

from __future__ import annotations

import numpy as np

from onnx.helper import np_dtype_to_tensor_dtype

from ...checks import normalize_axis
from ...interop.openvino import to_work
from ...verdicts import Case, Check, verdict
from .spec import INDEX_ELEMENT_TYPES, TOP_K
from ...arrays import bitwise_same, first_difference, has_nan, order_ranks, same, short
from ...divergences import reason
from .conformance import reference_answer, valid_top_k

__all__ = ["ALTERNATIVE", "model", "expected", "matches", "check_output", "explain", "explain_standalone"]

#: What an accepted different answer is (the spec leaves it open).
ALTERNATIVE = "another valid top-k among equal values"


def model(case: Case):
    """The ONNX model ortops runs for ``case``."""
    from ...builder import top_k_model

    data, k = case.inputs["data"], case.inputs["k"]
    return top_k_model(np_dtype_to_tensor_dtype(data.dtype), data.ndim, **case.attrs, k_type=np_dtype_to_tensor_dtype(k.dtype),
                       k_shape=k.shape)


def expected(inputs: dict, attrs: dict) -> list[np.ndarray]:
    """ortops' answer (the reference), float16 carried through float32 as ortops does (exact)."""
    return list(reference_answer(inputs["data"], inputs["k"], attrs))


def matches(case: Case, got, want) -> tuple[bool, bool]:
    """(matches, only as another valid top-k)."""
    data, attrs = case.inputs["data"], case.attrs
    if same(got[0], want[0]) and same(got[1], want[1]):
        return True, False
    order_defined = attrs["sort"] != "none" and bool(attrs["stable"])
    axis = normalize_axis("TopK", attrs["axis"], data.ndim)
    if not order_defined and valid_top_k(data, axis, attrs, got[0], got[1], want[0]):
        return True, True
    return False, False


def check_output(case: Case, got) -> Check | None:
    """An unexplained check when OpenVINO's indices do not have the type index_element_type asks."""
    index_type = INDEX_ELEMENT_TYPES[case.attrs.get("index_element_type", "i32")]
    if got[1].dtype != index_type:
        return verdict("openvino", "unexplained", None, "OpenVINO's indices have the wrong type",
                        f"{got[1].dtype}, index_element_type={case.attrs.get('index_element_type')}")
    return None


def _hypotheses(case: Case) -> list[tuple[str, str, np.dtype]]:
    """(topic, what it recomputes, the type OpenVINO CPU computes in) for TopK's known
    narrowing of the data type."""
    dtype = case.inputs["data"].dtype
    if dtype == np.float64:
        return [("float64-precision", "ortops' answer on the data rounded to float32 (+-inf saturating to "
                 "+-3.4e38)", np.dtype(np.float32))]
    if dtype == np.uint64:
        return [("uint64", "ortops' answer on the data wrapped to int32", np.dtype(np.int32))]
    if dtype in (np.int64, np.uint32):
        return [("int32-narrowing", "ortops' answer on the data wrapped to int32", np.dtype(np.int32))]
    return []


def _narrowings(case: Case):
    """``(topic, what, work type, the data as the CPU plugin computes it)`` for each known
    narrowing of :func:`_hypotheses` that changes some value of the data (one that changes
    none cannot be the cause of a difference)."""
    data = case.inputs["data"]
    for topic, what, work in _hypotheses(case):
        narrowed = to_work(data, work)
        if work.kind == "f":
            unchanged = same(narrowed.astype(data.dtype), data)
        else:  # as numbers: uint32 -> int32 loses nothing on the way back, but reorders
            unchanged = bool(np.all(narrowed.astype(object) == data.astype(object)))
        if not unchanged:
            yield topic, what, work, narrowed


def _explain_narrowing(case: Case, got, ov) -> Check | None:
    """A known TopK narrowing that accounts for OpenVINO's answer, compared in the type the CPU
    plugin computes in (so that order and ties are judged as OpenVINO sees the values)."""
    for topic, what, work, narrowed in _narrowings(case):
        seen = Case(case.name, case.op, case.source, {**case.inputs, "data": narrowed}, case.attrs)
        model = expected(seen.inputs, case.attrs)
        got_seen = [to_work(got[0], work), got[1]]
        ok, _ = matches(seen, got_seen, model)
        ties = ""
        if not ok:  # sort=index keeps its own equal values at the k boundary
            evidence = index_ties_evidence(case, got_seen, model, ov, work)
            ok, ties = bool(evidence), f", up to equal values at the k boundary ({evidence})"
        if ok:
            want = expected(case.inputs, case.attrs)
            return verdict("openvino", "explained", topic, reason(topic, "openvino", case.op),
                          f"{first_difference(TOP_K.outputs, got, want)}; OpenVINO's answer equals {what}{ties}: {short(got)}")
    return None


def index_ties_evidence(case: Case, got, want, ov, work=None) -> str | None:
    """TopK sort=index: OpenVINO's answer is a valid top-k that keeps other equal values than
    ortops at the k boundary, and OpenVINO's own sort=value answer, re-ordered by index, is
    ortops' answer: the difference is only which equal values sort=index selects.

    ``ov`` runs OpenVINO again (:class:`ortops.conformance.contracts.OpenVinoTools`). With
    ``work``, values are compared as OpenVINO's CPU plugin computes them (``got`` and
    ``want`` already in that type)."""
    attrs = case.attrs
    data = case.inputs["data"] if work is None else to_work(case.inputs["data"], work)
    axis = normalize_axis("TopK", attrs["axis"], data.ndim)
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


def explain(case: Case, got, want, ov) -> Check | None:
    """An explained check when a known behaviour of OpenVINO accounts for the difference."""
    check = _explain_narrowing(case, got, ov)
    if check is not None:
        return check
    diff = first_difference(TOP_K.outputs, got, want)
    data = case.inputs["data"]
    if not has_nan(data):
        evidence = index_ties_evidence(case, got, want, ov)
        if evidence:
            return verdict("openvino", "explained", "ties", reason("ties", "openvino", case.op),
                            f"{diff}; {evidence}; OpenVINO: {short(got)}")
        return None
    # sort=index picks its own equal values
    evidence = ov.nan_evidence(case, fallback=lambda c, g, w: index_ties_evidence(c, g, w, ov))
    if evidence:
        return verdict("openvino", "explained", "nan", reason("nan", "openvino"), f"{diff}; {evidence}; OpenVINO: {short(got)}")
    return None


# --- the standalone lowering, run natively in OpenVINO ------------------------------------------


def _work(case: Case) -> tuple[str, np.dtype]:
    """(topic, the type OpenVINO's CPU plugin computes the data in): a narrowing topic when that
    type changes some value of the data, else ``"ties"``."""
    narrowing = next(_narrowings(case), None)
    return (narrowing[0], narrowing[2]) if narrowing else ("ties", case.inputs["data"].dtype)


def explain_standalone(case: Case, got, want) -> Check | None:
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
    topic, work = _work(case)
    seen = to_work(data, work)
    axis = normalize_axis("TopK", attrs["axis"], data.ndim)
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
