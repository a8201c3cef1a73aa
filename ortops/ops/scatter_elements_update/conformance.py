"""Conformance of ``ortops.openvino::ScatterElementsUpdate`` (OpenVINO ScatterElementsUpdate-12).

Oracles, and what is comparable
-------------------------------
* **reference**: :func:`ortops.reference.scatter_elements_update`, always. Integers compare
  exactly, floats within :func:`~ortops.arrays.tolerance`. A case whose inputs
  the spec rejects (mean on bool) agrees when both ortops and the reference raise OpError.
* **expected**: a seed example's output, ONNX's backend test vectors, or a plain NumPy
  computation (real model), named by ``expected_from``.
* **onnxruntime ScatterElements-v**: ``use_init_val=1`` with none/sum/prod/min/max maps onto the
  standard node with reduction none/add/mul/min/max, run side by side with the ortops node in
  one model (:func:`~ortops.builder.scatter_elements_update_side_by_side`).
* **onnxruntime composition**: ``mean`` and ``use_init_val=0`` have no standard reduction; they
  are compared with the standard-op composition an exporter would emit
  (:func:`~ortops.builder.scatter_mean_composition`). For signed integer
  mean also with the composition a naive exporter emits (plain integer ``Div``).

Every divergence is *observed*, then explained only when the explanation reproduces it:

* ``reduction="none"`` with several updates for one target is undefined in both specs (ortops:
  the last in row-major order wins). Only positions with at most one update are compared
  strictly; a difference at the others is explained.
* ORT accumulates float32 sums and products in float32, update by update; ortops in float64,
  rounded once. Explained when ORT's result equals a float32 simulation of its order.
* ORT's min/max keep ``a < b ? a : b``, so a NaN survives or vanishes by operand order; the
  spec (and ortops) propagate NaN. Explained when a simulation of ORT's rule reproduces it.
* Plain integer ``Div`` truncates toward zero; the spec's mean rounds toward -inf. Explained
  where the naive composition is exactly one above ortops and the exact sum is negative.
* The composition's int64 (uint64) sums wrap where the exact sums leave that range. Explained
  when the exact sums (Python integers) prove it.
* Types ORT lacks (e.g. bool min/max at run time) are observed: the check is *skipped* with
  ORT's own message, as in the TopK suite.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np
from onnx import helper

from onnx.helper import np_dtype_to_tensor_dtype

from ... import reference
from .builder import (
    ONNX_REDUCTION,
    SCATTER_ELEMENTS_REDUCTIONS,
    onnx_scatter_elements_model,
    scatter_elements_update_model,
    scatter_elements_update_side_by_side,
    scatter_mean_composition,
)
from ...checks import normalize_axis
from ...divergences import ERROR_TOPICS, reason
from ...errors import OpError
from ...arrays import close, preview
from .reference import reduction_identity
from ...verdicts import Case, Check, Difference, difference
from ...arrays import has_nan, same, tolerance
from ...onnx_vectors import onnx_vectors
from ...sessions import BuiltinUnavailable, ortops_session, plain_session

__all__ = ["OP", "judge", "seed_cases", "onnx_backend_cases", "generated_cases", "real_model_cases",
           "CASE_SOURCES", "topics"]

OP = "ScatterElementsUpdate"

_NONE_DUPLICATES = reason("ties", "onnxruntime", OP)
_FLOAT32_ACCUMULATION = reason("float-accumulation", "onnxruntime", OP)
_NAN_MIN_MAX = reason("nan", "onnxruntime", OP)
_TRUNCATING_DIV = reason("integer-mean-rounding", "onnxruntime", OP)
_COMPOSITION_OVERFLOW = reason("narrow-type-overflow", "onnxruntime", OP)
_CAST_INDICES = "indices reach the standard nodes as int64 (their Tind is int32 or int64 only)"


# ----------------------------------------------------------------------------- running


def _axis_value(case: Case) -> int:
    axis = int(np.asarray(case.inputs["axis"]).reshape(-1)[0])
    return normalize_axis(OP, axis, case.inputs["data"].ndim)


def _run_ortops(case: Case) -> np.ndarray:
    data, indices, updates, axis = (case.inputs[k] for k in ("data", "indices", "updates", "axis"))
    model = scatter_elements_update_model(
        np_dtype_to_tensor_dtype(data.dtype), data.ndim, **case.attrs, indices_type=np_dtype_to_tensor_dtype(indices.dtype),
        axis_type=np_dtype_to_tensor_dtype(axis.dtype), axis_shape=axis.shape,
    )
    feed = {"data": data, "indices": indices, "updates": updates, "axis": axis}
    return ortops_session(model).run(None, feed)[0]


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


def _unsupported_at_run_time(exc: Exception) -> bool:
    text = str(exc)
    return "not supported" in text or "NOT_IMPLEMENTED" in text


def _ort_version() -> str:
    import onnxruntime

    return onnxruntime.__version__


# ----------------------------------------------------------------------------- comparing


def _mismatch(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Mask of positions where ``got`` and ``want`` differ beyond tolerance."""
    if got.dtype.kind == "f":
        rtol, atol = tolerance(got.dtype)
        return ~np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    return got != want


