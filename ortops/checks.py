"""Input checks shared by the references and the kernels: validate first, then compute.

Each function raises :class:`ortops.OpError` naming the bad value and the valid range, and
returns the normalised values the computation needs. Attributes are already parsed and
range-checked by :meth:`ortops.opdefs.OpDef.parse_attributes`.
"""

from __future__ import annotations

import numpy as np

from .errors import OpError

__all__ = [
    "normalize_axis",
    "scalar_integer",
    "check_top_k",
    "check_scatter_elements_update",
    "check_arg_max",
    "INT32_MAX",
    "FLOAT32_EXACT_INT_MAX",
]

INT32_MAX = 2**31 - 1
#: Largest integer up to which every integer is exact in float32 (2**24).
FLOAT32_EXACT_INT_MAX = 2**24


def normalize_axis(op_type: str, axis: int, rank: int, node_name: str | None = None, what: str = "axis") -> int:
    """Map ``axis`` in [-rank, rank-1] to [0, rank-1]; OpError outside that range."""
    if not -rank <= axis <= rank - 1:
        valid = f"[{-rank}, {rank - 1}]" if rank > 0 else "empty for a rank-0 tensor"
        raise OpError(op_type, f"{what}={axis} is outside {valid} for rank {rank}", node_name)
    return axis + rank if axis < 0 else axis


def scalar_integer(op_type: str, name: str, value: np.ndarray, node_name: str | None = None) -> int:
    """The one integer held by a 0-d or shape-[1] integer tensor, as a Python int."""
    value = np.asarray(value)
    if not np.issubdtype(value.dtype, np.integer):
        raise OpError(op_type, f"input {name!r} has dtype {value.dtype}; it must be an integer type", node_name)
    if value.ndim > 1 or value.size != 1:
        raise OpError(
            op_type, f"input {name!r} has shape {value.shape}; it must be a scalar: shape () or (1,)", node_name
        )
    return int(value.reshape(()))


def check_top_k(
    data: np.ndarray,
    k: np.ndarray,
    *,
    axis: int,
    index_element_type: str = "i32",
    node_name: str | None = None,
) -> tuple[int, int]:
    """Check TopK's inputs; return ``(axis, k)`` with the axis normalised to [0, rank-1].

    Raises OpError for an axis outside [-rank, rank-1], a k that is not an integer scalar,
    a k outside [1, shape[axis]], or an axis too long for int32 indices.
    """
    axis = normalize_axis("TopK", axis, data.ndim, node_name)
    k_value = scalar_integer("TopK", "k", k, node_name)
    dim = data.shape[axis]
    if not 1 <= k_value <= dim:
        valid = f"[1, {dim}]" if dim >= 1 else "empty because the axis has length 0"
        raise OpError("TopK", f"k={k_value} is outside {valid} for axis {axis} of shape {data.shape}", node_name)
    if index_element_type == "i32" and dim - 1 > INT32_MAX:
        raise OpError(
            "TopK",
            f"axis {axis} of shape {data.shape} has indices up to {dim - 1}, above the int32 maximum "
            f"{INT32_MAX}; use index_element_type='i64'",
            node_name,
        )
    return axis, k_value


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
        raise OpError(op, f"input 'indices' has dtype {indices.dtype}; it must be an integer type", node_name)
    axis_value = scalar_integer(op, "axis", axis, node_name)
    if indices.ndim != data.ndim:
        raise OpError(
            op, f"indices has rank {indices.ndim} (shape {indices.shape}); it must equal the rank of data "
            f"{data.ndim} (shape {data.shape})", node_name,
        )
    if updates.shape != indices.shape:
        raise OpError(
            op, f"updates has shape {updates.shape}; it must equal the shape of indices {indices.shape}", node_name
        )
    axis_value = normalize_axis(op, axis_value, data.ndim, node_name)
    for d, (n_idx, n_data) in enumerate(zip(indices.shape, data.shape)):
        if d != axis_value and n_idx > n_data:
            raise OpError(
                op, f"indices.shape[{d}]={n_idx} exceeds data.shape[{d}]={n_data} (shape {indices.shape} vs "
                f"{data.shape}); only the axis dimension {axis_value} may be larger", node_name,
            )
    if reduction == "mean" and data.dtype == np.bool_:
        raise OpError(op, "reduction='mean' is not defined for bool data (OpenVINO ScatterElementsUpdate-12)", node_name)
    if indices.size:
        dim = data.shape[axis_value]
        low, high = int(indices.min()), int(indices.max())
        if low < -dim or high > dim - 1:
            bad = low if low < -dim else high
            valid = f"[{-dim}, {dim - 1}]" if dim else "empty because the axis has length 0"
            raise OpError(
                op, f"index {bad} is outside {valid} for axis {axis_value} of data shape {data.shape}", node_name
            )
    return axis_value


def check_arg_max(data: np.ndarray, *, topk: int, node_name: str | None = None) -> None:
    """Check ncnn ArgMax's input: float32, not empty, and 1 <= topk <= data.size."""
    op = "ArgMax"
    if data.dtype != np.float32:
        raise OpError(op, f"input 'data' has dtype {data.dtype}; ncnn ArgMax takes float32 only", node_name)
    if data.size == 0:
        raise OpError(op, f"input 'data' is empty (shape {data.shape}); ncnn ArgMax needs at least one element", node_name)
    if not 1 <= topk <= data.size:
        raise OpError(
            op, f"topk={topk} is outside [1, {data.size}] for the {data.size} elements of shape {data.shape}",
            node_name,
        )
