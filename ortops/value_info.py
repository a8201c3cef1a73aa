"""What the checks and rewrites of a model know of its values: :class:`ValueInfo` (element
types, ranks, shapes and constants, from one run of onnx's shape inference) and the checks of an
ortops node against its op's type table and axis attributes. :func:`ortops.prepare_model` and
:func:`ortops.lower` both use them."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import numpy_helper

from . import dtypes
from .checks import normalize_axis
from .errors import OpError
from .graph import DEFAULT_DOMAINS, graphs
from .ops.spec import OpSpec

__all__ = ["ValueInfo", "check_input_types", "check_axes", "CARRIED_ELEM_TYPES"]

#: The ONNX element types an op takes only through its carrier (float16, bfloat16).
CARRIED_ELEM_TYPES = frozenset(t.onnx for t in dtypes.CARRIED_TYPES)


class ValueInfo:
    """Element types, ranks, shapes and constant values of every value of a model, subgraphs
    too, from one run of onnx's shape inference (what the model declares, where it fails)."""

    def __init__(self, model: onnx.ModelProto):
        try:
            inferred = onnx.shape_inference.infer_shapes(model)
        except Exception:  # noqa: BLE001 - fall back to what the model declares
            inferred = model
        self._types: dict[str, tuple[int, int | None]] = {}
        self._shapes: dict[str, tuple] = {}
        self._constants: dict[str, onnx.TensorProto] = {}  # converted on demand: weights can be GiB
        for graph in graphs(inferred.graph):
            # From IR 4, an initializer that is also a graph input is a default the caller may feed
            # over; in IR 3 every initializer is a graph input, and a constant.
            inputs = {i.name for i in graph.input} if model.ir_version >= 4 else set()
            for init in (t for t in graph.initializer if t.name not in inputs):
                self._types[init.name] = (init.data_type, len(init.dims))
                self._shapes[init.name] = tuple(init.dims)
                self._constants[init.name] = init
            for info in (*graph.input, *graph.value_info, *graph.output):
                if info.type.HasField("tensor_type"):
                    t = info.type.tensor_type
                    rank = len(t.shape.dim) if t.HasField("shape") else None
                    self._types.setdefault(info.name, (t.elem_type, rank))
                    if rank is not None:
                        self._shapes.setdefault(info.name, tuple(d.dim_value if d.HasField("dim_value") else None
                                                                 for d in t.shape.dim))
            for node in graph.node:
                if node.op_type == "Constant" and node.domain in DEFAULT_DOMAINS and node.attribute \
                        and node.attribute[0].name == "value":
                    self._constants[node.output[0]] = node.attribute[0].t

    def elem_type(self, name: str) -> int:
        return self._types.get(name, (0, None))[0]

    def elem_types(self) -> dict[str, int]:
        return {name: elem for name, (elem, _) in self._types.items()}

    def rank(self, name: str) -> int | None:
        return self._types.get(name, (0, None))[1]

    def shape(self, name: str) -> tuple | None:
        return self._shapes.get(name)

    def constant(self, name: str) -> np.ndarray | None:
        """The value of a constant (an initializer that is no graph input, or a Constant node's),
        or None when ``name`` is not one or its data is not in the model (external data left in
        its file)."""
        tensor = self._constants.get(name)
        if tensor is None or tensor.data_location == onnx.TensorProto.EXTERNAL:
            return None
        return numpy_helper.to_array(tensor)


def check_input_types(node: onnx.NodeProto, op: OpSpec, types: dict[str, int], subgraph: bool) -> list[int]:
    """The element type of each input, checked against the op's type table: inputs of one
    type parameter must agree, and float16/bfloat16 need the op's carrier.

    At top level every input type must be known. In a subgraph an input whose type neither is
    declared nor can be inferred is left to ORT (0 in the result), and then no input is
    checked here: no registration takes float16/bfloat16, so ORT refuses such a model at
    load, cleanly, before the op can run (see :func:`ortops.session.prepare_model` for the op type it gets).
    """
    found = [types.get(name, 0) for name in node.input]
    if subgraph and 0 in found:
        return found
    for role, name, elem_type in zip(op.inputs, node.input, found):
        if elem_type == 0:
            raise OpError(op.op_type, f"the element type of input {role!r} ({name!r}) cannot be inferred", node.name,
                          kind="dtype")
    first: dict[str, tuple[str, int]] = {}
    for role, param, elem_type in zip(op.inputs, op.input_types, found):
        if param in first:
            other_role, other = first[param]
            if elem_type != other:
                raise OpError(op.op_type, f"input {role!r} has type {dtypes.onnx_name(elem_type)}; it must match "
                              f"{other_role}'s {dtypes.onnx_name(other)}", node.name, kind="dtype")
            continue
        first[param] = (role, elem_type)
        table = op.type_param(param)
        accepted = {dtypes.from_name(n).onnx for n in table.types}
        if op.carrier is None:
            accepted -= CARRIED_ELEM_TYPES
        if elem_type not in accepted:
            raise OpError(op.op_type, f"input {role!r} has type {dtypes.onnx_name(elem_type)}; it must be "
                          f"{table.doc}", node.name, kind="dtype")
    return found


def check_axes(node: onnx.NodeProto, op: OpSpec, attrs: dict, info: ValueInfo) -> None:
    """OpError (kind ``"axis"``) for an axis attribute outside ``[-rank, rank - 1]`` of the
    input it indexes (:attr:`ortops.ops.spec.AttrDef.axis_of`), where that input's rank is known."""
    for attr in op.attrs:
        if attr.axis_of is None:
            continue
        rank = info.rank(node.input[op.inputs.index(attr.axis_of)])
        if rank is not None:
            normalize_axis(op.op_type, attrs[attr.name], rank, node.name, what=attr.name)
