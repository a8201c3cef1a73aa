"""``ortops.ncnn::ArgMax``: ncnn's ArgMax layer (src/layer/argmax.cpp), as data: the spec alone,
which its layers import; :data:`ortops.ops.OPS` holds it with them (``__init__.py``)."""

from __future__ import annotations

import onnx
from onnx.helper import make_tensor_type_proto

from ... import dtypes
from ..inference import attr_value
from .divergences import DIVERGENCES
from ..spec import NCNN_DOMAIN, AttrDef, OpSpec, TypeParam

__all__ = ["ARG_MAX"]


def _infer(ctx) -> None:
    rows = 2 if attr_value(ctx, "out_max_val", 0) else 1
    ctx.set_output_type(0, make_tensor_type_proto(onnx.TensorProto.FLOAT, [rows, attr_value(ctx, "topk", 1)]))


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
    divergences=DIVERGENCES,
)
