"""OpenVINO as an oracle: run each conformance case's model in OpenVINO and judge the answer.

For a case, :func:`judge_openvino` builds the same ONNX model ortops runs (``ortops.builder``),
runs it in OpenVINO through :mod:`ortops.interop.openvino` (the ortops node becomes native
``TopK-11`` / ``ScatterElementsUpdate-12`` / a TopK composition for ncnn ArgMax), and compares
the result with ortops' answer, computed by the NumPy reference (the suites already check that
ortops equals the reference).

How a case is judged
--------------------
* Integers and selections compare exactly; computed floats (ScatterElementsUpdate sum, prod,
  mean) with :func:`ortops.conformance.compare.tolerance`.
* TopK with ``stable=0`` or ``sort="none"``: any valid top-k is accepted (the same multiset of
  values per slice, distinct indices pointing at their values, and the order ``sort`` asks for).
  ScatterElementsUpdate ``reduction="none"`` with several updates for one element: any of
  those updates is accepted there (the spec leaves the order undefined).
* A difference is ``explained`` only when its cause is shown in that very case, else it is
  ``unexplained``:

  - a known behaviour is recomputed and OpenVINO's answer must equal it: the CPU plugin's
    int32 arithmetic for int64/uint32/uint64, float32 (saturating) for float64, the truncating
    and element-type-accumulating integer mean, float32 accumulation of float32 sums;
  - NaN (TopK, ArgMax): OpenVINO is re-run on the data replaced by its ranks in ortops' order
    (the same selection, no NaN) and must then agree; ScatterElementsUpdate: every differing
    element must be one whose reduction saw a NaN;
  - TopK ``sort="index"`` ties: OpenVINO's answer must be a valid top-k, and its own
    ``sort="value"`` answer, re-ordered by index, must equal ortops'.
* Cases ortops rejects with OpError: ``skipped`` when OpenVINO rejects them too, ``explained``
  when OpenVINO returns something (what it returned goes into the detail). Invalid
  ScatterElementsUpdate cases are not run at all (an index below -d made OpenVINO's CPU plugin
  write out of bounds and abort the process).

Every explained or skipped check starts its ``detail`` with ``[topic]``, one of :data:`TOPICS`;
:func:`topic_of` reads it back. An ``agree`` check carries ``[ties]`` when OpenVINO gave
another answer the spec allows (stable=0 / sort="none", duplicate targets of reduction none).

Cost: one OpenVINO model is compiled per distinct (op, dtypes, rank, attributes) and cached by
:mod:`ortops.interop.openvino`; explanations re-run OpenVINO or the reference only on a
difference.
"""

from __future__ import annotations

import re
from typing import Callable

import numpy as np
from onnx import TensorProto, helper

from .. import reference
from ..dtypes import INDEX_ELEMENT_TYPES
from ..errors import OpError
from .cases import Case, Check
from .compare import describe_difference, has_nan, same, tolerance

__all__ = ["ORACLE", "TOPICS", "judge_openvino", "topic_of", "available"]

ORACLE = "openvino"

#: topic -> what it is. Explained and skipped checks carry one (see :func:`topic_of`).
TOPICS = {
    "ties": "equal values: which of them is selected or first where the spec leaves it open",
    "nan": "NaN ordering and propagation, implementation-defined in the specs",
    "integer-mean-rounding": "OpenVINO CPU's integer mean truncates toward zero; the spec (and ortops) floor",
    "narrow-type-overflow": "OpenVINO CPU accumulates integer sums for the mean in the element type, which overflows",
    "uint64": "uint64 data, which OpenVINO's CPU plugin computes in int32",
    "float16-bfloat16": "float16/bfloat16 data: types the PyOp bridge cannot carry or NumPy lacks",
    "k-range": "k or topk outside [1, size] (undefined in the specs; ortops raises OpError)",
    "out-of-range-indices": "an index outside [-d, d-1] (ortops raises OpError)",
    "ncnn-tie-rule": "ncnn ArgMax's higher-index-first rule among equal values",
    "float64-precision": "float64 data, which OpenVINO's CPU plugin computes in float32",
    "int32-narrowing": "int64 and uint32 data, which OpenVINO's CPU plugin computes in int32 (wrapping)",
    "float-accumulation": "OpenVINO CPU accumulates float32 sums/products in float32; ortops in float64, rounded once",
    "float-index-precision": "a flat index above 2**24 cannot be exact in ncnn ArgMax's float32 output",
    "invalid-input": "an input ortops rejects with OpError for another reason (shape, rank, axis, dtype)",
    "openvino-missing": "the openvino package is not installed",
}

