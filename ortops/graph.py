"""Reading models and their ortops nodes: one loader, one walker, one node check.

:func:`ortops.prepare_model` and :func:`ortops.interop.openvino.check_model` both use
:func:`check_node` on every graph :func:`graphs` yields, so a node is judged the same way
wherever it goes: in every subgraph, repeated attributes refused, attribute types and values
checked against the op's spec.
"""

from __future__ import annotations

import os
from copy import deepcopy
from typing import Any, Callable, Iterator

import onnx
from onnx import helper

from .errors import OpError
from .ops import DOMAINS, OPS, find_op
from .ops.spec import OpSpec

__all__ = ["load_model", "graphs", "subgraphs", "model_graphs", "inline_functions", "raw_attributes", "check_node", "check_nodes",
           "Names", "DEFAULT_DOMAINS"]

#: The names of ONNX's default domain.
DEFAULT_DOMAINS = ("", "ai.onnx")

_ATTR_KINDS = {"int": onnx.AttributeProto.INT, "string": onnx.AttributeProto.STRING}


def load_model(model, *, copy: bool = True, load_external_data: bool = True) -> onnx.ModelProto:
    """An ``onnx.ModelProto`` from a ModelProto (copied unless ``copy=False``), bytes or a path.

    Raises
    ------
    TypeError
        For anything else.
    """
    if isinstance(model, onnx.ModelProto):
        return deepcopy(model) if copy else model
    if isinstance(model, (bytes, bytearray)):
        return onnx.load_from_string(bytes(model))
    if isinstance(model, (str, os.PathLike)):
        return onnx.load(os.fspath(model), load_external_data=load_external_data)
    raise TypeError(f"model must be an onnx.ModelProto, bytes or a path, not {type(model).__name__}")


def graphs(graph: onnx.GraphProto | onnx.FunctionProto) -> Iterator[onnx.GraphProto | onnx.FunctionProto]:
    """``graph`` and every subgraph in it (``If`` branches, ``Loop``/``Scan`` bodies), depth first.
    ``graph`` may be a model-local function's body: a FunctionProto has ``node``, ``input`` and
    ``output`` like a graph."""
    yield graph
    for node in graph.node:
        for _, sub in subgraphs(node):
            yield from graphs(sub)


def subgraphs(node: onnx.NodeProto) -> list[tuple[str, onnx.GraphProto]]:
    """``(attribute name, graph)`` of each graph ``node`` holds itself (``If`` branches, ``Loop``/``Scan`` bodies)."""
    return [(attr.name, g) for attr in node.attribute
            for g in ([attr.g] if attr.type == onnx.AttributeProto.GRAPH else attr.graphs)]


def model_graphs(model: onnx.ModelProto) -> Iterator[onnx.GraphProto | onnx.FunctionProto]:
    """Every graph of ``model``, then every model-local function's body and its subgraphs (:func:`graphs`)."""
    for body in (model.graph, *model.functions):
        yield from graphs(body)


def inline_functions(model: onnx.ModelProto,
                     wanted: Callable[[onnx.NodeProto], bool] = lambda node: node.domain in DOMAINS) -> onnx.ModelProto:
    """``model`` with its model-local functions inlined when a node of one of them is ``wanted``
    (by default, an ortops node), else ``model`` itself.

    Such a node is rewritten at its call sites: its attributes may refer to the caller's, its
    input types are the caller's, and two calls may differ in both. ORT inlines functions
    anyway; onnx's inliner names an inlined node after the function's node (``top_k`` becomes
    ``top_k__1``), so errors still name it. The domains the functions import are added to the
    model's imports, and a function's attribute defaults to the calls that leave them out (the
    inliner does neither): ``model`` is changed there.
    """
    if not any(wanted(n) for f in model.functions for g in graphs(f) for n in g.node):
        return model
    import onnx.inliner

    # A call that leaves out an attribute with a default (attribute_proto) gets the default
    # written out: onnx's inliner drops such an attribute from the nodes that refer to it.
    defaults = {(f.domain, f.name): f.attribute_proto for f in model.functions}
    for graph in model_graphs(model):
        for node in graph.node:
            given = {a.name for a in node.attribute}
            node.attribute.extend(d for d in defaults.get((node.domain, node.op_type), ()) if d.name not in given)
    imported = {o.domain for o in model.opset_import}
    for function in model.functions:
        for opset in function.opset_import:
            if opset.domain not in imported:
                model.opset_import.append(helper.make_opsetid(opset.domain, opset.version))
                imported.add(opset.domain)
    return onnx.inliner.inline_local_functions(model)


