"""The one judge of ``ortops.openvino::ScatterElementsUpdate`` (OpenVINO ScatterElementsUpdate-12):
is an answer acceptable, and if not, which known divergence (topic) explains it - for every
caller: the conformance suite (ortops in ORT against the reference, ORT's ScatterElements and the
standard-op compositions), the OpenVINO and lowered-path oracles (:data:`OPENVINO`) and
``ortops compare``'s node audits (:data:`AUDITS`). Every update's target is worked out once
(:func:`flat_targets`).

How each oracle is compared, and what explains a difference: docs/conformance.md, "How each op
is judged", ScatterElementsUpdate.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import numpy as np
from onnx.helper import np_dtype_to_tensor_dtype

from ... import reference
from ...arrays import equal, first_difference, has_nan, preview, same, short
from ...checks import normalize_axis
from ...divergences import ERROR_TOPICS, reason
from ...dtypes import wrap
from ...errors import OpError
from ...graph import attribute
from ...interop.openvino import WORK_TYPES, to_work
from ...sessions import BuiltinUnavailable, ort_version, ortops_session, plain_session
from ...verdicts import Audit, Capture, Case, Check, Difference, Finding, difference, verdict
from ..spec import OPENVINO_DOMAIN
from . import SCATTER_ELEMENTS_UPDATE
from .builder import (
    ONNX_REDUCTION,
    SCATTER_ELEMENTS_REDUCTIONS,
    onnx_scatter_elements_model,
    scatter_elements_update_model,
    scatter_elements_update_side_by_side,
    scatter_mean_composition,
)
from .reference import reduction_identity

__all__ = ["OP", "judge", "topics", "model", "expected", "flat_targets", "OPENVINO", "AUDITS"]

OP = "ScatterElementsUpdate"

_NONE_DUPLICATES = reason("ties", "onnxruntime", OP)
_TRUNCATING_DIV = reason("integer-mean-rounding", "onnxruntime", OP)
_COMPOSITION_OVERFLOW = reason("narrow-type-overflow", "onnxruntime", OP)
_CAST_INDICES = "indices reach the standard nodes as int64 (their Tind is int32 or int64 only)"


# ----------------------------------------------------------------------------- running


def _axis_value(case: Case) -> int:
    axis = int(np.asarray(case.inputs["axis"]).reshape(-1)[0])
    return normalize_axis(OP, axis, case.inputs["data"].ndim)


def model(case: Case):
    """The ONNX model ortops runs for ``case``: the ortops node alone."""
    data, indices, axis = case.inputs["data"], case.inputs["indices"], case.inputs["axis"]
    return scatter_elements_update_model(np_dtype_to_tensor_dtype(data.dtype), data.ndim, **case.attrs,
                                         indices_type=np_dtype_to_tensor_dtype(indices.dtype),
                                         axis_type=np_dtype_to_tensor_dtype(axis.dtype), axis_shape=axis.shape)


def _run_ortops(case: Case) -> np.ndarray:
    feed = {k: case.inputs[k] for k in ("data", "indices", "updates", "axis")}
    return ortops_session(model(case)).run(None, feed)[0]


def _attempt(run: Callable[[], np.ndarray]) -> tuple[np.ndarray | None, OpError | None]:
    try:
        return run(), None
    except OpError as exc:
        return None, exc


def _standard_feed(case: Case) -> tuple[dict[str, np.ndarray], int, str]:
    """Feed for models with standard nodes; indices become int64 unless int32/int64 already."""
    indices = case.inputs["indices"]
    note = ""
    if indices.dtype not in (np.int32, np.int64):
        indices, note = indices.astype(np.int64), _CAST_INDICES
    feed = {"data": case.inputs["data"], "indices": indices, "updates": case.inputs["updates"]}
    return feed, np_dtype_to_tensor_dtype(indices.dtype), note


def _observe(oracle: str, run: Callable, missing: str, rejects: str):
    """``run()``, or the skipped check when ORT has no kernel for it (``missing``) or rejects its
    type at run time (``rejects``). OpError, and any other failure, propagates."""
    try:
        return run()
    except BuiltinUnavailable as exc:
        return Check(oracle, "skipped", f"ORT {ort_version()} {missing}", detail=str(exc))
    except OpError:
        raise
    except Exception as exc:  # noqa: BLE001 - only ORT's own "not supported" is a skip; the rest re-raised
        if "not supported" not in str(exc) and "NOT_IMPLEMENTED" not in str(exc):
            raise
        return Check(oracle, "skipped", f"ORT {ort_version()} {rejects}", detail=str(exc).strip().splitlines()[-1][:300])


# ----------------------------------------------------------------------------- comparing


def _versus(oracle: str, got: np.ndarray, want: np.ndarray, left: str = "ortops") -> Check:
    if same(got, want):
        return Check(oracle, "agree")
    return Check(oracle, "unexplained", "results differ", difference=difference("output", got, want, left=left,
                                                                                right=oracle))


def flat_targets(shape, indices, axis: int) -> np.ndarray:
    """The flat target in a tensor of ``shape`` (C order) of every element of ``indices``, in
    row-major order of ``indices``: ScatterElements' rule. ``axis`` in [-r, r-1], indices in
    [-d, d-1] (negative ones count from the end)."""
    indices = np.asarray(indices)
    coords = list(np.indices(indices.shape, dtype=np.int64))
    coords[axis] = indices.astype(np.int64) % max(shape[axis], 1)
    return np.ravel_multi_index(coords, shape).reshape(-1)


def _targets(case: Case) -> np.ndarray:
    """Flat target in data (C order) of every element of indices, in row-major order."""
    return flat_targets(case.inputs["data"].shape, case.inputs["indices"], _axis_value(case))


def _sources(case: Case) -> dict[tuple, list[tuple]]:
    """target position -> the update positions that go there (row-major order)."""
    data, indices = case.inputs["data"], case.inputs["indices"]
    targets: dict[tuple, list[tuple]] = {}
    coords = np.unravel_index(_targets(case), data.shape)
    for target, position in zip(zip(*(c.tolist() for c in coords)), np.ndindex(*indices.shape)):
        targets.setdefault(target, []).append(position)
    return targets


def _counts(case: Case) -> np.ndarray:
    data = case.inputs["data"]
    return np.bincount(_targets(case), minlength=data.size).reshape(data.shape)


# ----------------------------------------------------------------------------- simulations of ORT


def _exact_sums(case: Case) -> np.ndarray:
    """Exact integer sums of the mean (Python ints), one per element of data."""
    data, updates = case.inputs["data"], case.inputs["updates"]
    targets = _targets(case)
    sums = data.reshape(-1).astype(object)
    if not case.attrs["use_init_val"]:
        sums[targets] = 0  # touched targets hold the updates only; the others keep data
    np.add.at(sums, targets, updates.reshape(-1).astype(object))
    return sums.reshape(data.shape)


def _explain(case: Case, oracle: str, got: np.ndarray, other: np.ndarray) -> Check:
    """A difference between ortops and an ORT result: explained when reproduced, else unexplained."""
    data, updates = case.inputs["data"], case.inputs["updates"]
    reduction = case.attrs["reduction"]
    diff = difference("output", got, other, right=oracle)
    simulated = None  # ORT's sequential arithmetic reproduces NaN in min/max and float32 accumulation
    if data.dtype.kind == "f" and reduction in ("min", "max") and (has_nan(data) or has_nan(updates)):
        simulated = "nan"
    elif data.dtype == np.float32 and reduction in ("sum", "prod", "mean"):
        simulated = "float-accumulation"
    if simulated and same(_sequential(case, data.dtype, keep_acc=True), other):
        return Check(oracle, "explained", reason(simulated, "onnxruntime", OP), topic=simulated, difference=diff)
    if data.dtype.kind in "iu" and reduction == "mean":
        sums = _exact_sums(case)
        low, high = (0, 2**64 - 1) if data.dtype == np.uint64 else (-(2**63), 2**63 - 1)
        overflow = np.vectorize(lambda s: not low <= s <= high, otypes=[bool])(sums)
        if overflow.any() and not (~equal(got, other) & ~overflow).any():
            return Check(oracle, "explained", _COMPOSITION_OVERFLOW, topic="narrow-type-overflow", difference=diff,
                         detail=f"{int(overflow.sum())} exact sums out of range; {diff.describe()}")
    return Check(oracle, "unexplained", "results differ", difference=diff)


# ----------------------------------------------------------------------------- built-in checks


def _maps(case: Case, version: int) -> Check | None:
    """None when the case maps onto ScatterElements-``version``, else the skipped check saying why."""
    reduction, use_init_val = case.attrs["reduction"], case.attrs["use_init_val"]
    oracle = f"onnxruntime ScatterElements-{version}"
    onnx_reduction = ONNX_REDUCTION.get(reduction)
    if onnx_reduction is None or (use_init_val == 0 and reduction != "none"):
        return Check(oracle, "skipped", f"reduction={reduction!r} with use_init_val={use_init_val} has no standard "
                     "ScatterElements reduction; judged against the composition instead")
    if onnx_reduction not in SCATTER_ELEMENTS_REDUCTIONS[version]:
        return Check(oracle, "skipped", f"ScatterElements-{version} has no reduction={onnx_reduction!r}")
    return None


def _side_by_side(case: Case, version: int) -> tuple[np.ndarray, np.ndarray] | Check:
    """Run the side-by-side model: (ortops output, built-in output), or a skipped check when
    ORT lacks the built-in. OpError from the ortops node propagates."""
    skip = _maps(case, version)
    if skip is not None:
        return skip
    data, indices = case.inputs["data"], case.inputs["indices"]
    reduction = case.attrs["reduction"]
    oracle = f"onnxruntime ScatterElements-{version}"
    model = scatter_elements_update_side_by_side(version, np_dtype_to_tensor_dtype(data.dtype), data.ndim, axis=_axis_value(case),
                                                 **case.attrs, indices_type=np_dtype_to_tensor_dtype(indices.dtype))
    feed = {k: case.inputs[k] for k in ("data", "indices", "updates")}
    return _observe(oracle, lambda: tuple(ortops_session(model).run(None, feed)),
                    f"has no {data.dtype} ScatterElements-{version} kernel (NOT_IMPLEMENTED); compared with the "
                    "reference only", f"ScatterElements-{version} rejects {data.dtype} "
                    f"reduction={ONNX_REDUCTION[reduction]!r} at run time; compared with the reference only")


def _builtin_checks(case: Case, version: int, got: np.ndarray, run) -> list[Check]:
    """Checks from one side-by-side run (``run`` as :func:`_side_by_side` returns it)."""
    if isinstance(run, Check):
        return [run]
    oracle = f"onnxruntime ScatterElements-{version}"
    output, builtin = run
    if not same(output, got):
        return [Check(oracle, "unexplained", "ortops gave a different answer in the side-by-side model",
                      difference=difference("output", output, got, left="ortops (side-by-side model)",
                                            right="ortops (alone)"))]
    checks = [_builtin_versus(case, oracle, got, builtin, _standard_feed(case)[2])]
    if case.expected is not None:
        checks.append(_versus(f"{oracle} vs {case.expected_from}", builtin, case.expected["output"], left=oracle))
    return checks


def _builtin_versus(case: Case, oracle: str, got: np.ndarray, builtin: np.ndarray, note: str) -> Check:
    if case.attrs["reduction"] != "none":
        if same(got, builtin):
            return Check(oracle, "agree", detail=note)
        return _explain(case, oracle, got, builtin)
    several = _counts(case) > 1
    defined = int((~several).sum())
    if not same(got[~several], builtin[~several]):
        return Check(oracle, "unexplained", "results differ at positions with at most one update",
                     difference=difference("output (positions with at most one update; others 0)",
                                           np.where(several, 0, got), np.where(several, 0, builtin), right=oracle))
    if not several.any():
        return Check(oracle, "agree", detail=note)
    compared = f"compared the {defined} positions with at most one update strictly; {int(several.sum())} receive several"
    if same(got[several], builtin[several]):
        return Check(oracle, "agree", detail=f"{compared} (undefined order): ORT also kept the last update there")
    differ = int((~equal(got[several], builtin[several])).sum())
    return Check(oracle, "explained", _NONE_DUPLICATES, detail=f"{compared}; ORT differs at {differ} of them",
                 topic="ties", difference=difference("output", got, builtin, right=oracle,
                                                     note="differences only where several updates meet"))


# ----------------------------------------------------------------------------- composition checks


def _composition_checks(case: Case, got: np.ndarray) -> list[Check]:
    data = case.inputs["data"]
    reduction, use_init_val = case.attrs["reduction"], case.attrs["use_init_val"]
    checks = []
    for rounding in ("floor", "trunc") if reduction == "mean" and data.dtype.kind == "i" else ("floor",):
        oracle = "onnxruntime composition" + (" with plain integer Div" if rounding == "trunc" else "")
        feed, indices_type, note = _standard_feed(case)
        model = scatter_mean_composition(np_dtype_to_tensor_dtype(data.dtype), data.ndim, axis=_axis_value(case),
                                         reduction=reduction, use_init_val=use_init_val, rounding=rounding,
                                         indices_type=indices_type)
        output = _observe(oracle, lambda: plain_session(model).run(None, feed)[0],
                          f"lacks a kernel the composition needs for {data.dtype} (NOT_IMPLEMENTED)",
                          f"ScatterElements-18 rejects {data.dtype} reduction="
                          f"{ONNX_REDUCTION.get(reduction, 'add')!r} at run time")
        if isinstance(output, Check):
            checks.append(output)
            continue
        if same(got, output):
            checks.append(Check(oracle, "agree", detail=note))
        else:
            checks.append((_explain_trunc if rounding == "trunc" else _explain)(case, oracle, got, output))
    return checks


def _explain_trunc(case: Case, oracle: str, got: np.ndarray, output: np.ndarray) -> Check:
    differ = ~equal(got, output)
    sums = _exact_sums(case)
    one_above = output.astype(np.int64)[differ] - got.astype(np.int64)[differ] == 1
    negative = np.array([s < 0 for s in sums[differ]], bool)
    diff = difference("output", got, output, right=oracle)
    detail = f"{int(differ.sum())} of {got.size} elements; {diff.describe()}"
    if one_above.all() and negative.all():
        return Check(oracle, "explained", _TRUNCATING_DIV, detail=detail, topic="integer-mean-rounding",
                     difference=diff)
    return _explain(case, oracle, got, output)


# ----------------------------------------------------------------------------- the judge


def _rejected_builtin_checks(case: Case, error: OpError) -> list[Check]:
    """A case ortops rejects: what ORT's ScatterElements-``version`` does with the same input
    (observed; it validates indices and answers with an error status, never a crash)."""
    checks = []
    data = case.inputs["data"]
    for version in case.onnx_versions:
        skip = _maps(case, version)
        if skip is not None:
            checks.append(skip)
            continue
        oracle = f"onnxruntime ScatterElements-{version}"
        feed, indices_type, _ = _standard_feed(case)
        model = onnx_scatter_elements_model(version, np_dtype_to_tensor_dtype(data.dtype), data.ndim, axis=_axis_value(case),
                                            reduction=ONNX_REDUCTION[case.attrs["reduction"]],
                                            indices_type=indices_type)
        try:
            output = plain_session(model).run(None, feed)[0]
        except Exception as exc:  # noqa: BLE001 - ORT's own rejection is the observation
            message = str(exc).strip().splitlines()[0][:200]
            checks.append(Check(oracle, "agree", detail=f"ORT rejects it too: {message}"))
        else:
            topic = ERROR_TOPICS.get(error.kind, "invalid-input")
            checks.append(Check(oracle, "explained", "ortops raises OpError (the spec rejects the input); ORT's "
                                "built-in returns a result", topic=topic,
                                difference=Difference.outcome("ortops", f"OpError: {error.detail}", oracle,
                                                              f"output {preview(output)}")))
    return checks


def judge(case: Case) -> list[Check]:
    """Run one ScatterElementsUpdate case through ortops in ORT and judge it against every oracle.

    Where the case maps onto a standard version and its axis input is int64 of shape (1,), the
    ortops output is taken from the side-by-side model of its first version (one session less:
    a session with the ortops library costs tens of milliseconds); otherwise from a model with
    the ortops node alone.
    """
    data, indices, updates, axis = (case.inputs[k] for k in ("data", "indices", "updates", "axis"))
    runs: dict = {}
    got, got_error = None, None
    if case.onnx_versions and axis.dtype == np.int64 and axis.shape == (1,):  # what the side-by-side model feeds
        first = case.onnx_versions[0]
        runs[first], got_error = _attempt(lambda: _side_by_side(case, first))
        if isinstance(runs[first], tuple):
            got = runs[first][0]
    if got is None and got_error is None:
        got, got_error = _attempt(lambda: _run_ortops(case))
    ref, ref_error = _attempt(lambda: reference.scatter_elements_update(data, indices, updates, axis, **case.attrs))
    if got_error is not None or ref_error is not None:
        if got_error is not None and ref_error is not None:
            return [Check("reference", "agree", detail=f"both reject the input: ortops: {got_error}; "
                          f"reference: {ref_error}"), *_rejected_builtin_checks(case, got_error)]
        which = "ortops" if got_error is not None else "the reference"
        return [Check("reference", "unexplained", f"only {which} rejects the input",
                      detail=str(got_error or ref_error))]
    checks = [_versus("reference", got, ref)]
    if got.dtype != data.dtype:
        checks.append(Check("output dtype", "unexplained", f"output came back as {got.dtype}, data is {data.dtype}"))
    if case.expected is not None:
        checks.append(_versus(case.expected_from, got, case.expected["output"]))
    for version in case.onnx_versions:
        run = runs[version] if version in runs else _side_by_side(case, version)
        checks += _builtin_checks(case, version, got, run)
    if case.attrs["reduction"] == "mean" or (case.attrs["use_init_val"] == 0 and case.attrs["reduction"] != "none"):
        checks += _composition_checks(case, got)
    return checks


def topics(case: Case) -> set[str]:
    """The divergence topics of a ScatterElementsUpdate case beyond its dtype (see
    :mod:`ortops.conformance.matrix`)."""
    data = case.inputs["data"]
    found = set()
    reduction, integer = case.attrs.get("reduction", "none"), data.dtype.kind in "iu"
    if reduction == "mean" and integer:
        found.add("integer-mean-rounding")
    if integer and data.dtype.itemsize <= 2 and reduction in ("sum", "prod", "mean"):
        found.add("narrow-type-overflow")
    indices, axis = case.inputs["indices"], int(np.asarray(case.inputs["axis"]).reshape(-1)[0])
    if indices.size and data.ndim and -data.ndim <= axis < data.ndim:
        d = data.shape[axis]
        if int(indices.min()) < -d or int(indices.max()) > d - 1:
            found.add("out-of-range-indices")
    return found


# --- OpenVINO -----------------------------------------------------------------------------------

def expected(inputs: dict, attrs: dict) -> list[np.ndarray]:
    """ortops' answer (the reference), float16 computed in float64 and rounded once as ortops does."""
    return list(SCATTER_ELEMENTS_UPDATE.run_reference(inputs, attrs))


