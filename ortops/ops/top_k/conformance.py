"""Conformance of ``ortops.openvino::TopK`` (OpenVINO TopK-11): cases and their judge.

Mapping onto the standard ONNX TopK, and what is comparable
-----------------------------------------------------------
* ``mode`` max/min is ``largest`` 1/0. TopK-1 and TopK-10 have no ``largest``: mode=min
  cases are skipped for them, as are non-float types (their spec allows float types only).
* ``sort="value"`` is ``sorted=1``; ONNX's rule that the lower index wins a tie is
  OpenVINO's ``stable=1``: compared exactly.
* ``sort="index"`` is the built-in result re-ordered by index: compared exactly.
* ``sort="none"`` and ``stable=0`` leave the order (and which of equal values) undefined:
  a different answer is accepted when it is a valid top-k of the slice (compared as sets).
* NaN: the order is implementation-defined in both specs. ortops ranks NaN above +inf; a
  difference on an input holding NaN is *explained*.
* Types ORT lacks (uint16, uint32, uint64 for TopK-11/24 in ORT 1.31 and 1.32) are observed, not
  assumed: when ORT answers NOT_IMPLEMENTED the check is *skipped* with ORT's message.
"""

from __future__ import annotations

import itertools

import numpy as np
from onnx import TensorProto, helper

from onnx.helper import np_dtype_to_tensor_dtype

from ... import reference
from ...builder import (
    TOP_K_VERSIONS,
    dims,
    make_model,
    onnx_top_k,
    onnx_top_k_model,
    top_k,
    top_k_model,
    top_k_side_by_side,
)
from ...checks import normalize_axis
from .spec import INDEX_ELEMENT_TYPES
from ...divergences import reason
from ...errors import OpError
from ...arrays import preview
from ...verdicts import Case, Check, Difference, difference
from ...arrays import has_nan, has_ties, same
from ...onnx_vectors import onnx_vectors
from ...sessions import BuiltinUnavailable, ortops_session, plain_session

__all__ = ["judge", "seed_cases", "generated_cases", "onnx_backend_cases", "real_model_cases", "CASE_SOURCES",
           "topics", "valid_top_k", "reference_answer", "case_model"]

OP = "TopK"
_FLOATS = (np.float32, np.float64)
_NAN_NOTE = reason("nan", "onnxruntime", OP)


def _run_ortops(data: np.ndarray, k: np.ndarray, attrs: dict):
    model = top_k_model(np_dtype_to_tensor_dtype(data.dtype), data.ndim, **attrs, k_type=np_dtype_to_tensor_dtype(k.dtype), k_shape=k.shape)
    return ortops_session(model).run(None, {"data": data, "k": k})


def valid_top_k(data, axis, attrs, values, indices, want_values) -> bool:
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


def _versus(oracle, case, got, want, *, order_defined: bool, left: str = "ortops") -> Check:
    data, attrs = case.inputs["data"], case.attrs
    axis = normalize_axis(OP, attrs["axis"], data.ndim)
    (values, indices), (w_values, w_indices) = got, want
    if same(values, w_values) and same(indices, w_indices):
        return Check(oracle, "agree")
    if not order_defined and valid_top_k(data, axis, attrs, w_values, w_indices, values):
        return Check(oracle, "agree")
    if same(values, w_values):
        diff = difference("indices", indices, w_indices, left=left, right=oracle)
    else:
        diff = difference("values", values, w_values, left=left, right=oracle)
    if has_nan(data):
        return Check(oracle, "explained", _NAN_NOTE, topic="nan", difference=diff)
    return Check(oracle, "unexplained", "results differ", difference=diff)


def _ort_version() -> str:
    import onnxruntime

    return onnxruntime.__version__


