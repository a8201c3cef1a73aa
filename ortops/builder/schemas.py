"""ONNX schemas for the ortops domains, so that ``onnx.checker`` and shape inference accept
and type our nodes. Registered once, explicitly, by :func:`register_schemas`, from each op's
specification (:data:`ortops.ops.OPS`): its inputs, outputs, type table, attributes and
shape inference.

onnx's schema registry is process-wide state owned by onnx; this module adds to it, once.
"""

from __future__ import annotations

import onnx
from onnx import defs
from onnx.defs import OpSchema

from .. import runtime
from ..ops import OPS
from ..ops.spec import AttrDef, OpSpec

__all__ = ["register_schemas", "SCHEMA_VERSION"]

#: Opset version of the ``ortops.openvino`` and ``ortops.ncnn`` domains.
SCHEMA_VERSION = 1

_lock = runtime.Lock()  # released in a forked child
_done = False


def _attribute(attr: AttrDef) -> OpSchema.Attribute:
    kind = OpSchema.AttrType.INT if attr.kind == "int" else OpSchema.AttrType.STRING
    if attr.required:
        return OpSchema.Attribute(attr.name, kind, attr.doc, required=True)
    default = onnx.helper.make_attribute(attr.name, attr.default)
    return OpSchema.Attribute(attr.name, default, attr.doc)


def schema(op: OpSpec) -> OpSchema:
    """The ONNX ``OpSchema`` of one op spec."""
    constraints = [(t.name, [f"tensor({n})" for n in (t.schema_types or t.types)], t.doc) for t in op.type_params]
    result = OpSchema(
        op.op_type,
        op.domain,
        SCHEMA_VERSION,
        f"{op.spec} semantics, run in ONNX Runtime by ortops.",
        inputs=[OpSchema.FormalParameter(n, t) for n, t in zip(op.inputs, op.input_types, strict=True)],
        outputs=[OpSchema.FormalParameter(n, t) for n, t in zip(op.outputs, op.output_types, strict=True)],
        type_constraints=constraints,
        attributes=[_attribute(a) for a in op.attrs],
    )
    if op.infer_shapes is not None:
        result.set_type_and_shape_inference_function(op.infer_shapes)
    return result


def register_schemas() -> None:
    """Register the ONNX schema of every op in :data:`ortops.ops.OPS`. Idempotent and
    thread-safe; the builder calls it."""
    global _done
    if _done:
        return
    with _lock:
        if _done:
            return
        # onnx.reference builds a table of every schema when first imported and refuses two
        # ops with one name in different domains (ours: ArgMax, TopK). Build it before ours
        # exist, so that onnx.reference (and ONNX's backend test collection) keeps working.
        import onnx.reference.op_run  # noqa: F401

        for op in OPS:
            if not defs.has(op.op_type, SCHEMA_VERSION, op.domain):
                defs.register_schema(schema(op))
        _done = True
