"""Audited nodes inside subgraphs: the taken branch of an ``If`` is inlined and audited; what stays
out of reach (the branch not taken, a ``Loop`` body) is listed with the reason. Real runtimes."""

from __future__ import annotations

import json

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from ortops import cli
from ortops.compare import audit
from ortops.compare import model as model_mod

FLOAT, INT64 = TensorProto.FLOAT, TensorProto.INT64


def _branch(name, nodes, outputs):
    return helper.make_graph(nodes, name, [], outputs)


def _if_model(path, nested=False) -> str:
    """``x [4, 16]``: if ReduceSum(x) > 0 then TopK(x, 3).values (+ an inner If when ``nested``)
    else ArgMax(x) as float [4, 1]. Both branches end in ``out`` [4, 3] or [4, 1] float."""
    then_nodes = [helper.make_node("TopK", ["x", "k"], ["then_values", "then_indices"], axis=-1, name="pick")]
    if nested:
        inner_then = _branch("inner_then", [helper.make_node("TopK", ["x", "k"], ["v2", "i2"], axis=-1, name="inner_pick"),
                                            helper.make_node("Identity", ["v2"], ["inner_out"])],
                             [helper.make_tensor_value_info("inner_out", FLOAT, ["rows", "cols"])])
        inner_else = _branch("inner_else", [helper.make_node("Identity", ["then_values"], ["inner_else_out"])],
                             [helper.make_tensor_value_info("inner_else_out", FLOAT, ["rows", "cols"])])
        then_nodes += [helper.make_node("Greater", ["total", "zero"], ["again"]),
                       helper.make_node("If", ["again"], ["then_out"], then_branch=inner_then,
                                        else_branch=inner_else, name="inner")]
        then_out = "then_out"
    else:
        then_out = "then_values"
    then_branch = _branch("then", then_nodes, [helper.make_tensor_value_info(then_out, FLOAT, ["rows", "cols"])])
    else_branch = _branch("else", [helper.make_node("ArgMax", ["x"], ["am"], axis=-1, name="fallback"),
                                   helper.make_node("Cast", ["am"], ["else_out"], to=FLOAT)],
                          [helper.make_tensor_value_info("else_out", FLOAT, ["rows", "cols"])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
             helper.make_node("Greater", ["total", "zero"], ["cond"]),
             helper.make_node("If", ["cond"], ["out"], then_branch=then_branch, else_branch=else_branch, name="choose")]
    graph = helper.make_graph(nodes, "if", [helper.make_tensor_value_info("x", FLOAT, [4, 16])],
                              [helper.make_tensor_value_info("out", FLOAT, ["rows", "cols"])],
                              [helper.make_tensor("k", INT64, [1], [3]), helper.make_tensor("zero", FLOAT, [], [0.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def _loop_model(path) -> str:
    """A Loop of 2 iterations whose body runs a TopK on the outer ``x``: not observable."""
    body = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["lv", "li"], axis=-1, name="looped_pick"),
         helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("ReduceSum", ["lv"], ["s"], keepdims=0),
         helper.make_node("Add", ["acc_in", "s"], ["acc_out"])],
        "body", [helper.make_tensor_value_info("i", INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("acc_in", FLOAT, [])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("acc_out", FLOAT, [])])
    nodes = [helper.make_node("Loop", ["trips", "", "acc0"], ["acc"], body=body, name="repeat")]
    graph = helper.make_graph(nodes, "loop", [helper.make_tensor_value_info("x", FLOAT, [4, 16])],
                              [helper.make_tensor_value_info("acc", FLOAT, [])],
                              [helper.make_tensor("k", INT64, [1], [3]), helper.make_tensor("trips", INT64, [], [2]),
                               helper.make_tensor("acc0", FLOAT, [], [0.0])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))
    return str(path)


def _compare(tmp_path, path, x, *extra) -> tuple[int, dict]:
    np.savez(tmp_path / "in.npz", x=x)
    status = cli.main(["compare", "--no-progress", path, "--inputs", str(tmp_path / "in.npz"),
                       "--runtimes", "onnxruntime", "openvino", "--out", str(tmp_path / "r"), *extra])
    return status, json.loads((tmp_path / "r" / "compare.json").read_text())


def test_the_taken_branch_is_inlined_and_audited(tmp_path):
    path = _if_model(tmp_path / "if.onnx")
    x = np.abs(np.random.default_rng(0).standard_normal((4, 16))).astype(np.float32)  # sum > 0: then
    status, report = _compare(tmp_path, path, x)
    assert report["lifted"] == [{"node": "choose", "branch": "then_branch"}]
    assert [a["node"] for a in report["audited"]] == ["pick"]
    assert report["unobserved"] == [{"node": "fallback", "op": "ArgMax", "where": "choose.else_branch",
                                     "reason": "in the branch of choose not taken for these inputs (condition True)"}]
    assert {n["node"] for n in report["nodes"]} == {"pick"}
    assert report["model"]["nodes"] == 3  # the user's model, not the lifted one
    assert status == report["summary"]["exit_status"]


def test_the_other_branch_for_other_inputs(tmp_path):
    path = _if_model(tmp_path / "if.onnx")
    x = -np.abs(np.random.default_rng(1).standard_normal((4, 16))).astype(np.float32)  # sum < 0: else
    _, report = _compare(tmp_path, path, x)
    assert report["lifted"] == [{"node": "choose", "branch": "else_branch"}]
    assert [a["node"] for a in report["audited"]] == ["fallback"]
    assert [u["node"] for u in report["unobserved"]] == ["pick"]


def test_nested_ifs_are_lifted_in_turn(tmp_path):
    path = _if_model(tmp_path / "nested.onnx", nested=True)
    x = np.ones((4, 16), np.float32)  # ties everywhere; both conditions True
    _, report = _compare(tmp_path, path, x)
    assert report["lifted"] == [{"node": "choose", "branch": "then_branch"}, {"node": "inner", "branch": "then_branch"}]
    assert [a["node"] for a in report["audited"]] == ["pick", "inner_pick"]
    for node in report["nodes"]:
        assert node["status"] in ("agree", "explained"), node
        assert node["status"] == "agree" or node["topic"] == "ties"


def test_the_inlined_model_computes_what_the_model_does(tmp_path):
    """Lifting with the real ORT as the probe, then ORT on both models: the same outputs."""
    path = _if_model(tmp_path / "nested.onnx", nested=True)
    model = onnx.load(path)
    for x in (np.full((4, 16), 0.5, np.float32), np.random.default_rng(2).standard_normal((4, 16)).astype(np.float32)):
        def probe(m, names, x=x):
            exposed = model_mod.expose(m, names)
            session = ort.InferenceSession(exposed.SerializeToString())
            wanted = [o.name for o in session.get_outputs() if o.name in names]
            return dict(zip(wanted, session.run(wanted, {"x": x}), strict=True)), ""

        lifted = model_mod.lift_branches(model, audit.is_audited, probe, known={"x": x})
        assert lifted.inlined and not any(n.op_type == "If" for n in lifted.model.graph.node)
        onnx.checker.check_model(lifted.model)
        want = ort.InferenceSession(path).run(None, {"x": x})[0]
        got = ort.InferenceSession(lifted.model.SerializeToString()).run(None, {"x": x})[0]
        np.testing.assert_array_equal(got, want)


def test_a_condition_that_is_a_constant_needs_no_run():
    lifted = model_mod.lift_branches(_constant_condition_model(), audit.is_audited, probe=None)
    assert lifted.inlined == [("choose", "else_branch")]
    assert [n.op_type for n in lifted.model.graph.node] == ["ArgMax", "Cast", "Identity"]
    assert [u.node for u in lifted.unobserved] == ["pick"]


def _constant_condition_model() -> onnx.ModelProto:
    then_branch = _branch("then", [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, name="pick")],
                          [helper.make_tensor_value_info("v", FLOAT, ["rows", "cols"])])
    else_branch = _branch("else", [helper.make_node("ArgMax", ["x"], ["am"], axis=-1, name="fallback"),
                                   helper.make_node("Cast", ["am"], ["else_out"], to=FLOAT)],
                          [helper.make_tensor_value_info("else_out", FLOAT, ["rows", "cols"])])
    graph = helper.make_graph([helper.make_node("If", ["cond"], ["out"], then_branch=then_branch,
                                                else_branch=else_branch, name="choose")], "c",
                              [helper.make_tensor_value_info("x", FLOAT, [4, 16])],
                              [helper.make_tensor_value_info("out", FLOAT, ["rows", "cols"])],
                              [helper.make_tensor("k", INT64, [1], [3]), helper.make_tensor("cond", TensorProto.BOOL, [], [False])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_a_loop_body_is_reported_unobserved_with_the_reason(tmp_path):
    path = _loop_model(tmp_path / "loop.onnx")
    x = np.random.default_rng(3).standard_normal((4, 16)).astype(np.float32)
    status, report = _compare(tmp_path, path, x)
    assert report["audited"] == [] and report["lifted"] == []
    (entry,) = report["unobserved"]
    assert (entry["node"], entry["op"], entry["where"]) == ("looped_pick", "TopK", "repeat.body")
    assert "inside a Loop body" in entry["reason"] and "each iteration" in entry["reason"]
    assert status == report["summary"]["exit_status"]


@pytest.mark.parametrize("branch_value", [True, False])
def test_known_inputs_decide_without_a_run(branch_value):
    """A condition that is a graph input is read from the feed."""
    model = _constant_condition_model()
    del model.graph.initializer[1]
    model.graph.input.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    lifted = model_mod.lift_branches(model, audit.is_audited, probe=None, known={"cond": np.array(branch_value)})
    assert lifted.inlined == [("choose", "then_branch" if branch_value else "else_branch")]


def test_lifted_node_names_stay_unique():
    """The branch's nodes and the Identity that carries its output take names of their own
    where the graph has them already (ORT refused the lifted model: two nodes of one name)."""
    model = _constant_condition_model()
    model.graph.node.extend([helper.make_node("Identity", ["x"], ["x2"], name="choose.else_branch.out"),
                             helper.make_node("Identity", ["x"], ["x3"], name="fallback")])
    model.graph.output.extend([helper.make_tensor_value_info(n, FLOAT, [4, 16]) for n in ("x2", "x3")])
    lifted = model_mod.lift_branches(model, audit.is_audited, probe=None).model
    names = [n.name for n in lifted.graph.node]
    assert len(names) == len(set(names)), names
    assert "choose.else_branch/fallback" in names  # named after where it came from
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    out, _, _ = ort.InferenceSession(lifted.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"x": x})
    assert out.tolist() == x.argmax(axis=-1, keepdims=True).astype(np.float32).tolist()
