"""Conformance of ``ortops.ncnn::ArgMax`` (ncnn's ArgMax layer): cases and their judge.

Oracles, and what is comparable
-------------------------------
* **reference** - :func:`ortops.reference.arg_max`, compared bit for bit (NaN equal to NaN).
* **the exact built-in composition** (:func:`ortops.builder.onnx_arg_max_equivalent`),
  run side by side with the ortops node in one model: ``Reshape(-1)`` + ``ArgMax(axis=0,
  keepdims=1, select_last_index=1)`` for topk=1, TopK-11 on the reversed flattened tensor
  for topk>1. Compared exactly. On an input holding NaN ORT's ArgMax and TopK do not order
  NaN like ortops (NaN above +inf, the higher index first among NaNs): a difference there is
  *explained*, with ORT's answer in the detail.
* **the naive mapping**, TopK-11 straight on the flattened tensor. It puts the LOWER index
  first among equal values, ncnn the HIGHER. Its answer is first checked against that rule
  (a stable descending sort), then: identical -> agree; the same elements in another order
  (ties inside the top-k only) -> agree, compared as sets; different elements -> *explained*
  only when the k-th value also occurs outside the top-k (a tie at the boundary).
* **expected outputs** written by someone else: the seed walk-through's values (by hand) and
  ONNX's ArgMax backend vectors. ONNX's vectors reduce along one axis; ncnn's layer sees the
  whole tensor. Every 1-D slice along the ONNX axis is a tensor that ncnn's layer flattens to
  itself, so ortops (topk=1) on each slice is compared with ONNX's expected output at that
  position: equivalent when ``select_last_index=1``, or when the slice's maximum is unique.
  With ``select_last_index=0`` and a tied maximum ONNX takes the first, ncnn the last:
  *explained*. The whole tensor goes through the exact composition like every other case.
* **real ncnn** - only with ``--oracle ncnn``, after ``ortops install-oracle ncnn`` (the layer
  is off in default builds: the pip wheel answers "layer ArgMax not exists"); judged by
  :mod:`ortops.ops.arg_max.ncnn_oracle`, fed as one unpadded channel. ncnn's
  ``Mat::total()`` counts the padding that rounds each channel up to 16 bytes, so in its native
  layouts its flat indices (and the elements it ranks) differ; ortops counts logical
  elements, in C order.
* **errors** - topk above the element count, an empty input and a selected index above 2**24
  must raise :class:`ortops.OpError` in ortops and in the reference (ncnn: undefined
  behaviour, or a silently rounded float32 index).
"""

from __future__ import annotations

import functools
import itertools

import numpy as np
import onnx
from onnx import helper

from ... import reference
from .builder import arg_max_model, arg_max_side_by_side, onnx_arg_max_equivalent_model
from .checks import FLOAT32_EXACT_INT_MAX
from ...checks import normalize_axis
from ...divergences import reason
from ...errors import OpError
from ... import real_model
from ...verdicts import Case, Check, difference
from ...arrays import bitwise_same, describe_difference, has_nan, has_ties
from ...onnx_vectors import OnnxVector, onnx_vectors
from ...sessions import ortops_session, plain_session

__all__ = [
    "OP", "EXACT", "NAIVE", "judge", "onnx_arg_max_vectors", "seed_cases", "onnx_backend_cases",
    "generated_cases", "real_model_cases", "CASE_SOURCES", "topics",
]

OP = "ArgMax"
EXACT = "onnxruntime Reshape+ArgMax/TopK-11 (exact composition)"
NAIVE = "onnxruntime TopK-11 on the flattened tensor (naive)"
_NAN_NOTE = reason("nan", "onnxruntime", OP)
_TIE_NOTE = reason("ncnn-tie-rule", "onnxruntime", OP)
_ONNX_TIE_NOTE = reason("ncnn-tie-rule", "onnx", OP)


# ----------------------------------------------------------------------------- comparisons


def _identical(a: np.ndarray, b: np.ndarray) -> bool:
    """Same shape and the same float32 bits, except that any NaN equals any NaN."""
    return bitwise_same(np.asarray(a, np.float32), np.asarray(b, np.float32))


def _indices(output: np.ndarray) -> np.ndarray:
    return np.asarray(output[-1], np.int64)


def _describe(got: np.ndarray, want: np.ndarray) -> str:
    if got.shape != want.shape:
        return f"output shape {got.shape} vs {want.shape}"
    rows = ("indices",) if got.shape[0] == 1 else ("values", "indices")
    return "; ".join(describe_difference(f"{name} (ortops vs oracle)", g, w)
                     for name, g, w in zip(rows, got, want) if not _identical(g, w))


def _short(values, limit: int = 12) -> str:
    """A list for a report line, cut after ``limit`` items."""
    values = list(values)
    if len(values) <= limit:
        return str(values)
    return str(values[:limit])[:-1] + f", ... ({len(values)} in all)]"


