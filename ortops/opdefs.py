"""What each ortops operator is, as data: domain, inputs, outputs and attributes.

One definition serves the bridge's registrations, the ONNX schemas of the builder, the
load-time checks of :class:`ortops.InferenceSession`, and the kernels' attribute parsing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .errors import OpError

__all__ = [
    "AttrDef",
    "OpDef",
    "TOP_K",
    "SCATTER_ELEMENTS_UPDATE",
    "ARG_MAX",
    "OPS",
    "OPENVINO_DOMAIN",
    "NCNN_DOMAIN",
    "find_op",
]

OPENVINO_DOMAIN = "ortops.openvino"
NCNN_DOMAIN = "ortops.ncnn"

_REQUIRED = object()


@dataclass(frozen=True)
class AttrDef:
    """One attribute: its spec name, ONNX kind (``"int"`` or ``"string"``), default and range.

    ``default`` is ``_REQUIRED`` for a required attribute. ``choices`` lists the valid values
    (strings or ints); ``minimum`` bounds an int attribute from below.
    """

    name: str
    kind: str
    default: Any = _REQUIRED
    choices: tuple | None = None
    minimum: int | None = None
    doc: str = ""

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def valid_range(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.minimum is not None:
            return f"an integer >= {self.minimum}"
        return "an integer" if self.kind == "int" else "a string"


@dataclass(frozen=True)
class OpDef:
    """One custom operator: ``domain::op_type`` with its inputs, outputs and attributes."""

    domain: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[AttrDef, ...]
    spec: str

    @property
    def qualified_name(self) -> str:
        return f"{self.domain}::{self.op_type}"

    def parse_attributes(self, raw: Mapping[str, Any], node_name: str | None = None) -> dict:
        """Validate raw attribute values and fill in defaults.

        ``raw`` maps names to values as ONNX or the bridge hands them over: ints, strings or
        bytes; the bridge passes a missing attribute as ``""``. Unknown names are errors.

        Returns
        -------
        dict
            Every attribute of the op, by its spec name, with its typed value.

        Raises
        ------
        OpError
            For a missing required attribute, an unknown attribute, a value of the wrong type
            or outside its range.
        """
        known = {a.name for a in self.attrs}
        unknown = sorted(set(raw) - known)
        if unknown:
            raise OpError(
                self.op_type,
                f"unknown attribute(s) {unknown}; valid attributes are {sorted(known)}",
                node_name,
            )
        parsed = {}
        for attr in self.attrs:
            value = raw.get(attr.name, "")
            if isinstance(value, bytes):
                value = value.decode("utf-8", errors="replace")
            if isinstance(value, str) and value == "" and (attr.kind == "int" or attr.name not in raw):
                if attr.required:
                    raise OpError(
                        self.op_type,
                        f"required attribute {attr.name!r} is missing; it must be {attr.valid_range()}",
                        node_name,
                    )
                parsed[attr.name] = attr.default
                continue
            parsed[attr.name] = _typed(self.op_type, attr, value, node_name)
        return parsed


def _typed(op_type: str, attr: AttrDef, value: Any, node_name: str | None) -> Any:
    if attr.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, str) and value.lstrip("-").isdigit():
                value = int(value)
            else:
                raise OpError(
                    op_type, f"attribute {attr.name}={value!r} is not an integer; it must be {attr.valid_range()}",
                    node_name,
                )
        if attr.minimum is not None and value < attr.minimum:
            raise OpError(op_type, f"attribute {attr.name}={value} must be {attr.valid_range()}", node_name)
    elif not isinstance(value, str):
        raise OpError(
            op_type, f"attribute {attr.name}={value!r} is not a string; it must be {attr.valid_range()}", node_name
        )
    if attr.choices is not None and value not in attr.choices:
        raise OpError(op_type, f"attribute {attr.name}={value!r} is invalid; it must be {attr.valid_range()}", node_name)
    return value


TOP_K = OpDef(
    domain=OPENVINO_DOMAIN,
    op_type="TopK",
    inputs=("data", "k"),
    outputs=("values", "indices"),
    attrs=(
        AttrDef("axis", "int", doc="Axis of the slices; negative counts from the back."),
        AttrDef("mode", "string", choices=("max", "min"), doc="Select the largest or the smallest."),
        AttrDef("sort", "string", choices=("value", "index", "none"), doc="Order of the output."),
        AttrDef("stable", "int", 0, choices=(0, 1), doc="Keep the input order of equal values."),
        AttrDef("index_element_type", "string", "i32", choices=("i32", "i64"), doc="Type of indices."),
    ),
    spec="OpenVINO TopK-11",
)

SCATTER_ELEMENTS_UPDATE = OpDef(
    domain=OPENVINO_DOMAIN,
    op_type="ScatterElementsUpdate",
    inputs=("data", "indices", "updates", "axis"),
    outputs=("output",),
    attrs=(
        AttrDef(
            "reduction", "string", "none", choices=("none", "sum", "prod", "min", "max", "mean"),
            doc="How updates combine with the target element.",
        ),
        AttrDef("use_init_val", "int", 1, choices=(0, 1), doc="Whether data takes part in the reduction."),
    ),
    spec="OpenVINO ScatterElementsUpdate-12",
)

ARG_MAX = OpDef(
    domain=NCNN_DOMAIN,
    op_type="ArgMax",
    inputs=("data",),
    outputs=("output",),
    attrs=(
        AttrDef("out_max_val", "int", 0, choices=(0, 1), doc="Also output the values (row 0)."),
        AttrDef("topk", "int", 1, minimum=1, doc="How many of the largest elements to return."),
    ),
    spec="ncnn ArgMax layer (src/layer/argmax.cpp)",
)

OPS: tuple[OpDef, ...] = (TOP_K, SCATTER_ELEMENTS_UPDATE, ARG_MAX)


def find_op(domain: str, op_type: str) -> OpDef | None:
    """The ortops op ``domain::op_type``, or None when it is not one of ours."""
    for op in OPS:
        if op.domain == domain and op.op_type == op_type:
            return op
    return None
