"""The one home of array comparison: NaN-aware and bitwise equality, the first difference, and
arrays printed or made JSON-ready. Every judge (conformance, the OpenVINO and ncnn oracles,
``ortops compare``'s node audit) uses these."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["equal", "bitwise_equal", "same", "bitwise_same", "has_nan", "has_ties", "describe_difference",
           "first_difference", "short", "order_ranks", "preview", "jsonable", "PREVIEW_ITEMS"]

#: Arrays up to this many elements are printed whole; larger ones as dtype, shape and their
#: first 8 elements in C order.
PREVIEW_ITEMS = 64


def equal(a, b) -> np.ndarray:
    """Element-wise equality of two arrays of one shape, where NaN equals NaN."""
    a, b = np.asarray(a), np.asarray(b)
    eq = np.asarray(a == b)
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        eq = eq | (np.isnan(a) & np.isnan(b))
    return eq


def same(a, b) -> bool:
    """Exactly equal shapes and values; NaN equals NaN. Dtypes may differ (int32 vs int64)."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all(equal(a, b)))


def bitwise_equal(a, b) -> np.ndarray:
    """:func:`equal`, where also -0.0 is not +0.0 (any NaN still equals any NaN)."""
    a, b = np.asarray(a), np.asarray(b)
    eq = equal(a, b)
    if a.dtype.kind == "f" and b.dtype.kind == "f":
        eq &= (np.signbit(a) == np.signbit(b)) | np.isnan(a)
    return eq


def bitwise_same(a, b) -> bool:
    """:func:`same`, and every zero has the same sign (-0.0 is not +0.0); any NaN equals any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(np.all(bitwise_equal(a, b)))


def has_nan(a) -> bool:
    return np.asarray(a).dtype.kind == "f" and bool(np.isnan(a).any())


def has_ties(a) -> bool:
    """Whether two elements of ``a`` are equal."""
    flat = np.asarray(a).reshape(-1)
    return flat.size > 1 and np.unique(flat).size < flat.size


def describe_difference(name: str, got, want, *, bitwise: bool = False) -> str:
    """One line: how many elements of output ``name`` differ (``bitwise``: -0.0 is not +0.0),
    and the first of them."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape} vs {want.shape}"
    mismatch = np.argwhere(~(bitwise_equal if bitwise else equal)(got, want))
    first = tuple(int(i) for i in mismatch[0])
    return f"{name}: {len(mismatch)} of {got.size} differ, first at {first}: {got[first]!r} vs {want[first]!r}"


def first_difference(names, got, want) -> str:
    """The first of the outputs ``names`` where ``got`` and ``want`` differ, described in one line."""
    for name, g, w in zip(names, got, want):
        if not same(g, w):
            return describe_difference(name, g, w)
    return "no difference"


def short(arrays, *, threshold: int = 12, edgeitems: int = 3) -> str:
    """A short printout of a few arrays, for a check's detail (NumPy's ``threshold`` and
    ``edgeitems`` say how many elements show)."""
    with np.printoptions(threshold=threshold, edgeitems=edgeitems, linewidth=1000):
        return "; ".join(np.array2string(np.asarray(a), separator=",").replace("\n", "") for a in arrays)


def order_ranks(data: np.ndarray) -> np.ndarray:
    """``data`` replaced by its ranks in ortops' total order (-inf < ... < +inf < NaN; -0.0 ==
    +0.0; all NaNs equal), as the same dtype: an input without NaN or inf on which ortops
    selects and orders exactly as on ``data``."""
    keys = np.where(np.isnan(data), np.inf, data)
    unique, ranks = np.unique(keys, return_inverse=True)
    ranks = np.where(np.isnan(data), len(unique), ranks.reshape(data.shape))  # NaN above everything
    return ranks.astype(data.dtype)


def preview(array: Any, limit: int = PREVIEW_ITEMS) -> str:
    """``array`` printed on one line: whole up to ``limit`` elements, else its dtype, shape,
    size and first 8 elements in C order. A non-array is ``str(value)``."""
    if not isinstance(array, (np.ndarray, np.generic, list, tuple)):
        return str(array)
    a = np.asarray(array)
    with np.printoptions(threshold=max(limit, 1), linewidth=10**9, floatmode="maxprec"):
        if a.size <= limit:
            return " ".join(np.array2string(a, separator=", ").split())
        head = " ".join(np.array2string(a.reshape(-1)[:8], separator=", ").split())
    return f"{a.dtype} {list(a.shape)}, {a.size} elements, first in C order: {head[:-1]}, ...]"


def jsonable(value: Any) -> Any:
    """``value`` with NumPy scalars and arrays turned into Python numbers and lists (NaN and
    infinities become the strings ``"nan"``, ``"inf"``, ``"-inf"``), tuples into lists."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not np.isfinite(value):
        return "nan" if np.isnan(value) else ("inf" if value > 0 else "-inf")
    return value
