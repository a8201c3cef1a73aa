"""Standalone models give the spec's answer on ties in every runtime, bit for bit.

Models with ortops TopK (``stable=1``), ncnn ArgMax and standard TopK/ArgMax/ArgMin, lowered
with ``fallback="none", standard=True``, run in plain ONNX Runtime and plain OpenVINO (each in a
child process that never imports ortops: ``plain_runtimes``) on tie-heavy data (few distinct
values, NaN, -0.0, infinities), drawn by hypothesis. Expected answers come from ortops'
NumPy references (ortops TopK, ncnn ArgMax) or from the ONNX spec's order written out here
(stable, the lower index first; NaN above every number), never from the lowering.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import ortops
from ortops import builder
from ortops.builder.common import set_static_shapes
from ortops.graph import graphs
from ortops.processes import Worker
from ortops.reference import arg_max, top_k

import plain_runtimes

pytest.importorskip("openvino", reason="OpenVINO is the second runtime a standalone model claims to run in")

RUNTIMES = ("onnxruntime", "openvino")
POOL = [np.nan, -0.0, 0.0, 1.0, -1.0, np.inf, -np.inf, 2.5]


# --- the spec's answers, written out --------------------------------------------------------

def onnx_order(row: np.ndarray, largest: int) -> np.ndarray:
    """The ONNX spec's order of a 1-D slice: by value (descending for largest), the lower index
    first among equal values (-0.0 == +0.0), NaN above every number (standard=True's rule)."""
    nan = np.isnan(row)
    value = np.where(nan, 0, row).astype(np.float64)
    index = np.arange(row.size)
    return np.lexsort((index, -value, ~nan)) if largest else np.lexsort((index, value, nan))


def _slices(x: np.ndarray, axis: int) -> np.ndarray:
    """The slices along ``axis`` as rows of a 2-D array."""
    return np.moveaxis(x, axis, -1).reshape(-1, x.shape[axis])


def _back(rows: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray:
    """Rows of per-slice results back in ``x``'s layout (the slice axis at ``axis``)."""
    moved = np.moveaxis(x, axis, -1).shape[:-1]
    return np.moveaxis(rows.reshape(moved + (rows.shape[-1],)), -1, axis)


def onnx_top_k(x: np.ndarray, k: int, largest: int, axis: int = -1) -> list[np.ndarray]:
    slices = _slices(x, axis)
    rows = np.array([onnx_order(row, largest)[:k] for row in slices], np.int64).reshape(len(slices), k)
    indices = _back(rows, x, axis).astype(np.int64)
    return [np.take_along_axis(x, indices, axis), indices]


def onnx_arg(x: np.ndarray, largest: int, last: int, keepdims: int, axis: int = 1) -> list[np.ndarray]:
    rows = _slices(x, axis)
    if last:
        found = rows.shape[1] - 1 - np.array([onnx_order(row[::-1], largest)[0] for row in rows])
    else:
        found = np.array([onnx_order(row, largest)[0] for row in rows])
    found = _back(found.astype(np.int64)[:, None], x, axis)
    return [found if keepdims else np.squeeze(found, axis)]


# --- the models -----------------------------------------------------------------------------

def _arg_model(op_type: str, last: int, keepdims: int) -> onnx.ModelProto:
    node = helper.make_node(op_type, ["x"], ["y"], axis=2, keepdims=keepdims, select_last_index=last, name="arg")
    graph = helper.make_graph([node], "arg", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                            ["a", "b", "d"])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=10)


def _constant_k(model: onnx.ModelProto, name: str, k: int, shape) -> onnx.ModelProto:
    """``model`` with input ``name`` a constant k and the data input of static ``shape``."""
    model.graph.initializer.append(numpy_helper.from_array(np.array([k], np.int64), name))
    inputs = [i for i in model.graph.input if i.name != name]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    return _static(model, shape)


def _ortops_top_k(mode, sort, axis=-1):
    return builder.top_k_model(TensorProto.FLOAT, 3, axis=axis, mode=mode, sort=sort, stable=1)


def _expect_ortops_top_k(mode, sort, axis=-1):
    def expect(x, k):
        result = top_k(x, min(k, x.shape[axis]), axis=axis, mode=mode, sort=sort, stable=1)
        return [np.asarray(result.values), np.asarray(result.indices)]
    return expect


#: name -> (model, whether k is an input, expected outputs for (x, k))
MODELS = {
    **{f"ortops TopK mode={mode} sort={sort}": (_ortops_top_k(mode, sort), True, _expect_ortops_top_k(mode, sort))
       for mode in ("max", "min") for sort in ("value", "index")},
    "ortops TopK axis=1": (_ortops_top_k("max", "value", 1), True, _expect_ortops_top_k("max", "value", 1)),
    **{f"ONNX TopK-{version} largest={largest}": (
        builder.onnx_top_k_model(version, TensorProto.FLOAT, 3, axis=-1, largest=largest), True,
        lambda x, k, largest=largest: onnx_top_k(x, k, largest))
       for version, largest in ((10, 1), (11, 0), (11, 1), (24, 1))},
    "ONNX TopK-11 axis=1": (builder.onnx_top_k_model(11, TensorProto.FLOAT, 3, axis=1, largest=0), True,
                            lambda x, k: onnx_top_k(x, min(k, x.shape[1]), 0, axis=1)),
    **{f"ONNX {op} select_last_index={last} keepdims={keepdims}": (
        _arg_model(op, last, keepdims), False,
        lambda x, k, op=op, last=last, keepdims=keepdims: onnx_arg(x, int(op == "ArgMax"), last, keepdims, 2))
       for op in ("ArgMax", "ArgMin") for last in (0, 1) for keepdims in (0, 1)},
    **{f"ncnn ArgMax topk={topk} out_max_val={out}": (
        builder.arg_max_model(3, topk=topk, out_max_val=out), False,
        lambda x, k, topk=topk, out=out: [np.asarray(arg_max(x, topk=topk, out_max_val=out))])
       for topk, out in ((1, 0), (3, 1))},
}


@pytest.fixture(scope="module")
def workers():
    with Worker(timeout=120) as ort_worker, Worker(timeout=120) as ov_worker:
        yield {"onnxruntime": ort_worker, "openvino": ov_worker}


def _standalone(model: onnx.ModelProto) -> bytes:
    lowered, report = ortops.lower(model, fallback="none", standard=True)
    assert report.standalone and not report.unchanged, report
    assert not any(n.domain.startswith("ortops") for n in lowered.graph.node)
    return lowered.SerializeToString()


def assert_exact_everywhere(workers, model: bytes, feeds: list, expected: list, runtimes=RUNTIMES) -> None:
    """Every runtime returns ``expected`` for every feed, bit for bit (NaN payloads included)."""
    for runtime in runtimes:
        outcome = workers[runtime].call(plain_runtimes.run, runtime, model, feeds)
        assert outcome.ok, f"{runtime}: {outcome.describe()}"
        for inputs, got, want in zip(feeds, outcome.value, expected, strict=True):
            assert not isinstance(got, str), f"{runtime} failed on {inputs}: {got}"
            for g, w in zip(got, want, strict=True):
                w = np.asarray(w)
                assert g.dtype == w.dtype and g.shape == w.shape and g.tobytes() == w.tobytes(), (
                    f"{runtime} differs on {inputs}:\n got {g.tolist()}\nwant {w.tolist()}")


@st.composite
def tie_heavy(draw, max_n: int):
    """(x float32 [a, b, n] of at most four distinct values, k in [1, n]; a and b from 1 to 3:
    OpenVINO once fused a reduction over the last axis wrongly where a middle dimension was 1)."""
    pool = draw(st.lists(st.sampled_from(POOL), min_size=1, max_size=4))
    a, b, n = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, max_n))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    x = np.random.default_rng(seed).choice(np.array(pool, np.float32), size=(a, b, n))
    return x, draw(st.integers(1, n))


