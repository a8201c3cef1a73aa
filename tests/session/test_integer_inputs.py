"""TopK's k and ScatterElementsUpdate's indices and axis of every integer type, through
``ortops.InferenceSession(path="pyop")``: ``prepare_model`` casts int8 ... uint32 to int64 in
front of the private bridge ops (registered for int64 and uint64 there only), so the results
and the errors must be those of the reference on the original values."""

from __future__ import annotations

import functools

import numpy as np
import onnxruntime as ort
import pytest
from hypothesis import given
from hypothesis import strategies as st
from onnx import TensorProto, helper

import ortops
from ortops import builder, reference
from ortops.ops import OPENVINO_DOMAIN

INT_DTYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
#: The types the test expects to be cast to int64 (every value of each is an int64 value).
NARROW = (np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32)
ONNX_TYPE = {np.dtype(d): helper.np_dtype_to_tensor_dtype(np.dtype(d)) for d in INT_DTYPES}
NAMES = [np.dtype(d).name for d in INT_DTYPES]


@functools.lru_cache(maxsize=None)
def _session(serialized: bytes) -> ortops.InferenceSession:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    return ortops.InferenceSession(serialized, options, path="pyop")


def _top_k_model(k_dtype, index_element_type="i32"):
    return builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value", stable=1,
                               index_element_type=index_element_type, k_type=ONNX_TYPE[np.dtype(k_dtype)])


def _scatter_model(indices_dtype, axis_dtype, reduction="sum"):
    return builder.scatter_elements_update_model(TensorProto.DOUBLE, 2, reduction=reduction,
                                                 indices_type=ONNX_TYPE[np.dtype(indices_dtype)],
                                                 axis_type=ONNX_TYPE[np.dtype(axis_dtype)])


def _cast_targets(model, bridge_op):
    """{input position of the bridge node: the type its Cast goes to} in the prepared model."""
    prepared = ortops.prepare_model(model)
    casts = {n.output[0]: helper.get_attribute_value(n.attribute[0]) for n in prepared.graph.node
             if n.op_type == "Cast"}
    node = next(n for n in prepared.graph.node if n.op_type == bridge_op)
    assert node.domain == "ortops._bridge"
    return {i: casts[name] for i, name in enumerate(node.input) if name in casts}


def _raises_quoting(run, *needles, kind):
    with pytest.raises(ortops.OpError) as info:
        run()
    for needle in needles:
        assert needle in str(info.value), (needle, str(info.value))
    assert info.value.kind == kind
    return info.value


# ---------------------------------------------------------------------------------------------
# TopK's k


@pytest.mark.parametrize("index_element_type", ["i32", "i64"])
@pytest.mark.parametrize("k_dtype", INT_DTYPES, ids=NAMES)
def test_top_k_takes_k_of_every_integer_type(k_dtype, index_element_type):
    model = _top_k_model(k_dtype, index_element_type)
    want_cast = {1: TensorProto.INT64} if k_dtype in NARROW else {}
    assert _cast_targets(model, f"TopK_{index_element_type}") == want_cast
    session = _session(model.SerializeToString())
    data = np.array([[3, 1, 4, 1, 5], [9, 2, 6, 5, 3], [5, 8, 9, 7, 9]], np.float32)
    for k in (1, 3, 5):
        values, indices = session.run(None, {"data": data, "k": np.array([k], k_dtype)})
        want = reference.top_k(data, np.array([k], k_dtype), axis=1, mode="max", sort="value", stable=1,
                               index_element_type=index_element_type)
        np.testing.assert_array_equal(values, want.values)
        np.testing.assert_array_equal(indices, want.indices)
        assert indices.dtype == want.indices.dtype
    info = np.iinfo(k_dtype)
    bad = [0, int(info.max)] + ([-3, int(info.min)] if info.min < 0 else [])
    for k in bad:
        feed = {"data": data, "k": np.array([k], k_dtype)}
        _raises_quoting(lambda: session.run(None, feed), f"TopK node 'top_k': k={k} is outside [1, 5]",
                        kind="k_range")


