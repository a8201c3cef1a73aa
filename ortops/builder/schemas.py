"""ONNX schemas for the ortops domains, so that ``onnx.checker`` and shape inference accept
and type our nodes. Registered once, explicitly, by :func:`register_schemas`."""

from __future__ import annotations

import threading

import onnx
from onnx import defs
from onnx.defs import OpSchema

from ..opdefs import OPS, AttrDef, OpDef

__all__ = ["register_schemas", "SCHEMA_VERSION"]

#: Opset version of the ``ortops.openvino`` and ``ortops.ncnn`` domains.
SCHEMA_VERSION = 1

_INTEGERS = [f"tensor({t})" for t in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")]
_NUMERIC = ["tensor(float)", "tensor(double)", "tensor(float16)", "tensor(bfloat16)", *_INTEGERS]
_TYPE_CONSTRAINTS = {
    "TopK": [("T", _NUMERIC, "any numeric type"), ("T_K", _INTEGERS, "any integer type"),
             ("T_IND", ["tensor(int32)", "tensor(int64)"], "chosen by index_element_type")],
    "ScatterElementsUpdate": [("T", [*_NUMERIC, "tensor(bool)"], "numeric or bool"),
                              ("T_IND", _INTEGERS, "any integer type"), ("T_AXIS", _INTEGERS, "any integer type")],
    # Permissive on purpose: ortops.prepare_model names the node when the input is not float32.
    "ArgMax": [("T", _NUMERIC, "float32 in ncnn"), ("T_OUT", ["tensor(float)"], "float32")],
}
_INPUT_TYPES = {"TopK": ("T", "T_K"), "ScatterElementsUpdate": ("T", "T_IND", "T", "T_AXIS"), "ArgMax": ("T",)}
_OUTPUT_TYPES = {"TopK": ("T", "T_IND"), "ScatterElementsUpdate": ("T",), "ArgMax": ("T_OUT",)}

_lock = threading.Lock()
_done = False


def _attribute(attr: AttrDef) -> OpSchema.Attribute:
    kind = OpSchema.AttrType.INT if attr.kind == "int" else OpSchema.AttrType.STRING
    if attr.required:
        return OpSchema.Attribute(attr.name, kind, attr.doc, required=True)
    default = onnx.helper.make_attribute(attr.name, attr.default)
    return OpSchema.Attribute(attr.name, default, attr.doc)


def _attr_value(ctx, name, default):
    proto = ctx.get_attribute(name)
    if proto is None:
        return default
    return onnx.helper.get_attribute_value(proto)


def _tensor_type(elem_type: int, dims) -> onnx.TypeProto:
    t = onnx.TypeProto()
    t.tensor_type.elem_type = elem_type
    if dims is not None:
        shape = t.tensor_type.shape
        for d in dims:
            dim = shape.dim.add()
            if isinstance(d, int):
                dim.dim_value = d
    return t


def _input_dims(ctx, i):
    t = ctx.get_input_type(i)
    if t is None or not t.tensor_type.HasField("shape"):
        return None
    return [d.dim_value if d.HasField("dim_value") else None for d in t.tensor_type.shape.dim]


def _constant_scalar(ctx, i):
    data = ctx.get_input_data(i)
    if data is None:
        return None
    values = onnx.numpy_helper.to_array(data).reshape(-1)
    return int(values[0]) if values.size == 1 else None


def _infer_top_k(ctx):
    data_type = ctx.get_input_type(0)
    if data_type is None:
        return
    dims = _input_dims(ctx, 0)
    if dims is not None:
        axis = _attr_value(ctx, "axis", None)
        if axis is not None and -len(dims) <= axis < len(dims):
            dims[axis] = _constant_scalar(ctx, 1)
        else:
            dims = None
    index_type = onnx.TensorProto.INT64 if _attr_value(ctx, "index_element_type", b"i32") in (b"i64", "i64") else onnx.TensorProto.INT32
    ctx.set_output_type(0, _tensor_type(data_type.tensor_type.elem_type, dims))
    ctx.set_output_type(1, _tensor_type(index_type, dims))


def _infer_scatter(ctx):
    data_type = ctx.get_input_type(0)
    if data_type is not None:
        ctx.set_output_type(0, data_type)


def _infer_arg_max(ctx):
    rows = 2 if _attr_value(ctx, "out_max_val", 0) else 1
    ctx.set_output_type(0, _tensor_type(onnx.TensorProto.FLOAT, [rows, _attr_value(ctx, "topk", 1)]))


_INFERENCE = {"TopK": _infer_top_k, "ScatterElementsUpdate": _infer_scatter, "ArgMax": _infer_arg_max}


def _schema(op: OpDef) -> OpSchema:
    schema = OpSchema(
        op.op_type,
        op.domain,
        SCHEMA_VERSION,
        f"{op.spec} semantics, run in ONNX Runtime by ortops.",
        inputs=[OpSchema.FormalParameter(n, t) for n, t in zip(op.inputs, _INPUT_TYPES[op.op_type])],
        outputs=[OpSchema.FormalParameter(n, t) for n, t in zip(op.outputs, _OUTPUT_TYPES[op.op_type])],
        type_constraints=_TYPE_CONSTRAINTS[op.op_type],
        attributes=[_attribute(a) for a in op.attrs],
    )
    schema.set_type_and_shape_inference_function(_INFERENCE[op.op_type])
    return schema


def register_schemas() -> None:
    """Register the ONNX schemas of TopK, ScatterElementsUpdate (``ortops.openvino``) and
    ArgMax (``ortops.ncnn``). Idempotent and thread-safe; the builder calls it."""
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
                defs.register_schema(_schema(op))
        _done = True


