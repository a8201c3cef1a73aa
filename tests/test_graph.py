"""One node check for prepare_model and the OpenVINO interop: subgraphs walked, repeated
attributes refused."""

from __future__ import annotations

import pytest
from onnx import TensorProto, helper

import ortops
from ortops.graph import check_node, graphs, load_model

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
