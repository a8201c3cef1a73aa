"""ortops' operators, one folder each, and the list the shared layers loop over.

What an op folder holds (spec, checks, reference, kernel, builder, OpenVINO conversion, lowering,
divergences, cases, the one judge, bench), and how the tool layers reach it through typing
Protocols, is in docs/architecture.md. Adding an op is one new folder plus one line in :data:`OPS`
and one in :data:`ortops.ops.tooling.TOOLING` (the layers that prove it, which import the core
that loops over OPS, so they are not listed here).
"""

from __future__ import annotations

from .arg_max import ARG_MAX
from .scatter_elements_update import SCATTER_ELEMENTS_UPDATE
from .spec import NCNN_DOMAIN, OPENVINO_DOMAIN, AttrDef, OpSpec
from .top_k import TOP_K

__all__ = ["OPS", "DOMAINS", "TOP_K", "SCATTER_ELEMENTS_UPDATE", "ARG_MAX", "OPENVINO_DOMAIN", "NCNN_DOMAIN",
           "AttrDef", "OpSpec", "find_op", "by_name"]

#: Every op ortops provides.
OPS: tuple[OpSpec, ...] = (TOP_K, SCATTER_ELEMENTS_UPDATE, ARG_MAX)
#: The ONNX domains ortops owns.
DOMAINS: tuple[str, ...] = tuple(dict.fromkeys(op.domain for op in OPS))


def find_op(domain: str, op_type: str) -> OpSpec | None:
    """The ortops op ``domain::op_type``, or None when it is not one of ours."""
    return next((op for op in OPS if (op.domain, op.op_type) == (domain, op_type)), None)


def by_name(op_type: str) -> OpSpec:
    """The op whose type is ``op_type`` (e.g. a conformance case's ``op``); KeyError if none."""
    ops = {op.op_type: op for op in OPS}
    if op_type not in ops:
        raise KeyError(f"{op_type!r} is not an ortops op; the ops are {list(ops)}")
    return ops[op_type]
