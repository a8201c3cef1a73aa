"""How OpenVINO's answer on a ScatterElementsUpdate case is judged (see
:mod:`ortops.conformance.openvino_oracle`).

* Computed floats compare with :func:`ortops.arrays.tolerance`; with
  ``reduction="none"`` and several updates for one element, any of them is accepted.
* A difference is explained when OpenVINO's answer equals a recomputation of the CPU plugin's
  known behaviour (truncating and element-type-accumulating integer mean, int32 arithmetic for
  int64/uint32/uint64, float32 for float64, float32/float16 accumulation), or, with NaN, when
  every differing element is one whose reduction saw a NaN.
* Invalid cases are never run in OpenVINO (:data:`RUN_INVALID`).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from onnx.helper import np_dtype_to_tensor_dtype

from ... import reference
from ...checks import normalize_axis
from ...interop.openvino import to_work
from ...verdicts import Case, Check, verdict
from .spec import SCATTER_ELEMENTS_UPDATE
from ...arrays import close, equal, first_difference, has_nan, same, short
from ...divergences import reason
from ...dtypes import wrap

__all__ = ["ALTERNATIVE", "RUN_INVALID", "NOT_RUN", "model", "expected", "matches", "explain", "explain_standalone"]

#: What an accepted different answer is (the spec leaves it open).
ALTERNATIVE = "another of the updates where several hit one element"
#: Whether OpenVINO runs the cases ortops rejects.
RUN_INVALID = False
NOT_RUN = ("ortops raises OpError; OpenVINO is not run on invalid ScatterElementsUpdate inputs: its CPU plugin "
           "does not check them all (an index below -d made it write outside its buffer and abort the process: "
           "'free(): invalid next size')")


def model(case: Case):
    """The ONNX model ortops runs for ``case``."""
    from ...builder import scatter_elements_update_model

    data, indices, axis = case.inputs["data"], case.inputs["indices"], case.inputs["axis"]
    attrs = dict(reduction=case.attrs.get("reduction", "none"), use_init_val=case.attrs.get("use_init_val", 1))
    return scatter_elements_update_model(np_dtype_to_tensor_dtype(data.dtype), data.ndim, **attrs,
                                         indices_type=np_dtype_to_tensor_dtype(indices.dtype),
                                         axis_type=np_dtype_to_tensor_dtype(axis.dtype), axis_shape=axis.shape)


def expected(inputs: dict, attrs: dict) -> list[np.ndarray]:
    """ortops' answer (the reference), float16 computed in float64 and rounded once as ortops does."""
    data = inputs["data"]
    if data.dtype == np.float16:
        out = reference.scatter_elements_update(data.astype(np.float64), inputs["indices"],
                                                inputs["updates"].astype(np.float64), inputs["axis"], **attrs)
        return [out.astype(np.float16)]
    return [reference.scatter_elements_update(data, inputs["indices"], inputs["updates"], inputs["axis"], **attrs)]


def _duplicate_targets(indices, axis_value, data_shape) -> dict[tuple, list[tuple]]:
    """target position -> the update positions that go there (row-major order)."""
    axis = normalize_axis("ScatterElementsUpdate", int(axis_value), len(data_shape))
    dim = data_shape[axis]
    targets: dict[tuple, list[tuple]] = {}
    for pos in np.ndindex(*indices.shape):
        i = int(indices[pos])
        target = pos[:axis] + (i + dim if i < 0 else i,) + pos[axis + 1:]
        targets.setdefault(target, []).append(pos)
    return targets


def matches(case: Case, got, want) -> tuple[bool, bool]:
    data = case.inputs["data"]
    if close(got[0], want[0], data.dtype):
        return True, False
    if case.attrs.get("reduction", "none") != "none" or np.asarray(got[0]).shape != want[0].shape:
        return False, False
    # reduction="none": where several updates hit one element, the spec leaves the winner open
    updates = case.inputs["updates"]
    targets = _duplicate_targets(case.inputs["indices"], np.asarray(case.inputs["axis"]).reshape(-1)[0], data.shape)
    differ = np.argwhere(~equal(got[0], want[0]))
    for where in map(tuple, differ):
        sources = targets.get(where, [])
        if len(sources) < 2 or not any(same(got[0][where], updates[p]) for p in sources):
            return False, False
    return True, True