def _versus(oracle: str, got: np.ndarray, want: np.ndarray, detail: str = "", left: str = "ortops") -> Check:
    if close(got, want):
        return Check(oracle, "agree", detail=detail)
    return Check(oracle, "unexplained", "results differ", difference=difference("output", got, want, left=left,
                                                                                right=oracle))


def _targets(case: Case) -> np.ndarray:
    """Flat target in data (C order) of every element of indices, in row-major order."""
    data, indices = case.inputs["data"], case.inputs["indices"]
    axis = _axis_value(case)
    coords = list(np.indices(indices.shape, dtype=np.int64)) if indices.size else [
        np.zeros(indices.shape, np.int64) for _ in range(indices.ndim)]
    coords[axis] = indices.astype(np.int64) % max(data.shape[axis], 1)
    return np.ravel_multi_index(coords, data.shape).reshape(-1)


def _counts(case: Case) -> np.ndarray:
    data = case.inputs["data"]
    return np.bincount(_targets(case), minlength=data.size).reshape(data.shape)


# ----------------------------------------------------------------------------- simulations of ORT


def _simulate_ort(case: Case) -> np.ndarray:
    """What ORT's ScatterElements (and the composition) compute: update by update, in the
    element type, with ``a < b ? a : b`` min and ``a > b ? a : b`` max; mean as sum / count."""
    data, updates = case.inputs["data"], case.inputs["updates"]
    reduction, use_init_val = case.attrs["reduction"], case.attrs["use_init_val"]
    targets, values = _targets(case), updates.reshape(-1)
    acc = data.reshape(-1).copy()
    touched = np.zeros(acc.size, bool)
    touched[targets] = True
    if not use_init_val:
        acc[touched] = reduction_identity(reduction, data.dtype)
    with np.errstate(all="ignore"):
        if reduction in ("min", "max"):
            for target, value in zip(targets.tolist(), values.tolist()):
                current = acc[target]
                keep = current < value if reduction == "min" else current > value
                acc[target] = current if keep else value
        elif reduction == "mean":
            counts = np.ones(acc.size, np.int64)
            counts[touched] = 0 if not use_init_val else 1
            np.add.at(acc, targets, values)
            np.add.at(counts, targets, 1)
            acc = acc / counts.astype(acc.dtype)
        else:
            {"sum": np.add, "prod": np.multiply}[reduction].at(acc, targets, values)
    return acc.reshape(data.shape).astype(data.dtype)


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
    if data.dtype.kind == "f" and reduction in ("min", "max") and (has_nan(data) or has_nan(updates)):
        if same(_simulate_ort(case), other):
            return Check(oracle, "explained", _NAN_MIN_MAX, topic="nan", difference=diff)
    if data.dtype == np.float32 and reduction in ("sum", "prod", "mean"):
        if close(_simulate_ort(case), other):
            return Check(oracle, "explained", _FLOAT32_ACCUMULATION, topic="float-accumulation", difference=diff)
    if data.dtype.kind in "iu" and reduction == "mean":
        sums = _exact_sums(case)
        low, high = (0, 2**64 - 1) if data.dtype == np.uint64 else (-(2**63), 2**63 - 1)
        overflow = np.vectorize(lambda s: not low <= s <= high, otypes=[bool])(sums)
        if overflow.any() and not (_mismatch(got, other) & ~overflow).any():
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
    try:
        output, builtin = ortops_session(model).run(None, feed)
    except BuiltinUnavailable as exc:
        return Check(oracle, "skipped", f"ORT {_ort_version()} has no {data.dtype} ScatterElements-{version} kernel "
                     "(NOT_IMPLEMENTED); compared with the reference only", detail=str(exc))
    except OpError:
        raise
    except Exception as exc:  # noqa: BLE001 - only ORT's own "not supported" is a skip; the rest re-raised
        if not _unsupported_at_run_time(exc):
            raise
        return Check(oracle, "skipped", f"ORT {_ort_version()} ScatterElements-{version} rejects {data.dtype} "
                     f"reduction={ONNX_REDUCTION[reduction]!r} at run time; compared with the reference only",
                     detail=str(exc).strip().splitlines()[-1][:300])
    return output, builtin


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
    note = _CAST_INDICES if case.inputs["indices"].dtype not in (np.int32, np.int64) else ""
    checks = [_builtin_versus(case, oracle, got, builtin, note)]
    if case.expected is not None:
        checks.append(_versus(f"{oracle} vs {case.expected_from}", builtin, case.expected["output"], left=oracle))
    return checks


