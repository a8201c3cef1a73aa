"""Helpers the robustness, fuzz and raw-path tests share: hand-written models (hostile ones
cannot go through the builder's checks), cached sessions, comparisons, the hostile inputs, and
an independent rounding to float16/bfloat16 for expected values."""

from __future__ import annotations

import functools
import threading

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper

import ortops
from ortops import builder, reference
from ortops.ops import NCNN_DOMAIN, OPENVINO_DOMAIN

F, D, H, BF = TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16
I32, I64, U64, BOOL = TensorProto.INT32, TensorProto.INT64, TensorProto.UINT64, TensorProto.BOOL
THREADS = 8


def tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for ortops' own float sums, products and means of ``dtype`` against an
    independent computation; integers compare exactly (0, 0)."""
    return {np.dtype(np.float32): (1e-6, 1e-6), np.dtype(np.float64): (1e-12, 1e-12),
            np.dtype(np.float16): (1e-3, 1e-3)}.get(np.dtype(dtype), (0.0, 0.0))


# ---------------------------------------------------------------------------------------------
# Helpers: models written with onnx.helper (hostile ones cannot go through the builder's checks)


def model(op_type, domain, inputs, outputs, attrs, *, name="node", opset=18, extra_nodes=()):
    """One ortops node (plus ``extra_nodes``); tensors are (name, elem_type, shape or None)."""
    produced = {o for n in extra_nodes for o in n.output}
    node = helper.make_node(op_type, [i[0] for i in inputs], [o[0] for o in outputs if o[0] not in produced],
                            name=name, domain=domain, **attrs)
    graph = helper.make_graph(
        [*extra_nodes, node], "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs])
    return helper.make_model(graph, ir_version=builder.IR_VERSION,
                             opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(domain, 1)])


def top_k_and_arg_max_model():
    """float32 ``data`` [4, 100] into an ortops TopK (k=5, max, sort=value, stable=1, int64
    indices: ``values``, ``indices``) and an ncnn ArgMax (topk=3, out_max_val=1: ``argmax``
    [2, 3]), beside each other."""
    nodes = [builder.top_k("data", "k", axis=-1, mode="max", sort="value", stable=1, index_element_type="i64",
                           name="top5"),
             builder.arg_max("data", topk=3, out_max_val=1, output="argmax", name="argmax")]
    graph = helper.make_graph(
        nodes, "ortops_nodes", [helper.make_tensor_value_info("data", F, [4, 100])],
        [helper.make_tensor_value_info("values", F, [4, 5]), helper.make_tensor_value_info("indices", I64, [4, 5]),
         helper.make_tensor_value_info("argmax", F, [2, 3])],
        [helper.make_tensor("k", I64, [1], [5])])
    return helper.make_model(graph, ir_version=builder.IR_VERSION, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(OPENVINO_DOMAIN, 1), helper.make_opsetid(NCNN_DOMAIN, 1)])


def top_k_model(data_type=F, k_type=I64, index_type=I32, **attrs):
    attrs = {"axis": -1, "mode": "max", "sort": "value", "stable": 1, "index_element_type": "i32", **attrs}
    return model("TopK", OPENVINO_DOMAIN, [("data", data_type, None), ("k", k_type, None)],
                  [("values", data_type, None), ("indices", index_type, None)], attrs, name="top_k")


def scatter_model(data_type=F, indices_type=I64, axis_type=I64, **attrs):
    attrs = {"reduction": "none", "use_init_val": 1, **attrs}
    return model("ScatterElementsUpdate", OPENVINO_DOMAIN,
                  [("data", data_type, None), ("indices", indices_type, None), ("updates", data_type, None),
                   ("axis", axis_type, None)], [("output", data_type, None)], attrs, name="scatter")


def arg_max_model(**attrs):
    attrs = {"out_max_val": 0, "topk": 1, **attrs}
    return model("ArgMax", NCNN_DOMAIN, [("data", F, None)], [("output", F, None)], attrs, name="arg_max")


def session(model):
    """An ortops session for ``model``, shared by equal models (sessions are reused across calls
    and tests on purpose: they must stay usable after any error)."""
    return _session(model.SerializeToString())


@functools.lru_cache(maxsize=None)
def _session(serialized):
    options = ort.SessionOptions()
    options.log_severity_level = 3  # ORT warns on every empty (error) output; keep the log readable
    return ortops.InferenceSession(serialized, options)


def assert_same(got, want, *, rtol=0.0, atol=0.0):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if rtol or atol:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)  # NaN equals NaN here; -0.0 equals 0.0


def assert_zero_signs(got, want):
    """The sign of a zero is part of the answer (a NaN's sign bit is not)."""
    zeros = (got == 0) & (want == 0)
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros])), (got, want)


