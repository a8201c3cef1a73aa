"""Input checks every op uses: validate first, then compute.

Each function raises :class:`ortops.OpError` (with its ``kind``) naming the bad value and the
valid range, and returns the normalised value the computation needs. Each op's own checks
are in ``ortops/ops/<op>/checks.py``; attributes are already parsed and range-checked by
:meth:`ortops.ops.spec.OpSpec.parse_attributes`.
"""

from __future__ import annotations

import numpy as np

from .errors import OpError

__all__ = [
    "normalize_axis",
    "scalar_integer",
    "INT32_MAX",
    "RANK_0",
    "FLOAT32_EXACT_INT_MAX",
]

INT32_MAX = 2**31 - 1
#: Why no axis is valid for a scalar.
RANK_0 = "a rank-0 tensor has no axis (the rank must be at least 1)"
#: Largest integer up to which every integer is exact in float32 (2**24).
FLOAT32_EXACT_INT_MAX = 2**24


def normalize_axis(op_type: str, axis: int, rank: int, node_name: str | None = None, what: str = "axis") -> int:
    """Map ``axis`` in [-rank, rank-1] to [0, rank-1]; OpError outside that range."""
    if not -rank <= axis <= rank - 1:
        valid = f"is outside [{-rank}, {rank - 1}] for rank {rank}" if rank > 0 else f"is refused: {RANK_0}"
        raise OpError(op_type, f"{what}={axis} {valid}", node_name, kind="axis")
    return axis + rank if axis < 0 else axis


def scalar_integer(op_type: str, name: str, value: np.ndarray, node_name: str | None = None) -> int:
    """The one integer held by a 0-d or shape-[1] integer tensor, as a Python int."""
    value = np.asarray(value)
    if not np.issubdtype(value.dtype, np.integer):
        raise OpError(op_type, f"input {name!r} has dtype {value.dtype}; it must be an integer type", node_name,
                      kind="dtype")
    if value.ndim > 1 or value.size != 1:
        raise OpError(
            op_type, f"input {name!r} has shape {value.shape}; it must be a scalar: shape () or (1,)", node_name,
            kind="shape",
        )
    return int(value.reshape(()))