_REASONS = {
    "ties": "OpenVINO CPU's TopK with sort='index' does not keep the lowest-index equal values at the k boundary, "
            "even with stable=1 (its spec's 'stable' only promises the relative order of equal elements); ortops "
            "selects as sort='value', stable=1 does, then orders by index",
    "nan": "NaN order is implementation-defined (OpenVINO and ncnn specs); OpenVINO CPU does not rank NaN above "
           "+inf as ortops does (TopK's output is not even sorted; max/min reductions skip NaN updates)",
    "integer-mean-rounding": "OpenVINO CPU's integer mean truncates toward zero; its spec and ortops round toward "
                             "negative infinity (floor)",
    "narrow-type-overflow": "OpenVINO CPU accumulates the integer mean's sum in the element type and wraps around "
                            "(and truncates); ortops computes the exact sum and floors, as the spec says",
    "uint64": "OpenVINO's CPU plugin computes uint64 data in int32: values wrap to their low 32 bits, read as "
              "signed; ortops is exact over the full uint64 range",
    "int32-narrowing": "OpenVINO's CPU plugin computes int64 and uint32 data in int32: values wrap to their low "
                       "32 bits, read as signed; ortops is exact in the element type",
    "float64-precision": "OpenVINO's CPU plugin computes float64 in float32 (inputs rounded to float32, results "
                         "widened back); ortops computes in float64",
    "float-accumulation": "OpenVINO CPU accumulates float32 sums/products in float32, one rounding per update; "
                          "ortops accumulates in float64 and rounds once",
    "float16-bfloat16": "OpenVINO computes float16 sums/products in float16; ortops in float64, rounded once",
}
_SKIP_UNSUPPORTED_DTYPE = "the case's dtype cannot be fed to OpenVINO from NumPy"
_MISSING = "openvino is not installed (pip install 'ortops[openvino]'); OpenVINO could not judge"
_ERROR_RETURNED = "ortops raises OpError (the input is invalid or undefined in the spec); OpenVINO returns a result"
_ERROR_NOT_RUN = ("ortops raises OpError; OpenVINO is not run on invalid ScatterElementsUpdate inputs: its CPU plugin "
                  "does not check them all (an index below -d made it write outside its buffer and abort the process: "
                  "'free(): invalid next size')")
_ERROR_BOTH = "ortops raises OpError and OpenVINO rejects the input too; nothing to compare"

_TOPIC_PREFIX = re.compile(r"^\[([a-z0-9-]+)\]")


def topic_of(check: Check) -> str | None:
    """The topic key (one of :data:`TOPICS`) of an OpenVINO check, or None.

    Explained and skipped checks always have one; an ``agree`` check has one only where a
    difference was accepted as allowed by the spec (``"ties"``: another valid top-k).
    """
    match = _TOPIC_PREFIX.match(check.detail or "")
    return match.group(1) if match and match.group(1) in TOPICS else None


def _check(status: str, topic: str | None, reason: str = "", detail: str = "") -> Check:
    prefix = f"[{topic}] " if topic else ""
    return Check(ORACLE, status, reason, prefix + detail)


def available() -> bool:
    """Whether OpenVINO can be imported."""
    try:
        from ..interop.openvino import require_openvino

        require_openvino()
    except ImportError:
        return False
    return True


# --- models: the same ONNX models ortops runs ---------------------------------------------------