def _trunc_div(total: int, count: int) -> int:
    q = abs(total) // count
    return -q if total < 0 else q


def _cpu_scatter(case: Case, work, *, wrapping: bool, mean: str) -> np.ndarray:
    """ScatterElementsUpdate as OpenVINO's CPU plugin computes it, sequentially in row-major
    order of ``indices``: inputs converted to ``work`` (int32 wraps, float32 rounds), each
    update combined in ``work`` (integers wrap when ``wrapping``, else exact), the integer mean
    divided by ``mean`` ("trunc" toward zero or "floor"), max/min as ``u > acc ? u : acc``
    (NaN updates never win), the result converted back to the case's dtype."""
    data, indices, updates = case.inputs["data"], case.inputs["indices"], case.inputs["updates"]
    reduction, use_init = case.attrs.get("reduction", "none"), case.attrs.get("use_init_val", 1)
    work = np.dtype(work)
    out, upd = to_work(data, work), to_work(updates, work)
    is_int = work.kind in "iu"
    targets = _duplicate_targets(indices, np.asarray(case.inputs["axis"]).reshape(-1)[0], data.shape)
    for target, sources in targets.items():
        values = [upd[p] for p in sources]
        if reduction == "none":
            out[target] = values[-1]
            continue
        if work == np.bool_:
            combine = {"sum": any, "max": any, "prod": all, "min": all}[reduction]
            out[target] = combine(([bool(out[target])] if use_init else []) + [bool(v) for v in values])
            continue
        acc = _start(out[target], reduction, work, use_init, is_int)
        count = 1 if use_init else 0
        for v in values:
            count += 1
            if is_int:
                v = int(v)
                acc = {"sum": acc + v, "mean": acc + v, "prod": acc * v, "max": v if v > acc else acc,
                       "min": v if v < acc else acc}[reduction]
                acc = wrap(acc, work) if wrapping else acc
            else:
                acc = {"sum": lambda: acc + v, "mean": lambda: acc + v, "prod": lambda: acc * v,
                       "max": lambda: v if v > acc else acc, "min": lambda: v if v < acc else acc}[reduction]()
        if reduction == "mean":
            if is_int:
                acc = _trunc_div(acc, count) if mean == "trunc" else acc // count
            else:
                acc = acc / work.type(count)
        out[target] = wrap(acc, work) if is_int else acc
    with np.errstate(all="ignore"):
        return out.astype(data.dtype)


def _start(value, reduction, work, use_init, is_int):
    if use_init:
        return int(value) if is_int else work.type(value)
    if reduction in ("sum", "mean"):
        return 0 if is_int else work.type(0)
    if reduction == "prod":
        return 1 if is_int else work.type(1)
    if is_int:
        info = np.iinfo(work)
        return int(info.min if reduction == "max" else info.max)
    return work.type(-np.inf if reduction == "max" else np.inf)


def _nan_evidence(case: Case, got, want) -> str | None:
    """Differences only at elements whose reduction saw a NaN (in data or an update)."""
    data, updates = case.inputs["data"], case.inputs["updates"]
    targets = _duplicate_targets(case.inputs["indices"], np.asarray(case.inputs["axis"]).reshape(-1)[0], data.shape)
    differ = [tuple(w) for w in np.argwhere(~equal(got[0], want[0]))]
    touched_nan = {t for t, sources in targets.items()
                   if np.isnan(data[t]) or any(np.isnan(updates[p]) for p in sources)}
    if differ and all(w in touched_nan for w in differ):
        return f"the {len(differ)} differing element(s) are exactly among the {len(touched_nan)} whose reduction saw a NaN"
    return None