@given(st.data())
def test_top_k_property_any_k_of_any_integer_type(draw):
    k_dtype = draw.draw(st.sampled_from(INT_DTYPES), label="k dtype")
    index_element_type = draw.draw(st.sampled_from(["i32", "i64"]))
    info = np.iinfo(k_dtype)
    k = draw.draw(st.one_of(st.integers(-2, 7).filter(lambda v: v >= info.min),
                            st.integers(int(info.min), int(info.max))), label="k")
    width = draw.draw(st.integers(1, 6))
    data = np.array(draw.draw(st.lists(st.integers(-3, 3), min_size=2 * width, max_size=2 * width)),
                    np.float32).reshape(2, width)
    session = _session(_top_k_model(k_dtype, index_element_type).SerializeToString())
    feed = {"data": data, "k": np.array([k], k_dtype)}
    if 1 <= k <= width:
        values, indices = session.run(None, feed)
        want = reference.top_k(data, np.array([k], k_dtype), axis=1, mode="max", sort="value", stable=1,
                               index_element_type=index_element_type)
        np.testing.assert_array_equal(values, want.values)
        np.testing.assert_array_equal(indices, want.indices)
    else:
        _raises_quoting(lambda: session.run(None, feed), f"k={k} is outside [1, {width}]", kind="k_range")


# ---------------------------------------------------------------------------------------------
# ScatterElementsUpdate's indices and axis


@pytest.mark.parametrize("axis_dtype", INT_DTYPES, ids=NAMES)
@pytest.mark.parametrize("indices_dtype", INT_DTYPES, ids=NAMES)
def test_scatter_takes_indices_and_axis_of_every_integer_type(indices_dtype, axis_dtype):
    model = _scatter_model(indices_dtype, axis_dtype)
    want_cast = {i: TensorProto.INT64 for i, d in ((1, indices_dtype), (3, axis_dtype)) if d in NARROW}
    assert _cast_targets(model, "ScatterElementsUpdate") == want_cast
    session = _session(model.SerializeToString())
    signed_indices, signed_axis = np.iinfo(indices_dtype).min < 0, np.iinfo(axis_dtype).min < 0
    data = np.arange(12, dtype=np.float64).reshape(3, 4)
    indices = np.array([[2, 0, 1, 2], [0, 2, 2, 1]])
    if signed_indices:
        indices = indices - np.array([[3, 0, 3, 0], [0, 3, 0, 3]])  # -1, -3, -2 ...: negative indices too
    indices = indices.astype(indices_dtype)
    updates = np.array([[10, 20, 30, 40], [50, 60, 70, 80]], np.float64)
    for axis in ((0, -2) if signed_axis else (0,)):
        feed = {"data": data, "indices": indices, "updates": updates, "axis": np.array([axis], axis_dtype)}
        got = session.run(None, feed)[0]
        want = reference.scatter_elements_update(data, indices, updates, np.array([axis], axis_dtype),
                                                 reduction="sum")
        np.testing.assert_array_equal(got, want)

    def run(bad_indices=indices, axis=0):
        return session.run(None, {"data": data, "indices": bad_indices, "updates": updates,
                                  "axis": np.array([axis], axis_dtype)})

    info = np.iinfo(indices_dtype)
    bad_values = [3, int(info.max)] + ([-4, int(info.min)] if signed_indices else [])
    for value in bad_values:
        bad = indices.copy()
        bad[1, 2] = value
        _raises_quoting(lambda: run(bad), f"index {value} is outside [-3, 2] for axis 0", kind="index_range")
    axis_info = np.iinfo(axis_dtype)
    for axis in [2, int(axis_info.max)] + ([-3, int(axis_info.min)] if signed_axis else []):
        _raises_quoting(lambda: run(axis=axis), f"axis={axis} is outside [-2, 1]", kind="axis")