def _builtin_versus(case: Case, oracle: str, got: np.ndarray, builtin: np.ndarray, note: str) -> Check:
    if case.attrs["reduction"] != "none":
        if close(got, builtin):
            return Check(oracle, "agree", detail=note)
        return _explain(case, oracle, got, builtin)
    several = _counts(case) > 1
    defined = int((~several).sum())
    if not close(got[~several], builtin[~several]):
        return Check(oracle, "unexplained", "results differ at positions with at most one update",
                     difference=difference("output (positions with at most one update; others 0)",
                                           np.where(several, 0, got), np.where(several, 0, builtin), right=oracle))
    if not several.any():
        return Check(oracle, "agree", detail=note)
    compared = f"compared the {defined} positions with at most one update strictly; {int(several.sum())} receive several"
    if close(got[several], builtin[several]):
        return Check(oracle, "agree", detail=f"{compared} (undefined order): ORT also kept the last update there")
    differ = int(_mismatch(got[several], builtin[several]).sum())
    return Check(oracle, "explained", _NONE_DUPLICATES, detail=f"{compared}; ORT differs at {differ} of them",
                 topic="ties", difference=difference("output", got, builtin, right=oracle,
                                                     note="differences only where several updates meet"))


# ----------------------------------------------------------------------------- composition checks


def _composition_checks(case: Case, got: np.ndarray) -> list[Check]:
    data = case.inputs["data"]
    reduction, use_init_val = case.attrs["reduction"], case.attrs["use_init_val"]
    roundings = ["floor"]
    if reduction == "mean" and data.dtype.kind == "i":
        roundings.append("trunc")
    checks = []
    for rounding in roundings:
        oracle = "onnxruntime composition" + (" with plain integer Div" if rounding == "trunc" else "")
        feed, indices_type, note = _standard_feed(case)
        model = scatter_mean_composition(np_dtype_to_tensor_dtype(data.dtype), data.ndim, axis=_axis_value(case),
                                         reduction=reduction, use_init_val=use_init_val, rounding=rounding,
                                         indices_type=indices_type)
        try:
            output = plain_session(model).run(None, feed)[0]
        except BuiltinUnavailable as exc:
            checks.append(Check(oracle, "skipped", f"ORT {_ort_version()} lacks a kernel the composition needs for "
                                f"{data.dtype} (NOT_IMPLEMENTED)", detail=str(exc)))
            continue
        except Exception as exc:  # noqa: BLE001 - only ORT's own "not supported" is a skip
            if not _unsupported_at_run_time(exc):
                raise
            checks.append(Check(oracle, "skipped", f"ORT {_ort_version()} ScatterElements-18 rejects {data.dtype} "
                                f"reduction={ONNX_REDUCTION[reduction]!r} at run time",
                                detail=str(exc).strip().splitlines()[-1][:300]))
            continue
        if close(got, output):
            checks.append(Check(oracle, "agree", detail=note))
        elif rounding == "trunc":
            checks.append(_explain_trunc(case, oracle, got, output))
        else:
            checks.append(_explain(case, oracle, got, output))
    return checks


