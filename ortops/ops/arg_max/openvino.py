"""``ortops.ncnn::ArgMax`` -> an exact composition of OpenVINO operations: the OpenVINO ONNX-frontend conversion (see :mod:`ortops.interop.openvino`)."""

from __future__ import annotations

import numpy as np

from ...errors import OpError

__all__ = ["convert"]


_INT64_MIN = -(2**63)


def _scalar_i64(value: int):
    from openvino import opset11 as ops

    return ops.constant(np.array(value, np.int64))


def convert(ctx, attrs: dict) -> list:
    import openvino as ov
    from openvino import opset8, opset11 as ops

    data = ctx.get_input(0)
    if data.get_element_type() != ov.Type.f32:
        raise OpError("ArgMax", f"input 'data' has type {data.get_element_type().get_type_name()}; "
                      "ncnn ArgMax takes float32 only", kind="dtype")
    axis0 = ops.constant(np.array([0], np.int64))
    flat = ops.reshape(data, ops.constant(np.array([-1], np.int64)), special_zero=False)
    if attrs["topk"] == 1:  # the last position holding the maximum: a few cheap passes
        # the maximum from an unstable TopK (ReduceMax is no good: on all -inf OpenVINO CPU gives -3.4e38)
        values = ops.topk(flat, _scalar_i64(1), axis=0, mode="max", sort="value", index_element_type="i64",
                          stable=False).output(0)
        size = ops.reshape(ops.shape_of(flat, "i64"), ov.op.Constant(np.array([], np.int64)), special_zero=False)
        positions = ops.range(_scalar_i64(0), size, _scalar_i64(1), "i64")
        # a NaN maximum matches the NaNs, so the index stays valid
        is_top = ops.logical_or(ops.equal(flat, values), ops.logical_and(ops.is_nan(flat), ops.is_nan(values)))
        hits = ops.select(is_top, positions, _scalar_i64(-1))
        indices = ops.reduce_max(hits, axis0, keep_dims=True)
    else:  # TopK-11 stable on the reversed tensor: the lower reversed index is the higher original one
        reversed_ = opset8.slice(flat, np.array([-1], np.int64), np.array([_INT64_MIN], np.int64),
                                 np.array([-1], np.int64), np.array([0], np.int64))
        top = ops.topk(reversed_, _scalar_i64(attrs["topk"]), axis=0, mode="max", sort="value",
                       index_element_type="i64", stable=True)
        last = ops.subtract(ops.shape_of(flat, "i64"), ops.constant(np.array([1], np.int64)))
        values, indices = top.output(0), ops.subtract(last, top.output(1))  # i of the reversed is n-1-i
    indices = ops.convert(indices, "f32")
    rows = [values, indices] if attrs["out_max_val"] else [indices]
    rows = [ops.unsqueeze(row, axis0) for row in rows]
    output = rows[0] if len(rows) == 1 else ops.concat(rows, axis=0)
    return output.outputs()