def test_uint64_index_above_int64_is_rejected_not_wrapped():
    """2**64-1 as int64 would be -1, a valid index: it must stay uint64 and be refused."""
    session = _session(_scatter_model(np.uint64, np.uint64, reduction="none").SerializeToString())
    assert _cast_targets(_scatter_model(np.uint64, np.uint64), "ScatterElementsUpdate") == {}
    data = np.zeros((2, 3))
    for value in (2**64 - 1, 2**63, 2**63 + 2):
        indices = np.array([[0, 1, value]], np.uint64)
        feed = {"data": data, "indices": indices, "updates": np.ones((1, 3)), "axis": np.array([1], np.uint64)}
        _raises_quoting(lambda: session.run(None, feed), f"index {value} is outside [-3, 2]", kind="index_range")


@given(st.data())
def test_scatter_property_any_indices_and_axis_of_any_integer_type(draw):
    indices_dtype = draw.draw(st.sampled_from(INT_DTYPES), label="indices dtype")
    axis_dtype = draw.draw(st.sampled_from(INT_DTYPES), label="axis dtype")
    reduction = draw.draw(st.sampled_from(["none", "sum", "max"]))
    rows, cols = draw.draw(st.integers(1, 4)), draw.draw(st.integers(1, 4))
    info, axis_info = np.iinfo(indices_dtype), np.iinfo(axis_dtype)
    axis = draw.draw(st.one_of(st.integers(-3, 2).filter(lambda v: v >= axis_info.min),
                               st.sampled_from([int(axis_info.min), int(axis_info.max)])), label="axis")
    n = draw.draw(st.integers(1, 5))
    shape = (n, cols) if axis in (0, -2) else (rows, n)
    index = st.one_of(st.integers(-4, 4).filter(lambda v: v >= info.min),
                      st.sampled_from([int(info.min), int(info.max)]))
    size = shape[0] * shape[1]
    indices = np.array(draw.draw(st.lists(index, min_size=size, max_size=size)), dtype=indices_dtype).reshape(shape)
    data = np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)
    updates = np.arange(100, 100 + indices.size, dtype=np.float64).reshape(shape)
    axis_array = np.array([axis], axis_dtype)
    session = _session(_scatter_model(indices_dtype, axis_dtype, reduction).SerializeToString())
    feed = {"data": data, "indices": indices, "updates": updates, "axis": axis_array}
    try:
        want = reference.scatter_elements_update(data, indices, updates, axis_array, reduction=reduction)
    except ortops.OpError as expected:
        error = _raises_quoting(lambda: session.run(None, feed), kind=expected.kind)
        assert error.detail == expected.detail
        if expected.kind == "index_range":  # the original value, never a wrapped one
            bad = [int(v) for v in indices.ravel() if not -data.shape[axis] <= int(v) < data.shape[axis]]
            assert any(f"index {v} " in error.detail for v in bad), (bad, error.detail)
        if expected.kind == "axis":
            assert f"axis={axis} " in error.detail
        return
    np.testing.assert_array_equal(session.run(None, feed)[0], want)


# ---------------------------------------------------------------------------------------------
# Inside control flow


def _model(nodes, inputs, outputs, extra_opsets=()):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs])
    return helper.make_model(graph, ir_version=builder.IR_VERSION,
                             opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(OPENVINO_DOMAIN, 1),
                                            *extra_opsets])


def _top_k_node(data, k, outputs, name, **attrs):
    attrs = {"axis": -1, "mode": "max", "sort": "value", "stable": 1, "index_element_type": "i32", **attrs}
    return helper.make_node("TopK", [data, k], outputs, name=name, domain=OPENVINO_DOMAIN, **attrs)