def _elem(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _top_k_model(case: Case):
    from ..builder import top_k_model

    data, k = case.inputs["data"], case.inputs["k"]
    return top_k_model(_elem(data.dtype), data.ndim, **case.attrs, k_type=_elem(k.dtype), k_shape=k.shape)


def _scatter_model(case: Case):
    from ..builder import scatter_elements_update_model

    data, indices, axis = case.inputs["data"], case.inputs["indices"], case.inputs["axis"]
    attrs = dict(reduction=case.attrs.get("reduction", "none"), use_init_val=case.attrs.get("use_init_val", 1))
    return scatter_elements_update_model(_elem(data.dtype), data.ndim, **attrs, indices_type=_elem(indices.dtype),
                                         axis_type=_elem(axis.dtype), axis_shape=axis.shape)


def _arg_max_model(case: Case):
    from ..builder import arg_max_model

    attrs = dict(out_max_val=case.attrs.get("out_max_val", 0), topk=case.attrs.get("topk", 1))
    return arg_max_model(case.inputs["data"].ndim, **attrs)


_MODELS: dict[str, Callable] = {"TopK": _top_k_model, "ScatterElementsUpdate": _scatter_model,
                                "ArgMax": _arg_max_model}
_INPUTS = {"TopK": ("data", "k"), "ScatterElementsUpdate": ("data", "indices", "updates", "axis"),
           "ArgMax": ("data",)}


def _run_openvino(case: Case, inputs: dict | None = None) -> list[np.ndarray]:
    from ..interop import openvino as ov_interop

    inputs = case.inputs if inputs is None else inputs
    return ov_interop.run(_MODELS[case.op](case), {n: inputs[n] for n in _INPUTS[case.op]})


# --- ortops' answer (the reference), also on transformed inputs ------------------------------------


def _reference(op: str, inputs: dict, attrs: dict) -> list[np.ndarray]:
    data = inputs["data"]
    if op == "TopK":
        if data.dtype == np.float16:  # ortops carries float16 through float32: exact
            values, indices = reference.top_k(data.astype(np.float32), inputs["k"], **attrs)
            return [values.astype(np.float16), indices]
        return list(reference.top_k(data, inputs["k"], **attrs))
    if op == "ScatterElementsUpdate":
        if data.dtype == np.float16:  # ortops computes float16 in float64, rounded once
            out = reference.scatter_elements_update(data.astype(np.float64), inputs["indices"],
                                                    inputs["updates"].astype(np.float64), inputs["axis"], **attrs)
            return [out.astype(np.float16)]
        return [reference.scatter_elements_update(data, inputs["indices"], inputs["updates"], inputs["axis"],
                                                  **attrs)]
    return [reference.arg_max(data, **attrs)]


def _short(arrays) -> str:
    with np.printoptions(threshold=12, edgeitems=3, linewidth=1000):
        return "; ".join(np.array2string(np.asarray(a), separator=",").replace("\n", "") for a in arrays)


# --- comparisons ----------------------------------------------------------------------------------


def _close(got: np.ndarray, want: np.ndarray, dtype) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return False
    if same(got, want):
        return True
    rtol, atol = tolerance(dtype)
    if got.dtype.kind != "f" or not (rtol or atol):
        return False
    if got.dtype != want.dtype or got.dtype.itemsize < 4:
        got, want = got.astype(np.float64), want.astype(np.float64)
    return bool(np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))


def _valid_top_k(data, axis, attrs, values, indices, want_values) -> bool:
    """Whether (values, indices) is a correct top-k of ``data`` when ties may go either way.

    Same multiset of values per slice as ``want_values``; indices distinct and pointing at
    their values; the order ``sort`` asks for (value: monotone in the mode's direction;
    index: ascending indices)."""
    values, indices = np.asarray(values), np.asarray(indices, np.int64)
    if values.shape != want_values.shape or indices.shape != values.shape:
        return False
    if np.any(indices < 0) or np.any(indices >= data.shape[axis]):
        return False
    if not same(np.sort(values, axis=axis), np.sort(want_values, axis=axis)):
        return False
    if not same(np.take_along_axis(data, indices, axis=axis), values):
        return False
    if np.any(np.diff(np.sort(indices, axis=axis), axis=axis) == 0):
        return False
    if attrs["sort"] == "value" and values.shape[axis] > 1:
        n = values.shape[axis]
        before, after = np.take(values, range(n - 1), axis=axis), np.take(values, range(1, n), axis=axis)
        return bool(np.all(before >= after) if attrs["mode"] == "max" else np.all(before <= after))
    if attrs["sort"] == "index":
        return bool(np.all(np.diff(indices, axis=axis) > 0))
    return True


