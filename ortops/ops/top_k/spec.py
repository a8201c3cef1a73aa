"""``ortops.openvino::TopK``: OpenVINO TopK-11, as data: the spec alone, which its layers import;
:data:`ortops.ops.OPS` holds it with them (``__init__.py``)."""

from __future__ import annotations

from onnx.helper import make_tensor_type_proto

from ... import dtypes
from ..inference import attr_value, constant_scalar, input_dims
from .checks import INDEX_ELEMENT_TYPES
from .divergences import DIVERGENCES
from ..spec import OPENVINO_DOMAIN, RAW_INDEX_TYPES, AttrDef, Carrier, OpSpec, TypeParam, Variant

__all__ = ["TOP_K", "INDEX_ELEMENT_TYPES"]

#: index_element_type -> the ONNX name of the indices' type.
_INDEX_TYPES = {name: dtypes.from_numpy(dtype).name for name, dtype in INDEX_ELEMENT_TYPES.items()}


def _infer(ctx) -> None:
    data_type = ctx.get_input_type(0)
    if data_type is None:
        return
    dims = input_dims(ctx, 0)
    if dims is not None:
        axis = attr_value(ctx, "axis", None)
        if axis is not None and -len(dims) <= axis < len(dims):
            dims[axis] = constant_scalar(ctx, 1)
        else:
            dims = None
    index_type = attr_value(ctx, "index_element_type", "i32")
    index_type = index_type.decode() if isinstance(index_type, bytes) else index_type
    index_row = dtypes.from_name(_INDEX_TYPES.get(index_type, _INDEX_TYPES["i32"]))
    ctx.set_output_type(0, make_tensor_type_proto(data_type.tensor_type.elem_type, dims))
    ctx.set_output_type(1, make_tensor_type_proto(index_row.onnx, dims))


TOP_K = OpSpec(
    domain=OPENVINO_DOMAIN,
    op_type="TopK",
    inputs=("data", "k"),
    outputs=("values", "indices"),
    attrs=(
        AttrDef("axis", "int", doc="Axis of the slices; negative counts from the back.", axis_of="data"),
        AttrDef("mode", "string", choices=("max", "min"), doc="Select the largest or the smallest."),
        AttrDef("sort", "string", choices=("value", "index", "none"), doc="Order of the output."),
        AttrDef("stable", "int", 0, choices=(0, 1), doc="Keep the input order of equal values."),
        AttrDef("index_element_type", "string", "i32", choices=tuple(_INDEX_TYPES), doc="Type of indices."),
    ),
    spec="OpenVINO TopK-11",
    input_types=("T", "T_K"),
    output_types=("T", "T_IND"),
    type_params=(
        TypeParam("T", dtypes.names((*dtypes.NUMERIC_TYPES, *dtypes.CARRIED_TYPES)), "a numeric type"),
        # The private registrations take k as int64 or uint64 only: prepare_model casts the
        # narrower integer types to int64 (exact), and uint64 stays (a cast would wrap it).
        TypeParam("T_K", dtypes.names(dtypes.INTEGER_TYPES), "an integer type",
                  private_types=dtypes.names(dtypes.WIDE_INTEGER_TYPES),
                  raw_types=RAW_INDEX_TYPES),
        TypeParam("T_IND", tuple(_INDEX_TYPES.values()), "chosen by index_element_type"),
    ),
    # float32 keeps TopK exact: every float16/bfloat16 value is a float32 value, and the
    # indices come from the original order.
    carrier=Carrier(via="float", inputs=(0,)),
    variants=tuple(Variant(f"_{name}", (("index_element_type", name),), (("T_IND", (t,)),))
                   for name, t in _INDEX_TYPES.items()),
    infer_shapes=_infer,
    divergences=DIVERGENCES,
    session_path="lowered",
)
