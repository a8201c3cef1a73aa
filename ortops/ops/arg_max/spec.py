"""``ortops.ncnn::ArgMax``: ncnn's ArgMax layer (src/layer/argmax.cpp), as data."""

from __future__ import annotations

from types import SimpleNamespace

import onnx
from onnx.helper import make_tensor_type_proto

from ... import dtypes
from ..inference import attr_value
from .divergences import DIVERGENCES
from ..spec import NCNN_DOMAIN, AttrDef, Deferred, OpSpec, TypeParam

__all__ = ["ARG_MAX"]


def _infer(ctx) -> None:
    rows = 2 if attr_value(ctx, "out_max_val", 0) else 1
    ctx.set_output_type(0, make_tensor_type_proto(onnx.TensorProto.FLOAT, [rows, attr_value(ctx, "topk", 1)]))


# The layers on the path of a session, each imported alone on first use, then the others together:
# plain relative imports of layers that import the core holding this spec (links that
# tests/test_structure.py allows, and no other upward import).
def _kernel():
    from .kernel import arg_max
    return arg_max


def _lowering():
    from . import lowering
    return lowering


def _session_path(attrs: dict, shape: tuple | None, elem_type: int) -> str:
    return _lowering().session_path(attrs["topk"], shape, elem_type)


def _layers():
    from . import bench, cases, judge, openvino, reference
    return SimpleNamespace(bench=bench, cases=cases, judge=judge, openvino=openvino, reference=reference)


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
    reference=Deferred(lambda: _layers().reference.arg_max),
    kernel=Deferred(_kernel),
    openvino=Deferred(lambda: _layers().openvino.convert),
    cases=lambda: _layers().cases,
    judge=lambda: _layers().judge,
    bench=lambda: _layers().bench,
    lowering=_lowering,
    divergences=DIVERGENCES,
    session_path=_session_path,
)