def test_narrow_k_and_indices_inside_if_and_loop_bodies():
    """Known narrow types in subgraphs: an int8 k used in both If branches, int16 indices and
    a uint8 axis in a Loop body; each gets its Cast, and the results are the reference's."""
    F, I64, BOOL = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL

    def branch(name, mode):
        return helper.make_graph([_top_k_node("data", "k", [f"{name}_v", f"{name}_i"], f"{name}_top_k", mode=mode)],
                                 name, [], [helper.make_tensor_value_info(f"{name}_v", F, None),
                                            helper.make_tensor_value_info(f"{name}_i", TensorProto.INT32, None)])

    if_node = helper.make_node("If", ["cond"], ["values", "indices"], name="if",
                               then_branch=branch("then", "max"), else_branch=branch("else", "min"))
    scatter = helper.make_node("ScatterElementsUpdate", ["acc_in", "idx", "upd", "axis"], ["acc_out"],
                               name="body_scatter", domain=OPENVINO_DOMAIN, reduction="sum", use_init_val=1)
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]), scatter], "body",
        [helper.make_tensor_value_info("t", I64, []), helper.make_tensor_value_info("c_in", BOOL, []),
         helper.make_tensor_value_info("acc_in", TensorProto.DOUBLE, [None, None])],
        [helper.make_tensor_value_info("c_out", BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.DOUBLE, [None, None])])
    loop = helper.make_node("Loop", ["M", "", "acc0"], ["acc"], body=body, name="loop")
    model = _model([if_node, loop],
                   [("cond", BOOL, []), ("data", F, [None, None]), ("k", TensorProto.INT8, [1]),
                    ("M", I64, []), ("acc0", TensorProto.DOUBLE, [None, None]), ("idx", TensorProto.INT16, [None, None]),
                    ("upd", TensorProto.DOUBLE, [None, None]), ("axis", TensorProto.UINT8, [1])],
                   [("values", F, None), ("indices", TensorProto.INT32, None), ("acc", TensorProto.DOUBLE, None)])
    prepared = ortops.prepare_model(model)
    then_nodes = next(a.g for a in prepared.graph.node[0].attribute if a.name == "then_branch").node
    loop_body = next(a.g for a in prepared.graph.node[1].attribute if a.name == "body")
    assert [n.op_type for n in then_nodes][:2] == ["Cast", "TopK_i32"]
    assert [n.op_type for n in loop_body.node].count("Cast") == 2  # indices and axis
    session = _session(model.SerializeToString())
    data = np.array([[4, 1, 3, 1], [0, 2, 2, -1]], np.float32)
    idx = np.array([[1, -1], [0, 0]], np.int16)
    upd, acc0 = np.array([[1.5, 2.0], [4.0, 8.0]]), np.zeros((2, 3))
    for cond in (True, False):
        values, indices, acc = session.run(None, {"cond": np.array(cond), "data": data, "k": np.array([3], np.int8),
                                                  "M": np.array(3), "acc0": acc0, "idx": idx, "upd": upd,
                                                  "axis": np.array([1], np.uint8)})
        want = reference.top_k(data, np.array([3]), axis=-1, mode="max" if cond else "min", sort="value", stable=1)
        np.testing.assert_array_equal(values, want.values)
        np.testing.assert_array_equal(indices, want.indices)
        want_acc = acc0
        for _ in range(3):
            want_acc = reference.scatter_elements_update(want_acc, idx, upd, np.array([1]), reduction="sum")
        np.testing.assert_array_equal(acc, want_acc)
    feed = {"cond": np.array(True), "data": data, "k": np.array([-3], np.int8), "M": np.array(1), "acc0": acc0,
            "idx": idx, "upd": upd, "axis": np.array([1], np.uint8)}
    _raises_quoting(lambda: session.run(None, feed), "TopK node 'then_top_k': k=-3 is outside [1, 4]", kind="k_range")
    feed.update(k=np.array([2], np.int8), idx=np.array([[1, -4], [0, 0]], np.int16))
    _raises_quoting(lambda: session.run(None, feed), "ScatterElementsUpdate node 'body_scatter': index -4 is outside",
                    kind="index_range")