def _order_defined(attrs) -> bool:
    return attrs["sort"] != "none" and bool(attrs["stable"])


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
        return [Check(oracle, "skipped", f"ORT {_ort_version()} has no {data.dtype} TopK-{version} kernel "
                      "(NOT_IMPLEMENTED); compared with the reference only", detail=str(exc),
                      topic="uint64" if data.dtype == np.uint64 else None)]
    if not (same(values, got[0]) and same(indices, got[1])):
        return [Check(oracle, "unexplained", "ortops gave a different answer in the side-by-side model")]
    if attrs["sort"] == "index":
        order = np.argsort(b_indices, axis=attrs["axis"], kind="stable")
        b_values = np.take_along_axis(b_values, order, axis=attrs["axis"])
        b_indices = np.take_along_axis(b_indices, order, axis=attrs["axis"])
    checks = [_versus(oracle, case, got, (b_values, b_indices), order_defined=_order_defined(attrs))]
    if case.expected is not None:
        want = (case.expected["values"], case.expected["indices"])
        builtin = (b_values, b_indices)
        checks.append(_versus(f"{oracle} vs {case.expected_from}", case, builtin, want,
                              order_defined=_order_defined(attrs), left=oracle))
    return checks


def reference_answer(data: np.ndarray, k: np.ndarray, attrs: dict):
    """The reference answer; float16 is ranked as float32 (exact: the same values, same order)."""
    if data.dtype == np.float16:
        values, indices = reference.top_k(data.astype(np.float32), k, **attrs)
        return values.astype(np.float16), indices
    return reference.top_k(data, k, **attrs)


def _judge_error(case: Case, error: OpError) -> list[Check]:
    """A case the spec rejects: ortops must raise OpError; ORT's built-in is observed."""
    data, k, attrs = case.inputs["data"], case.inputs["k"], case.attrs
    checks = [Check("reference", "agree")]
    try:
        _run_ortops(data, k, attrs)
    except OpError as exc:
        checks.append(Check("ortops", "agree", detail=f"OpError: {exc.detail}"))
    else:
        checks.append(Check("ortops", "unexplained", "the reference raises OpError, ortops returned a result",
                            detail=str(error)))
    for version in case.onnx_versions:
        model = onnx_top_k_model(version, np_dtype_to_tensor_dtype(data.dtype), data.ndim, axis=attrs["axis"],
                                 largest=int(attrs["mode"] == "max"))
        try:
            values, _ = plain_session(model).run(None, {"X": data, "K": k.astype(np.int64).reshape(1)})
        except Exception as exc:  # noqa: BLE001 - ORT's own rejection is the observation
            checks.append(Check(f"onnxruntime TopK-{version}", "agree", detail=f"rejects: {str(exc)[:160]}"))
        else:
            checks.append(Check(f"onnxruntime TopK-{version}", "explained",
                                f"k outside [1, dim] is undefined in OpenVINO TopK-11 and ortops raises OpError; "
                                f"ORT's TopK-{version} returns a result", topic="k-range",
                                difference=Difference.outcome("ortops", f"OpError: {error.detail}",
                                                              f"onnxruntime TopK-{version}",
                                                              f"values {preview(values)}")))
    return checks


def judge(case: Case) -> list[Check]:
    """Run one TopK case through ortops in ORT and judge it against every oracle it has."""
    if case.details.get("dtype") == "bfloat16":
        return _judge_bfloat16(case)
    data, k, attrs = case.inputs["data"], case.inputs["k"], case.attrs
    try:
        ref = reference_answer(data, k, attrs)
    except OpError as error:
        return _judge_error(case, error)
    got = _run_ortops(data, k, attrs)
    checks = [_versus("reference", case, got, ref, order_defined=True)]
    if np.asarray(got[1]).dtype != INDEX_ELEMENT_TYPES[attrs["index_element_type"]]:
        checks.append(Check("index dtype", "unexplained", f"indices came back as {got[1].dtype}"))
    if case.expected is not None:
        want = (case.expected["values"], case.expected["indices"])
        checks.append(_versus(case.expected_from, case, got, want, order_defined=_order_defined(attrs)))
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
    checks = [_versus("reference", case, got, reference.top_k(data, np.array(k), **attrs), order_defined=True)]
    for version in case.onnx_versions:
        oracle = f"onnxruntime TopK-{version}"
        try:
            ortops_session(_bfloat16_model(data, k, attrs, version))
        except BuiltinUnavailable as exc:
            checks.append(Check(oracle, "skipped", f"ORT {_ort_version()} has no bfloat16 TopK-{version} kernel "
                                "(NOT_IMPLEMENTED); compared with the reference only", detail=str(exc),
                                topic="float16-bfloat16"))
        else:
            checks.append(Check(oracle, "unexplained", "ORT ran a bfloat16 TopK: the skip reason is out of date"))
    return checks


