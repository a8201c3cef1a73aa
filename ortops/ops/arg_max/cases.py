"""The conformance cases of ``ortops.ncnn::ArgMax`` (ncnn's ArgMax layer), as data: the layer's
worked example, ONNX's ArgMax backend vectors, seeded generated cases and error cases, the
lowering's fragile inputs and the real model's softmax. Judged by :mod:`ortops.ops.arg_max.judge`."""

from __future__ import annotations

import functools
import itertools

import numpy as np
import onnx
from onnx import helper

from ... import real_model
from ...onnx_vectors import OnnxVector, onnx_vectors
from ...verdicts import Case
from .checks import FLOAT32_EXACT_INT_MAX
from .judge import OP, _indices, _run_builtin

__all__ = ["CASE_SOURCES", "onnx_arg_max_vectors", "seed_cases", "onnx_backend_cases", "generated_cases",
           "real_model_cases", "lowering_cases"]


def _case(name: str, source: str, data, *, out_max_val: int = 0, topk: int = 1, **kw) -> Case:
    data = np.asarray(data)
    return Case(name, OP, source, {"data": data}, dict(out_max_val=out_max_val, topk=topk), **kw)


def _error_case(name: str, source: str, data, why: str, **attrs) -> Case:
    return _case(name, source, data, **attrs, details={"expected_error": why})


def seed_cases() -> list[Case]:
    """The worked example of ncnn's ArgMax layer (``src/layer/argmax.cpp``): ``a = np.arange(6).reshape(2, 3) + 10``.

    Expected outputs are written by hand from the walk-through: ``np.argmax(a) == 5``, the
    values 15 > 14 > ... > 10 sit at flat indices 5, 4, ..., 0; ``np.argmax(a, axis=0)`` is
    [1, 1, 1] (each column is a tensor whose maximum is at index 1) and ``np.argmax(a,
    axis=1)`` is [2, 2] (each row's maximum is at index 2).
    """
    a = (np.arange(6).reshape(2, 3) + 10).astype(np.float32)
    source, walk = "seed-example", "seed walk-through (by hand)"
    by_hand = {  # topk -> (indices, values)
        1: ([5], [15]),
        2: ([5, 4], [15, 14]),
        3: ([5, 4, 3], [15, 14, 13]),
        6: ([5, 4, 3, 2, 1, 0], [15, 14, 13, 12, 11, 10]),
    }
    cases = []
    for topk, (indices, values) in by_hand.items():
        cases.append(_case(f"seed_arange_top{topk}", source, a, topk=topk, expected_from=walk,
                           expected={"output": np.array([indices], np.float32)}))
        cases.append(_case(f"seed_arange_top{topk}_out_max_val", source, a, out_max_val=1, topk=topk,
                           expected_from=walk, expected={"output": np.array([values, indices], np.float32)}))
    for j in range(3):
        cases.append(_case(f"seed_column{j}_as_axis0", source, np.ascontiguousarray(a[:, j]), expected_from=walk,
                           expected={"output": np.array([[1]], np.float32)},
                           details={"note": f"np.argmax(a, axis=0)[{j}] == 1: column {j} as its own blob"}))
    for i in range(2):
        cases.append(_case(f"seed_row{i}_as_axis1", source, a[i].copy(), out_max_val=1, expected_from=walk,
                           expected={"output": np.array([[a[i, 2]], [2]], np.float32)},
                           details={"note": f"np.argmax(a, axis=1)[{i}] == 2: row {i} as its own blob"}))
    cases.append(_error_case("seed_arange_top7_over_size", source, a, "topk=7 > 6 elements (undefined in ncnn)",
                             topk=7))
    return cases


def onnx_arg_max_vectors() -> tuple[OnnxVector, ...]:
    """ONNX's ArgMax backend vectors (see :mod:`ortops.onnx_vectors`)."""
    return onnx_vectors("argmax", "ArgMax")


