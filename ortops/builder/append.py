"""Attach nodes to a real model: :func:`append_nodes`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..ops import DOMAINS
from .schemas import SCHEMA_VERSION, register_schemas

__all__ = ["append_nodes"]


def append_nodes(model: onnx.ModelProto, nodes: Sequence[onnx.NodeProto], *,
                 initializers: Mapping[str, np.ndarray | onnx.TensorProto] | None = None,
                 outputs: Sequence[str] | None = None, keep_outputs: bool = True,
                 check: bool = True) -> onnx.ModelProto:
    """A copy of ``model`` with ``nodes`` appended, their constants added and their results as outputs.

    Parameters
    ----------
    model : onnx.ModelProto
        The model to extend (left unchanged). Its external data may stay unloaded
        (``onnx.load(path, load_external_data=False)``): save the result next to the data files.
    nodes : sequence of onnx.NodeProto
        ortops nodes (``ortops.builder.top_k(...)``) or standard ones
        (``ortops.builder.onnx_top_k(...)``, ``onnx.helper.make_node(...)``), in order. Their inputs
        may name graph inputs, initializers, any tensor the graph computes, the outputs of earlier
        appended nodes, and ``initializers``.
    initializers : mapping of str to numpy.ndarray or onnx.TensorProto, optional
        Constants the nodes use, e.g. ``{"k": np.array([5], np.int64)}``.
    outputs : sequence of str, optional
        Tensors to add as graph outputs; default: every output of ``nodes``.
    keep_outputs : bool, default True
        Keep the model's own outputs (False: only ``outputs`` remain).
    check : bool, default True
        Run ``onnx.checker`` on the result (shape inference included).

    Returns
    -------
    onnx.ModelProto
        The model with the opset import of each ortops domain used (version
        :data:`ortops.builder.SCHEMA_VERSION`); each new output typed by ONNX shape inference where
        it knows the type.

    Raises
    ------
    ValueError
        A node input that names no tensor, a node output or initializer name already used in the
        graph, an ``outputs`` name that no node computes, or (``check``) a model the checker refuses,
        e.g. a standard node newer than the model's default-domain opset.
    """
    register_schemas()
    extended = onnx.ModelProto()
    extended.CopyFrom(model)
    graph = extended.graph
    available = {i.name for i in graph.input} | {t.name for t in graph.initializer}
    available |= {name for node in graph.node for name in node.output if name}
    for name, value in (initializers or {}).items():
        if name in available:
            raise ValueError(f"initializer {name!r} is already a tensor of the graph; choose another name")
        tensor = value if isinstance(value, onnx.TensorProto) else numpy_helper.from_array(np.asarray(value))
        graph.initializer.append(tensor)
        graph.initializer[-1].name = name  # on the appended copy: the caller's tensor keeps its name
        available.add(name)
    produced = []
    for node in nodes:
        for name in node.input:
            if name and name not in available:
                raise ValueError(f"node {node.name or node.op_type!r} reads {name!r}, which no graph input, "
                                 "initializer or node provides")
        for name in node.output:
            if name in available:
                raise ValueError(f"node {node.name or node.op_type!r} writes {name!r}, which the graph already has")
            if name:
                available.add(name)
                produced.append(name)
        graph.node.append(node)
    wanted = list(produced if outputs is None else outputs)
    unknown = [n for n in wanted if n not in produced and n not in available]
    if unknown:
        raise ValueError(f"outputs {unknown} are not tensors of the graph")
    if not keep_outputs:
        del graph.output[:]
    imported = {o.domain for o in extended.opset_import}
    for domain in dict.fromkeys(n.domain for n in nodes):
        if domain in DOMAINS and domain not in imported:
            extended.opset_import.append(helper.make_opsetid(domain, SCHEMA_VERSION))
    types = _types(extended)
    existing = {o.name for o in graph.output}
    for name in wanted:
        if name in existing:
            continue
        info = types.get(name)
        if info is not None and info.type.tensor_type.elem_type:
            graph.output.append(onnx.ValueInfoProto(name=name, type=info.type))
        else:
            graph.output.append(helper.make_empty_tensor_value_info(name))
    if check:
        try:
            onnx.checker.check_model(extended)
            onnx.shape_inference.infer_shapes(extended, check_type=True, strict_mode=True)
        except (onnx.checker.ValidationError, onnx.shape_inference.InferenceError) as exc:
            raise ValueError(f"the extended model is not valid ONNX: {exc}") from None
    return extended


def _types(model: onnx.ModelProto) -> dict[str, onnx.ValueInfoProto]:
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - untyped outputs still run
        return {}
    return {v.name: v for v in (*inferred.graph.value_info, *inferred.graph.output)}