def _nan_detail(data: np.ndarray, got: np.ndarray, builtin: np.ndarray) -> str:
    nans = np.flatnonzero(np.isnan(data.reshape(-1))).tolist()
    return (f"NaN at flat indices {_short(nans)}; ortops indices {_short(_indices(got).tolist())} vs ORT "
            f"{_short(_indices(builtin).tolist())}")


def _lower_index_first(flat: np.ndarray, topk: int) -> np.ndarray:
    """TopK-11's documented order: value descending, the lower index first (no NaN)."""
    return np.argsort(-flat, kind="stable")[:topk]


def _boundary_tie(flat: np.ndarray, chosen: np.ndarray) -> bool:
    """Whether the k-th value also occurs among the elements not chosen."""
    kth = flat[chosen[-1]]
    return int(np.count_nonzero(flat == kth)) > int(np.count_nonzero(flat[chosen] == kth))


# ----------------------------------------------------------------------------- running


def _run_ortops(data: np.ndarray, attrs: dict) -> np.ndarray:
    return ortops_session(arg_max_model(data.ndim, **attrs)).run(None, {"data": data})[0]


def _run_side_by_side(data: np.ndarray, attrs: dict) -> tuple[np.ndarray, np.ndarray]:
    """(ortops, exact built-in composition), from one model: creating an ortops session costs
    tens of milliseconds, so ortops' answer is taken from the side-by-side model."""
    ours, builtin = ortops_session(arg_max_side_by_side(data.ndim, **attrs)).run(None, {"data": data})
    return ours, builtin


def _run_builtin(data: np.ndarray, attrs: dict, exact_ties: bool) -> np.ndarray:
    model = onnx_arg_max_equivalent_model(data.ndim, **attrs, exact_ties=exact_ties)
    return plain_session(model).run(None, {"data": data})[0]


def _first_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else type(exc).__name__


# ----------------------------------------------------------------------------- the judge


def _exact_check(case: Case, got: np.ndarray, builtin: np.ndarray) -> Check:
    data = case.inputs["data"]
    if _identical(builtin, got):
        return Check(EXACT, "agree")
    diff = difference("output", got, builtin, right=EXACT)
    if has_nan(data):
        return Check(EXACT, "explained", _NAN_NOTE, detail=_nan_detail(data, got, builtin), topic="nan",
                     difference=diff)
    return Check(EXACT, "unexplained", "results differ", detail=_describe(got, builtin), difference=diff)


def _naive_check(case: Case, got: np.ndarray) -> Check:
    data, attrs = case.inputs["data"], case.attrs
    naive = _run_builtin(data, attrs, exact_ties=False)
    if _identical(naive, got):
        return Check(NAIVE, "agree")
    diff = difference("output", got, naive, right=NAIVE)
    if has_nan(data):
        return Check(NAIVE, "explained", _NAN_NOTE, detail=_nan_detail(data, got, naive), topic="nan",
                     difference=diff)
    flat = data.reshape(-1)
    ours, theirs = _indices(got), _indices(naive)
    rule = _lower_index_first(flat, attrs["topk"])
    if not np.array_equal(theirs, rule):
        return Check(NAIVE, "unexplained", "ORT's TopK-11 did not follow its lower-index-first tie rule",
                     detail=f"ORT indices {theirs.tolist()}, the rule gives {rule.tolist()}", difference=diff)
    if np.array_equal(np.sort(ours), np.sort(theirs)):
        return Check(NAIVE, "agree", detail="the same elements; among equal values ortops puts the higher index "
                     f"first: ortops {_short(ours.tolist())} vs ORT {_short(theirs.tolist())}")
    if _boundary_tie(flat, ours):
        kth = float(flat[ours[-1]])
        ortops_only = sorted(set(ours.tolist()) - set(theirs.tolist()))
        ort_only = sorted(set(theirs.tolist()) - set(ours.tolist()))
        return Check(NAIVE, "explained", _TIE_NOTE, topic="ncnn-tie-rule", difference=diff,
                     detail=f"the k-th value {kth} is tied at the boundary ({int(np.count_nonzero(flat == kth))} "
                     f"elements hold it): ortops keeps {_short(ortops_only)}, ORT keeps {_short(ort_only)} instead; "
                     f"ortops {_short(ours.tolist())} vs ORT {_short(theirs.tolist())}")
    return Check(NAIVE, "unexplained", "different elements without a tie at the boundary",
                 detail=f"ortops {_short(ours.tolist())} vs ORT {_short(theirs.tolist())}", difference=diff)


