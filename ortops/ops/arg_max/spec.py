"""``ortops.ncnn::ArgMax``: ncnn's ArgMax layer (src/layer/argmax.cpp), as data."""

from __future__ import annotations

import onnx

from ... import dtypes
from ..inference import attr_value, tensor_type
from ..spec import NCNN_DOMAIN, AttrDef, Deferred, OpSpec, TypeParam

__all__ = ["ARG_MAX"]


def _infer(ctx) -> None:
    rows = 2 if attr_value(ctx, "out_max_val", 0) else 1
    ctx.set_output_type(0, tensor_type(onnx.TensorProto.FLOAT, [rows, attr_value(ctx, "topk", 1)]))


ARG_MAX = OpSpec(
    domain=NCNN_DOMAIN,
    op_type="ArgMax",
    inputs=("data",),
    outputs=("output",),
    attrs=(
        AttrDef("out_max_val", "int", 0, choices=(0, 1), doc="Also output the values (row 0)."),
        AttrDef("topk", "int", 1, minimum=1, doc="How many of the largest elements to return."),
    ),
    spec="ncnn ArgMax layer (src/layer/argmax.cpp)",
    input_types=("T",),
    output_types=("T_OUT",),
    type_params=(
        # The schema takes any numeric type on purpose: ortops.prepare_model then refuses a
        # non-float32 input naming the node, instead of onnx's checker.
        TypeParam("T", ("float",), "float (ncnn ArgMax is float32-only)",
                  schema_types=dtypes.names((*dtypes.NUMERIC_TYPES, *dtypes.CARRIED_TYPES))),
        TypeParam("T_OUT", ("float",), "float32"),
    ),
    infer_shapes=_infer,
    reference=Deferred("ortops.ops.arg_max.reference", "arg_max"),
    kernel=Deferred("ortops.ops.arg_max.kernel", "arg_max"),
    openvino=Deferred("ortops.ops.arg_max.openvino", "convert"),
    conformance="ortops.ops.arg_max.conformance",
    oracle="ortops.ops.arg_max.oracle",
    bench="ortops.ops.arg_max.bench",
    lowering="ortops.ops.arg_max.lowering",
    session_path="pyop",

    ncnn="ortops.ops.arg_max.ncnn_oracle",
)