def _explain_trunc(case: Case, oracle: str, got: np.ndarray, output: np.ndarray) -> Check:
    differ = _mismatch(got, output)
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


def _plain_axis(case: Case) -> bool:
    """Whether the case's axis input is what the side-by-side model feeds: int64, shape (1,)."""
    axis = case.inputs["axis"]
    return axis.dtype == np.int64 and axis.shape == (1,)


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
    if case.onnx_versions and _plain_axis(case):
        first = case.onnx_versions[0]
        try:
            runs[first] = _side_by_side(case, first)
        except OpError as exc:
            got_error = exc
        if isinstance(runs.get(first), tuple):
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


# ----------------------------------------------------------------------------- cases


def _case(name, source, data, indices, updates, axis, *, reduction="none", use_init_val=1, versions=(),
          scalar_axis=False, **kw) -> Case:
    """A case; ``axis`` becomes an integer array of shape (1,), or () with ``scalar_axis``."""
    axis = np.asarray(axis)
    if axis.dtype.kind not in "iu":
        axis = axis.astype(np.int64)
    axis = axis.reshape(()) if scalar_axis else axis.reshape(1)
    inputs = {"data": np.asarray(data), "indices": np.asarray(indices), "updates": np.asarray(updates), "axis": axis}
    attrs = {"reduction": reduction, "use_init_val": use_init_val}
    return Case(name, OP, source, inputs, attrs, onnx_versions=tuple(versions), **kw)


def _versions(reduction: str, use_init_val: int, wanted=(11, 13, 16, 18)) -> tuple[int, ...]:
    """The wanted standard versions that have the reduction ``reduction`` maps onto."""
    if reduction not in ONNX_REDUCTION or (use_init_val == 0 and reduction != "none"):
        return ()
    return tuple(v for v in wanted if ONNX_REDUCTION[reduction] in SCATTER_ELEMENTS_REDUCTIONS[v])