def _top_k_matches(data, attrs, got, want) -> tuple[bool, bool]:
    """(matches, only as another valid top-k)."""
    if same(got[0], want[0]) and same(got[1], want[1]):
        return True, False
    order_defined = attrs["sort"] != "none" and bool(attrs["stable"])
    if not order_defined and _valid_top_k(data, _axis(attrs["axis"], data.ndim), attrs, got[0], got[1], want[0]):
        return True, True
    return False, False


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _duplicate_targets(indices, axis_value, data_shape) -> dict[tuple, list[tuple]]:
    """target position -> the update positions that go there (row-major order)."""
    axis = _axis(int(axis_value), len(data_shape))
    dim = data_shape[axis]
    targets: dict[tuple, list[tuple]] = {}
    for pos in np.ndindex(*indices.shape):
        i = int(indices[pos])
        target = pos[:axis] + (i + dim if i < 0 else i,) + pos[axis + 1:]
        targets.setdefault(target, []).append(pos)
    return targets


def _scatter_matches(case: Case, got, want) -> tuple[bool, bool]:
    data = case.inputs["data"]
    if _close(got[0], want[0], data.dtype):
        return True, False
    if case.attrs.get("reduction", "none") != "none" or np.asarray(got[0]).shape != want[0].shape:
        return False, False
    # reduction="none": where several updates hit one element, the spec leaves the winner open
    updates = case.inputs["updates"]
    targets = _duplicate_targets(case.inputs["indices"], np.asarray(case.inputs["axis"]).reshape(-1)[0], data.shape)
    differ = np.argwhere(~_equal_mask(got[0], want[0]))
    for where in map(tuple, differ):
        sources = targets.get(where, [])
        if len(sources) < 2 or not any(same(got[0][where], updates[p]) for p in sources):
            return False, False
    return True, True


def _equal_mask(a, b) -> np.ndarray:
    a, b = np.asarray(a), np.asarray(b)
    mask = a == b
    if a.dtype.kind == "f":
        mask |= np.isnan(a) & np.isnan(b)
    return mask


def _matches(case: Case, got, want) -> tuple[bool, bool]:
    if case.op == "TopK":
        return _top_k_matches(case.inputs["data"], case.attrs, got, want)
    if case.op == "ScatterElementsUpdate":
        return _scatter_matches(case, got, want)
    return same(got[0], want[0]), False


def _difference(case: Case, got, want) -> str:
    names = ("values", "indices") if case.op == "TopK" else ("output",)
    for name, g, w in zip(names, got, want):
        if not same(g, w):
            return describe_difference(name, g, w)
    return "no difference"


# --- models of OpenVINO CPU's known behaviour --------------------------------------------------------


def _wrap(value: int, dtype: np.dtype) -> int:
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return (int(value) - int(info.min)) % span + int(info.min)


def _trunc_div(total: int, count: int) -> int:
    q = abs(total) // count
    return -q if total < 0 else q


def _cpu_scatter(case: Case, work, *, wrap: bool, mean: str) -> np.ndarray:
    """ScatterElementsUpdate as OpenVINO's CPU plugin computes it, sequentially in row-major
    order of ``indices``: inputs converted to ``work`` (int32 wraps, float32 rounds), each
    update combined in ``work`` (integers wrap when ``wrap``, else exact), the integer mean
    divided by ``mean`` ("trunc" toward zero or "floor"), max/min as ``u > acc ? u : acc``
    (NaN updates never win), the result converted back to the case's dtype."""
    data, indices, updates = case.inputs["data"], case.inputs["indices"], case.inputs["updates"]
    reduction, use_init = case.attrs.get("reduction", "none"), case.attrs.get("use_init_val", 1)
    work = np.dtype(work)
    out, upd = _to_work(data, work), _to_work(updates, work)
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
                acc = _wrap(acc, work) if wrap else acc
            else:
                acc = {"sum": lambda: acc + v, "mean": lambda: acc + v, "prod": lambda: acc * v,
                       "max": lambda: v if v > acc else acc, "min": lambda: v if v < acc else acc}[reduction]()
        if reduction == "mean":
            if is_int:
                acc = _trunc_div(acc, count) if mean == "trunc" else acc // count
            else:
                acc = acc / work.type(count)
        out[target] = _wrap(acc, work) if is_int else acc
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


