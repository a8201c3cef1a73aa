"""``ortops.openvino::ScatterElementsUpdate`` -> ``opset12.scatter_elements_update``: the OpenVINO ONNX-frontend conversion (see :mod:`ortops.interop.openvino`)."""

from __future__ import annotations


from ...interop.openvino import attributes
from .spec import SCATTER_ELEMENTS_UPDATE

__all__ = ["convert"]


def convert(ctx) -> list:
    from openvino import opset12 as ops

    attrs = attributes(ctx, SCATTER_ELEMENTS_UPDATE)
    data, indices, updates, axis = (ctx.get_input(i) for i in range(4))
    node = ops.scatter_elements_update(data, indices, updates, axis, reduction=attrs["reduction"],
                                       use_init_val=bool(attrs["use_init_val"]))
    return node.outputs()