def seed_cases() -> list[Case]:
    """The six examples of OpenVINO's ScatterElementsUpdate-12 operation specification."""
    spec = "OpenVINO ScatterElementsUpdate-12 spec example"
    f32, i32 = np.float32, np.int32
    data_1d = np.array([2, 3, 4, 6], f32)
    updates_1d = np.array([10, 20, 30, 40, 70, 60], f32)
    cases = [
        _case("seed_example_1_sum_init1_negative_indices", "seed-example", data_1d, np.array([1, 0, 0, -2, -1, 2]),
              updates_1d, [0], reduction="sum", use_init_val=1, versions=(16, 18),
              expected={"output": np.array([52, 13, 104, 76], f32)}, expected_from=spec + " 1"),
        _case("seed_example_2_sum_init0", "seed-example", data_1d, np.array([1, 0, 0, 2, 3, 2]), updates_1d, [0],
              reduction="sum", use_init_val=0, expected={"output": np.array([50, 10, 100, 70], f32)},
              expected_from=spec + " 2"),
    ]
    indices_2d = np.array([[1, 1], [0, 3]])
    updates_2d = np.array([[11, 12], [13, 14]], i32)
    cases += [
        _case("seed_example_3_none", "seed-example", np.zeros((3, 4), i32), np.array([[1, 2], [0, 3]]), updates_2d,
              [1], reduction="none", versions=(11, 13, 16, 18), expected_from=spec + " 3",
              expected={"output": np.array([[0, 11, 12, 0], [13, 0, 0, 14], [0, 0, 0, 0]], i32)}),
        _case("seed_example_4_sum", "seed-example", np.ones((3, 4), i32), indices_2d, updates_2d, [1],
              reduction="sum", versions=(16, 18), expected_from=spec + " 4",
              expected={"output": np.array([[1, 24, 1, 1], [14, 1, 1, 15], [1, 1, 1, 1]], i32)}),
        _case("seed_example_5_prod", "seed-example", np.full((3, 4), 2, i32), indices_2d, updates_2d, [1],
              reduction="prod", versions=(16, 18), expected_from=spec + " 5",
              expected={"output": np.array([[2, 264, 2, 2], [26, 2, 2, 28], [2, 2, 2, 2]], i32)}),
    ]
    # Example 6 gives shapes only (defaults: reduction none, use_init_val true); values are seeded.
    rng = np.random.default_rng(6)
    cases.append(_case(
        "seed_example_6_1000x256x7x7_none", "seed-example", rng.standard_normal((1000, 256, 7, 7), dtype=f32),
        rng.integers(-1000, 1000, (125, 20, 7, 6), dtype=np.int64), rng.standard_normal((125, 20, 7, 6), dtype=f32),
        [0], versions=(18,), details={"note": "shapes from the spec's example 6; values seeded (numpy rng 6)"},
    ))
    return cases


def onnx_backend_cases() -> list[Case]:
    """ONNX's own ScatterElements test vectors, mapped onto the custom node (use_init_val=1).

    Loaded by :func:`ortops.onnx_vectors.onnx_vectors`, not ONNX's global
    ``collect_testcases``, which hands back another op's cases once one was collected.
    """
    to_ortops = {onnx: ours for ours, onnx in ONNX_REDUCTION.items()}
    cases = []
    for vector in onnx_vectors("scatterelements", "ScatterElements"):
        attrs = {a.name: helper.get_attribute_value(a) for a in vector.node.attribute}
        onnx_reduction = attrs.get("reduction", b"none")
        onnx_reduction = onnx_reduction.decode() if isinstance(onnx_reduction, bytes) else onnx_reduction
        if onnx_reduction not in to_ortops:
            continue
        data, indices, updates = vector.inputs
        cases.append(_case(
            vector.name, "onnx-backend-test", data, indices, updates, [attrs.get("axis", 0)],
            reduction=to_ortops[onnx_reduction], use_init_val=1, versions=(vector.opset,),
            expected={"output": vector.outputs[0]}, expected_from="ONNX backend test vectors",
        ))
    return cases


_DTYPES = (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
           np.bool_)
_INDEX_DTYPES = (np.int64, np.int32, np.int8, np.uint8, np.int16, np.uint16, np.uint32, np.uint64)
_COMBOS = (("none", 1),) + tuple(itertools.product(("sum", "prod", "min", "max", "mean"), (1, 0)))


def _values(rng, dtype, shape) -> np.ndarray:
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f":
        values = np.round(rng.standard_normal(shape) * 8) / 4  # quarters: few rounding questions, some -0.0
        return values.astype(dtype)
    low = -6 if dtype.kind == "i" else 0
    return rng.integers(low, 13 + low, shape).astype(dtype)


def _indices(rng, dtype, shape, dim) -> np.ndarray:
    low = -dim if np.dtype(dtype).kind == "i" else 0
    return rng.integers(low, dim, shape).astype(dtype)