def _hypotheses(case: Case) -> list[tuple[str, str, Callable[[], np.ndarray]]]:
    """(topic, what it recomputes, recompute) for OpenVINO CPU's known ScatterElementsUpdate
    behaviours that apply to the case, the ones that need no narrowing first."""
    dtype = case.inputs["data"].dtype
    reduction = case.attrs.get("reduction", "none")
    hyps = []
    if dtype.kind in "iu" and reduction == "mean":
        hyps.append(("integer-mean-rounding", "the exact sum divided with truncation toward zero",
                     lambda: _cpu_scatter(case, dtype, wrapping=False, mean="trunc")))
        hyps.append(("narrow-type-overflow", f"the sum accumulated in {dtype} (wrapping), divided with truncation "
                     "toward zero", lambda: _cpu_scatter(case, dtype, wrapping=True, mean="trunc")))
    if dtype == np.float64:
        hyps.append(("float64-precision", "the CPU plugin's float32 arithmetic, sequentially (inputs saturated to "
                     "float32's range)", lambda: _cpu_scatter(case, np.float32, wrapping=True, mean="trunc")))
    elif dtype == np.uint64 or dtype in (np.int64, np.uint32):
        hyps.append(("uint64" if dtype == np.uint64 else "int32-narrowing", "the CPU plugin's int32 arithmetic "
                     "(wrapping, truncating mean)", lambda: _cpu_scatter(case, np.int32, wrapping=True, mean="trunc")))
    elif dtype == np.float32 and reduction in ("sum", "prod", "mean"):
        hyps.append(("float-accumulation", "float32 accumulation, one rounding per update",
                     lambda: _cpu_scatter(case, np.float32, wrapping=True, mean="trunc")))
    elif dtype == np.float16 and reduction in ("sum", "prod", "mean"):
        hyps.append(("float16-bfloat16", "float16 accumulation, one rounding per update",
                     lambda: _cpu_scatter(case, np.float16, wrapping=True, mean="trunc")))
    return hyps


def explain(case: Case, got, want, ov=None) -> Check | None:
    """An explained check when a known behaviour of OpenVINO accounts for the difference."""
    diff = first_difference(SCATTER_ELEMENTS_UPDATE.outputs, got, want)
    for topic, what, recompute in _hypotheses(case):
        if matches(case, got, [recompute()])[0]:
            return verdict("openvino", "explained", topic, reason(topic, "openvino", case.op),
                            f"{diff}; OpenVINO's answer equals {what}: {short(got)}")
    if has_nan(case.inputs["data"]) or has_nan(case.inputs["updates"]):
        evidence = _nan_evidence(case, got, want)
        if evidence:
            return verdict("openvino", "explained", "nan", reason("nan", "openvino"), f"{diff}; {evidence}; OpenVINO: {short(got)}")
    return None


def explain_standalone(case: Case, got, want) -> Check | None:
    """The standalone lowering run in OpenVINO (:mod:`ortops.conformance.lowering`): the CPU
    plugin's known behaviours of :func:`explain` (the lowering ends in ONNX ScatterElements, which
    OpenVINO runs as its own ScatterElementsUpdate). float64 data, which the plugin computes in
    float32, is also explained when every element is within one float32 step of the plugin's
    float32 arithmetic simulated in order (measured with OpenVINO 2026.4.1: through the
    composition's nodes an element that no update touches came back as the other float32
    neighbour of its float64 value); the detail says so."""
    explained = explain(case, got, want)
    if explained is not None or case.inputs["data"].dtype != np.float64:
        return explained
    simulated = _cpu_scatter(case, np.float32, wrapping=True, mean="trunc").astype(np.float32)
    seen = np.asarray(got[0]).astype(np.float32)
    if seen.shape != simulated.shape:
        return None
    near = equal(seen, simulated) | (np.abs(seen - simulated) <= np.spacing(np.abs(simulated)))
    if not near.all():
        return None
    steps = int((~equal(seen, simulated)).sum())
    return verdict("openvino", "explained", "float64-precision", reason("float64-precision", "openvino", case.op),
                    f"{first_difference(SCATTER_ELEMENTS_UPDATE.outputs, got, want)}; OpenVINO's answer equals the CPU plugin's float32 arithmetic, "
                    f"simulated in order, but for {steps} element(s) one float32 step away: {short(got)}")
