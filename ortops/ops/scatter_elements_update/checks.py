"""Validation of ScatterElementsUpdate's inputs: validate first, then compute (the reference and the kernel
both call it)."""

from __future__ import annotations

import numpy as np

from ...checks import normalize_axis, scalar_integer
from ...errors import OpError

__all__ = ["check_scatter_elements_update"]


def check_scatter_elements_update(
    data: np.ndarray,
    indices: np.ndarray,
    updates: np.ndarray,
    axis: np.ndarray,
    *,
    reduction: str,
    node_name: str | None = None,
) -> int:
    """Check ScatterElementsUpdate's inputs; return the axis normalised to [0, rank-1].

    Raises OpError for non-integer indices or axis, a rank or shape mismatch, an axis outside
    [-rank, rank-1], an index outside [-d, d-1] (d = data.shape[axis]), or mean on bool.
    """
    op = "ScatterElementsUpdate"
    if not np.issubdtype(indices.dtype, np.integer):
        raise OpError(op, f"input 'indices' has dtype {indices.dtype}; it must be an integer type", node_name,
                      kind="dtype")
    axis_value = scalar_integer(op, "axis", axis, node_name)
    if indices.ndim != data.ndim:
        raise OpError(
            op, f"indices has rank {indices.ndim} (shape {indices.shape}); it must equal the rank of data "
            f"{data.ndim} (shape {data.shape})", node_name, kind="shape",
        )
    if updates.shape != indices.shape:
        raise OpError(
            op, f"updates has shape {updates.shape}; it must equal the shape of indices {indices.shape}", node_name,
            kind="shape",
        )
    axis_value = normalize_axis(op, axis_value, data.ndim, node_name)
    for d, (n_idx, n_data) in enumerate(zip(indices.shape, data.shape)):
        if d != axis_value and n_idx > n_data:
            raise OpError(
                op, f"indices.shape[{d}]={n_idx} exceeds data.shape[{d}]={n_data} (shape {indices.shape} vs "
                f"{data.shape}); only the axis dimension {axis_value} may be larger", node_name, kind="shape",
            )
    if reduction == "mean" and data.dtype == np.bool_:
        raise OpError(op, "reduction='mean' is not defined for bool data (OpenVINO ScatterElementsUpdate-12)", node_name,
                      kind="dtype")
    if indices.size:
        dim = data.shape[axis_value]
        low, high = int(indices.min()), int(indices.max())
        if low < -dim or high > dim - 1:
            bad = low if low < -dim else high
            valid = f"[{-dim}, {dim - 1}]" if dim else "empty because the axis has length 0"
            raise OpError(
                op, f"index {bad} is outside {valid} for axis {axis_value} of data shape {data.shape}", node_name,
                kind="index_range",
            )
    return axis_value