def _matrix_cases(rng) -> list[Case]:
    """Every dtype x (reduction, use_init_val); random ranks 1-4 and axes (negative too), index and
    axis dtypes in turn, the axis dimension of indices often larger than data's (duplicates)."""
    cases = []
    for n, (dtype, (reduction, use_init_val)) in enumerate(itertools.product(_DTYPES, _COMBOS)):
        rank = 1 + n % 4
        shape = tuple(int(d) for d in rng.integers(1, 5, rank))
        axis = int(rng.integers(-rank, rank))
        ishape = tuple(int(rng.integers(1, 3 * s + 1)) if d == axis % rank else int(rng.integers(1, s + 1))
                       for d, s in enumerate(shape))
        index_dtype = _INDEX_DTYPES[n % len(_INDEX_DTYPES)]
        versions = _versions(reduction, use_init_val, ((11, 13, 16, 18)[n % 4],) if reduction == "none" else (18,))
        # Cases judged against a composition need the ortops-only model anyway: they vary the axis
        # input's dtype and shape; the others feed axis as the side-by-side model does.
        axis_dtype = np.int64
        if not versions:
            axis_dtype = (np.int64, np.int32, np.int8, np.uint8)[n % 4] if axis >= 0 else (np.int64, np.int8)[n % 2]
        name = f"gen_{np.dtype(dtype).name}_{reduction}_init{use_init_val}_r{rank}"
        cases.append(_case(
            name, "generated", _values(rng, dtype, shape), _indices(rng, index_dtype, ishape, shape[axis % rank]),
            _values(rng, dtype, ishape), np.array(axis, axis_dtype), reduction=reduction, use_init_val=use_init_val,
            versions=versions, scalar_axis=not versions and n % 3 == 0,
        ))
    return cases