def hammer(work, calls_per_thread=40):
    """Run ``work(thread, call)`` from THREADS threads released at once; return the failures."""
    start = threading.Barrier(THREADS)
    failures: list[str] = []

    def worker(t):
        start.wait()
        for c in range(calls_per_thread):
            try:
                problem = work(t, c)
            except BaseException as exc:  # noqa: BLE001 - every unexpected outcome is a failure
                problem = f"unexpected {type(exc).__name__}: {exc}"
            if problem:
                failures.append(f"thread {t} call {c}: {problem}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


def expect_error(run, *needles):
    """None if ``run()`` raises OpError whose message holds every needle; else the problem."""
    try:
        run()
    except ortops.OpError as exc:
        missing = [n for n in needles if n not in str(exc)]
        return f"error {exc} does not mention {missing}" if missing else None
    return f"no error; expected one mentioning {needles}"


def matches(got, want, rtol=0.0, atol=0.0):
    try:
        for g, w in zip(got, want, strict=True):
            assert_same(g, w, rtol=rtol, atol=atol)
    except AssertionError as exc:
        return f"wrong answer: {str(exc)[:300]}"
    return None


def nearest_value(x, carried: str) -> np.ndarray:
    """float64 ``x`` rounded to the nearest finite value of ``carried`` ("float16" or "bfloat16"),
    ties to the even significand, beyond the largest finite value +-inf: found by searching a
    table of every value of the type, not by arithmetic on exponents (so that expected values
    never come from a copy of ``ortops.bridge.round_to_precision``)."""
    x = np.asarray(x, np.float64)
    grid = _grid(carried)
    index = np.clip(np.searchsorted(grid, x), 1, grid.size - 1)
    below, above = grid[index - 1], grid[index]
    even_below = last_significand_bit(below, carried) == 0
    nearest = np.where((x - below < above - x) | ((x - below == above - x) & even_below), below, above)
    half_ulp = (grid[-1] - grid[-2]) / 2
    nearest = np.where(np.abs(x) >= grid[-1] + half_ulp, np.copysign(np.inf, x), nearest)
    nearest = np.where(x == 0, x, nearest)  # keeps the sign of zero
    return np.where(np.isnan(x) | np.isinf(x), x, nearest)


@functools.lru_cache(maxsize=None)
def _grid(carried: str) -> np.ndarray:
    """Every finite value of ``carried``, ascending, as float64 (-0.0 and 0.0 merged)."""
    if carried == "float16":
        grid = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float64)
    else:
        grid = (np.arange(2**16, dtype=np.uint32) << 16).view(np.float32)
    return np.unique(grid[np.isfinite(grid)].astype(np.float64))


def last_significand_bit(values, carried):
    if carried == "float16":
        return values.astype(np.float16).view(np.uint16) & 1
    return (values.astype(np.float32).view(np.uint32) >> 16) & 1


# ---------------------------------------------------------------------------------------------
# 3. Hostile inputs at run time: the spec's answer or the caller's own OpError


def _top_k_case(data, k, *, k_type=I64, error=None, **attrs):
    attrs = {"axis": -1, "mode": "max", "sort": "value", **attrs}
    return ("TopK", top_k_model(_onnx_type(data), k_type, **attrs), {"data": data, "k": k}, attrs, error)


def _scatter_case(data, indices, updates, axis, *, error=None, **attrs):
    attrs = {"reduction": "none", "use_init_val": 1, **attrs}
    model = scatter_model(_onnx_type(data), _onnx_type(indices), _onnx_type(axis), **attrs)
    return ("ScatterElementsUpdate", model, {"data": data, "indices": indices, "updates": updates, "axis": axis},
            attrs, error)


def _arg_max_case(data, *, error=None, **attrs):
    attrs = {"out_max_val": 1, "topk": 1, **attrs}
    return ("ArgMax", arg_max_model(**attrs), {"data": data}, attrs, error)


def _onnx_type(array):
    from ortops import dtypes

    return dtypes.from_numpy(np.asarray(array).dtype).onnx