def _to_work(array: np.ndarray, work) -> np.ndarray:
    """``array`` converted to ``work`` as OpenVINO's CPU plugin converts its inputs: integers
    wrap to their low bits; float64 -> float32 saturates (+-inf and values beyond float32's
    range become +-3.4028235e38; measured), NaN stays NaN."""
    work = np.dtype(work)
    with np.errstate(all="ignore"):
        if array.dtype.kind == "f" and work.kind == "f" and work.itemsize < array.dtype.itemsize:
            big = np.finfo(work).max
            return np.where(np.isnan(array), array, np.clip(array, -big, big)).astype(work)
        return array.astype(work)


def _order_ranks(data: np.ndarray) -> np.ndarray:
    """``data`` replaced by its ranks in ortops' total order (-inf < ... < +inf < NaN; -0.0 ==
    +0.0; all NaNs equal), as the same dtype: an input without NaN or inf on which ortops
    selects and orders exactly as on ``data``."""
    keys = np.where(np.isnan(data), np.inf, data)
    unique, ranks = np.unique(keys, return_inverse=True)
    ranks = np.where(np.isnan(data), len(unique), ranks.reshape(data.shape))  # NaN above everything
    return ranks.astype(data.dtype)


def _nan_evidence(case: Case) -> str | None:
    """Re-run OpenVINO on an order-equivalent input without NaN (:func:`_order_ranks`);
    evidence when OpenVINO then agrees with ortops."""
    data = case.inputs["data"]
    base = _to_work(data, np.float32) if data.dtype == np.float64 else data  # the CPU plugin's own view
    if base.size >= 2**24:
        return None
    inputs = {**case.inputs, "data": _order_ranks(base).astype(data.dtype)}
    ranked = Case(case.name, case.op, case.source, inputs, case.attrs)
    got = _run_openvino(ranked)
    want = _reference(case.op, inputs, case.attrs)
    ok, _ = _matches(ranked, got, want)
    if not ok and case.op == "TopK":  # sort=index picks its own equal values at the k boundary
        ok = bool(_index_ties_evidence(ranked, got, want))
    if not ok:
        return None
    narrowed = " (float64 rounded to float32 first, +-inf saturating to +-3.4e38)" if data.dtype == np.float64 else ""
    return (f"on the data replaced by its ranks in ortops' order{narrowed} - the same selection without NaN - "
            "OpenVINO agrees with ortops")


def _scatter_nan_evidence(case: Case, got, want) -> str | None:
    """Differences only at elements whose reduction saw a NaN (in data or an update)."""
    data, updates = case.inputs["data"], case.inputs["updates"]
    targets = _duplicate_targets(case.inputs["indices"], np.asarray(case.inputs["axis"]).reshape(-1)[0], data.shape)
    differ = [tuple(w) for w in np.argwhere(~_equal_mask(got[0], want[0]))]
    touched_nan = {t for t, sources in targets.items()
                   if np.isnan(data[t]) or any(np.isnan(updates[p]) for p in sources)}
    if differ and all(w in touched_nan for w in differ):
        return f"the {len(differ)} differing element(s) are exactly among the {len(touched_nan)} whose reduction saw a NaN"
    return None


def _scatter_hypotheses(case: Case) -> list[tuple[str, str, Callable[[], np.ndarray]]]:
    """(topic, what it recomputes, recompute) for OpenVINO CPU's known ScatterElementsUpdate
    behaviours that apply to the case, the ones that need no narrowing first."""
    dtype = case.inputs["data"].dtype
    reduction = case.attrs.get("reduction", "none")
    hyps = []
    if dtype.kind in "iu" and reduction == "mean":
        hyps.append(("integer-mean-rounding", "the exact sum divided with truncation toward zero",
                     lambda: _cpu_scatter(case, dtype, wrap=False, mean="trunc")))
        hyps.append(("narrow-type-overflow", f"the sum accumulated in {dtype} (wrapping), divided with truncation "
                     "toward zero", lambda: _cpu_scatter(case, dtype, wrap=True, mean="trunc")))
    if dtype == np.float64:
        hyps.append(("float64-precision", "the CPU plugin's float32 arithmetic, sequentially (inputs saturated to "
                     "float32's range)", lambda: _cpu_scatter(case, np.float32, wrap=True, mean="trunc")))
    elif dtype == np.uint64 or dtype in (np.int64, np.uint32):
        hyps.append(("uint64" if dtype == np.uint64 else "int32-narrowing", "the CPU plugin's int32 arithmetic "
                     "(wrapping, truncating mean)", lambda: _cpu_scatter(case, np.int32, wrap=True, mean="trunc")))
    elif dtype == np.float32 and reduction in ("sum", "prod", "mean"):
        hyps.append(("float-accumulation", "float32 accumulation, one rounding per update",
                     lambda: _cpu_scatter(case, np.float32, wrap=True, mean="trunc")))
    elif dtype == np.float16 and reduction in ("sum", "prod", "mean"):
        hyps.append(("float16-bfloat16", "float16 accumulation, one rounding per update",
                     lambda: _cpu_scatter(case, np.float16, wrap=True, mean="trunc")))
    return hyps