def _special_cases(rng) -> list[Case]:
    f32, f64 = np.float32, np.float64
    nan, inf = np.nan, np.inf
    cases = [
        _case("gen_none_heavy_duplicates_float32", "generated", _values(rng, f32, (4, 5)),
              rng.integers(0, 4, (12, 5)), _values(rng, f32, (12, 5)), [0], versions=(11, 13, 16, 18)),
        _case("gen_negative_indices_only_int32_sum", "generated", _values(rng, np.int32, (3, 6)),
              rng.integers(-6, 0, (3, 9)), _values(rng, np.int32, (3, 9)), [-1], reduction="sum", versions=(16, 18)),
        _case("gen_axis_dim_8x_larger_float64_mean", "generated", _values(rng, f64, (2, 3, 2)),
              rng.integers(-3, 3, (2, 24, 2)), _values(rng, f64, (2, 24, 2)), [1], reduction="mean"),
        _case("gen_axis_scalar_uint8_indices_uint16_max", "generated", _values(rng, np.int16, (5, 4)),
              rng.integers(0, 4, (5, 7)).astype(np.uint16), _values(rng, np.int16, (5, 7)), np.uint8(1),
              reduction="max", versions=(18,), scalar_axis=True),
        _case("gen_axis_int8_minus2_indices_int8_prod", "generated", _values(rng, f64, (3, 4)),
              rng.integers(-3, 3, (6, 4)).astype(np.int8), _values(rng, f64, (6, 4)), np.array([-2], np.int8),
              reduction="prod", versions=(16, 18)),
        _case("gen_nan_min_float32", "generated", np.array([1, nan, 1, 5, -inf], f32), np.array([0, 1, 2, 2, 3, 4, 4]),
              np.array([nan, 2, nan, 0.5, nan, inf, -1], f32), [0], reduction="min", versions=(18,)),
        _case("gen_nan_max_float64_init0", "generated", np.array([1, nan, 1, 5], f64), np.array([0, 2, 2, 3, 3]),
              np.array([nan, nan, 0.5, 7, nan], f64), [0], reduction="max", use_init_val=0),
        _case("gen_signed_zero_min_float32", "generated", np.array([0.0, -0.0, 0.0], f32), np.array([0, 0, 1, 2]),
              np.array([-0.0, 0.0, 0.0, -0.0], f32), [0], reduction="min", versions=(18,)),
        _case("gen_float32_sum_cancellation", "generated", np.array([1e8, 0.0], f32), np.array([0, 0, 0, 1, 1]),
              np.array([1, 1, -1e8, 3e7, 0.1], f32), [0], reduction="sum", versions=(16, 18)),
        _case("gen_float32_mean_cancellation_init0", "generated", np.array([5.0, 0.0], f32), np.array([0, 0, 0, 0]),
              np.array([1e8, 1, 1, -1e8], f32), [0], reduction="mean", use_init_val=0),
        _case("gen_int32_mean_negative_floor", "generated", np.array([[-3, 0, 7, -2]], np.int32),
              np.array([[0, 1, 1, 2, 3, 3]]), np.array([[-4, -1, -2, 2, 1, 0]], np.int32), [1], reduction="mean"),
        _case("gen_int8_sum_wraps", "generated", np.array([100, -100, 7], np.int8), np.array([0, 0, 1, 2]),
              np.array([100, 27, -100, 127], np.int8), [0], reduction="sum", versions=(16, 18)),
        _case("gen_uint8_prod_wraps", "generated", np.array([200, 3], np.uint8), np.array([0, 0, 1]),
              np.array([3, 5, 171], np.uint8), [0], reduction="prod", versions=(16, 18)),
        _case("gen_uint64_mean_above_2_63", "generated", np.array([2**64 - 1, 5], np.uint64), np.array([0, 0, 1]),
              np.array([2**64 - 3, 2**63, 2**63 + 1], np.uint64), [0], reduction="mean"),
        _case("gen_int64_mean_extremes_init0", "generated", np.array([7, -7], np.int64), np.array([0, 0, 1, 1]),
              np.array([2**62 + 1, 2**62 + 2, -(2**63), -(2**63) + 1], np.int64), [0], reduction="mean",
              use_init_val=0),
        _case("gen_empty_indices_float32_sum", "generated", _values(rng, f32, (3, 2)), np.zeros((0, 2), np.int64),
              np.zeros((0, 2), f32), [0], reduction="sum", versions=(18,)),
    ]
    # Bigger than one kernel chunk (2**16 updates): exercises the chunked path through the bridge.
    cases.append(_case("gen_float32_sum_rank4_chunked", "generated", rng.standard_normal((64, 16, 8, 8), dtype=f32),
                       rng.integers(-64, 64, (80, 16, 8, 8)), rng.standard_normal((80, 16, 8, 8), dtype=f32), [0],
                       reduction="sum", versions=(18,)))
    # An index outside [-d, d-1]: the spec rejects it; ortops raises OpError (kind index_range).
    grid = np.arange(12, dtype=f32).reshape(3, 4)
    for name, indices in (("gen_index_above_range_float32", [[0, 3, 1, 2]]),
                          ("gen_index_below_range_float32", [[-4, 0, 1, 2]])):
        cases.append(_case(name, "generated", grid, np.array(indices), np.ones((1, 4), f32), [0], versions=(18,)))
    return cases


def generated_cases(seed: int = 2026) -> list[Case]:
    """Seeded cases: the dtype x reduction x use_init_val matrix, then targeted ones (duplicates,
    negative indices, index and axis dtypes, NaN, signed zeros, float32 cancellation, integer
    wrap-around, floor mean, 64-bit extremes, empty indices, a chunked size)."""
    rng = np.random.default_rng(seed)
    return _matrix_cases(rng) + _special_cases(rng)


