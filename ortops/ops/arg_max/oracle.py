"""How OpenVINO's answer on an ncnn ArgMax case is judged (see :mod:`ortops.conformance.openvino_oracle`).

OpenVINO runs the exact composition of :mod:`ortops.ops.arg_max.openvino`: the answer must be
ortops' exactly; with NaN (undefined in ncnn) a difference is explained when OpenVINO agrees
on the data replaced by its ranks in ortops' order.
"""

from __future__ import annotations

import numpy as np

from ... import reference
from ...verdicts import Case, Check, verdict
from .spec import ARG_MAX
from ...arrays import bitwise_same, first_difference, has_nan, order_ranks, same, short
from ...divergences import reason

__all__ = ["model", "expected", "matches", "explain", "explain_standalone", "explain_standalone_error"]


def model(case: Case):
    """The ONNX model ortops runs for ``case``."""
    from ...builder import arg_max_model

    attrs = dict(out_max_val=case.attrs.get("out_max_val", 0), topk=case.attrs.get("topk", 1))
    return arg_max_model(case.inputs["data"].ndim, **attrs)


def expected(inputs: dict, attrs: dict) -> list[np.ndarray]:
    """ortops' answer (the reference)."""
    return [reference.arg_max(inputs["data"], **attrs)]


def matches(case: Case, got, want) -> tuple[bool, bool]:
    """(matches, only as another allowed answer): exact."""
    return same(got[0], want[0]), False


def explain(case: Case, got, want, ov) -> Check | None:
    """An explained check when NaN order accounts for the difference."""
    if not has_nan(case.inputs["data"]):
        return None
    evidence = ov.nan_evidence(case)
    if evidence:
        return verdict("openvino", "explained", "nan", reason("nan", "openvino"),
                        f"{first_difference(ARG_MAX.outputs, got, want)}; {evidence}; OpenVINO: {short(got)}")
    return None


# --- the standalone lowering, run natively in OpenVINO ------------------------------------------


def _selection(ranks: np.ndarray, topk: int) -> np.ndarray:
    """ncnn's selection on ``ranks`` (flat): descending, the higher index first among equals."""
    backwards = np.argsort(-ranks[::-1], kind="stable")[:topk]
    return ranks.size - 1 - backwards


def explain_standalone(case: Case, got, want) -> Check | None:
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
    chosen, ours = ranks[indices], ranks[_selection(ranks, topk)]
    if not (np.array_equal(np.sort(chosen), np.sort(ours)) and np.all(np.diff(chosen) <= 0)):
        return None
    return Check("", "explained", reason("ties", "openvino-onnx", case.op),
                 f"{first_difference(ARG_MAX.outputs, got, want)}; OpenVINO's answer is another valid selection: the same values "
                 f"in ortops' order (NaN above +inf, -0.0 == +0.0), descending, other flat indices among equal "
                 f"values: {short(got)}", topic="ties")


def explain_standalone_error(case: Case, got, error) -> Check | None:
    """The standalone lowering run in OpenVINO returned outputs where ortops raises: explained
    (topic ``"float-index-precision"``) when ortops rejects a selected flat index above 2**24
    and OpenVINO returned that index rounded as float32 rounds it (its TopK's indices past 2**24
    are not exact: the check on them passed)."""
    if error.kind != "precision":
        return None
    flat = case.inputs["data"].reshape(-1)
    true = _selection(order_ranks(flat).astype(np.float64), case.attrs.get("topk", 1))
    out = np.asarray(got[0])
    if out.shape[-1] != true.size or not np.array_equal(out[-1], true.astype(np.float32)):
        return None
    return Check("", "explained", reason("float-index-precision", "openvino-onnx", case.op),
                 f"ortops: {error}; OpenVINO returns {short(got)} for the flat indices {true.tolist()}",
                 topic="float-index-precision")