def _top_k_hypotheses(case: Case) -> list[tuple[str, str, np.dtype]]:
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


def _explain_top_k(case: Case, got) -> Check | None:
    """A known TopK narrowing that accounts for OpenVINO's answer, compared in the type the CPU
    plugin computes in (so that order and ties are judged as OpenVINO sees the values)."""
    data = case.inputs["data"]
    for topic, what, work in _top_k_hypotheses(case):
        narrowed = _to_work(data, work)
        if work.kind == "f":
            unchanged = same(narrowed.astype(data.dtype), data)
        else:  # as numbers: uint32 -> int32 loses nothing on the way back, but reorders
            unchanged = bool(np.all(narrowed.astype(object) == data.astype(object)))
        if unchanged:  # the type changes no value: it cannot be the cause
            continue
        seen = Case(case.name, case.op, case.source, {**case.inputs, "data": narrowed}, case.attrs)
        model = _reference(case.op, seen.inputs, case.attrs)
        got_seen = [_to_work(got[0], work), got[1]]
        ok, _ = _matches(seen, got_seen, model)
        ties = ""
        if not ok:  # sort=index keeps its own equal values at the k boundary
            evidence = _index_ties_evidence(case, got_seen, model, work)
            ok, ties = bool(evidence), f", up to equal values at the k boundary ({evidence})"
        if ok:
            want = _reference(case.op, case.inputs, case.attrs)
            return _check("explained", topic, _REASONS[topic],
                          f"{_difference(case, got, want)}; OpenVINO's answer equals {what}{ties}: {_short(got)}")
    return None


def _explain(case: Case, got, want) -> Check:
    data = case.inputs["data"]
    diff = _difference(case, got, want)
    if case.op == "TopK":
        check = _explain_top_k(case, got)
        if check is not None:
            return check
    if case.op == "ScatterElementsUpdate":
        for topic, what, recompute in _scatter_hypotheses(case):
            if _matches(case, got, [recompute()])[0]:
                return _check("explained", topic, _REASONS[topic],
                              f"{diff}; OpenVINO's answer equals {what}: {_short(got)}")
    if case.op == "TopK" and not has_nan(data):
        evidence = _index_ties_evidence(case, got, want)
        if evidence:
            return _check("explained", "ties", _REASONS["ties"], f"{diff}; {evidence}; OpenVINO: {_short(got)}")
    if has_nan(data) or (case.op == "ScatterElementsUpdate" and has_nan(case.inputs["updates"])):
        evidence = (_scatter_nan_evidence(case, got, want) if case.op == "ScatterElementsUpdate"
                    else _nan_evidence(case))
        if evidence:
            return _check("explained", "nan", _REASONS["nan"], f"{diff}; {evidence}; OpenVINO: {_short(got)}")
    return _check("unexplained", None, "OpenVINO and ortops differ and no known behaviour accounts for it",
                  f"{diff}; OpenVINO: {_short(got)}; ortops: {_short(want)}")


def _index_ties_evidence(case: Case, got, want, work=None) -> str | None:
    """TopK sort=index: OpenVINO's answer is a valid top-k that keeps other equal values than
    ortops at the k boundary, and OpenVINO's own sort=value answer, re-ordered by index, is
    ortops' answer: the difference is only which equal values sort=index selects.

    With ``work``, values are compared as OpenVINO's CPU plugin computes them (``got`` and
    ``want`` already in that type)."""
    attrs = case.attrs
    data = case.inputs["data"] if work is None else _to_work(case.inputs["data"], work)
    axis = _axis(attrs["axis"], data.ndim)
    if attrs["sort"] != "index" or not _valid_top_k(data, axis, attrs, got[0], got[1], want[0]):
        return None
    by_value = _run_openvino(Case(case.name, case.op, case.source, case.inputs, {**attrs, "sort": "value"}))
    if work is not None:
        by_value[0] = _to_work(by_value[0], work)
    order = np.argsort(by_value[1], axis=axis, kind="stable")
    reordered = [np.take_along_axis(a, order, axis=axis) for a in by_value]
    if not (same(reordered[0], want[0]) and same(reordered[1], want[1])):
        return None
    return ("OpenVINO's answer is a valid top-k (same values, ascending indices) holding other equal values at the "
            "k boundary; OpenVINO's own sort='value' answer, re-ordered by index, equals ortops'")


