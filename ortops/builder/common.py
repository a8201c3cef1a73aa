"""What every builder shares: the pinned IR version, checked model assembly, custom nodes.

This module never imports onnxruntime. Every model gets an explicit ``ir_version``
(:data:`IR_VERSION`) and explicit opset imports, and passes ``onnx.checker`` with shape
inference before it is returned.
"""

from __future__ import annotations

from typing import Sequence

import onnx
from onnx import helper

from ..ops import DOMAINS
from ..ops.spec import OpSpec
from .schemas import SCHEMA_VERSION, register_schemas

__all__ = ["IR_VERSION", "Tensor", "make_model", "custom_node", "dims", "set_static_shapes"]

#: ORT 1.31 and 1.32 load IR <= 13 (docs/divergences.md); opset 24 needs IR >= 12.
IR_VERSION = 12

Tensor = tuple[str, int, Sequence[int | str | None] | None]  # (name, elem_type, shape)


def custom_node(opdef: OpSpec, inputs, outputs, name: str, attrs: dict) -> onnx.NodeProto:
    """A node of one of ortops' ops, its attributes checked (OpError naming the node)."""
    opdef.parse_attributes(attrs, name)
    return helper.make_node(opdef.op_type, list(inputs), list(outputs), name=name or None, domain=opdef.domain, **attrs)


def make_model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[Tensor], outputs: Sequence[Tensor], *,
               onnx_opset: int = 11, initializers: Sequence[onnx.TensorProto] = (), name: str = "ortops") -> onnx.ModelProto:
    """A checked model from nodes, typed inputs and outputs, with our domains imported."""
    register_schemas()
    graph = helper.make_graph(
        list(nodes), name,
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
        initializer=list(initializers),
    )
    domains = {n.domain for n in nodes}
    opsets = [helper.make_opsetid("", onnx_opset)]
    opsets += [helper.make_opsetid(d, SCHEMA_VERSION) for d in DOMAINS if d in domains]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION, producer_name="ortops")
    onnx.checker.check_model(model, full_check=True)
    return model


def dims(rank: int, prefix: str = "d") -> list[str]:
    """Symbolic dimension names ``d0, d1, ...`` for a graph input of rank ``rank``."""
    return [f"{prefix}{i}" for i in range(rank)]


def set_static_shapes(model: onnx.ModelProto, **shapes: Sequence[int]) -> onnx.ModelProto:
    """``model`` (changed in place, and returned) with each graph input named in ``shapes`` given
    that static shape, as an exported model holds it: ``set_static_shapes(m, data=(2, 4))``."""
    for value in model.graph.input:
        for dim, size in zip(value.type.tensor_type.shape.dim, shapes.get(value.name, ())):
            dim.Clear()
            dim.dim_value = size
    return model
