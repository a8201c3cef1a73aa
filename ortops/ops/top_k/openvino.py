"""``ortops.openvino::TopK`` -> ``opset11.topk``: the OpenVINO ONNX-frontend conversion (see :mod:`ortops.interop.openvino`)."""

from __future__ import annotations

import numpy as np

__all__ = ["convert"]


def convert(ctx, attrs: dict) -> list:
    import openvino as ov
    from openvino import opset11 as ops

    data, k = ctx.get_input(0), ctx.get_input(1)
    scalar_shape = ov.op.Constant(np.array([], np.int64))  # opset's constant() refuses an empty array
    k = ops.reshape(k, scalar_shape, special_zero=False)  # [] or [1] -> scalar
    # OpenVINO's spec: stable "takes effect only if sort is set to value or index", and its core
    # refuses stable=true with sort=none; with sort=none the order is undefined either way.
    stable = bool(attrs["stable"]) and attrs["sort"] != "none"
    node = ops.topk(data, k, axis=attrs["axis"], mode=attrs["mode"], sort=attrs["sort"],
                    index_element_type=attrs["index_element_type"], stable=stable)
    return node.outputs()