def _openvino_matches(case: Case, got, want) -> tuple[bool, bool]:
    if same(got[0], want[0]):
        return True, False
    if case.attrs.get("reduction", "none") != "none" or np.asarray(got[0]).shape != want[0].shape:
        return False, False
    # reduction="none": where several updates hit one element, the spec leaves the winner open
    updates = case.inputs["updates"]
    targets = _sources(case)
    differ = np.argwhere(~equal(got[0], want[0]))
    for where in map(tuple, differ):
        sources = targets.get(where, [])
        if len(sources) < 2 or not any(same(got[0][where], updates[p]) for p in sources):
            return False, False
    return True, True


def _trunc_div(total: int, count: int) -> int:
    q = abs(total) // count
    return -q if total < 0 else q


def _float32_floor_div(total: int, count: int) -> int:
    """The composition's floor ``(total - Mod(total, count)) / count`` as OpenVINO's CPU plugin
    computes integer ``Mod`` and ``Div``: in float32 (``Mod`` floors, ``Div`` truncates), the
    ``Sub`` in int32."""
    s, c = np.float32(total), np.float32(count)
    remainder = int(s - np.floor(s / c) * c)
    return int(np.trunc(np.float32(wrap(total - remainder, np.dtype(np.int32))) / c))


def _sequential(case: Case, work, *, wrapping: bool = True, float32_mean: bool = False, keep_acc: bool = False,
                reciprocal: bool = False, identity=None) -> np.ndarray:
    """ScatterElementsUpdate computed sequentially in row-major order of ``indices``, as
    OpenVINO's CPU plugin and ORT's ScatterElements do: inputs converted to ``work`` (int32
    wraps, float32 rounds), each update combined in ``work`` (integers wrap when ``wrapping``,
    else exact), the integer mean divided with truncation toward zero (with ``float32_mean``:
    :func:`_float32_floor_div`), the float mean divided by the count, or with
    ``reciprocal`` multiplied by its reciprocal (two roundings: OpenVINO's CPU ``Divide``, which
    the standalone composition's mean meets), float max/min as the CPU plugin's
    ``u > acc ? u : acc`` (a NaN update never wins) or, with ``keep_acc``, ORT's
    ``acc > u ? acc : u`` (a NaN survives or vanishes by operand order);
    with ``use_init_val=0`` each target starts from the reduction's identity in ``work``, or in
    the NumPy type ``identity`` converted to ``work``; the result converted back to the case's
    dtype."""
    data, updates = case.inputs["data"], case.inputs["updates"]
    reduction, use_init = case.attrs.get("reduction", "none"), case.attrs.get("use_init_val", 1)
    work = np.dtype(work)
    out, upd = to_work(data, work), to_work(updates, work)
    is_int = work.kind in "iu"
    targets = _sources(case)
    for target, sources in targets.items():
        values = [upd[p] for p in sources]
        if reduction == "none":
            out[target] = values[-1]
            continue
        if work == np.bool_:
            combine = {"sum": any, "max": any, "prod": all, "min": all}[reduction]
            out[target] = combine(([bool(out[target])] if use_init else []) + [bool(v) for v in values])
            continue
        start = reduction_identity(reduction, work) if identity is None else \
            to_work(np.array(reduction_identity(reduction, np.dtype(identity)), identity), work)[()]
        acc = out[target] if use_init else start
        acc = int(acc) if is_int else work.type(acc)
        count = (1 if use_init else 0) + len(values)
        for v in values:
            if is_int:
                v = int(v)
                acc = {"sum": acc + v, "mean": acc + v, "prod": acc * v, "max": v if v > acc else acc,
                       "min": v if v < acc else acc}[reduction]
                acc = wrap(acc, work) if wrapping else acc
            else:
                acc = {"sum": lambda: acc + v, "mean": lambda: acc + v, "prod": lambda: acc * v,
                       "max": lambda: acc if (acc > v if keep_acc else not v > acc) else v,
                       "min": lambda: acc if (acc < v if keep_acc else not v < acc) else v}[reduction]()
        if reduction == "mean":
            if is_int:
                acc = (_float32_floor_div if float32_mean else _trunc_div)(acc, count)
            elif reciprocal:
                acc = acc * (work.type(1) / work.type(count))
            else:
                acc = acc / work.type(count)
        out[target] = wrap(acc, work) if is_int else acc
    if reduction == "mean" and float32_mean:  # the composition divides every element, untouched ones by 1
        for untouched in zip(*np.nonzero(_counts(case) == 0)):
            out[untouched] = wrap(_float32_floor_div(int(out[untouched]), 1), work)
    with np.errstate(all="ignore"):
        return out.astype(data.dtype)


