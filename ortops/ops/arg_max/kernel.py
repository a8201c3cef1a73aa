"""The registered ncnn ArgMax kernel: the reference's semantics, fast on large tensors.

Order: value descending, NaN above +inf (all NaNs equal), and among equal values the
HIGHER flat index first (ncnn's ``std::partial_sort`` with ``std::greater`` on pairs).

* **Block maxima first.** The flattened tensor is cut into contiguous blocks of 1024-8192
  elements and each block's maximum is taken: one vectorised pass, about as fast as
  ``max()``. NaN propagates, so a block holding NaN has maximum NaN, the largest.
* **topk=1**: the last maximum of the last block holding the overall maximum.
* **topk>1**: with tau the k-th largest block maximum there are at least k elements >= tau,
  so the top k are every element above tau - all inside the fewer than k blocks whose
  maximum is above tau - in ncnn's order, then as many elements equal to tau as are still
  needed, highest index first, found by scanning the blocks whose maximum is >= tau from
  the end (each block with maximum tau holds one, so at most about 2k blocks are read even
  when most of the tensor is tied). A few hundred candidates are ordered with
  ``np.lexsort``; NumPy never sorts the tensor.
* **Small tensors, or topk near the size**: ORT's own TopK-11 (through
  :func:`ortops.kernels.selection.top_k_indices`) on the reversed tensor: TopK-11 puts
  the lower index first among equal values, and on the reversed tensor the lower index is
  the higher original one (``i -> n - 1 - i``).

Its speed against ORT's built-ins is measured in docs/performance.md.
"""

from __future__ import annotations

import numpy as np

from .checks import FLOAT32_EXACT_INT_MAX, check_arg_max
from ...errors import OpError
from ...kernels.selection import top_k_indices

__all__ = ["arg_max"]

#: Block length bounds: per-row overhead makes NumPy's row maxima slow below ~1000 elements.
_BLOCK_MIN, _BLOCK_MAX = 1024, 8192
#: Up to this many candidates are ordered by np.lexsort; more go to ORT's TopK.
_SORT_MAX = 4096


def arg_max(data, *, out_max_val=0, topk=1):
    """Fast ncnn ArgMax with the semantics of :func:`ortops.reference.arg_max` (same signature).

    ``data`` is a float32 array with at least ``topk`` elements; returns float32 [1, topk]
    (indices) or [2, topk] (values, indices). Raises OpError like the reference: topk outside
    [1, data.size], an empty or non-float32 input, a selected index above 2**24.

    Like the reference, it counts logical elements only: ncnn's ``Mat::total()`` also counts
    the padding that rounds each channel of a 3-D blob up to 16 bytes, so ncnn's flat indices
    differ from ortops' when ``w * h`` is not a multiple of 4 (see :func:`ortops.builder.arg_max`).
    """
    check_arg_max(data, topk=topk)
    flat = data.reshape(-1)
    indices = _last_maximum(flat) if topk == 1 else _top_k(flat, topk)
    highest = int(indices.max())
    if highest > FLOAT32_EXACT_INT_MAX:
        raise OpError(
            "ArgMax",
            f"index {highest} is above 2**24={FLOAT32_EXACT_INT_MAX}, the largest index float32 "
            f"output holds exactly (input has {flat.size} elements)",
            kind="precision",
        )
    output = np.empty((2 if out_max_val else 1, topk), np.float32)
    output[-1] = indices
    if out_max_val:
        output[0] = flat[indices]
    return output


def _block_maxima(flat: np.ndarray, block: int) -> np.ndarray:
    """The maximum of each contiguous block of ``block`` elements (the last may be shorter)."""
    whole = flat.size // block * block
    maxima = flat[:whole].reshape(-1, block).max(axis=1)
    if whole < flat.size:
        maxima = np.append(maxima, flat[whole:].max())
    return maxima


def _last_maximum_small(flat: np.ndarray) -> int:
    # np.argmax returns the first maximum (the first NaN if any): on the reversed view, the last.
    return flat.size - 1 - int(np.argmax(flat[::-1]))