def real_model_cases() -> list[Case]:
    """Per-character confidence of the OCR model's decoded text, for every text in TEXTS.

    For each character of the greedy CTC decoding, the mean (and the peak) over its time steps of
    the winning class's probability: data zeros [len(text)], indices ``char_of_step`` of the
    non-blank steps, updates the max probability at those steps, use_init_val=0.
    """
    from ...real_model import TEXTS, line_name, ocr_run

    cases = []
    for n, text in enumerate(TEXTS):
        run = ocr_run(text)
        probs, decoded = run["probs"], run["decoded"]
        steps = np.flatnonzero(decoded.char_of_step >= 0)
        indices = decoded.char_of_step[steps].astype(np.int64)
        confidence = probs[0, steps].max(axis=-1).astype(np.float32)
        length = len(decoded.text)
        counts = np.bincount(indices, minlength=length)
        mean = (np.bincount(indices, weights=confidence.astype(np.float64), minlength=length) / counts)
        peak = np.zeros(length, np.float32)
        np.maximum.at(peak, indices, confidence)
        base = {
            "model": "PP-OCRv4 rec (rapidocr-onnxruntime 1.4.4)", "rendered": text, "decoded": decoded.text,
            "font": run["font"], "steps": int(probs.shape[1]), "non_blank_steps": int(steps.size),
        }
        for reduction, values, how in (("mean", mean, "mean"), ("max", peak, "peak")):
            details = dict(base, **{f"{how}_confidence_per_char": [[c, round(float(v), 4)]
                                                                  for c, v in zip(decoded.text, values)]})
            cases.append(_case(
                f"{line_name(n)}_char_{how}_confidence", "real-model", np.zeros(length, np.float32), indices,
                confidence,
                [0], reduction=reduction, use_init_val=0, expected={"output": values.astype(np.float32)},
                expected_from=f"NumPy per-character {how} ({'bincount' if how == 'mean' else 'maximum.at'})",
                details=details,
            ))
    return cases


def lowering_cases() -> list[Case]:
    """Inputs where the standard-ONNX composition (ortops/ops/scatter_elements_update/lowering.py)
    is fragile: duplicate indices, float32 sums that cancel, signed zeros and NaN in min/max,
    negative integer means, use_init_val=0, an index out of range."""
    cases = []
    dup = np.array([[0, 1, 0, 1, 0]]), np.array([[1e8, 1.0, -1e8, 2.0, 1.0]], np.float32)
    for reduction in ("none", "sum", "mean", "prod"):
        for init in (0, 1):
            cases.append(_case(f"lower_duplicates_{reduction}_init{init}", "generated", np.full((1, 3), 3.0, np.float32),
                               *dup, 1, reduction=reduction, use_init_val=init))
    zeros = np.array([0.0, -0.0, 5.0, np.nan], np.float32)
    index = np.array([0, 0, 1, 1, 2, 3, 2])
    updates = np.array([-0.0, 0.0, 0.0, -0.0, np.nan, 1.0, -0.0], np.float32)
    for reduction in ("min", "max"):
        for init in (0, 1):
            for dtype in (np.float32, np.float64):
                cases.append(_case(f"lower_signed_zeros_nan_{reduction}_{np.dtype(dtype).name}_init{init}", "generated",
                                   zeros.astype(dtype), index, updates.astype(dtype), 0, reduction=reduction,
                                   use_init_val=init))
    for dtype in (np.int8, np.int32, np.uint16):
        data = np.array([-3, 7, 1], dtype) if np.dtype(dtype).kind == "i" else np.array([3, 7, 1], dtype)
        ups = np.array([-4, -4, 1, 2, 0], dtype) if np.dtype(dtype).kind == "i" else np.array([4, 4, 1, 2, 0], dtype)
        for init in (0, 1):
            cases.append(_case(f"lower_int_mean_{np.dtype(dtype).name}_init{init}", "generated", data,
                               np.array([0, 0, 1, 1, 2]), ups, 0, reduction="mean", use_init_val=init))
    cases.append(_case("lower_index_out_of_range", "generated", np.zeros(4, np.float32), np.array([4]),
                       np.ones(1, np.float32), 0, reduction="sum"))
    cases.append(_case("lower_negative_indices_int8", "generated", np.zeros(4, np.float32),
                       np.array([-1, -4, -1], np.int8), np.array([1, 2, 3], np.float32), 0, reduction="none"))
    return cases


CASE_SOURCES = {
    "seed-example": seed_cases,
    "onnx-backend-test": onnx_backend_cases,
    "generated": lambda: generated_cases() + lowering_cases(),
    "real-model": real_model_cases,
}


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
