"""Reference for the ncnn ArgMax layer (``ortops.ncnn::ArgMax``), in plain NumPy."""

from __future__ import annotations

import numpy as np

from .checks import FLOAT32_EXACT_INT_MAX
from ...errors import OpError
from .spec import ARG_MAX

__all__ = ["arg_max"]


def arg_max(data, *, out_max_val: int = 0, topk: int = 1) -> np.ndarray:
    """The flat indices (and optionally the values) of the ``topk`` largest elements (ncnn ArgMax).

    Signature: ``ortops.ncnn::ArgMax(data) -> output``.

    Parameters
    ----------
    data : array_like, float32, any shape with at least one element
        The whole tensor is searched, flattened in C order.
    out_max_val : {0, 1}, default 0
        Also output the values (ncnn param 0).
    topk : int, default 1
        How many elements to return, in [1, data.size] (ncnn param 1).

    Returns
    -------
    output : ndarray, float32, shape (1, topk) or (2, topk)
        ``out_max_val=0``: shape (1, topk), the flat indices as floats.
        ``out_max_val=1``: shape (2, topk), row 0 the values, row 1 the flat indices as floats.
        Largest value first; of equal values the higher index first.

    Raises
    ------
    OpError
        For data that is not float32 or is empty; topk outside [1, data.size]; an attribute
        value outside its range; a selected index above 2**24, which float32 cannot hold exactly.

    Notes
    -----
    Source: ncnn ``src/layer/argmax.cpp`` (the ncnn repository). It builds a (value, index) pair
    for every element and calls ``std::partial_sort`` with ``std::greater<std::pair<float,
    int>>``: value descending and, among equal values, the HIGHER index first - the opposite
    of ONNX ArgMax's default. Where ncnn leaves a choice, ortops makes this one:

    * NaN (undefined behaviour in ncnn's comparison) is greater than +inf and all NaNs are
      equal, so among NaNs the higher index comes first - the same order as ortops' TopK.
      -0.0 and +0.0 are equal (a tie, decided by the index).
    * topk > data.size (undefined behaviour in ncnn) is an error.
    * Only the logical elements count; ncnn's ``Mat::total()`` also counts the channel
      padding of 3-D blobs.
    * An index above 2**24 would be rounded when written as float32; ortops raises instead.
    """
    data = np.asarray(data)
    attrs = ARG_MAX.parse_attributes({"out_max_val": out_max_val, "topk": topk})
    # Validated apart from the kernel's checks (checks.check_arg_max) on purpose: tests hold
    # those against this.
    if data.dtype != np.float32:
        raise OpError("ArgMax", f"input 'data' has dtype {data.dtype}; ncnn ArgMax takes float32 only", kind="dtype")
    if not data.size:
        raise OpError("ArgMax", f"input 'data' is empty (shape {data.shape}); ncnn ArgMax needs at least one element",
                      kind="k_range")
    if attrs["topk"] < 1 or attrs["topk"] > data.size:
        raise OpError("ArgMax", f"topk={attrs['topk']} is outside [1, {data.size}] for the {data.size} elements of "
                      f"shape {data.shape}", kind="k_range")
    return _arg_max(data, attrs["out_max_val"], attrs["topk"])


def _arg_max(data: np.ndarray, out_max_val: int, topk: int) -> np.ndarray:
    values = data.ravel(order="C")
    positions = np.arange(values.size)

    # vec[i] = (ptr[i], i), ordered by std::greater on pairs: the reverse of ascending
    # (value, index) order. The value is compared through its dense rank: np.unique sorts
    # NaN last and merges all NaNs (equal_nan=True); -0.0 and +0.0 share a rank.
    _, value_rank = np.unique(values, return_inverse=True, equal_nan=True)
    ascending_pairs = np.lexsort((positions, value_rank.reshape(-1)))
    top = ascending_pairs[::-1][:topk]

    too_large = top[top > FLOAT32_EXACT_INT_MAX]
    if too_large.size:
        raise OpError(
            "ArgMax",
            f"selected index {int(too_large[0])} is above {FLOAT32_EXACT_INT_MAX} (2**24), the largest "
            f"integer up to which float32 output is exact, for shape {data.shape}",
            kind="precision",
        )

    if out_max_val:
        return np.stack([values[top], top.astype(np.float32)])
    return top.astype(np.float32).reshape(1, topk)