def _last_maximum(flat: np.ndarray) -> np.ndarray:
    """[index] of the last maximum, NaN above everything (ncnn with topk=1)."""
    if flat.size <= 2 * _BLOCK_MIN:
        return np.array([_last_maximum_small(flat)], np.int64)
    block = min(max(int(np.sqrt(flat.size)), _BLOCK_MIN), _BLOCK_MAX)
    maxima = _block_maxima(flat, block)
    nan = np.isnan(maxima)
    hits = nan if nan.any() else maxima == maxima.max()
    start = int(np.flatnonzero(hits)[-1]) * block
    return np.array([start + _last_maximum_small(flat[start:start + block])], np.int64)


def _select(flat: np.ndarray, k: int) -> np.ndarray:
    """The k indices of ``flat`` in ncnn's order, from ORT's TopK on the reversed tensor."""
    last = flat.size - 1
    reversed_flat = np.ascontiguousarray(flat[::-1]).reshape(1, -1)
    _, reversed_indices = top_k_indices(reversed_flat, k, axis=1, largest=True)
    return last - reversed_indices.reshape(-1)


def _ncnn_order(values: np.ndarray, k: int) -> np.ndarray:
    """The first k positions of ``values`` in ncnn's order (NaN first, then value descending,
    the higher position first among equal values)."""
    if values.size > _SORT_MAX:
        return _select(values, k)
    positions = -np.arange(values.size)
    nan = np.isnan(values)
    if nan.any():  # np.lexsort: the last key is primary; False (NaN) sorts before True
        return np.lexsort((positions, -np.where(nan, 0, values), ~nan))[:k]
    return np.lexsort((positions, -values))[:k]  # -(+0.0) == -(-0.0): a tie, as it should be


def _gather(flat: np.ndarray, block: int, ids: np.ndarray) -> np.ndarray:
    """The blocks ``ids`` (ascending) of ``flat`` back to back; position p of the result is
    flat index ``ids[p // block] * block + p % block`` (a shorter last block can only come last)."""
    whole = flat.size // block
    out = flat[: whole * block].reshape(-1, block)[ids[ids < whole]].reshape(-1)
    if ids.size and ids[-1] == whole:
        out = np.concatenate([out, flat[whole * block :]])
    return out


def _flat_index(ids: np.ndarray, block: int, positions: np.ndarray) -> np.ndarray:
    return ids[positions // block] * block + positions % block


def _top_k(flat: np.ndarray, k: int) -> np.ndarray:
    """The k indices of ``flat`` in ncnn's order (value descending, the higher index first), by
    block maxima around tau, the k-th largest of them (NaN largest): the module's "topk>1"."""
    n = flat.size
    block = min(max(n // (8 * k), _BLOCK_MIN), _BLOCK_MAX)
    if -(-n // block) < 4 * k:
        return _select(flat, k)
    maxima = _block_maxima(flat, block)
    nan = np.isnan(maxima)
    tau = np.sort(maxima)[-k]  # np.sort puts NaN last: NaN counts as the largest
    if np.isnan(tau):  # at least k NaNs: the top k are the last k NaNs
        return _last_matches(flat, block, np.flatnonzero(nan), np.isnan, k)
    above = np.flatnonzero((maxima > tau) | nan)
    candidates = _gather(flat, block, above)
    keep = candidates > tau
    if nan.any():
        keep |= np.isnan(candidates)
    positions = np.flatnonzero(keep)
    if positions.size >= k:
        return _flat_index(above, block, positions[_ncnn_order(candidates[positions], k)])
    greater = _flat_index(above, block, positions[_ncnn_order(candidates[positions], positions.size)])
    at_least = np.flatnonzero((maxima >= tau) | nan)
    equal = _last_matches(flat, block, at_least, lambda values: values == tau, k - positions.size)
    return np.concatenate([greater, equal])


def _last_matches(flat: np.ndarray, block: int, ids: np.ndarray, match, count: int) -> np.ndarray:
    """The ``count`` highest flat indices, highest first, where ``match(values)`` holds,
    searching only the blocks ``ids`` (ascending), from the last one back."""
    found: list[np.ndarray] = []
    total, end, batch = 0, ids.size, 1
    while total < count and end > 0:
        start = max(end - batch, 0)
        part = ids[start:end]
        hits = _flat_index(part, block, np.flatnonzero(match(_gather(flat, block, part))))
        found.append(hits)
        total += hits.size
        end, batch = start, batch * 2
    return np.concatenate(found[::-1])[-count:][::-1]