def _nan_evidence(case: Case, got, want) -> str | None:
    """Differences only at elements whose reduction saw a NaN (in data or an update)."""
    data, updates = case.inputs["data"], case.inputs["updates"]
    targets = _sources(case)
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
                     lambda: _sequential(case, dtype, wrapping=False)))
        hyps.append(("narrow-type-overflow", f"the sum accumulated in {dtype} (wrapping), divided with truncation "
                     "toward zero", lambda: _sequential(case, dtype)))
    work = None
    if dtype in WORK_TYPES:
        work, topic = WORK_TYPES[dtype]
        what = ("the CPU plugin's float32 arithmetic, sequentially (inputs saturated to float32's range)"
                if work.kind == "f" else "the CPU plugin's int32 arithmetic (wrapping, truncating mean)")
    elif dtype in (np.float32, np.float16) and reduction in ("sum", "prod", "mean"):
        topic = "float-accumulation" if dtype == np.float32 else "float16-bfloat16"
        what, work = f"{dtype} accumulation, one rounding per update", dtype
    if work is not None:
        hyps.append((topic, what, lambda: _sequential(case, work)))
    return hyps


def _reproduced(case: Case, got, want, hypotheses) -> Check | None:
    """The explained check of the first hypothesis ``(topic, what, recompute)`` whose
    recomputation OpenVINO's answer matches, else None."""
    for topic, what, recompute in hypotheses:
        if _openvino_matches(case, got, [recompute()])[0]:
            return verdict("openvino", "explained", topic, reason(topic, "openvino", case.op),
                           f"{first_difference(SCATTER_ELEMENTS_UPDATE.outputs, got, want)}; OpenVINO's answer "
                           f"equals {what}: {short(got)}")
    return None


