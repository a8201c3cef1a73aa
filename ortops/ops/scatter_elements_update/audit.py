"""How ``ortops compare`` audits scatters: ``ScatterElements``, ``ScatterND`` and
``ortops.openvino::ScatterElementsUpdate``.

Where two runtimes' outputs differ, each differing element is traced to the updates that target
it. The difference is explained when every differing element is the target of several updates
(duplicate indices: the order of ``reduction="none"`` is undefined, float sums and products depend
on the order of accumulation, an integer mean is rounded differently), or saw a NaN. An index
outside [-d, d-1] is reported by the precheck (OpenVINO's CPU plugin writes out of bounds there).
"""

from __future__ import annotations

import numpy as np

from ...arrays import equal
from ...graph import attribute
from ...verdicts import Audit, Capture, Finding
from ..spec import OPENVINO_DOMAIN

__all__ = ["AUDITS"]


def _elements_targets(data, indices, axis) -> np.ndarray:
    """The flat target of each update of ScatterElements(Update)."""
    axis = axis + data.ndim if axis < 0 else axis
    idx = np.asarray(indices).astype(np.int64)
    idx = np.where(idx < 0, idx + data.shape[axis], idx)
    grid = list(np.indices(idx.shape, sparse=False))
    grid[axis] = idx
    return np.ravel_multi_index(tuple(grid), data.shape).reshape(-1)


def _nd_targets(data, indices) -> np.ndarray:
    """The flat index of the first element of each slice ScatterND writes."""
    idx = np.asarray(indices).astype(np.int64)
    q = idx.shape[-1]
    rows = idx.reshape(-1, q)
    rows = np.where(rows < 0, rows + np.array(data.shape[:q]), rows)
    return np.ravel_multi_index(tuple(rows.T), data.shape[:q])


def _judge(capture: Capture, targets: np.ndarray, slice_shape: tuple, reduction: str, updates) -> Finding:
    data = np.asarray(capture.inputs[0])
    base, other = np.asarray(capture.base[0]), np.asarray(capture.other[0])
    if base.shape != other.shape or base.shape != data.shape:
        return Finding(None, False, f"output shapes {base.shape} and {other.shape} differ from the data's {data.shape}")
    lead = data.shape[:data.ndim - len(slice_shape)]
    differ = ~equal(base, other).reshape(int(np.prod(lead, dtype=np.int64)), -1).any(axis=1)
    differ_at = np.flatnonzero(differ)
    counts = np.bincount(targets, minlength=differ.shape[0]) if targets.size else np.zeros(differ.shape[0], int)
    duplicated = counts[differ_at] > 1
    nan_at = np.zeros(differ.shape[0], bool)
    if data.dtype.kind == "f":
        nan_at |= np.isnan(data.reshape(differ.shape[0], -1)).any(axis=1)
        upd = np.asarray(updates).reshape(targets.shape[0], -1)
        np.logical_or.at(nan_at, targets, np.isnan(upd).any(axis=1))
    explained_nan = nan_at[differ_at]
    total = differ_at.size
    if not total:
        return Finding(None, True, "no element differs")
    if np.all(duplicated | explained_nan):
        n_dup, n_nan = int(duplicated.sum()), int((explained_nan & ~duplicated).sum())
        if n_dup == 0:
            return Finding("nan", True, f"NaN: all {total} differing targets saw a NaN")
        if reduction == "none":
            topic, what = "ties", "several updates write one element and the order of reduction='none' is undefined"
        elif reduction == "mean" and data.dtype.kind in "iu":
            topic, what = "integer-mean-rounding", "the integer mean of several updates is rounded"
        elif data.dtype.kind == "f" and reduction in ("add", "sum", "mul", "prod", "mean"):
            topic, what = "float-accumulation", f"float {reduction} of several updates depends on the accumulation"
        else:
            topic, what = "ties", f"{reduction} over several updates of one element"
        extra = f" ({n_nan} more saw a NaN)" if n_nan else ""
        return Finding(topic, True, f"duplicate scatter indices: {n_dup} of {total} differing targets receive "
                                    f"up to {int(counts[differ_at].max())} updates each; {what}{extra}")
    first = int(differ_at[~(duplicated | explained_nan)][0])
    return Finding(None, False, f"{int((~(duplicated | explained_nan)).sum())} of {total} differing targets have "
                                f"a single update and no NaN (first: flat target {first})")


def _elements(capture: Capture, axis: int, reduction: str) -> Finding:
    data, indices, updates = (np.asarray(a) for a in capture.inputs[:3])
    return _judge(capture, _elements_targets(data, indices, axis), (), reduction, updates)


def _scatter_elements(capture: Capture) -> Finding:
    return _elements(capture, attribute(capture.node, "axis", 0), attribute(capture.node, "reduction", "none"))


def _scatter_elements_update(capture: Capture) -> Finding:
    axis = int(np.asarray(capture.inputs[3]).reshape(-1)[0])
    return _elements(capture, axis, attribute(capture.node, "reduction", "none"))


def _scatter_nd(capture: Capture) -> Finding:
    data, indices, updates = (np.asarray(a) for a in capture.inputs[:3])
    q = indices.shape[-1]
    return _judge(capture, _nd_targets(data, indices), data.shape[q:], attribute(capture.node, "reduction", "none"),
                  updates)


def _check_indices(axis_of):
    def precheck(node, inputs) -> Finding | None:
        data, indices = inputs[0], inputs[1]
        if data is None or indices is None or not np.asarray(indices).size:
            return None
        axis = axis_of(node, inputs)
        if axis is None or not -data.ndim <= axis < data.ndim:
            return None
        dim = data.shape[axis]
        low, high = int(np.min(indices)), int(np.max(indices))
        if low < -dim or high > dim - 1:
            return Finding("out-of-range-indices", True,
                           f"index {low if low < -dim else high} is outside [{-dim}, {dim - 1}] for axis {axis}")
        return None

    return precheck


def _check_nd(node, inputs) -> Finding | None:
    data, indices = inputs[0], inputs[1]
    if data is None or indices is None or not np.asarray(indices).size:
        return None
    rows = np.asarray(indices).reshape(-1, np.asarray(indices).shape[-1])
    for axis in range(rows.shape[1]):
        dim = data.shape[axis]
        if rows[:, axis].min() < -dim or rows[:, axis].max() > dim - 1:
            return Finding("out-of-range-indices", True, f"an index of axis {axis} is outside [{-dim}, {dim - 1}]")
    return None


AUDITS = {
    ("", "ScatterElements"): Audit(_scatter_elements, precheck=_check_indices(lambda n, i: attribute(n, "axis", 0))),
    ("", "ScatterND"): Audit(_scatter_nd, precheck=_check_nd),
    (OPENVINO_DOMAIN, "ScatterElementsUpdate"): Audit(
        _scatter_elements_update,
        precheck=_check_indices(lambda n, i: None if i[3] is None else int(np.asarray(i[3]).reshape(-1)[0]))),
}
