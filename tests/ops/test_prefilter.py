"""The block-maxima prefilter (ortops/ops/prefilter.py) in TopK's lowering, forced on for small
shapes, against ortops.reference.top_k bit for bit, on every lowered path: the session's own
lowering (``InferenceSession(path="auto")``), the guarded lowering as written
(``ortops.lower(model)`` run by ``InferenceSession``) and the standalone lowering
(``fallback="none"`` in plain ORT). ncnn ArgMax's use of it: tests/ops/arg_max/test_lowering.py."""

from __future__ import annotations

from unittest import mock

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, numpy_helper

import ortops
from ortops import builder, dtypes, reference
from ortops.builder.common import set_static_shapes
from ortops.graph import graphs
from ortops.ops import prefilter

from conftest import assert_identical

#: Every data type the lowering takes (bfloat16 aside: NumPy has none). int16 has no ReduceMax
#: kernel in ORT, so it keeps the plain composition: checked here too.
DTYPES = (np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32)
PATHS = ("session", "guarded", "standalone")


def _pool(dtype) -> np.ndarray:
    """Few distinct values (ties everywhere), the extremes (equal to the padding) included."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, -np.nan], dtype)
    info = np.iinfo(dtype)
    return np.array([info.min, info.max, 0, 1, 2, info.min + 1, info.max - 1], dtype)


@st.composite
def cases(draw):
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(1, 3))
    n = draw(st.integers(1, 40))
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=rank - 1, max_size=rank - 1))) + (n,)
    pool = _pool(dtype)
    nan = draw(st.booleans()) if np.dtype(dtype).kind == "f" else False
    if not nan:
        pool = pool[~np.isnan(pool)] if pool.dtype.kind == "f" else pool
    picks = draw(st.lists(st.integers(0, len(pool) - 1), min_size=int(np.prod(shape)),
                          max_size=int(np.prod(shape))))
    data = pool[np.array(picks, np.int64)].reshape(shape)
    k = draw(st.integers(1, n))
    attrs = dict(mode=draw(st.sampled_from(["max", "min"])), sort=draw(st.sampled_from(["value", "index", "none"])),
                 stable=draw(st.sampled_from([0, 1])), index_element_type=draw(st.sampled_from(["i32", "i64"])))
    block = draw(st.integers(1, 9))  # divides n or not; lowered to n // k where k blocks need it
    return data, k, attrs, block


def model(dtype, shape, k: int, attrs: dict, axis: int = -1) -> onnx.ModelProto:
    """An ortops TopK (over the last axis by default) with a constant k and a static shape (what
    the rule needs)."""
    elem = dtypes.from_numpy(np.dtype(dtype)).onnx
    m = builder.top_k_model(elem, len(shape), axis=axis, **attrs)
    m.graph.initializer.append(numpy_helper.from_array(np.array([k], np.int64), "k"))
    del m.graph.input[1]
    return set_static_shapes(m, data=shape)


def _prefiltered(graph_model: onnx.ModelProto) -> bool:
    return any(n.op_type == "GatherND" for g in graphs(graph_model.graph) for n in g.node)


def run(path: str, m: onnx.ModelProto, data: np.ndarray, block: int) -> tuple[list[np.ndarray], bool]:
    """The outputs on ``path`` with the prefilter forced on (block size ``block``), and whether
    the lowered model holds it."""
    with mock.patch.object(prefilter, "RULE", prefilter.Rule(force=block)):
        if path == "session":
            sess = ortops.InferenceSession(m, path="auto")
            used = _prefiltered(sess.model)
        elif path == "guarded":
            lowered, _ = ortops.lower(m)
            sess, used = ortops.InferenceSession(lowered, path="pyop"), _prefiltered(lowered)
        else:
            lowered, report = ortops.lower(m, fallback="none")
            assert report.standalone
            sess = ort.InferenceSession(lowered.SerializeToString(), providers=["CPUExecutionProvider"])
            used = _prefiltered(lowered)
    return sess.run(None, {"data": data}), used


def expected(data: np.ndarray, k: int, attrs: dict):
    if data.dtype == np.float16:  # the reference takes float32/float64; float16 round-trips exactly
        want = reference.top_k(data.astype(np.float32), k, axis=-1, **attrs)
        return want.values.astype(np.float16), want.indices
    want = reference.top_k(data, k, axis=-1, **attrs)
    return want.values, want.indices


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=60, deadline=None)
@given(case=cases())
# Found in ORT 1.31 (its int64 ReduceMax compares in 32 bits): uint32 data is widened to int64.
@example(case=(np.array([0] * 10 + [4294967295], np.uint32), 1,
               dict(mode="max", sort="value", stable=0, index_element_type="i32"), 4))
def test_prefiltered_top_k_matches_reference_bit_for_bit(path, case):
    data, k, attrs, block = case
    (values, indices), used = run(path, model(data.dtype, data.shape, k, attrs), data, block)
    # int16: no ReduceMax kernel, the plain composition (standalone widens it to int32 first);
    # int64 and uint32 (widened to int64): no prefilter (ORT 1.31's int64 ReduceMax is wrong);
    # int32 standalone: none (OpenVINO reduces int32 in float32); k = n with sort=index: the data
    assert used == ((data.dtype != np.int16 or path == "standalone") and data.dtype not in (np.int64, np.uint32)
                    and not (data.dtype == np.int32 and path == "standalone")
                    and not (attrs["sort"] == "index" and k == data.shape[-1]))
    want_values, want_indices = expected(data, k, attrs)
    assert_identical(values, want_values, bits=True)
    assert_identical(indices, want_indices)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("mode", ["max", "min"])
@pytest.mark.parametrize("sort", ["value", "index"])
@pytest.mark.parametrize("n, block", [(12, 4), (13, 4), (10, 3), (7, 7), (9, 1)])
def test_padding_never_selected_ahead_of_equal_real_values(path, mode, sort, n, block):
    """Every real element equals the padding (−inf for max, +inf for min; the type's extreme for
    integers): the lowest indices win, for every k, with B dividing n or not."""
    for dtype in (np.float32, np.int32, np.uint8):
        if dtype == np.float32:
            fill = -np.inf if mode == "max" else np.inf
        else:
            fill = np.iinfo(dtype).min if mode == "max" else np.iinfo(dtype).max
        data = np.full((2, n), fill, dtype)
        for k in (1, 2, n // 2 or 1, n):
            attrs = dict(mode=mode, sort=sort, stable=1, index_element_type="i64")
            (values, indices), used = run(path, model(dtype, data.shape, k, attrs), data, block)
            assert used or (sort == "index" and k == n) or (dtype == np.int32 and path == "standalone")
            want_values, want_indices = expected(data, k, attrs)
            assert_identical(values, want_values, bits=True)
            assert_identical(indices, want_indices)


def test_block_size_rule():
    forced = prefilter.Rule(force=8)
    assert prefilter.block_size(100, 20, rule=forced) == 5  # k blocks must exist: B <= n // k
    assert prefilter.block_size(100, 100, rule=forced) == 1
    assert prefilter.block_size(100, 101, rule=forced) is None
    assert prefilter.block_size(8, 1, rule=prefilter.Rule()) is None  # short slices: ONNX TopK alone
    for n, k, batch in ((1_000_000, 10, 1), (32000, 5, 64), (151936, 50, 8), (1_000_000, 100, 1)):
        block = prefilter.block_size(n, k, batch)
        assert block is None or 1 <= block <= n // k


def test_rule_keeps_plain_composition_where_k_or_the_axis_is_unknown():
    """A k fed at run time, or a dynamic axis: no prefilter, whatever the rule."""
    m = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value")
    with mock.patch.object(prefilter, "RULE", prefilter.Rule(force=4)):
        lowered, _ = ortops.lower(m)
    assert not _prefiltered(lowered)


def test_rule_is_the_one_fitted_to_the_measurements():
    """prefilter.RULE holds what scripts/topk_cost_model.py fitted (docs/topk_cost_model.json)."""
    import json
    from pathlib import Path

    fitted = json.loads((Path(__file__).resolve().parents[2] / "docs" / "topk_cost_model.json").read_text())["fitted"]
    rule = prefilter.RULE
    assert (rule.scale, rule.min_n, rule.min_ratio, rule.min_elements) == (
        fitted["scale"], fitted["min_n"], fitted["min_ratio"], fitted["min_elements"])


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.uint16, np.int64])
def test_sort_index_with_k_the_axis_length_is_the_data_itself(path, dtype):
    """k = n with sort=index selects everything in index order: the lowering returns the data
    (NaN and signed zeros included) and the positions, with no sort, on any axis."""
    pool = _pool(dtype)
    data = np.random.default_rng(0).choice(pool, size=(3, 5, 4))
    for axis in (0, 1, 2):
        attrs = dict(mode="min", sort="index", stable=0, index_element_type="i32")
        m = model(dtype, data.shape, data.shape[axis], attrs, axis)
        (values, indices), _ = run(path, m, data, 4)
        want = reference.top_k(data.astype(np.float32) if dtype == np.float16 else data, data.shape[axis], axis=axis,
                               **attrs)
        assert_identical(values, data, bits=True)
        assert_identical(indices, want.indices)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("opset", [13, 17])
def test_prefilter_in_a_model_whose_own_nodes_keep_an_older_opset(path, opset):
    """A model of default-domain opset 13-17 with a node of its own keeps its opset, so the
    composition is built for it: ReduceSum takes its axes as an input from opset 13 (before the
    fix, ORT refused such a model at session creation: 'Unrecognized attribute: axes')."""
    data = np.random.default_rng(opset).permutation(24).astype(np.float32).reshape(2, 12)
    attrs = dict(mode="max", sort="value", stable=0, index_element_type="i32")
    m = model(data.dtype, data.shape, 3, attrs)
    m.graph.node.insert(0, onnx.helper.make_node("Relu", ["data"], ["relu"]))
    m.graph.node[1].input[0] = "relu"
    m.opset_import.append(onnx.helper.make_opsetid("", opset))
    (values, indices), used = run(path, m, data, 4)
    assert used
    want_values, want_indices = expected(data, 3, attrs)
    assert_identical(values, want_values, bits=True)
    assert_identical(indices, want_indices)