def _case(name, source, data, k, *, axis, mode, sort, stable=1, index_element_type="i32", versions=(), **kw) -> Case:
    attrs = dict(axis=axis, mode=mode, sort=sort, stable=stable, index_element_type=index_element_type)
    k = np.asarray(k)
    if k.ndim == 0:
        k = k.reshape(1)
    return Case(name, OP, source, {"data": data, "k": k.astype(k.dtype if k.dtype.kind in "iu" else np.int64)},
                attrs, onnx_versions=tuple(versions), **kw)


def seed_cases() -> list[Case]:
    """The worked examples of OpenVINO's TopK-11 operation specification."""
    spec_input = np.array([5, 3, 1, 2, 5, 5], np.float32)
    example = {"values": np.array([5, 3, 1, 2], np.float32), "indices": np.array([0, 1, 2, 3])}
    cases = [
        _case("seed_min_index_k4_stable", "seed-example", spec_input, 4, axis=0, mode="min", sort="index",
              stable=1, expected=example, expected_from="OpenVINO TopK-11 spec example", versions=(11, 24)),
        _case("seed_min_index_k4_unstable", "seed-example", spec_input, 4, axis=0, mode="min", sort="index",
              stable=0, expected=example, expected_from="OpenVINO TopK-11 spec example (one of 3 valid answers)",
              versions=(11, 24)),
        _case("seed_min_index_k4_stable_i64_int32", "seed-example", spec_input.astype(np.int32), 4, axis=0,
              mode="min", sort="index", stable=1, index_element_type="i64",
              expected={k: v.astype(np.int32) if k == "values" else v for k, v in example.items()},
              expected_from="OpenVINO TopK-11 spec example", versions=(11, 24)),
    ]
    rng = np.random.default_rng(11)
    image = rng.standard_normal((1, 3, 224, 224)).astype(np.float32)
    for sort in ("value", "index", "none"):
        cases.append(_case(f"seed_xml_1x3x224x224_axis3_k10_{sort}", "seed-example", image, 10, axis=3,
                           mode="max", sort=sort, stable=1, index_element_type="i64", versions=(1, 10, 11, 24)))
    return cases


def onnx_backend_cases() -> list[Case]:
    """ONNX's own TopK test vectors, mapped onto the custom node (stable=1, i64 indices)."""
    cases = []
    for vector in onnx_vectors("topk", "TopK"):
        attrs = {a.name: helper.get_attribute_value(a) for a in vector.node.attribute}
        largest = attrs.get("largest", 1)
        cases.append(_case(
            vector.name, "onnx-backend-test", vector.inputs[0], vector.inputs[1], axis=attrs.get("axis", -1),
            mode="max" if largest else "min", sort="value" if attrs.get("sorted", 1) else "none", stable=1,
            index_element_type="i64", expected={"values": vector.outputs[0], "indices": vector.outputs[1]},
            expected_from="ONNX backend test vectors", versions=(vector.opset,),
        ))
    return cases


def _tie_heavy(rng, dtype, shape) -> np.ndarray:
    return rng.integers(0, 4, size=shape).astype(dtype)


