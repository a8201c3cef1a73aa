"""Builders of checked ONNX models: ortops' custom nodes, the standard ONNX nodes they map to,
and side-by-side models where one input feeds both.

This module never imports onnxruntime. Every model gets an explicit ``ir_version``
(:data:`IR_VERSION`) and explicit opset imports, and passes ``onnx.checker`` with shape
inference before it is returned.
"""

from __future__ import annotations

from typing import Sequence

import onnx
from onnx import TensorProto, helper

from ..opdefs import ARG_MAX, NCNN_DOMAIN, OPENVINO_DOMAIN, SCATTER_ELEMENTS_UPDATE, TOP_K
from .schemas import SCHEMA_VERSION, register_schemas

__all__ = [
    "IR_VERSION",
    "TOP_K_VERSIONS",
    "top_k",
    "scatter_elements_update",
    "arg_max",
    "onnx_top_k",
    "make_model",
    "top_k_model",
    "onnx_top_k_model",
    "top_k_side_by_side",
]

#: ORT 1.31 loads IR <= 13 (FINDINGS); opset 24 needs IR >= 12.
IR_VERSION = 12
#: The standard TopK versions and the default-domain opset each is built at.
TOP_K_VERSIONS = {1: 9, 10: 10, 11: 11, 24: 24}

Tensor = tuple[str, int, Sequence[int | str | None] | None]  # (name, elem_type, shape)


def _node(opdef, inputs, outputs, name, attrs) -> onnx.NodeProto:
    opdef.parse_attributes(attrs, name)  # a bad attribute fails here, naming the node
    return helper.make_node(opdef.op_type, list(inputs), list(outputs), name=name or None, domain=opdef.domain, **attrs)


def top_k(data: str, k: str, *, axis: int, mode: str, sort: str, stable: int = 0, index_element_type: str = "i32",
          outputs: Sequence[str] = ("values", "indices"), name: str = "") -> onnx.NodeProto:
    """``ortops.openvino::TopK`` node (OpenVINO TopK-11), every attribute written out.

    The bridge needs every attribute present on the node (an absent one fails session
    creation), so defaults are written explicitly.
    """
    attrs = dict(axis=axis, mode=mode, sort=sort, stable=stable, index_element_type=index_element_type)
    return _node(TOP_K, (data, k), outputs, name, attrs)


def scatter_elements_update(data: str, indices: str, updates: str, axis: str, *, reduction: str = "none",
                            use_init_val: int = 1, output: str = "output", name: str = "") -> onnx.NodeProto:
    """``ortops.openvino::ScatterElementsUpdate`` node (OpenVINO ScatterElementsUpdate-12)."""
    attrs = dict(reduction=reduction, use_init_val=use_init_val)
    return _node(SCATTER_ELEMENTS_UPDATE, (data, indices, updates, axis), (output,), name, attrs)


def arg_max(data: str, *, out_max_val: int = 0, topk: int = 1, output: str = "output", name: str = "") -> onnx.NodeProto:
    """``ortops.ncnn::ArgMax`` node (ncnn's ArgMax layer)."""
    return _node(ARG_MAX, (data,), (output,), name, dict(out_max_val=out_max_val, topk=topk))


def onnx_top_k(version: int, X: str, K: str | None, *, axis: int = -1, largest: int = 1, sorted: int = 1,
               k: int | None = None, outputs: Sequence[str] = ("Values", "Indices"), name: str = "") -> onnx.NodeProto:
    """Standard ``ai.onnx@version::TopK`` node, version 1, 10, 11 or 24.

    TopK-1 takes ``k`` as an attribute (``K`` must be None); TopK-10 takes K as an input and
    has no ``largest``/``sorted`` (it is always largest, sorted); TopK-11/24 have both.
    """
    if version not in TOP_K_VERSIONS:
        raise ValueError(f"TopK version {version} is not one of {sorted_versions()}")
    if version == 1:
        if k is None or K is not None:
            raise ValueError("TopK-1 takes k as an attribute: pass k=... and K=None")
        return helper.make_node("TopK", [X], list(outputs), name=name or None, axis=axis, k=k)
    if version == 10:
        if (largest, sorted) != (1, 1):
            raise ValueError(f"TopK-10 has no largest/sorted attributes; got largest={largest}, sorted={sorted}")
        return helper.make_node("TopK", [X, K], list(outputs), name=name or None, axis=axis)
    return helper.make_node("TopK", [X, K], list(outputs), name=name or None, axis=axis, largest=largest, sorted=sorted)


