"""The conformance cases of ``ortops.openvino::ScatterElementsUpdate`` (ScatterElementsUpdate-12),
as data: the spec's worked examples, ONNX's backend vectors, seeded generated cases, the lowering's
fragile inputs and the real model's. Judged by :mod:`ortops.ops.scatter_elements_update.judge`."""

from __future__ import annotations

import itertools

import numpy as np
from onnx import helper

from ...onnx_vectors import onnx_vectors
from ...verdicts import Case
from .builder import ONNX_REDUCTION, SCATTER_ELEMENTS_REDUCTIONS
from .judge import OP

__all__ = ["CASE_SOURCES", "seed_cases", "onnx_backend_cases", "generated_cases", "real_model_cases", "lowering_cases"]


def _case(name, source, data, indices, updates, axis, *, reduction="none", use_init_val=1, versions=(),
          scalar_axis=False, **kw) -> Case:
    """A case; ``axis`` (an integer, of its own dtype) becomes an array of shape (1,), or () with ``scalar_axis``."""
    axis = np.asarray(axis).reshape(() if scalar_axis else 1)
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
        onnx_reduction = attrs.get("reduction", b"none").decode()  # a string attribute's value is bytes
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
    # The last two targets: a lone -0.0 meets 1.0 (min gives -0.0) and -1.0 (max gives -0.0).
    zeros = np.array([0.0, -0.0, 5.0, np.nan, 1.0, -1.0], np.float32)
    index = np.array([0, 0, 1, 1, 2, 3, 2, 4, 5])
    updates = np.array([-0.0, 0.0, 0.0, -0.0, np.nan, 1.0, -0.0, -0.0, -0.0], np.float32)
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