def generated_cases(seed: int = 2026) -> list[Case]:
    """Seeded cases: every dtype x mode x sort x stable, tie-heavy, ranks 1-5, negative axes,
    NaN/inf/-0.0, and integers beyond float64's exact range."""
    rng = np.random.default_rng(seed)
    dtypes = (np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
    combos = list(itertools.product(("max", "min"), ("value", "index", "none"), (0, 1)))
    cases = []
    for n, (dtype, (mode, sort, stable)) in enumerate(itertools.product(dtypes, combos)):
        rank = 1 + n % 5
        shape = tuple(int(d) for d in rng.integers(1, 6, size=rank))
        shape = shape[:-1] + (shape[-1] + 3,)
        axis = int(rng.integers(-rank, rank))
        k = int(rng.integers(1, shape[axis] + 1))
        versions = (11, 24) + ((1, 10) if dtype in _FLOATS and mode == "max" else ())
        cases.append(_case(
            f"gen_{np.dtype(dtype).name}_{mode}_{sort}_stable{stable}_r{rank}", "generated",
            _tie_heavy(rng, dtype, shape), np.array([k], [np.int64, np.int32, np.uint8][n % 3]), axis=axis,
            mode=mode, sort=sort, stable=stable, index_element_type=("i32", "i64")[n % 2], versions=versions,
        ))
    special = np.array([1, np.nan, 3, -np.inf, np.inf, np.nan, 2, -0.0, 0.0, -5], np.float32)
    for dtype, mode, sort in itertools.product(_FLOATS, ("max", "min"), ("value", "index")):
        cases.append(_case(f"gen_nan_inf_{np.dtype(dtype).name}_{mode}_{sort}", "generated", special.astype(dtype),
                           6, axis=0, mode=mode, sort=sort, stable=1, versions=(11, 24)))
    for k in (0, -1, 7):  # k outside [1, dim]: undefined in the spec, an OpError in ortops
        cases.append(_case(f"gen_k_out_of_range_{k}", "generated", np.arange(6, dtype=np.float32), np.array([k]),
                           axis=0, mode="max", sort="value", versions=(11,)))
    half = np.array([0.1, 65504, -0.0, 0.0, np.nan, 6e-8, 0.1, -65504, np.inf, 1.5], np.float16)
    for mode, sort in itertools.product(("max", "min"), ("value", "index")):
        cases.append(_case(f"gen_float16_{mode}_{sort}", "generated", half, 5, axis=0, mode=mode, sort=sort,
                           versions=(11, 24)))
        ties = rng.integers(-3, 3, size=(3, 9)).astype(np.float16)
        cases.append(_case(f"gen_float16_ties_{mode}_{sort}", "generated", ties, 4, axis=-1, mode=mode, sort=sort,
                           stable=1, index_element_type="i64", versions=(11, 24)))
        brain = rng.integers(-4, 4, size=(4, 7)).astype(np.float32) * np.float32(0.5)  # exact in bfloat16
        brain[0, 2] = np.nan
        cases.append(_case(f"gen_bfloat16_{mode}_{sort}", "generated", brain, 3, axis=1, mode=mode, sort=sort,
                           versions=(24,), details={"dtype": "bfloat16"}))
    big = np.array([2**53 + 1, 2**53, 2**62 + 3, -(2**63), 2**63 - 1, 2**53 + 1, 7], np.int64)
    huge = np.array([2**64 - 1, 2**63, 2**63 - 1, 0, 2**64 - 2, 2**63, 1], np.uint64)
    for data in (big, huge):
        for mode in ("max", "min"):
            cases.append(_case(f"gen_exact_{data.dtype.name}_{mode}", "generated", data, 4, axis=0, mode=mode,
                               sort="value", stable=1, index_element_type="i64", versions=(11, 24)))
    return cases


def real_model_cases() -> list[Case]:
    """Per-step top-5 candidates of the real model's softmax, for every text in :data:`TEXTS`."""
    from ...real_model import IN_GRAPH, TEXTS, TOP_K, line_name, ocr_run

    cases = []
    for n, text in enumerate(TEXTS):
        run = ocr_run(text)
        probs = run["probs"]
        values, indices = run["onnx"]
        details = {
            "model": "PP-OCRv4 rec (rapidocr-onnxruntime 1.4.4)",
            "rendered": text,
            "decoded": run["decoded"].text,
            "font": run["font"],
            "steps": int(probs.shape[1]),
            "in_graph_agrees": bool(np.array_equal(run["ortops"][1], indices)),
        }
        stem = f"{line_name(n)}_topk{TOP_K}"
        cases.append(_case(stem, "real-model", probs, TOP_K, **IN_GRAPH,
                           expected={"values": values, "indices": indices},
                           expected_from="TopK-11 inside the OCR graph", expected_family="onnxruntime",
                           versions=(11, 24), details=details))
        variant = [dict(mode="max", sort="index", stable=0, index_element_type="i32"),
                   dict(mode="min", sort="value", stable=1, index_element_type="i32"),
                   dict(mode="max", sort="none", stable=0, index_element_type="i64"),
                   dict(mode="max", sort="value", stable=0, index_element_type="i32")][n]
        tag = f"{variant['mode']}_{variant['sort']}_stable{variant['stable']}"
        cases.append(_case(f"{stem}_{tag}", "real-model", probs, TOP_K, axis=-1, **variant,
                           versions=(11, 24), details=dict(details, in_graph_agrees=None)))
    return cases


def lowering_cases() -> list[Case]:
    """Inputs where the standard-ONNX composition (ortops/ops/top_k/lowering.py) is fragile:
    ties between -0.0 and +0.0, NaN, k at and beyond the ends, widened integer types."""
    zeros = [0.0, -0.0, 1.0, -0.0, 0.0, 1.0, -1.0, -0.0]
    nans = [np.nan, 1.0, -np.nan, np.inf, -np.inf, -0.0, 0.0, np.nan, 3.0]
    cases = []
    for dtype in (np.float32, np.float64, np.float16):
        for mode, sort in itertools.product(("max", "min"), ("value", "index")):
            tag = f"{np.dtype(dtype).name}_{mode}_{sort}"
            cases.append(_case(f"lower_signed_zero_ties_{tag}", "generated", np.array([zeros], dtype), 5, axis=-1,
                               mode=mode, sort=sort))
            cases.append(_case(f"lower_nan_{tag}", "generated", np.array([nans, nans[::-1]], dtype), 6, axis=1,
                               mode=mode, sort=sort))
    for k in (0, -1, 9):
        cases.append(_case(f"lower_k_{k}_of_8", "generated", np.ones((2, 8), np.float32), k, axis=1, mode="max",
                           sort="value"))
    # A session leaves k's check to ORT's TopK, k=0 mapped to -1: the extremes of int64 and int32.
    cases.append(_case("lower_k_int64_min_of_8", "generated", np.ones((2, 8), np.float32), np.array([-2 ** 63]),
                       axis=1, mode="min", sort="index"))
    cases.append(_case("lower_k_int32_max_of_8", "generated", np.ones((2, 8), np.float32),
                       np.array([2 ** 31 - 1], np.int32), axis=1, mode="max", sort="value"))
    cases.append(_case("lower_k_int8_full_axis", "generated", np.array([[3, 1, 3, 1]], np.int32), np.int8(4),
                       axis=0 - 1, mode="min", sort="index"))
    for dtype in (np.uint16, np.uint32, np.int8):
        info = np.iinfo(dtype)
        data = np.array([[info.max, info.min, info.max, 0, info.min, 1]], dtype)
        cases.append(_case(f"lower_widened_{np.dtype(dtype).name}_extremes", "generated", data, 4, axis=1, mode="max",
                           sort="value"))
    return cases


CASE_SOURCES = {
    "seed-example": seed_cases,
    "onnx-backend-test": onnx_backend_cases,
    "generated": lambda: generated_cases() + lowering_cases(),
    "real-model": real_model_cases,
}


def topics(case: Case) -> set[str]:
    """The divergence topics of a TopK case beyond its dtype (see :mod:`ortops.conformance.matrix`)."""
    data = case.inputs["data"]
    k, axis = int(np.asarray(case.inputs["k"]).reshape(-1)[0]), case.attrs["axis"]
    if data.ndim and -data.ndim <= axis < data.ndim and not 1 <= k <= data.shape[axis]:
        return {"k-range"}
    if data.size and not has_nan(data) and has_ties(data):
        return {"ties"}
    return set()