def _onnx_slice_check(case: Case) -> Check:
    """ortops topk=1 on every 1-D slice along the ONNX vector's axis vs ONNX's expected output."""
    data = case.inputs["data"]
    spec = case.details["onnx_attributes"]
    axis = normalize_axis("ArgMax", spec["axis"], data.ndim)  # ONNX ArgMax's axis
    expected = case.expected["onnx_output"]
    if not spec["keepdims"]:
        expected = np.expand_dims(expected, axis)
    moved, want = np.moveaxis(data, axis, -1), np.moveaxis(expected, axis, -1)[..., 0]
    session = ortops_session(arg_max_model(1))
    agree, tied, wrong = 0, [], []
    ours = np.zeros(want.shape, np.int64)
    for position in np.ndindex(moved.shape[:-1]):
        row = np.ascontiguousarray(moved[position])
        got = int(session.run(None, {"data": row})[0][0, 0])
        ours[position] = got
        if got == int(want[position]):
            agree += 1
        elif not spec["select_last_index"] and np.count_nonzero(row == row.max()) > 1:
            tied.append(f"slice {position}: {row.tolist()} -> ortops {got}, ONNX {int(want[position])}")
        else:
            wrong.append(f"slice {position}: {row.tolist()} -> ortops {got}, ONNX {int(want[position])}")
    oracle = f"{case.expected_from} (per slice along axis {spec['axis']})"
    summary = f"{agree} of {want.size} slices agree"
    diff = difference("index of each slice's maximum", ours, want, right=oracle)
    if wrong:
        return Check(oracle, "unexplained", "results differ", detail=f"{summary}; " + "; ".join(wrong),
                     difference=diff)
    if tied:
        return Check(oracle, "explained", _ONNX_TIE_NOTE, detail=f"{summary}; " + "; ".join(tied),
                     topic="ncnn-tie-rule", difference=diff)
    return Check(oracle, "agree", detail=summary)


def _error_checks(case: Case) -> list[Check]:
    data, attrs = case.inputs["data"], case.attrs
    checks = []
    try:
        got = _run_ortops(data, attrs)
    except OpError as exc:
        ours = exc
    else:
        return [Check("ortops", "unexplained", f"expected OpError ({case.details['expected_error']}), got an output",
                      detail=f"output {got.tolist() if got.size < 20 else got.shape}")]
    try:
        reference.arg_max(data, **attrs)
    except OpError as exc:
        checks.append(Check("reference", "agree", detail=f"both raise OpError; ortops: {ours}; reference: {exc}"))
    else:
        checks.append(Check("reference", "unexplained", "ortops raised OpError but the reference returned",
                            detail=str(ours)))
    try:
        builtin = _run_builtin(data, attrs, exact_ties=True)
    except Exception as exc:  # noqa: BLE001 - ORT's own words go into the report
        checks.append(Check(EXACT, "agree", detail=f"ORT rejects it too: {_first_line(exc)}"))
    else:
        if "2**24" in str(ours) and int(_indices(builtin).max()) >= FLOAT32_EXACT_INT_MAX:
            checks.append(Check(EXACT, "explained", "an index above 2**24 cannot be written exactly as float32: "
                                "ortops raises OpError, ORT's Cast rounds it silently", topic="float-index-precision",
                                detail=f"ORT returned {builtin.tolist()}; ortops: {ours}"))
        else:
            checks.append(Check(EXACT, "unexplained", "ortops raised OpError but ORT's composition returned",
                                detail=f"ORT returned {builtin.tolist()}; ortops: {ours}"))
    return checks


def judge(case: Case) -> list[Check]:
    """Run one ArgMax case through ortops in ORT and judge it against every oracle it has."""
    if "expected_error" in case.details:
        return _error_checks(case)
    data, attrs = case.inputs["data"], case.attrs
    got, builtin = _run_side_by_side(data, attrs)
    ref = reference.arg_max(data, **attrs)
    checks = [Check("reference", "agree") if _identical(got, ref)
              else Check("reference", "unexplained", "results differ", detail=_describe(got, ref),
                    difference=difference("output", got, ref, right="reference"))]
    if case.expected is not None and "output" in case.expected:
        want = case.expected["output"]
        checks.append(Check(case.expected_from, "agree") if _identical(got, want)
                      else Check(case.expected_from, "unexplained", "results differ", detail=_describe(got, want),
                            difference=difference("output", got, want, right=case.expected_from)))
    if case.expected is not None and "onnx_output" in case.expected:
        checks.append(_onnx_slice_check(case))
    checks.append(_exact_check(case, got, builtin))
    checks.append(_naive_check(case, got))
    return checks


# ----------------------------------------------------------------------------- case sources


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


def topics(case: Case) -> set[str]:
    """The divergence topics of an ArgMax case beyond its dtype (see :mod:`ortops.conformance.matrix`)."""
    data = case.inputs["data"]
    if not 1 <= case.attrs.get("topk", 1) <= data.size:
        return {"k-range"}
    if not has_nan(data) and has_ties(data):
        return {"ncnn-tie-rule"}
    return set()