def sorted_versions() -> list[int]:
    return sorted(TOP_K_VERSIONS)


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
    opsets += [helper.make_opsetid(d, SCHEMA_VERSION) for d in (OPENVINO_DOMAIN, NCNN_DOMAIN) if d in domains]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=IR_VERSION, producer_name="ortops")
    onnx.checker.check_model(model, full_check=True)
    return model


def _dims(rank: int, prefix: str) -> list[str]:
    return [f"{prefix}{i}" for i in range(rank)]


def top_k_model(data_type: int, rank: int, *, axis: int, mode: str, sort: str, stable: int = 0,
                index_element_type: str = "i32", k_type: int = TensorProto.INT64, k_shape: Sequence[int] = (1,)) -> onnx.ModelProto:
    """Model ``(data, k) -> (values, indices)`` with one ortops TopK node."""
    index_type = TensorProto.INT64 if index_element_type == "i64" else TensorProto.INT32
    node = top_k("data", "k", axis=axis, mode=mode, sort=sort, stable=stable,
                 index_element_type=index_element_type, name="top_k")
    out_dims = [None] * rank
    return make_model(
        [node],
        [("data", data_type, _dims(rank, "d")), ("k", k_type, list(k_shape))],
        [("values", data_type, out_dims), ("indices", index_type, out_dims)],
    )


def onnx_top_k_model(version: int, data_type: int, rank: int, *, axis: int = -1, largest: int = 1, sorted: int = 1,
                     k: int | None = None) -> onnx.ModelProto:
    """Model with one standard TopK node: inputs ``(X, K)``, or ``(X,)`` for TopK-1."""
    K = None if version == 1 else "K"
    node = onnx_top_k(version, "X", K, axis=axis, largest=largest, sorted=sorted, k=k, name=f"onnx_top_k_{version}")
    inputs = [("X", data_type, _dims(rank, "d"))] + ([] if K is None else [("K", TensorProto.INT64, [1])])
    out_dims = [None] * rank
    return make_model([node], inputs, [("Values", data_type, out_dims), ("Indices", TensorProto.INT64, out_dims)],
                      onnx_opset=TOP_K_VERSIONS[version])


def top_k_side_by_side(version: int, data_type: int, rank: int, *, k: int, axis: int, mode: str, sort: str,
                       stable: int = 0, index_element_type: str = "i32") -> onnx.ModelProto:
    """One input ``data`` feeding the ortops TopK and the standard TopK-``version``.

    ``k`` is a constant (TopK-1 needs it as an attribute). Outputs: ``values``, ``indices``
    (ortops) and ``onnx_values``, ``onnx_indices`` (standard). The mapping: mode max/min is
    ``largest`` 1/0 (TopK-1/10 have no ``largest``: pass mode="max"); the standard node is
    always ``sorted=1``.
    """
    largest = 1 if mode == "max" else 0
    if version in (1, 10) and not largest:
        raise ValueError(f"TopK-{version} has no largest attribute, so it cannot map mode='min'")
    k_init = helper.make_tensor("k", TensorProto.INT64, [1], [k])
    custom = top_k("data", "k", axis=axis, mode=mode, sort=sort, stable=stable,
                   index_element_type=index_element_type, name="ortops_top_k")
    standard = onnx_top_k(version, "data", None if version == 1 else "k", axis=axis, largest=largest, sorted=1,
                          k=k if version == 1 else None, outputs=("onnx_values", "onnx_indices"),
                          name=f"onnx_top_k_{version}")
    index_type = TensorProto.INT64 if index_element_type == "i64" else TensorProto.INT32
    out_dims = [None] * rank
    return make_model(
        [custom, standard],
        [("data", data_type, _dims(rank, "d"))],
        [("values", data_type, out_dims), ("indices", index_type, out_dims),
         ("onnx_values", data_type, out_dims), ("onnx_indices", TensorProto.INT64, out_dims)],
        onnx_opset=TOP_K_VERSIONS[version],
        initializers=[k_init],
    )
