"""Validation of TopK's inputs: validate first, then compute (the kernel calls it; the reference
validates apart, so that tests can hold one against the other)."""

from __future__ import annotations

import numpy as np

from ...checks import INT32_MAX, normalize_axis, scalar_integer
from ...errors import OpError

__all__ = ["INDEX_ELEMENT_TYPES", "check_top_k"]

#: The ``index_element_type`` attribute values and the dtypes of the indices they choose.
INDEX_ELEMENT_TYPES = {"i32": np.dtype(np.int32), "i64": np.dtype(np.int64)}


def check_top_k(
    data,
    k,
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
        raise OpError("TopK", f"k={k_value} is outside {valid} for axis {axis} of shape {data.shape}", node_name,
                      kind="k_range")
    if index_element_type == "i32" and dim - 1 > INT32_MAX:
        raise OpError(
            "TopK",
            f"axis {axis} of shape {data.shape} has indices up to {dim - 1}, above the int32 maximum "
            f"{INT32_MAX}; use index_element_type='i64'",
            node_name, kind="precision",
        )
    return axis, k_value