def onnx_backend_cases() -> list[Case]:
    """ONNX's ArgMax backend vectors: the input through ortops topk=1, checked per slice.

    ONNX reduces along ``axis``; ncnn's layer flattens. Each case's whole tensor goes through
    the exact composition and the naive mapping; ONNX's own expected output is compared slice
    by slice (see the module docstring). The ``random`` vectors also run with topk = the
    element count and out_max_val=1: the full ncnn order of the tensor.
    """
    cases = []
    version = onnx.defs.get_schema("ArgMax").since_version
    for test in onnx_arg_max_vectors():
        raw = {a.name: helper.get_attribute_value(a) for a in test.node.attribute}
        spec = {"axis": int(raw.get("axis", 0)), "keepdims": int(raw.get("keepdims", 1)),
                "select_last_index": int(raw.get("select_last_index", 0))}
        data, outputs = np.asarray(test.inputs[0], np.float32), test.outputs
        mapping = (f"ONNX ArgMax-{version} {spec} reduces along axis {spec['axis']}; "
                   "ncnn ArgMax flattens the whole tensor. Compared with ONNX's output per 1-D slice along that axis "
                   "(ortops topk=1 on the slice); the whole tensor is compared with the exact composition "
                   "Reshape(-1)+ArgMax(select_last_index=1) and the naive TopK-11.")
        cases.append(_case(test.name, "onnx-backend-test", data, expected={"onnx_output": outputs[0]},
                           expected_from="ONNX backend test vectors",
                           details={"onnx_attributes": spec, "mapping": mapping}))
        if "random" in test.name and not spec["select_last_index"]:
            cases.append(_case(f"{test.name}_full_order", "onnx-backend-test", data, out_max_val=1, topk=data.size,
                               details={"mapping": "the input of " + test.name + ", topk = every element: ncnn's "
                                        "whole order, compared with TopK-11 on the reversed flattened tensor"}))
    return cases


def _tie_heavy(rng: np.random.Generator, shape) -> np.ndarray:
    return rng.integers(-2, 3, size=shape).astype(np.float32)


def generated_cases(seed: int = 2026) -> list[Case]:
    """Seeded cases: tie-heavy ranks 1-5 with topk 1, a middle value and the size, both
    out_max_val; NaN, +-inf and -0.0; all equal; one element; and the error cases."""
    rng = np.random.default_rng(seed)
    source = "generated"
    cases = []
    for rank, out_max_val in itertools.product(range(1, 6), (0, 1)):
        shape = tuple(int(d) for d in rng.integers(1, 5, size=rank))
        shape = shape[:-1] + (shape[-1] + 2,)
        data = _tie_heavy(rng, shape)
        size = data.size
        for topk in sorted({1, int(rng.integers(2, size)) if size > 2 else 2, size}):
            cases.append(_case(f"gen_ties_r{rank}_top{topk}_omv{out_max_val}", source, data,
                               out_max_val=out_max_val, topk=topk))
    distinct = rng.permutation(24).astype(np.float32).reshape(2, 3, 4) / 4
    for topk in (1, 5, 24):
        cases.append(_case(f"gen_distinct_r3_top{topk}", source, distinct, out_max_val=1, topk=topk))
    nan, inf = np.nan, np.inf
    special = np.array([1, nan, 3, -inf, inf, nan, 2, -0.0, 0.0, -5, inf, -0.0], np.float32)
    for topk, out_max_val in itertools.product((1, 3, 6, 12), (0, 1)):
        cases.append(_case(f"gen_nan_inf_top{topk}_omv{out_max_val}", source, special.reshape(3, 4),
                           out_max_val=out_max_val, topk=topk))
    no_nan = special[~np.isnan(special)]
    for topk in (1, 2, 8, 10):  # +inf tied at the top, -0.0/+0.0 ties in the middle, -inf at the end
        cases.append(_case(f"gen_inf_signed_zero_top{topk}", source, no_nan, out_max_val=1, topk=topk))
    zeros = np.array([[0.0, -0.0], [-0.0, 0.0], [-1.0, 0.0]], np.float32)
    for topk in (1, 3, 5):
        cases.append(_case(f"gen_signed_zeros_top{topk}", source, zeros, out_max_val=1, topk=topk))
    cases += [
        _case("gen_all_nan_top3", source, np.full((2, 2), nan, np.float32), out_max_val=1, topk=3),
        _case("gen_nan_last_top1", source, np.array([1, 2, nan], np.float32), out_max_val=1),
        _case("gen_all_equal_r4_top1", source, np.full((2, 1, 3, 2), 7, np.float32)),
        _case("gen_all_equal_r4_top12", source, np.full((2, 1, 3, 2), 7, np.float32), out_max_val=1, topk=12),
        _case("gen_one_element_r5", source, np.full((1, 1, 1, 1, 1), -3.5, np.float32), out_max_val=1),
        _case("gen_all_neg_inf_top2", source, np.full((4,), -inf, np.float32), out_max_val=1, topk=2),
        _case("gen_random_normal_1x1000_top100", source, rng.standard_normal((1, 1000)).astype(np.float32),
              out_max_val=1, topk=100),
        _case("gen_tie_heavy_64x320_top50", source, _tie_heavy(rng, (64, 320)), out_max_val=1, topk=50),
    ]
    big = np.zeros(FLOAT32_EXACT_INT_MAX + 2, np.float32)
    big[-1] = 1.0
    cases += [
        _error_case("gen_error_top_over_size", source, _tie_heavy(rng, (2, 3)), "topk=7 > 6 elements", topk=7),
        _error_case("gen_error_empty_1d", source, np.zeros((0,), np.float32), "empty input"),
        _error_case("gen_error_empty_3d", source, np.zeros((2, 0, 3), np.float32), "empty input", out_max_val=1),
        _error_case("gen_error_index_above_2_24", source, big,
                    "the maximum is at flat index 2**24 + 1, which float32 cannot hold exactly"),
    ]
    return cases