def _range_loop(k_type, index_element_type):
    """A Loop whose body makes k with ``com.microsoft::Range`` (onnx has no schema for it, so
    k's type cannot be inferred in the body) and runs TopK with it."""
    index_type = TensorProto.INT64 if index_element_type == "i64" else TensorProto.INT32
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Range", ["start", "limit", "delta"], ["kt"], domain="com.microsoft"),
         _top_k_node("data", "kt", ["v", "i"], "body_top_k", index_element_type=index_element_type)], "body",
        [helper.make_tensor_value_info("t", TensorProto.INT64, []),
         helper.make_tensor_value_info("c_in", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("v", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("i", index_type, None)])
    loop = helper.make_node("Loop", ["M", "cond"], ["values", "indices"], body=body, name="loop")
    return _model([loop], [("M", TensorProto.INT64, []), ("cond", TensorProto.BOOL, []),
                           ("data", TensorProto.FLOAT, [None]),
                           *[(n, k_type, []) for n in ("start", "limit", "delta")]],
                  [("values", TensorProto.FLOAT, None), ("indices", index_type, None)],
                  [helper.make_opsetid("com.microsoft", 1)])


def _ort_has_range(k_type) -> bool:
    graph = helper.make_graph([helper.make_node("Range", ["s", "l", "d"], ["y"], domain="com.microsoft")], "g",
                              [helper.make_tensor_value_info(n, k_type, []) for n in "sld"],
                              [helper.make_tensor_value_info("y", k_type, None)])
    model = helper.make_model(graph, ir_version=builder.IR_VERSION,
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)])
    try:
        ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    except Exception:  # noqa: BLE001
        return False
    return True


@pytest.mark.parametrize("k_type", [TensorProto.INT16, TensorProto.INT32, TensorProto.INT64], ids=["int16", "int32",
                                                                                                   "int64"])
def test_k_of_unknown_type_in_a_loop_body(k_type):
    """An unknown type cannot be cast: the node keeps its public op type, whose registrations
    take int32, int64 and uint64 (the raw path's types): int32 and int64 run, int16 is refused
    by ORT at load with ortops' note; with index_element_type="i64" (private only) ORT refuses
    every k but int64/uint64 at load with the note, and an int64 k runs."""
    if not _ort_has_range(k_type):
        pytest.skip("this onnxruntime has no com.microsoft::Range for the type")
    np_type = helper.tensor_dtype_to_np_dtype(k_type)
    feed = {"M": np.array(2), "cond": np.array(True), "data": np.array([1, 3, 2], np.float32),
            "start": np.array(2, np_type), "limit": np.array(3, np_type), "delta": np.array(1, np_type)}
    model = _range_loop(k_type, "i32")
    body = ortops.prepare_model(model).graph.node[0].attribute[0].g
    assert [(n.domain, n.op_type) for n in body.node if n.op_type == "TopK"] == [(OPENVINO_DOMAIN, "TopK")]
    if k_type == TensorProto.INT16:
        with pytest.raises(Exception) as info:  # ORT's own error type
            ortops.InferenceSession(model, path="pyop")
        assert any("'body_top_k'" in note and "int32, int64 or uint64" in note
                   for note in getattr(info.value, "__notes__", ())), info.value
        return
    session = _session(model.SerializeToString())
    values, indices = session.run(None, feed)
    np.testing.assert_array_equal(values, [[3, 2], [3, 2]])
    np.testing.assert_array_equal(indices, [[1, 2], [1, 2]])
    assert indices.dtype == np.int32
    bad = {**feed, "start": np.array(5, np_type), "limit": np.array(6, np_type)}
    _raises_quoting(lambda: session.run(None, bad), "k=5 is outside [1, 3]", kind="k_range")

    model = _range_loop(k_type, "i64")
    if k_type == TensorProto.INT64:
        values, indices = _session(model.SerializeToString()).run(None, feed)
        assert indices.dtype == np.int64 and indices.tolist() == [[1, 2], [1, 2]]
        return
    with pytest.raises(Exception) as info:  # ORT's own error type
        ortops.InferenceSession(model, path="pyop")
    assert any("'body_top_k'" in note and "int64 or uint64" in note for note in getattr(info.value, "__notes__", ()))
