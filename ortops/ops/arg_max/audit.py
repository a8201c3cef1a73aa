"""How ``ortops compare`` audits arg-max nodes: the standard ``ArgMax``/``ArgMin`` and ``ortops.ncnn::ArgMax``.

Each answer is turned into a selection of one (or ``topk``) elements and judged by
:func:`ortops.ops.selection.judge_selection`: two valid answers that differ pick different
positions of equal values (topic ``ties``); NaN slices are topic ``nan``.
"""

from __future__ import annotations

import numpy as np

from ...graph import attribute
from ...verdicts import Audit, Capture, Finding
from ..selection import judge_selection
from ..spec import NCNN_DOMAIN

__all__ = ["AUDITS"]


def _standard(largest: bool):
    def classify(capture: Capture) -> Finding:
        node = capture.node
        data = np.asarray(capture.inputs[0])
        axis = attribute(node, "axis", 0)
        axis = axis + data.ndim if axis < 0 else axis
        other_data = None if capture.other_inputs is None else np.asarray(capture.other_inputs[0])
        answers = []
        for out, own in ((capture.base[0], data), (capture.other[0], data if other_data is None else other_data)):
            idx = np.asarray(out).astype(np.int64)
            if not attribute(node, "keepdims", 1):
                idx = np.expand_dims(idx, axis)
            if np.any(idx < 0) or np.any(idx >= data.shape[axis]):
                return Finding(None, False, f"an index is outside [0, {data.shape[axis] - 1}]")
            answers.append((np.take_along_axis(own, idx, axis), idx))
        what = "maximum" if largest else "minimum"
        return judge_selection(data, axis, 1, largest, answers, (capture.base_runtime, capture.other_runtime),
                               what=what, other_data=other_data, atol=capture.atol, rtol=capture.rtol)

    return classify


def _ncnn(capture: Capture) -> Finding:
    data = np.asarray(capture.inputs[0]).reshape(1, -1)
    topk = attribute(capture.node, "topk", 1)
    answers = []
    for out in (capture.base[0], capture.other[0]):
        out = np.asarray(out)
        idx = out[-1].astype(np.int64).reshape(1, -1)
        if np.any(idx < 0) or np.any(idx >= data.shape[1]):
            return Finding(None, False, f"an index is outside [0, {data.shape[1] - 1}]")
        answers.append((data[:, idx[0]].astype(data.dtype), idx))
    return judge_selection(data, 1, topk, True, answers, (capture.base_runtime, capture.other_runtime))


def _check_topk(node, inputs) -> Finding | None:
    data = inputs[0]
    topk = attribute(node, "topk", 1)
    if data is not None and not 1 <= topk <= data.size:
        return Finding("k-range", True, f"topk={topk} is outside [1, {data.size}] (the data's element count)")
    return None


AUDITS = {
    ("", "ArgMax"): Audit(_standard(True)),
    ("", "ArgMin"): Audit(_standard(False)),
    (NCNN_DOMAIN, "ArgMax"): Audit(_ncnn, precheck=_check_topk),
}
