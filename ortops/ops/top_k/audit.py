"""How ``ortops compare`` audits TopK nodes: the standard ONNX ``TopK`` and ``ortops.openvino::TopK``.

Two runtimes' answers are judged by :func:`ortops.ops.selection.judge_selection`: both valid
top-k selections of the same data that differ only among equal values are a tie (topic ``ties``);
differing slices that hold NaN are topic ``nan``; anything else is unexplained.
"""

from __future__ import annotations

import numpy as np

from ...graph import attribute
from ...verdicts import Audit, Capture, Finding
from ..selection import judge_selection
from ..spec import OPENVINO_DOMAIN

__all__ = ["AUDITS"]


def _k(node, inputs) -> int | None:
    if len(inputs) > 1 and inputs[1] is not None:
        return int(np.asarray(inputs[1]).reshape(-1)[0])
    return attribute(node, "k")  # TopK-1


def _axis(node, data, default) -> int:
    axis = attribute(node, "axis", default)
    return axis + data.ndim if axis < 0 else axis


def _check_k(node, inputs) -> Finding | None:
    data = inputs[0]
    if data is None:
        return None
    k, axis = _k(node, inputs), attribute(node, "axis", -1)
    if not -data.ndim <= axis < data.ndim:
        return None
    size = data.shape[axis]
    if k is not None and not 1 <= k <= size:
        return Finding("k-range", True, f"k={k} is outside [1, {size}] for axis {axis} of shape {data.shape}")
    return None


def _classify(capture: Capture, *, largest: bool, ordered: str) -> Finding:
    data = np.asarray(capture.inputs[0])
    k = _k(capture.node, capture.inputs)
    axis = _axis(capture.node, data, -1)
    other = None if capture.other_inputs is None else capture.other_inputs[0]
    return judge_selection(data, axis, k, largest, [tuple(capture.base[:2]), tuple(capture.other[:2])],
                           (capture.base_runtime, capture.other_runtime), ordered=ordered, other_data=other,
                           atol=capture.atol, rtol=capture.rtol)


def _onnx(capture: Capture) -> Finding:
    node = capture.node
    ordered = "value" if attribute(node, "sorted", 1) else "none"
    return _classify(capture, largest=bool(attribute(node, "largest", 1)), ordered=ordered)


def _ortops(capture: Capture) -> Finding:
    node = capture.node
    return _classify(capture, largest=attribute(node, "mode") == "max", ordered=attribute(node, "sort", "value"))


AUDITS = {
    ("", "TopK"): Audit(_onnx, precheck=_check_k),
    (OPENVINO_DOMAIN, "TopK"): Audit(_ortops, precheck=_check_k),
}
