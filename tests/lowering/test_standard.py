"""ortops/standard.py: ``lower(..., standard=True)`` on standard TopK/ArgMax/ArgMin nodes: what
is rewritten, what is left with which reason, every graph, every dtype and opset (answers in
plain ORT against the ONNX spec's order written out in test_ties; OpenVINO: there)."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import ortops
from ortops import builder

from lowering.test_ties import onnx_arg, onnx_top_k


def _run(model, *inputs):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, dict(zip([i.name for i in session.get_inputs()], inputs)))


def _data(dtype, shape=(3, 40), seed=0):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "f":
        pool = np.array([np.nan, -0.0, 0.0, 1, -np.inf, np.inf], dtype)
    else:
        info = np.iinfo(dtype)
        pool = np.array([info.min, info.max, 0, 1], dtype)
    return rng.choice(pool, size=shape)


DTYPES = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.FLOAT16: np.float16,
          TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8, TensorProto.INT16: np.int16,
          TensorProto.UINT16: np.uint16, TensorProto.INT32: np.int32, TensorProto.UINT32: np.uint32,
          TensorProto.INT64: np.int64}


_FLOATS = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16)


@pytest.mark.parametrize("version, elem", [(v, e) for v in (1, 10, 11, 24) for e in DTYPES
                                           if v >= 11 or e in _FLOATS])  # TopK-1 and -10 take floats only
def test_standard_top_k_gives_the_spec_answer_for_every_dtype_and_version(elem, version):
    dtype = DTYPES[elem]
    for largest in (1, 0) if version >= 11 else (1,):
        model = builder.onnx_top_k_model(version, elem, 2, largest=largest, k=5 if version == 1 else None)
        lowered, report = ortops.lower(model, fallback="none", standard=True)
        assert [n.op for n in report.rewritten] == ["TopK"] and not report.unchanged, report
        assert (report.converted_from is not None) == (version < 11)
        x = _data(dtype)
        for k in ([5] if version == 1 else [0, 1, 7, 40]):
            got = _run(lowered, x) if version == 1 else _run(lowered, x, np.array([k], np.int64))
            want = onnx_top_k(x, k, largest)
            assert got[1].tolist() == want[1].tolist() and got[0].tobytes() == want[0].tobytes(), (largest, k)


@pytest.mark.parametrize("op_type", ["ArgMax", "ArgMin"])
@pytest.mark.parametrize("elem", [TensorProto.FLOAT, TensorProto.INT8, TensorProto.UINT32, TensorProto.INT64])
def test_standard_arg_gives_the_spec_answer(op_type, elem):
    x = _data(DTYPES[elem], (4, 30), seed=1)
    for last in (0, 1):
        node = helper.make_node(op_type, ["x"], ["y"], axis=1, keepdims=0, select_last_index=last)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, [None, None])],
                                  [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=10)
        lowered, report = ortops.lower(model, standard=True)
        assert len(report.rewritten) == 1
        want = onnx_arg(x.astype(np.float64), int(op_type == "ArgMax"), last, 0)[0]
        assert _run(lowered, x)[0].tolist() == want.tolist(), last


def test_nodes_in_subgraphs_are_rewritten():
    inner = helper.make_graph(
        [helper.make_node("ArgMax", ["x"], ["a"], axis=0, keepdims=1, name="inner_arg")], "then", [],
        [helper.make_tensor_value_info("a", TensorProto.INT64, [1])])
    other = helper.make_graph(
        [helper.make_node("ArgMin", ["x"], ["b"], axis=0, keepdims=1, select_last_index=1, name="inner_min")],
        "else", [], [helper.make_tensor_value_info("b", TensorProto.INT64, [1])])
    graph = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=other, name="if")],
                              "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [None]),
                                    helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=10)
    lowered, report = ortops.lower(model, fallback="none", standard=True)
    assert sorted(n.name for n in report.rewritten) == ["inner_arg", "inner_min"] and not report.unchanged
    onnx.checker.check_model(lowered)
    x = np.array([3, 7, 7, 1, 1], np.float32)
    assert _run(lowered, x, np.array(True))[0].tolist() == [1]
    assert _run(lowered, x, np.array(False))[0].tolist() == [4]


def test_a_node_without_a_composition_is_left_with_the_reason():
    model = builder.onnx_top_k_model(11, TensorProto.UINT64, 2)
    lowered, report = ortops.lower(model, fallback="none", standard=True)
    assert [(n.name, n.reason.split(":")[0]) for n in report.unchanged] == [("onnx_top_k_11", "uint64 data")]
    assert "left as it was: TopK node 'onnx_top_k_11': uint64 data" in str(report) and report.standalone
    assert [n.op_type for n in lowered.graph.node] == ["TopK"]


def test_without_standard_standard_nodes_stay():
    model = builder.onnx_top_k_model(11, TensorProto.FLOAT, 2)
    lowered, report = ortops.lower(model, fallback="none")
    assert [n.op_type for n in lowered.graph.node] == ["TopK"] and not report.rewritten


def test_unnamed_nodes_get_check_nodes_of_their_own():
    """Two unnamed TopK nodes: each one's check nodes are named after its first output (they
    were both named after the empty name, and ORT refused the model: two nodes with one name)."""
    import onnxruntime as ort

    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["v1", "i1"], axis=1),
         helper.make_node("TopK", ["x", "k"], ["v2", "i2"], axis=1, largest=0)], "g",
        [value("x", TensorProto.FLOAT, ["a", "b"]), value("k", TensorProto.INT64, [1])],
        [value(n, TensorProto.FLOAT if n[0] == "v" else TensorProto.INT64, None) for n in ("v1", "i1", "v2", "i2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=10)
    lowered, _ = ortops.lower(model, fallback="none", standard=True)
    session = ort.InferenceSession(lowered.SerializeToString(), providers=["CPUExecutionProvider"])
    v1, _, v2, _ = session.run(None, {"x": np.array([[2, 1, 3]], np.float32), "k": np.array([2])})
    assert v1.tolist() == [[3, 2]] and v2.tolist() == [[1, 2]]
    with pytest.raises(Exception, match="TopK node 'v[12]' rejects its input: k must be a single integer"):
        session.run(None, {"x": np.array([[2, 1, 3]], np.float32), "k": np.array([4])})