# --- errors ------------------------------------------------------------------------------------------


def _error_topic(case: Case, message: str) -> str:
    if case.op == "TopK" and re.search(r"\bk=", message):
        return "k-range"
    if case.op == "ArgMax" and ("topk=" in message or "is empty" in message):
        return "k-range"
    if case.op == "ArgMax" and "2**24" in message:
        return "float-index-precision"
    if case.op == "ScatterElementsUpdate" and re.search(r"index -?\d+ is outside", message):
        return "out-of-range-indices"
    return "invalid-input"


def _openvino_message(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith(("Exception from", "Check '", "At:", "/"))]
    return " ".join(useful or lines or [type(exc).__name__])[:400]


def _judge_error(case: Case, error: OpError) -> Check:
    topic = _error_topic(case, str(error))
    if case.op == "ScatterElementsUpdate":
        return _check("skipped", topic, _ERROR_NOT_RUN, f"ortops: {error}")
    try:
        got = _run_openvino(case)
    except (RuntimeError, OpError) as exc:
        return _check("skipped", topic, _ERROR_BOTH, f"ortops: {error}; OpenVINO: {_openvino_message(exc)}")
    return _check("explained", topic, _ERROR_RETURNED, f"ortops: {error}; OpenVINO returns {_short(got)}")


# --- the judge ---------------------------------------------------------------------------------------


def judge_openvino(case: Case) -> list[Check]:
    """OpenVINO's verdict on one conformance case (oracle name ``"openvino"``).

    Parameters
    ----------
    case : Case
        A TopK, ScatterElementsUpdate or ArgMax case of the conformance suites.

    Returns
    -------
    list of Check
        One check: ``agree``, ``explained`` (a known divergence, shown in this case: see the
        module docstring), ``skipped`` (OpenVINO is missing, cannot take the input, or rejects
        an input ortops rejects too) or ``unexplained``. The topic of an explained/skipped
        check is :func:`topic_of` of it.
    """
    if not available():
        return [_check("skipped", "openvino-missing", _MISSING)]
    data = case.inputs["data"]
    if case.details.get("dtype") == "bfloat16":  # carried as float32 and cast inside the graph
        return [_check("skipped", "float16-bfloat16", _SKIP_UNSUPPORTED_DTYPE, "bfloat16 (cast inside the graph)")]
    if data.dtype.kind == "V" or data.dtype.names or str(data.dtype) == "bfloat16":
        return [_check("skipped", "float16-bfloat16", _SKIP_UNSUPPORTED_DTYPE, f"dtype {data.dtype}")]
    try:
        want = _reference(case.op, case.inputs, case.attrs)
    except OpError as error:
        return [_judge_error(case, error)]
    try:
        got = _run_openvino(case)
    except (RuntimeError, OpError) as exc:
        return [_check("unexplained", None, "OpenVINO failed on a case ortops accepts", _openvino_message(exc))]
    if case.op == "TopK":
        index_type = INDEX_ELEMENT_TYPES[case.attrs.get("index_element_type", "i32")]
        if got[1].dtype != index_type:
            return [_check("unexplained", None, "OpenVINO's indices have the wrong type",
                           f"{got[1].dtype}, index_element_type={case.attrs.get('index_element_type')}")]
    ok, alternative = _matches(case, got, want)
    if ok:
        if alternative:
            what = ("another valid top-k among equal values" if case.op == "TopK"
                    else "another of the updates where several hit one element")
            return [_check("agree", "ties", "", f"OpenVINO gives {what} (allowed by the spec)")]
        return [_check("agree", None)]
    return [_explain(case, got, want)]