def _openvino_explain(case: Case, got, want, ov=None) -> Check | None:
    """An explained check when a known behaviour of OpenVINO accounts for the difference."""
    explained = _reproduced(case, got, want, _hypotheses(case))
    if explained is None and (has_nan(case.inputs["data"]) or has_nan(case.inputs["updates"])):
        evidence = _nan_evidence(case, got, want)
        if evidence:
            return verdict("openvino", "explained", "nan", reason("nan", "openvino"),
                           f"{first_difference(SCATTER_ELEMENTS_UPDATE.outputs, got, want)}; {evidence}; "
                           f"OpenVINO: {short(got)}")
    return explained


def _standalone_hypotheses(case: Case) -> list[tuple[str, str, Callable[[], np.ndarray]]]:
    """(topic, what it recomputes, recompute) for how OpenVINO's CPU plugin computes the
    standalone composition, beyond :func:`_hypotheses`."""
    dtype = case.inputs["data"].dtype
    reduction, use_init = case.attrs.get("reduction", "none"), case.attrs.get("use_init_val", 1)
    if reduction == "mean" and dtype.kind in "iu":
        what = ("the composition as the plugin computes it: the int64 sum in int32 (wrapping), its integer Mod and "
                "Div in float32")
        return [("int32-narrowing", what, lambda: _sequential(case, np.int32, float32_mean=True))]
    if reduction == "mean" and dtype.kind == "f":
        work, topic = WORK_TYPES.get(dtype, (dtype, "float-accumulation"))
        what = f"its arithmetic simulated in order: the sum in {work}, one rounding per update, then times 1/count " \
               "(its Divide)"
        return [(topic, what, lambda: _sequential(case, work, reciprocal=True))]
    if reduction in ("min", "max") and not use_init and dtype.kind in "iu" and dtype in WORK_TYPES:
        topic = WORK_TYPES[dtype][1]
        what = f"the plugin's int32 arithmetic from the composition's identity, {dtype}'s {reduction} identity " \
               "narrowed to int32"
        return [(topic, what, lambda: _sequential(case, np.int32, identity=dtype))]
    return []


