"""``ortops.openvino::ScatterElementsUpdate`` -> ``opset12.scatter_elements_update``: the OpenVINO ONNX-frontend conversion (see :mod:`ortops.interop.openvino`)."""

from __future__ import annotations

__all__ = ["convert"]


def convert(ctx, attrs: dict) -> list:
    from openvino import opset12 as ops

    data, indices, updates, axis = (ctx.get_input(i) for i in range(4))
    node = ops.scatter_elements_update(data, indices, updates, axis, reduction=attrs["reduction"],
                                       use_init_val=bool(attrs["use_init_val"]))
    return node.outputs()