U64_MAX, I64_MIN, I64_MAX = 2**64 - 1, -(2**63), 2**63 - 1
f32 = np.float32
HOSTILE_INPUTS = {
    # TopK: empty tensors
    "TopK zero-length axis": _top_k_case(np.zeros((3, 0), f32), np.array([1]),
                                         error="k=1 is outside empty because the axis has length 0"),
    "TopK zero-length axis, k=0": _top_k_case(np.zeros((3, 0), f32), np.array([0]), error="k=0 is outside"),
    "TopK zero rows": _top_k_case(np.zeros((0, 5), f32), np.array([2])),
    "TopK zero inner dims": _top_k_case(np.zeros((2, 4, 0, 3), np.int16), np.array(4), axis=1),
    "TopK rank 0": _top_k_case(np.array(1.0, f32), np.array(1), axis=0,
                               error="axis=0 is refused: a rank-0 tensor has no axis"),
    # TopK: hostile k
    "TopK k=0": _top_k_case(np.ones((2, 3), f32), np.array([0]), error="k=0 is outside [1, 3]"),
    "TopK k=2**62": _top_k_case(np.ones((2, 3), f32), np.array([2**62]), error=f"k={2**62} is outside [1, 3]"),
    "TopK k=int64 min": _top_k_case(np.ones((2, 3), f32), np.array([I64_MIN]), error=f"k={I64_MIN} is outside"),
    "TopK k=uint64 max": _top_k_case(np.ones((2, 3), f32), np.array([U64_MAX], np.uint64), k_type=U64,
                                     error=f"k={U64_MAX} is outside [1, 3]"),
    "TopK k=2**63 as uint64": _top_k_case(np.ones((2, 3), f32), np.array(2**63, np.uint64), k_type=U64,
                                          error=f"k={2**63} is outside"),
    "TopK k=-1 int8": _top_k_case(np.ones((2, 3), f32), np.array([-1], np.int8), k_type=TensorProto.INT8,
                                  error="k=-1 is outside"),
    "TopK k of shape (2,)": _top_k_case(np.ones((2, 3), f32), np.array([1, 2]), error="'k' has shape (2,)"),
    "TopK k of shape (1, 1)": _top_k_case(np.ones((2, 3), f32), np.array([[1]]), error="'k' has shape (1, 1)"),
    "TopK k of shape (0,)": _top_k_case(np.ones((2, 3), f32), np.zeros(0, np.int64), error="'k' has shape (0,)"),
    "TopK axis out of range": _top_k_case(np.ones((2, 3), f32), np.array([1]), axis=2, error="axis=2 is outside"),
    "TopK axis -3 of rank 2": _top_k_case(np.ones((2, 3), f32), np.array([1]), axis=-3, error="axis=-3 is outside"),
    # TopK: NaN, infinities, signed zeros, extreme integers
    "TopK NaN and inf max": _top_k_case(np.array([[1, np.nan, 3, -np.inf, np.inf, np.nan, 2, -0.0, 0.0]], f32),
                                        np.array([9])),
    "TopK NaN and inf min": _top_k_case(np.array([[1, np.nan, 3, -np.inf, np.inf, np.nan, 2, -0.0, 0.0]]),
                                        np.array([9]), mode="min"),
    "TopK all NaN": _top_k_case(np.full((2, 5), np.nan, f32), np.array([3]), sort="index"),
    "TopK float32 extremes": _top_k_case(np.array([[3.4028235e38, -3.4028235e38, 1e-45, -1e-45, 0.0]], f32),
                                         np.array([5]), mode="min"),
    "TopK int64 extremes": _top_k_case(np.array([I64_MIN, I64_MAX, -1, 0, I64_MAX - 1, I64_MIN + 1]),
                                       np.array([6])),
    "TopK uint64 above int64 max": _top_k_case(np.array([2**63, 2**63 - 1, U64_MAX, 0, U64_MAX - 1, 2**63 + 1],
                                                        np.uint64), np.array([4]), mode="min"),
    "TopK uint32 extremes": _top_k_case(np.array([2**32 - 1, 0, 2**31, 2**31 - 1], np.uint32), np.array([2])),
    "TopK uint16 extremes": _top_k_case(np.array([65535, 0, 32768, 32767], np.uint16), np.array([3]), mode="min"),
    "TopK int8 extremes": _top_k_case(np.array([-128, 127, 0, -1, 127, -128], np.int8), np.array([4]),
                                      sort="index"),
    "TopK float64 subnormals": _top_k_case(np.array([5e-324, -5e-324, 0.0, -0.0, 2.2e-308]), np.array([5])),
    # ScatterElementsUpdate: empty tensors
    "Scatter empty indices": _scatter_case(np.arange(4, dtype=f32), np.zeros(0, np.int64), np.zeros(0, f32),
                                           np.array(0), reduction="sum"),
    "Scatter empty indices, 2-D": _scatter_case(np.ones((2, 3), np.int8), np.zeros((2, 0), np.uint8),
                                                np.zeros((2, 0), np.int8), np.array([1]), reduction="mean"),
    "Scatter empty data and indices": _scatter_case(np.zeros((0, 3), f32), np.zeros((0, 3), np.int64),
                                                    np.zeros((0, 3), f32), np.array(0)),
    "Scatter empty axis, one index": _scatter_case(np.zeros((0,), f32), np.zeros((1,), np.int64),
                                                   np.zeros((1,), f32), np.array(0),
                                                   error="index 0 is outside empty because the axis has length 0"),
    "Scatter rank 0": _scatter_case(np.array(1, f32), np.array(0), np.array(2, f32), np.array(0),
                                    error="axis=0 is refused: a rank-0 tensor has no axis"),
    # ScatterElementsUpdate: indices and axis out of range
    "Scatter index d": _scatter_case(np.zeros(4, f32), np.array([4]), np.ones(1, f32), np.array(0),
                                     error="index 4 is outside [-4, 3]"),
    "Scatter index -d-1": _scatter_case(np.zeros(4, f32), np.array([-5]), np.ones(1, f32), np.array(0),
                                        error="index -5 is outside [-4, 3]"),
    "Scatter index int64 min": _scatter_case(np.zeros(4, f32), np.array([0, I64_MIN]), np.ones(2, f32),
                                             np.array(0), error=f"index {I64_MIN} is outside"),
    "Scatter uint64 index above int64 max": _scatter_case(np.zeros(4, f32), np.array([1, 2**63 + 2], np.uint64),
                                                          np.ones(2, f32), np.array(0),
                                                          error=f"index {2**63 + 2} is outside [-4, 3]"),
    "Scatter uint64 index max": _scatter_case(np.zeros(4, f32), np.array([U64_MAX], np.uint64), np.ones(1, f32),
                                              np.array(0), error=f"index {U64_MAX} is outside"),
    "Scatter uint64 axis max": _scatter_case(np.zeros(4, f32), np.array([1]), np.ones(1, f32),
                                             np.array(U64_MAX, np.uint64), error=f"axis={U64_MAX} is outside"),
    "Scatter axis int64 min": _scatter_case(np.zeros(4, f32), np.array([1]), np.ones(1, f32),
                                            np.array([I64_MIN]), error=f"axis={I64_MIN} is outside"),
    "Scatter axis of shape (2,)": _scatter_case(np.zeros(4, f32), np.array([1]), np.ones(1, f32),
                                                np.array([0, 0]), error="'axis' has shape (2,)"),
    "Scatter updates of another shape": _scatter_case(np.zeros(4, f32), np.array([1]), np.ones(2, f32),
                                                      np.array(0), error="updates has shape (2,)"),
    "Scatter indices of another rank": _scatter_case(np.zeros(4, f32), np.array([[1]]), np.ones((1, 1), f32),
                                                     np.array(0), error="indices has rank 2"),
    "Scatter indices wider than data": _scatter_case(np.zeros((2, 2), f32), np.zeros((1, 3), np.int64),
                                                     np.ones((1, 3), f32), np.array(0),
                                                     error="indices.shape[1]=3 exceeds data.shape[1]=2"),
    "Scatter mean on bool": _scatter_case(np.zeros(3, bool), np.array([0]), np.ones(1, bool), np.array(0),
                                          reduction="mean", error="reduction='mean' is not defined for bool"),
    # ScatterElementsUpdate: NaN, infinities, extreme integers
    "Scatter float sum inf - inf": _scatter_case(np.array([np.inf, -np.inf, np.nan, 3e38], f32),
                                                 np.array([0, 1, 2, 3, 3]),
                                                 np.array([-np.inf, np.inf, 1, 3e38, 3e38], f32), np.array(0),
                                                 reduction="sum"),
    "Scatter float prod 0 * inf": _scatter_case(np.array([0.0, np.inf, -0.0], f32), np.array([0, 1, 2, 2]),
                                                np.array([np.inf, 0.0, -1.0, 1e-45], f32), np.array(0),
                                                reduction="prod"),
    "Scatter float min/max NaN": _scatter_case(np.array([1.0, np.nan, -0.0, 0.0]), np.array([0, 1, 2, 3, 0]),
                                               np.array([np.nan, 1.0, 0.0, -0.0, -np.inf]), np.array(0),
                                               reduction="min"),
    "Scatter float max use_init_val=0": _scatter_case(np.array([5.0, 5.0], f32), np.array([0, 0]),
                                                      np.array([-np.inf, -np.inf], f32), np.array(0),
                                                      reduction="max", use_init_val=0),
    "Scatter float mean of infinities": _scatter_case(np.array([np.inf, 1.0], f32), np.array([0, 1, 1]),
                                                      np.array([-np.inf, 3e38, 3e38], f32), np.array(0),
                                                      reduction="mean"),
    "Scatter int64 sum wraps": _scatter_case(np.array([I64_MAX, I64_MIN]), np.array([0, 1, 0]),
                                             np.array([1, -1, I64_MAX]), np.array(0), reduction="sum"),
    "Scatter int64 mean exact": _scatter_case(np.array([I64_MAX, I64_MIN, -3]), np.array([0, 0, 1, 1, 2]),
                                              np.array([I64_MAX, I64_MAX - 1, I64_MIN, I64_MIN + 1, -4]),
                                              np.array(0), reduction="mean"),
    "Scatter uint64 mean exact": _scatter_case(np.array([U64_MAX, 0], np.uint64), np.array([0, 0, 1]),
                                               np.array([U64_MAX, U64_MAX - 1, U64_MAX], np.uint64), np.array(0),
                                               reduction="mean", use_init_val=0),
    "Scatter int8 prod wraps": _scatter_case(np.array([-128, 127], np.int8), np.array([0, 1, 1]),
                                             np.array([-1, 127, 3], np.int8), np.array(0), reduction="prod"),
    "Scatter uint8 mean floors": _scatter_case(np.array([1, 255], np.uint8), np.array([0, 0, 1]),
                                               np.array([253, 252, 254], np.uint8), np.array(0), reduction="mean"),
    "Scatter int32 min use_init_val=0": _scatter_case(np.array([0, 7], np.int32), np.array([0, 0]),
                                                      np.array([2**31 - 1, 2**31 - 1], np.int32), np.array(0),
                                                      reduction="min", use_init_val=0),
    "Scatter none duplicates": _scatter_case(np.zeros((2, 3), f32), np.array([[1, 0, 1], [1, 0, 1]]),
                                             np.array([[1, 2, 3], [4, 5, 6]], f32), np.array([0])),
    "Scatter bool sum/prod": _scatter_case(np.array([False, True, True]), np.array([0, 2, 2]),
                                           np.array([True, False, True]), np.array(0), reduction="prod"),
    # ArgMax
    "ArgMax empty": _arg_max_case(np.zeros((0, 4), f32), error="input 'data' is empty (shape (0, 4))"),
    "ArgMax topk > size": _arg_max_case(np.ones((2, 2), f32), topk=5, error="topk=5 is outside [1, 4]"),
    "ArgMax huge topk": _arg_max_case(np.ones(3, f32), topk=2**62, error=f"topk={2**62} is outside [1, 3]"),
    "ArgMax rank 0": _arg_max_case(np.array(2.5, f32)),
    "ArgMax NaN and inf": _arg_max_case(np.array([np.nan, 1, np.inf, np.nan, -np.inf, -0.0, 0.0], f32), topk=7),
    "ArgMax all equal": _arg_max_case(np.zeros((3, 3), f32), topk=4),
    "ArgMax float32 extremes": _arg_max_case(np.array([-3.4028235e38, 3.4028235e38, 1e-45], f32), topk=3),
}