def _explain_standalone(case: Case, got, want) -> Check | None:
    """The standalone lowering run in OpenVINO (it ends in ONNX ScatterElements, which OpenVINO
    runs as its own ScatterElementsUpdate): the CPU plugin's arithmetic of :func:`_hypotheses`,
    and how it computes the composition (:func:`_standalone_hypotheses`: a float mean's ``Div``
    as a product with the reciprocal; an integer mean's int64 sum in int32 and its ``Mod`` and
    ``Div`` in float32; a narrowed identity with ``use_init_val=0``). Not NaN: the composition
    carries NaN through min and max itself, so a NaN that OpenVINO loses there is a fault."""
    return _reproduced(case, got, want, _hypotheses(case) + _standalone_hypotheses(case))


#: How OpenVINO's answer is judged (:class:`ortops.conformance.contracts.OpenVinoJudge`).
OPENVINO = SimpleNamespace(
    ALTERNATIVE="another of the updates where several hit one element",  # an accepted different answer
    RUN_INVALID=False,  # OpenVINO does not run the cases ortops rejects, because:
    NOT_RUN=("ortops raises OpError; OpenVINO is not run on invalid ScatterElementsUpdate inputs: its CPU plugin "
             "does not check them all (an index below -d made it write outside its buffer and abort the process: "
             "'free(): invalid next size')"),
    matches=_openvino_matches, explain=_openvino_explain, explain_standalone=_explain_standalone,
)


