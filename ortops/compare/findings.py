"""The shapes an op's audit (``ortops/ops/<op>/audit.py``) works with.

Each op folder's ``audit.py`` has ``AUDITS``: a dict from ``(domain, op_type)`` (``""`` for
standard ONNX ops) to an :class:`Audit`. :mod:`ortops.compare.audit` collects them by looping
over :data:`ortops.ops.OPS`; nothing asks an op its name.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np
import onnx

from ..verdicts import Capture, Finding

__all__ = ["Audit", "Capture", "Finding", "attribute"]


class Audit(NamedTuple):
    """How one op type is audited.

    classify(capture) -> Finding : why the outputs differ (called only when they do, on equal inputs).
    applies(node) -> bool : whether this node's semantics can split runtimes (default: always).
    precheck(node, inputs) -> Finding or None : a problem visible in the inputs alone (k outside
        its range, an out-of-range index), used to explain a runtime that failed or crashed.
    """

    classify: Callable[[Capture], Finding]
    applies: Callable[[onnx.NodeProto], bool] | None = None
    precheck: Callable[[onnx.NodeProto, Sequence[np.ndarray | None]], Finding | None] | None = None


def attribute(node: onnx.NodeProto, name: str, default=None):
    """The value of the node's attribute ``name`` (strings decoded), or ``default``."""
    for attr in node.attribute:
        if attr.name == name:
            value = onnx.helper.get_attribute_value(attr)
            return value.decode() if isinstance(value, bytes) else value
    return default
