"""The conformance cases of ``ortops.openvino::TopK`` (OpenVINO TopK-11), as data: the spec's
worked examples, ONNX's backend vectors, seeded generated cases, the lowering's fragile inputs and
the real model's candidates. Judged by :mod:`ortops.ops.top_k.judge`."""

from __future__ import annotations

import itertools

import numpy as np
from onnx import helper

from ...onnx_vectors import onnx_vectors
from ...verdicts import Case
from .judge import OP, _FLOATS

__all__ = ["CASE_SOURCES", "seed_cases", "onnx_backend_cases", "generated_cases", "real_model_cases", "lowering_cases"]


def _case(name, source, data, k, *, axis, mode, sort, stable=1, index_element_type="i32", versions=(), **kw) -> Case:
    attrs = dict(axis=axis, mode=mode, sort=sort, stable=stable, index_element_type=index_element_type)
    k = np.atleast_1d(k)
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
                       axis=-1, mode="min", sort="index"))
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
