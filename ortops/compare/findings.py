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

__all__ = ["Audit", "Capture", "Finding", "attribute"]


class Finding(NamedTuple):
    """Why two runtimes differ at a node: ``topic`` is a key of :data:`ortops.divergences.TOPICS`
    (None: no known topic), ``explained`` whether the data shows that topic causing the difference."""

    topic: str | None
    explained: bool
    detail: str


class Capture(NamedTuple):
    """One node's actual tensors: its inputs (as the baseline runtime computed them; None for an
    omitted optional input), and its outputs in the baseline and in the other runtime.

    ``other_inputs`` are the other runtime's inputs when they differ from the baseline's (within
    the tolerance ``atol``/``rtol``, else the node is not classified), None when bit-identical.
    """

    node: onnx.NodeProto
    inputs: Sequence[np.ndarray | None]
    base: Sequence[np.ndarray]
    other: Sequence[np.ndarray]
    base_runtime: str
    other_runtime: str
    other_inputs: Sequence[np.ndarray | None] | None = None  # None: bit-identical to ``inputs``
    atol: float = 0.0
    rtol: float = 0.0


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