# --- ortops compare: two runtimes at a scatter node ---------------------------------------------

def _nd_targets(data, indices) -> np.ndarray:
    """The flat index of the first element of each slice ScatterND writes."""
    idx = np.asarray(indices).astype(np.int64)
    q = idx.shape[-1]
    rows = idx.reshape(-1, q)
    rows = np.where(rows < 0, rows + np.array(data.shape[:q]), rows)
    return np.ravel_multi_index(tuple(rows.T), data.shape[:q])


def _judge(capture: Capture, targets: np.ndarray, slice_shape: tuple, reduction: str, updates) -> Finding:
    data = np.asarray(capture.inputs[0])
    base, other = np.asarray(capture.base[0]), np.asarray(capture.other[0])
    if base.shape != other.shape or base.shape != data.shape:
        return Finding(None, False, f"output shapes {base.shape} and {other.shape} differ from the data's {data.shape}")
    lead = data.shape[:data.ndim - len(slice_shape)]
    differ = ~equal(base, other).reshape(int(np.prod(lead, dtype=np.int64)), -1).any(axis=1)
    differ_at = np.flatnonzero(differ)
    counts = np.bincount(targets, minlength=differ.shape[0])
    duplicated = counts[differ_at] > 1
    nan_at = np.zeros(differ.shape[0], bool)
    if data.dtype.kind == "f":
        nan_at |= np.isnan(data.reshape(differ.shape[0], -1)).any(axis=1)
        upd = np.asarray(updates).reshape(targets.shape[0], -1)
        np.logical_or.at(nan_at, targets, np.isnan(upd).any(axis=1))
    explained_nan = nan_at[differ_at]
    total = differ_at.size
    if not total:
        return Finding(None, True, "no element differs")
    if np.all(duplicated | explained_nan):
        n_dup, n_nan = int(duplicated.sum()), int((explained_nan & ~duplicated).sum())
        if n_dup == 0:
            return Finding("nan", True, f"NaN: all {total} differing targets saw a NaN")
        if reduction == "none":
            topic, what = "ties", "several updates write one element and the order of reduction='none' is undefined"
        elif reduction == "mean" and data.dtype.kind in "iu":
            topic, what = "integer-mean-rounding", "the integer mean of several updates is rounded"
        elif data.dtype.kind == "f" and reduction in ("add", "sum", "mul", "prod", "mean"):
            topic, what = "float-accumulation", f"float {reduction} of several updates depends on the accumulation"
        else:
            topic, what = "ties", f"{reduction} over several updates of one element"
        extra = f" ({n_nan} more saw a NaN)" if n_nan else ""
        return Finding(topic, True, f"duplicate scatter indices: {n_dup} of {total} differing targets receive "
                                    f"up to {int(counts[differ_at].max())} updates each; {what}{extra}")
    first = int(differ_at[~(duplicated | explained_nan)][0])
    return Finding(None, False, f"{int((~(duplicated | explained_nan)).sum())} of {total} differing targets have "
                                f"a single update and no NaN (first: flat target {first})")


