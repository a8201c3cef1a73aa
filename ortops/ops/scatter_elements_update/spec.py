"""``ortops.openvino::ScatterElementsUpdate``: OpenVINO ScatterElementsUpdate-12, as data: the
spec alone, which its layers import; :data:`ortops.ops.OPS` holds it with them (``__init__.py``)."""

from __future__ import annotations

from ... import dtypes
from .divergences import DIVERGENCES
from ..spec import OPENVINO_DOMAIN, RAW_INDEX_TYPES, AttrDef, Carrier, OpSpec, TypeParam

__all__ = ["SCATTER_ELEMENTS_UPDATE", "REDUCTIONS"]

#: The values of the ``reduction`` attribute.
REDUCTIONS = ("none", "sum", "prod", "min", "max", "mean")


def _infer(ctx) -> None:
    data_type = ctx.get_input_type(0)
    if data_type is not None:
        ctx.set_output_type(0, data_type)


SCATTER_ELEMENTS_UPDATE = OpSpec(
    domain=OPENVINO_DOMAIN,
    op_type="ScatterElementsUpdate",
    inputs=("data", "indices", "updates", "axis"),
    outputs=("output",),
    attrs=(
        AttrDef("reduction", "string", "none", choices=REDUCTIONS, doc="How updates combine with the target element."),
        AttrDef("use_init_val", "int", 1, choices=(0, 1), doc="Whether data takes part in the reduction."),
    ),
    spec="OpenVINO ScatterElementsUpdate-12",
    input_types=("T", "T_IND", "T", "T_AXIS"),
    output_types=("T",),
    type_params=(
        TypeParam("T", dtypes.names((*dtypes.NUMERIC_TYPES, dtypes.from_name("bool"), *dtypes.CARRIED_TYPES)),
                  "a numeric type or bool"),
        # The private registrations take indices and axis as int64 or uint64 only: prepare_model
        # casts the narrower integer types to int64 (exact), and uint64 stays (int64 would wrap
        # an index above 2**63 to a negative one, which is a valid index: silently wrong).
        TypeParam("T_IND", dtypes.names(dtypes.INTEGER_TYPES), "an integer type",
                  private_types=dtypes.names(dtypes.WIDE_INTEGER_TYPES),
                  raw_types=RAW_INDEX_TYPES),
        TypeParam("T_AXIS", dtypes.names(dtypes.INTEGER_TYPES), "an integer type",
                  private_types=dtypes.names(dtypes.WIDE_INTEGER_TYPES),
                  raw_types=RAW_INDEX_TYPES),
    ),
    # float64 holds a sum or mean exactly enough to round once, back to the original type.
    carrier=Carrier(via="double", inputs=(0, 2), rounds=True),
    infer_shapes=_infer,
    divergences=DIVERGENCES,
)
