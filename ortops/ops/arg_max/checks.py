"""Validation of ncnn ArgMax's inputs: validate first, then compute (the reference and the kernel
both call it)."""

from __future__ import annotations

import numpy as np

from ...checks import FLOAT32_EXACT_INT_MAX
from ...errors import OpError

__all__ = ["check_arg_max", "FLOAT32_EXACT_INT_MAX"]


def check_arg_max(data: np.ndarray, *, topk: int, node_name: str | None = None) -> None:
    """Check ncnn ArgMax's input: float32, not empty, and 1 <= topk <= data.size."""
    op = "ArgMax"
    if data.dtype != np.float32:
        raise OpError(op, f"input 'data' has dtype {data.dtype}; ncnn ArgMax takes float32 only", node_name,
                      kind="dtype")
    if data.size == 0:
        raise OpError(op, f"input 'data' is empty (shape {data.shape}); ncnn ArgMax needs at least one element", node_name,
                      kind="k_range")
    if not 1 <= topk <= data.size:
        raise OpError(
            op, f"topk={topk} is outside [1, {data.size}] for the {data.size} elements of shape {data.shape}",
            node_name, kind="k_range",
        )