def reference_outputs(op_type, feed, attrs):
    if op_type == "TopK":
        return list(reference.top_k(feed["data"], feed["k"], stable=1, **attrs))
    if op_type == "ScatterElementsUpdate":
        return [reference.scatter_elements_update(feed["data"], feed["indices"], feed["updates"], feed["axis"],
                                                  **attrs)]
    return [reference.arg_max(feed["data"], **attrs)]


def cast_around(op_model, carried_inputs, carried_outputs, to):
    """``op_model`` with the named inputs/outputs carried as ``to`` inside the graph, float32 outside."""
    graph = op_model.graph
    before = [helper.make_node("Cast", [n], [f"{n}_{to}"], to=to) for n in carried_inputs]
    after = [helper.make_node("Cast", [f"{n}_{to}"], [n], to=F) for n in carried_outputs]
    node = graph.node[0]
    for i, name in enumerate(node.input):
        if name in carried_inputs:
            node.input[i] = f"{name}_{to}"
    for i, name in enumerate(node.output):
        if name in carried_outputs:
            node.output[i] = f"{name}_{to}"
    nodes = [*before, node, *after]
    del graph.node[:]
    graph.node.extend(nodes)
    for value in [*graph.input, *graph.output]:
        if value.name in (*carried_inputs, *carried_outputs):
            value.type.tensor_type.elem_type = F
    return op_model