@functools.lru_cache(maxsize=1)
def _characters() -> tuple[str, ...]:
    from ... import ocr

    return tuple(ocr.characters(ocr.load_model()))


def real_model_cases() -> list[Case]:
    """The PP-OCRv4 recogniser's softmax [1, T, 6625] for each text of :data:`real_model.TEXTS`.

    ncnn's ArgMax over the whole tensor finds the single most confident (step, class) of the
    line; topk=5 the five most confident. The details show them, found by the built-in
    composition (plain ORT, without ortops), as step, class, character and probability.
    """
    chars = _characters()
    cases = []
    for n, text in enumerate(real_model.TEXTS):
        run = real_model.ocr_run(text)
        probs = np.ascontiguousarray(run["probs"], np.float32)
        for topk in (1, 5):
            builtin = _run_builtin(probs, dict(out_max_val=1, topk=topk), exact_ties=True)
            found = []
            for value, flat in zip(builtin[0].tolist(), _indices(builtin).tolist()):
                _, step, cls = (int(i) for i in np.unravel_index(flat, probs.shape))
                found.append({"flat_index": flat, "step": step, "class": cls, "character": chars[cls],
                              "value": value})
            details = {
                "model": "PP-OCRv4 rec (rapidocr-onnxruntime 1.4.4)",
                "rendered": text,
                "decoded": run["decoded"].text,
                "font": run["font"],
                "shape": list(probs.shape),
                "most_confident" if topk == 1 else "top5": found[0] if topk == 1 else found,
            }
            name = f"{real_model.line_name(n)}_argmax_top{topk}"
            cases.append(_case(name, "real-model", probs, out_max_val=1, topk=topk,
                               details=details))
    return cases


def lowering_cases() -> list[Case]:
    """Inputs where the standard-ONNX composition (ortops/ops/arg_max/lowering.py) is fragile:
    ties (the higher index first) between -0.0 and +0.0, NaN, topk at and beyond the size."""
    data = np.array([[np.nan, 1, -0.0, 0.0, np.inf, 1, -np.nan, -np.inf, 0.0]], np.float32)
    cases = [_case(f"lower_ties_nan_top{topk}_max{out}", "generated", data, out_max_val=out, topk=topk)
             for topk in (1, 4, 9) for out in (0, 1)]
    cases.append(_case("lower_zero_ties", "generated", np.array([0.0, -0.0, 0.0, -0.0], np.float32), out_max_val=1,
                       topk=4))
    cases.append(_error_case("lower_topk_over_size", "generated", np.ones((2, 2), np.float32), "topk > size", topk=5))
    return cases


CASE_SOURCES = {
    "seed-example": seed_cases,
    "onnx-backend-test": onnx_backend_cases,
    "generated": lambda: generated_cases() + lowering_cases(),
    "real-model": real_model_cases,
}
