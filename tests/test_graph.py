"""One node check for prepare_model and the OpenVINO interop: subgraphs walked, repeated
attributes refused."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

import ortops
from ortops.graph import check_node, external_tensors, graphs, load_model

from helpers import top_k_model


def _with_repeated_attribute():
    model = top_k_model(axis=-1)
    node = model.graph.node[0]
    node.attribute.append(helper.make_attribute("mode", "min"))
    return model


def _inside_an_if(model):
    """``model``'s graph as the then-branch of an If (and the else-branch too)."""
    body = model.graph
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    if_node = helper.make_node("If", ["cond"], [o.name for o in body.output], then_branch=body, else_branch=body)
    graph = helper.make_graph([if_node], "outer", [cond, *body.input], list(body.output))
    return helper.make_model(graph, ir_version=model.ir_version, opset_imports=list(model.opset_import))


def test_graphs_walks_every_subgraph():
    outer = _inside_an_if(top_k_model())
    assert len(list(graphs(outer.graph))) == 3


def test_load_model_copies_and_reads():
    model = top_k_model()
    copy = load_model(model)
    assert copy == model and copy is not model
    assert load_model(model, copy=False) is model
    assert load_model(model.SerializeToString()) == model
    with pytest.raises(TypeError):
        load_model(42)


def test_check_node_refuses_a_repeated_attribute():
    with pytest.raises(ortops.OpError, match="'mode' appears more than once") as info:
        check_node(_with_repeated_attribute().graph.node[0])
    assert info.value.kind == "attribute"
    assert check_node(helper.make_node("Relu", ["x"], ["y"])) is None


@pytest.mark.parametrize("where", ["top level", "subgraph"])
def test_prepare_model_refuses_a_repeated_attribute_anywhere(where):
    model = _with_repeated_attribute()
    if where == "subgraph":
        model = _inside_an_if(model)
    with pytest.raises(ortops.OpError, match="appears more than once"):
        ortops.prepare_model(model)


def test_openvino_check_model_refuses_a_repeated_attribute_in_a_subgraph():
    from ortops.interop import openvino as ov_interop

    with pytest.raises(ortops.OpError, match="appears more than once"):
        ov_interop.check_model(_inside_an_if(_with_repeated_attribute()))
    ov_interop.check_model(_inside_an_if(top_k_model()))  # a good node in a subgraph is fine


def test_external_tensors_are_found_in_every_graph():
    """Initializers and Constant values, in the main graph and inside an If branch."""
    def external(tensor, location):
        tensor.data_location = TensorProto.EXTERNAL
        tensor.external_data.add(key="location", value=location)
        return tensor

    weights = external(helper.make_tensor("w", TensorProto.FLOAT, [1], [1.0]), "w.bin")
    inner = external(helper.make_tensor("c", TensorProto.FLOAT, [1], [2.0]), "c.bin")
    embedded = helper.make_tensor("e", TensorProto.FLOAT, [1], [3.0])
    branch = helper.make_graph([helper.make_node("Constant", [], ["y"], value=inner)], "branch", [],
                               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["out"], then_branch=branch, else_branch=branch)], "main",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1])], initializer=[weights, embedded])
    found = [t.name for t in external_tensors(helper.make_model(graph))]
    assert found == ["w", "c", "c"]  # the branch is held twice (then and else)