def _check(workers, name, cases) -> None:
    model, k_input, expect = MODELS[name]
    if name.startswith("ncnn ArgMax topk=3"):
        cases = [(x, k) for x, k in cases if x.size >= 3]
    if name.endswith("axis=1"):  # k along axis 1 (of length b)
        cases = [(x, min(k, x.shape[1])) for x, k in cases]
    feeds = [[x, np.array([k], np.int64)] if k_input else [x] for x, k in cases]
    assert_exact_everywhere(workers, _standalone(model), feeds, [expect(x, k) for x, k in cases])


def _on_ties(max_examples: int, max_n: int):
    """A test of every model on ``max_examples`` draws of four tie-heavy inputs of at most
    ``max_n`` elements per slice."""
    @pytest.mark.parametrize("name", MODELS)
    @settings(max_examples=max_examples, deadline=None,
              suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
    @given(cases=st.lists(tie_heavy(max_n), min_size=4, max_size=4))
    def test(workers, name, cases):
        _check(workers, name, cases)

    return test


test_standalone_models_are_exact_on_ties_in_every_runtime = _on_ties(8, 600)
test_standalone_models_are_exact_on_ties_in_every_runtime_sweep = pytest.mark.slow(_on_ties(60, 40000))


@pytest.mark.parametrize("name", MODELS)
def test_long_slices_of_one_value(workers, name):
    """OpenVINO's own TopK was wrong on ties on slices of a few thousand (FINDINGS)."""
    equal = np.zeros((2, 1, 3000), np.float32)
    equal[1, 0, ::7] = np.nan
    halves = np.where(np.arange(4000) % 2, -0.0, 0.0).astype(np.float32)[None, None]
    _check(workers, name, [(equal, 50), (equal, 1), (halves, 1999)])


@pytest.mark.parametrize("name", [name for name in MODELS if "TopK" in name and not name.endswith("axis=1")])
def test_no_slice_to_select_from(workers, name):
    """Slices of 5 along the last axis, but none of them: empty outputs of k columns. Reshape
    reads a 0 in a shape as "keep the input's dimension"; the composition must not meet one."""
    _check(workers, name, [(np.zeros(shape, np.float32), 2) for shape in ((0, 2, 5), (2, 0, 5), (0, 0, 5))])


def _static(model: onnx.ModelProto, shape) -> onnx.ModelProto:
    return set_static_shapes(model, **{model.graph.input[0].name: shape})


@pytest.mark.parametrize("mode, sort", [("max", "value"), ("min", "index"), ("min", "value")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8])
def test_short_static_slices_are_exact_on_ties_in_every_runtime(workers, mode, sort, dtype):
    """A short static last axis: the standalone TopK compares every pair (no If, NaN included)."""
    shape = (3, 13)
    elem = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    model = _static(builder.top_k_model(elem, 2, axis=-1, mode=mode, sort=sort, stable=1), shape)
    pool = np.array(POOL if np.dtype(dtype).kind == "f" else [-128, 127, 0, 1]).astype(dtype)
    rng = np.random.default_rng(7)
    cases = [(rng.choice(pool[: 1 + i % len(pool)], size=shape), 1 + i % 13) for i in range(12)]
    want = [[np.asarray(v) for v in top_k(x, k, axis=-1, mode=mode, sort=sort, stable=1)] for x, k in cases]
    # OpenVINO's CPU plugin computes float64 as float32 (a documented precision limit: +inf
    # came back as the largest finite float32), so float64 is exact in ORT only.
    runtimes = RUNTIMES if dtype != np.float64 else ("onnxruntime",)
    assert_exact_everywhere(workers, _standalone(model), [[x, np.array([k])] for x, k in cases], want, runtimes)


@pytest.mark.parametrize("shape, mode, sort", [((4, 8192), "max", "value"), ((4, 8191), "min", "value"),
                                               ((4, 8191), "max", "index"), ((4, 1, 8192), "max", "value"),
                                               ((2, 3, 4099), "min", "value")])
def test_the_prefilter_is_exact_on_ties_in_every_runtime(workers, shape, mode, sort):
    """A static shape and a constant k: the standalone TopK prefilters (blocks chosen by the
    tie-independent rule, lower block first among equal maxima; 8191: the last block padded).
    Inputs with NaN or an infinity take the path without the prefilter."""
    k = 16
    model = _constant_k(builder.top_k_model(TensorProto.FLOAT, len(shape), axis=-1, mode=mode, sort=sort, stable=1),
                        "k", k, shape)
    block_best = "ReduceMax" if mode == "max" else "ReduceMin"
    lowered = onnx.load_from_string(_standalone(model))
    assert any(n.op_type == block_best for g in graphs(lowered.graph) for n in g.node), "no prefilter"
    rng = np.random.default_rng(5)
    xs = [rng.choice(np.array(pool, np.float32), size=shape)
          for pool in ([1.0], [0.0, -0.0], [1.0, 2.0], [-np.inf, 3.0], [1.0, np.nan], [5.0, 4.0, 3.0])]
    # Distinct values but the ten best in pairs, one pair a +0.0 and a -0.0: ties inside the k
    # best (in the block maxima and the candidates), none at the k-th place: the fast choice.
    n = shape[-1]
    order = rng.permuted(np.tile(np.arange(n, dtype=np.float32), shape[:-1] + (1,)), axis=-1)
    paired = np.where(order >= n - 10, order // 2 * 2, order) - np.float32((n - 4) // 2 * 2)
    paired = np.where((paired == 0) & (np.cumsum(paired == 0, axis=-1) == 2), np.float32(-0.0), paired)
    xs.append(paired if mode == "max" else -paired)
    want = [[np.asarray(v) for v in top_k(x, k, axis=-1, mode=mode, sort=sort, stable=1)] for x in xs]
    assert_exact_everywhere(workers, _standalone(model), [[x] for x in xs], want)


def _scatter_constant_axis(reduction: str, use_init_val: int) -> onnx.ModelProto:
    model = builder.scatter_elements_update_model(TensorProto.FLOAT, 1, reduction=reduction, use_init_val=use_init_val)
    model.graph.initializer.append(numpy_helper.from_array(np.array([0], np.int64), "axis"))
    inputs = [i for i in model.graph.input if i.name != "axis"]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    return model


@pytest.mark.parametrize("reduction", ["min", "max"])
@pytest.mark.parametrize("use_init_val", [1, 0])
def test_scatter_min_max_signed_zeros_in_every_runtime(workers, reduction, use_init_val):
    """A zero result takes the sign of the first zero (the spec's order): a -0.0 update meeting
    data of the other sign gave +0.0 in OpenVINO, whose CPU plugin narrowed the composition's
    int64 key above every position key (2**62) to int32 (0)."""
    from ortops.reference import scatter_elements_update

    pool = np.array([1.0, -1.0, 0.0, -0.0, np.nan], np.float32)
    rng = np.random.default_rng(7)
    feeds = [[np.array([1.0], np.float32), np.array([0]), np.array([-0.0], np.float32)],
             [np.array([-1.0], np.float32), np.array([0]), np.array([-0.0], np.float32)]]
    feeds += [[rng.choice(pool, 4), rng.integers(-4, 4, 8), rng.choice(pool, 8)] for _ in range(30)]
    expected = [[scatter_elements_update(d, i, u, np.array([0]), reduction=reduction, use_init_val=use_init_val)]
                for d, i, u in feeds]
    assert_exact_everywhere(workers, _standalone(_scatter_constant_axis(reduction, use_init_val)), feeds, expected)
