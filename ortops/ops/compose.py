"""Standard-ONNX compositions that several ops' lowerings share (``ortops/ops/<op>/lowering.py``,
see :mod:`ortops.lowering`): ONNX TopK in ortops' order, where NaN ranks above +inf.

A guarded lowering (run by ORT inside :class:`ortops.InferenceSession`) relies on ORT's TopK
putting the lower index first among equal values; a standalone one (``b.guarded`` false) may
meet any runtime and uses :func:`ortops.portable.best`, which relies on no tie order."""

from __future__ import annotations

import math

import numpy as np
from onnx import TensorProto

from ..portable import best, positions

__all__ = ["NAN_ORDER", "ERRORS_TRANSLATED", "PARALLEL", "NotLowerable", "static_size", "no_nan", "select", "positions"]

#: The runtime fact (probed by TopK's lowering, :func:`ortops.lowering.runtime_facts`) that ORT's
#: TopK-11 orders NaN as ortops does, which makes the NaN hazard unnecessary.
NAN_ORDER = "topk_nan_order"
#: In ``assume`` (:func:`ortops.lowering.lower`): the caller turns an ORT failure of a lowered node
#: into the PyOp's OpError, so a guarded lowering may fail in a standard node instead of an If.
ERRORS_TRANSLATED = "errors_translated"
#: In ``assume``: the caller's ORT session runs its kernels on two threads or more, so a
#: composition may prefer a layout whose kernels ORT splits between threads.
PARALLEL = "intra_op_parallel"


class NotLowerable(Exception):
    """The node has no exact standard-ONNX composition; the message says why."""


def static_size(shape: tuple | None) -> int | None:
    """The element count of a shape (a lowering site's ``shapes[i]``) when every dimension is a
    number, else None."""
    return None if shape is None or None in shape else math.prod(shape)


def no_nan(b, x: str) -> str:
    """True unless ``x`` may hold NaN (its sum is not NaN)."""
    return b.add("Not", [b.add("IsNaN", [b.reduce("ReduceSum", x)])])


def select(b, key: str, k: str, axis: int, largest: int, nan: bool, dtype=np.float32, *, by_index: bool = False,
           k_static: int | None = None, rank: int | None = None, integer=None) -> tuple[str, str]:
    """(values, int64 indices) of the first k of a stable sort of ``key`` along ``axis``
    (descending for ``largest``), ortops' order; ``nan``: ``key`` may hold NaN, which ranks
    above +inf (all NaNs equal); ``dtype`` is the NumPy dtype of ``key``. ``by_index`` (only
    for a standalone builder, which uses :func:`ortops.portable.best`): in ascending index
    order instead; ``k_static``: k's value when it is a constant; ``rank``: ``key``'s rank;
    ``integer``: for a standalone builder, :func:`ortops.portable.best`'s."""
    if not b.guarded:
        return best(b, key, k, axis, largest, nan=nan, by_index=by_index, k_static=k_static, dtype=dtype, rank=rank,
                    integer=integer)
    if not nan:
        return b.add("TopK", [key, k], 2, axis=axis, largest=largest, sorted=1)
    is_nan = b.add("IsNaN", [key])
    # Where(c, X, Y) turns a -0.0 taken from X into +0.0: the data goes in Y (the ties ignore signs anyway).
    finite = b.add("Where", [is_nan, b.const(np.zeros((), dtype)), key])
    dim = b.add("Reshape", [b.add("Gather", [b.add("Shape", [key]), b.const(np.int64(axis))]),
                            b.const(np.array([1], np.int64))])
    _, by_value = b.add("TopK", [finite, dim], 2, axis=axis, largest=largest, sorted=1)
    flags = b.add("GatherElements", [b.cast(is_nan, TensorProto.INT64), by_value], axis=axis)
    # Then by "is NaN" (first for largest, last for smallest), keeping the first pass's order
    # among equal flags through distinct keys flag * n + rank (the rank reversed for largest):
    # no tie is left to the second TopK, whatever order a runtime gives equal keys.
    rank = positions(b, flags, axis)
    if largest:
        rank = b.add("Sub", [b.add("Sub", [dim, b.const(np.int64(1))]), rank])
    keys = b.add("Add", [b.add("Mul", [flags, dim]), rank])
    _, order = b.add("TopK", [keys, k], 2, axis=axis, largest=largest, sorted=1)
    indices = b.add("GatherElements", [by_value, order], axis=axis)
    return b.add("GatherElements", [key, indices], axis=axis), indices