def _scatter_nd(capture: Capture) -> Finding:
    data, indices, updates = (np.asarray(a) for a in capture.inputs[:3])
    q = indices.shape[-1]
    return _judge(capture, _nd_targets(data, indices), data.shape[q:], attribute(capture.node, "reduction", "none"),
                  updates)


def _elements(axis_of) -> Audit:
    """The audit of a scatter of elements whose axis ``axis_of(node, inputs)`` gives, with its
    precheck of the indices."""
    def audit(capture: Capture) -> Finding:
        data, indices, updates = (np.asarray(a) for a in capture.inputs[:3])
        targets = flat_targets(data.shape, indices, axis_of(capture.node, capture.inputs))
        return _judge(capture, targets, (), attribute(capture.node, "reduction", "none"), updates)

    def precheck(node, inputs) -> Finding | None:
        data, indices = inputs[0], inputs[1]
        if data is None or indices is None or not np.asarray(indices).size:
            return None
        axis = axis_of(node, inputs)
        if axis is None or not -data.ndim <= axis < data.ndim:
            return None
        dim = data.shape[axis]
        low, high = int(np.min(indices)), int(np.max(indices))
        if low < -dim or high > dim - 1:
            return Finding("out-of-range-indices", True,
                           f"index {low if low < -dim else high} is outside [{-dim}, {dim - 1}] for axis {axis}")
        return None

    return Audit(audit, precheck=precheck)


def _check_nd(node, inputs) -> Finding | None:
    data, indices = inputs[0], inputs[1]
    if data is None or indices is None or not np.asarray(indices).size:
        return None
    rows = np.asarray(indices).reshape(-1, np.asarray(indices).shape[-1])
    for axis in range(rows.shape[1]):
        dim = data.shape[axis]
        if rows[:, axis].min() < -dim or rows[:, axis].max() > dim - 1:
            return Finding("out-of-range-indices", True, f"an index of axis {axis} is outside [{-dim}, {dim - 1}]")
    return None


def _attribute_axis(node, inputs) -> int:
    return attribute(node, "axis", 0)


def _input_axis(node, inputs) -> int | None:
    return None if inputs[3] is None else int(np.asarray(inputs[3]).reshape(-1)[0])


AUDITS = {
    ("", "ScatterElements"): _elements(_attribute_axis),
    ("", "ScatterND"): Audit(_scatter_nd, precheck=_check_nd),
    (OPENVINO_DOMAIN, "ScatterElementsUpdate"): _elements(_input_axis),
}
