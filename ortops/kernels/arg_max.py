"""The registered ncnn ArgMax kernel: one reversed argmax for topk=1, ORT's TopK otherwise."""

from __future__ import annotations

import numpy as np

from ..checks import FLOAT32_EXACT_INT_MAX, check_arg_max
from ..errors import OpError
from .selection import top_k_indices

__all__ = ["arg_max"]


def arg_max(data, *, out_max_val=0, topk=1):
    """Fast ncnn ArgMax with the semantics of :func:`ortops.reference.arg_max` (same signature).

    Ties go to the higher flat index: the selection runs on the reversed flattened tensor,
    where NumPy's argmax and ORT's TopK both prefer the lower (reversed) index.
    """
    check_arg_max(data, topk=topk)
    flat = data.reshape(-1)
    last = flat.size - 1
    if topk == 1:
        indices = np.array([last - int(np.argmax(flat[::-1]))], np.int64)  # NaN counts as the maximum
        values = flat[indices]
    else:
        reversed_flat = np.ascontiguousarray(flat[::-1]).reshape(1, -1)
        values, reversed_indices = top_k_indices(reversed_flat, topk, axis=1, largest=True)
        values, indices = values.reshape(-1), last - reversed_indices.reshape(-1)
    if indices.max() > FLOAT32_EXACT_INT_MAX:
        raise OpError(
            "ArgMax",
            f"index {int(indices.max())} is above 2**24={FLOAT32_EXACT_INT_MAX}, the largest index float32 "
            f"output holds exactly (input has {flat.size} elements)",
        )
    rows = (values, indices) if out_max_val else (indices,)
    return np.stack(rows).astype(np.float32)
