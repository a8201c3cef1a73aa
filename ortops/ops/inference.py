"""Helpers for the ONNX type and shape inference functions of the op specs (``infer_shapes``)."""

from __future__ import annotations

import onnx

__all__ = ["attr_value", "input_dims", "constant_scalar"]


def attr_value(ctx, name, default):
    """The value of attribute ``name`` of the node being inferred, or ``default``."""
    proto = ctx.get_attribute(name)
    if proto is None:
        return default
    return onnx.helper.get_attribute_value(proto)


def input_dims(ctx, i):
    """The known dims of input ``i`` (None for unknown sizes), or None for an unknown rank."""
    t = ctx.get_input_type(i)
    if t is None or not t.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]


def constant_scalar(ctx, i):
    """The one integer of constant input ``i``, or None when it is not a known 1-element tensor."""
    data = ctx.get_input_data(i)
    if data is None:
        return None
    values = onnx.numpy_helper.to_array(data).reshape(-1)
    return int(values[0]) if values.size == 1 else None