def external_tensors(model: onnx.ModelProto) -> Iterator[onnx.TensorProto]:
    """Every tensor of ``model`` whose data lives in an external file: initializers and tensor
    attributes (``Constant`` values, ...), in every graph and model-local function."""
    from onnx.external_data_helper import uses_external_data

    for graph in model_graphs(model):
        for tensor in getattr(graph, "initializer", ()):  # a model-local function has none
            if uses_external_data(tensor):
                yield tensor
        for node in graph.node:
            for attr in node.attribute:
                held = [attr.t] if attr.type == onnx.AttributeProto.TENSOR else \
                    attr.tensors if attr.type == onnx.AttributeProto.TENSORS else ()
                yield from (t for t in held if uses_external_data(t))


def used_names(model: onnx.ModelProto) -> set[str]:
    """Every name ``model`` uses, in every graph and function: values, nodes, graphs' inputs,
    outputs, initializers and value infos."""
    used: set[str] = set()
    for graph in model_graphs(model):
        for node in graph.node:
            used.update(node.input)
            used.update(node.output)
            used.add(node.name)
        if isinstance(graph, onnx.FunctionProto):
            used.update(graph.input)
            used.update(graph.output)
            continue
        for infos in (graph.input, graph.output, graph.value_info):
            used.update(info.name for info in infos)
        used.update(t.name for t in graph.initializer)
        used.update(t.values.name for t in graph.sparse_initializer)
    return used


class Names:
    """Fresh names for the nodes and values a rewrite adds, unique in the whole model.

    Holds every name the model uses, in every graph and function (values, nodes, graphs'
    inputs, outputs, initializers and value infos): a generated name never collides with one
    the model already has, nor with another generated one.
    """

    def __init__(self, model: onnx.ModelProto):
        self._used = used_names(model)

    def fresh(self, base: str) -> str:
        """``base``, or ``base_1``, ``base_2``, ... if taken; the name is then taken."""
        name, n = base, 0
        while name in self._used:
            n += 1
            name = f"{base}_{n}"
        self._used.add(name)
        return name


def raw_attributes(node: onnx.NodeProto, op: OpSpec) -> dict[str, Any]:
    """The node's attributes by name, as ONNX holds them; OpError for a repeated attribute
    (which one wins differs between runtimes) or a known one of the wrong ONNX type."""
    kinds = {a.name: a.kind for a in op.attrs}
    raw = {}
    for attr in node.attribute:
        if attr.name in raw:
            raise OpError(op.op_type, f"attribute {attr.name!r} appears more than once", node.name, kind="attribute")
        kind = kinds.get(attr.name)
        if kind is not None and attr.type != _ATTR_KINDS[kind]:
            raise OpError(
                op.op_type,
                f"attribute {attr.name!r} has ONNX type {onnx.AttributeProto.AttributeType.Name(attr.type)}; "
                f"it must be {kind.upper()}",
                node.name, kind="attribute",
            )
        raw[attr.name] = helper.get_attribute_value(attr)
    return raw


def check_node(node: onnx.NodeProto) -> tuple[OpSpec, dict[str, Any]] | None:
    """The op and the parsed attributes of an ortops node; None for a node of another domain.

    Raises
    ------
    OpError
        Naming the node: an unknown op of an ortops domain, a bad or repeated attribute, the
        wrong number of inputs or outputs.
    """
    if node.domain not in DOMAINS:
        return None
    op = find_op(node.domain, node.op_type)
    if op is None:
        ours = ", ".join(o.op_type for o in OPS if o.domain == node.domain)
        raise OpError(node.op_type, f"is not an op of domain {node.domain!r} (its ops: {ours})", node.name,
                      kind="model")
    attrs = op.parse_attributes(raw_attributes(node, op), node.name)
    if len(node.input) != len(op.inputs) or any(not name for name in node.input):
        raise OpError(op.op_type, f"has inputs {list(node.input)}; it needs exactly {list(op.inputs)}", node.name,
                      kind="model")
    if len(node.output) != len(op.outputs) or any(not name for name in node.output):
        raise OpError(op.op_type, f"has outputs {list(node.output)}; it needs {list(op.outputs)}", node.name,
                      kind="model")
    return op, attrs


def check_nodes(model: onnx.ModelProto) -> None:
    """:func:`check_node` on every node of every graph of ``model``, model-local functions'
    bodies included (except nodes whose attributes refer to the function's attributes: their
    values are known only at a call site)."""
    for graph in model_graphs(model):
        for node in graph.node:
            if not any(attr.ref_attr_name for attr in node.attribute):
                check_node(node)


def attribute(node: onnx.NodeProto, name: str, default=None):
    """The value of the node's attribute ``name`` (strings decoded), or ``default``."""
    for attr in node.attribute:
        if attr.name == name:
            value = helper.get_attribute_value(attr)
            return value.decode() if isinstance(value, bytes) else value
    return default
