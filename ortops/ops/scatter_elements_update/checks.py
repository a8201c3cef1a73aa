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

    def fail(detail: str, kind: str):
        raise OpError(op, detail, node_name, kind=kind)

    if not np.issubdtype(indices.dtype, np.integer):
        fail(f"input 'indices' has dtype {indices.dtype}; it must be an integer type", "dtype")
    axis_value = scalar_integer(op, "axis", axis, node_name)
    if indices.ndim != data.ndim:
        fail(f"indices has rank {indices.ndim} (shape {indices.shape}); it must equal the rank of data {data.ndim} "
             f"(shape {data.shape})", "shape")
    if updates.shape != indices.shape:
        fail(f"updates has shape {updates.shape}; it must equal the shape of indices {indices.shape}", "shape")
    axis_value = normalize_axis(op, axis_value, data.ndim, node_name)
    for d, (n_idx, n_data) in enumerate(zip(indices.shape, data.shape)):
        if d != axis_value and n_idx > n_data:
            fail(f"indices.shape[{d}]={n_idx} exceeds data.shape[{d}]={n_data} (shape {indices.shape} vs "
                 f"{data.shape}); only the axis dimension {axis_value} may be larger", "shape")
    if reduction == "mean" and data.dtype == np.bool_:
        fail("reduction='mean' is not defined for bool data (OpenVINO ScatterElementsUpdate-12)", "dtype")
    if indices.size:
        dim = data.shape[axis_value]
        low, high = int(indices.min()), int(indices.max())
        if low < -dim or high > dim - 1:
            valid = f"[{-dim}, {dim - 1}]" if dim else "empty because the axis has length 0"
            fail(f"index {low if low < -dim else high} is outside {valid} for axis {axis_value} of data shape "
                 f"{data.shape}", "index_range")
    return axis_value
