"""The registered ScatterElementsUpdate kernel (OpenVINO ScatterElementsUpdate-12), vectorised.

It gives exactly what :func:`ortops.reference.scatter_elements_update` gives, bit for bit
(floats included), and runs in time linear in the number of updates.

How
---
Every update is turned into the flat position of its target in ``data`` (C order), a chunk of
about :data:`CHUNK` updates at a time so that the positions, the values and their conversions
stay in cache; each chunk is then folded into one accumulator with NumPy's unbuffered
``ufunc.at``, which applies the updates of a chunk in order. Chunks go in row-major order of
``indices``, so every target sees its updates in the reference's order:

* float ``sum``, ``prod``, ``mean``: a float64 accumulator starting from ``data`` (or the
  identity), so the additions and products are the reference's own, in its order, rounded to
  the element type once at the end;
* float ``min``/``max``: the updates in *reverse* order (chunks and elements), in the element
  type, then ``data``.
  ``np.minimum(a, b)`` returns ``b`` on ties, so in reverse the earliest of equal operands wins
  (visible only as the sign of a zero), as in the reference; NaN propagates;
* integer ``sum``/``prod``/``min``/``max``: in the element type (sums and products wrap
  around modulo 2**bits exactly like the reference's per-step wrap);
* integer ``mean``: exact sums in int64; for 64-bit types the values are split into high and
  low 32-bit halves, summed separately, and floor-divided exactly in 64-bit arithmetic
  (:func:`_floor_mean_64`). Exact while no target receives 2**31 updates or more;
* ``none``: the position of the last update of each target (``np.maximum.at``), then one
  gather - the last update in row-major order wins without relying on the (unspecified)
  order of NumPy's fancy assignment;
* bool: as uint8, OR is ``maximum`` and AND is ``minimum``;
* ``use_init_val=0``: the accumulator starts from the identity everywhere, a ``touched`` mask
  records the targets, and untouched elements take ``data`` at the end.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .checks import check_scatter_elements_update
from .reference import reduction_identity

__all__ = ["scatter_elements_update", "CHUNK"]

#: About how many updates one chunk holds (their int64 positions: 256 KiB; with their float64
#: values the working set stays in a typical L2 cache).
CHUNK = 1 << 15

_LOW_MASK = np.uint64(0xFFFFFFFF)


def scatter_elements_update(data, indices, updates, axis, *, reduction="none", use_init_val=1):
    """Fast ScatterElementsUpdate with the semantics of
    :func:`ortops.reference.scatter_elements_update` (same signature and errors for the
    arrays the bridge passes: ``data`` and ``updates`` of one dtype)."""
    axis = check_scatter_elements_update(data, indices, updates, np.asarray(axis), reduction=reduction)
    if indices.size == 0 or data.size == 0:
        return data.copy()
    chunks = _TargetChunks(indices, data.shape, axis)
    values = np.ascontiguousarray(updates).reshape(-1)
    flat_data = data.reshape(-1)
    with np.errstate(all="ignore"):  # inf - inf, 0 * inf give NaN, overflow +-inf, as in the reference
        result = _compute(flat_data, values, chunks, reduction, use_init_val)
    return result.reshape(data.shape)


def _compute(flat_data, values, chunks, reduction, use_init_val) -> np.ndarray:
    if reduction == "none":
        return _none(flat_data, values, chunks)
    if flat_data.dtype == np.bool_:
        return _bool(flat_data, values, chunks, reduction, use_init_val)
    if reduction == "mean":
        return _mean(flat_data, values, chunks, use_init_val)
    if flat_data.dtype.kind == "f" and reduction in ("min", "max"):
        return _float_min_max(flat_data, values, chunks, reduction, use_init_val)
    return _fold(flat_data, values, chunks, reduction, use_init_val)


class _TargetChunks:
    """The flat target positions of ``indices``' elements, chunk by chunk, in row-major order.

    ``indices`` is viewed as [P, Q] (Q the product of the trailing dimensions that fit in
    :data:`CHUNK`, or the last dimension alone when it is longer); the flat target of element
    (p, q) is ``index * stride[axis] + lead[p] + trail[q]``, where ``lead`` and ``trail`` hold
    the offsets of the coordinates other than ``axis``. A chunk is a block of whole rows, or
    a block of columns of one row when a row is longer than :data:`CHUNK`.
    """

    def __init__(self, indices: np.ndarray, shape: tuple[int, ...], axis: int):
        strides = [1] * len(shape)
        for d in range(len(shape) - 2, -1, -1):
            strides[d] = strides[d + 1] * shape[d + 1]
        ishape = indices.shape
        split = len(ishape)
        while split > 0 and int(np.prod(ishape[split - 1:])) <= CHUNK:
            split -= 1
        split = min(split, len(ishape) - 1)  # the last dimension alone is longer: it is the row
        self.rows = int(np.prod(ishape[:split]))
        self.cols = int(np.prod(ishape[split:]))
        self.index = np.ascontiguousarray(indices).reshape(self.rows, self.cols)
        self.axis_stride = strides[axis]
        self.wrap = shape[axis] * strides[axis]  # added to the position of a negative index
        # A negative index must be moved up by wrap. Along axis 0, wrap is data.size and every
        # such position lies in [-size, -1]: NumPy's own indexing (ufunc.at, fancy indexing),
        # which all consumers use, wraps it exactly, so there is nothing to do or to look for.
        self.negative = axis != 0 and indices.dtype.kind == "i" and bool(indices.min() < 0)
        self.lead = _offsets(ishape[:split], strides[:split], axis)
        self.trail = _offsets(ishape[split:], strides[split:], axis - split)
        self.size = indices.size
        self.chunk_size = min(self.size, max(CHUNK, 1) if self.cols > CHUNK else (CHUNK // self.cols) * self.cols)

    def bounds(self) -> list[tuple[int, int, int, int]]:
        """(first row, last row + 1, first column, last column + 1) of each chunk, in order."""
        if self.cols <= CHUNK:
            step = max(1, CHUNK // self.cols)
            return [(r, min(r + step, self.rows), 0, self.cols) for r in range(0, self.rows, step)]
        step = max(1, CHUNK)
        return [(r, r + 1, c, min(c + step, self.cols)) for r in range(self.rows) for c in range(0, self.cols, step)]

    def iterate(self, reverse: bool = False) -> Iterator[tuple[np.ndarray, slice]]:
        """Yield ``(targets, where)``: int64 flat targets of one chunk and the slice of the
        flattened ``indices`` they belong to. ``targets`` is a reused buffer; along axis 0 a
        target may be negative, in [-data.size, -1], for NumPy's indexing to wrap."""
        buffer = np.empty(self.chunk_size, np.int64)
        bounds = self.bounds()
        for r0, r1, c0, c1 in reversed(bounds) if reverse else bounds:
            block = buffer[: (r1 - r0) * (c1 - c0)].reshape(r1 - r0, c1 - c0)
            # any integer dtype -> int64 (the values are checked: they fit)
            np.multiply(self.index[r0:r1, c0:c1], self.axis_stride, out=block, dtype=np.int64, casting="unsafe")
            if self.negative:
                np.add(block, self.wrap, out=block, where=block < 0)
            if self.lead is not None:
                block += self.lead[r0:r1, None]
            if self.trail is not None:
                block += self.trail[None, c0:c1]
            yield block.reshape(-1), slice(r0 * self.cols + c0, (r1 - 1) * self.cols + c1)

    __iter__ = iterate


def _offsets(ishape, strides, axis) -> np.ndarray | None:
    """Flat offsets of the coordinates of ``ishape`` (C order), leaving out dimension ``axis``
    (it may lie outside); None when they are all zero."""
    total = None
    for d, (n, stride) in enumerate(zip(ishape, strides)):
        if d == axis or n == 1:
            continue
        term = np.arange(n, dtype=np.int64) * stride
        if total is None:
            total = np.zeros(ishape, np.int64)
        total += term.reshape((n,) + (1,) * (len(ishape) - d - 1))
    return None if total is None else total.reshape(-1)


_UFUNCS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}


def _none(flat_data, values, chunks) -> np.ndarray:
    last = np.full(flat_data.size, -1, np.int64)
    positions = np.arange(chunks.chunk_size, dtype=np.int64)
    for targets, where in chunks:
        np.maximum.at(last, targets, positions[: targets.size] + where.start)
    hit = np.flatnonzero(last >= 0)
    result = flat_data.copy()
    result[hit] = values[last[hit]]
    return result


def _fold(flat_data, values, chunks, reduction, use_init_val) -> np.ndarray:
    """sum/prod of any numeric type, min/max of integers: one accumulator, updates in order."""
    dtype = flat_data.dtype
    work = np.float64 if dtype.kind == "f" else dtype  # floats: the reference's float64 steps
    ufunc = _UFUNCS[reduction]
    if use_init_val:
        acc, touched = flat_data.astype(work), None
    else:
        acc, touched = np.full(flat_data.size, reduction_identity(reduction, dtype), work), np.zeros(flat_data.size, bool)
    converted = np.empty(chunks.chunk_size, work) if work != dtype else None
    for targets, where in chunks:
        operands = values[where]
        if converted is not None:  # float32 -> float64 into one reused buffer
            operands = converted[: operands.size]
            np.copyto(operands, values[where])
        ufunc.at(acc, targets, operands)
        if touched is not None:
            touched[targets] = True
    result = acc.astype(dtype, copy=False)  # float64 -> float32 may round to +-inf
    if touched is not None:
        result = np.where(touched, result, flat_data)
    return result


def _float_min_max(flat_data, values, chunks, reduction, use_init_val) -> np.ndarray:
    """Float min/max: in reverse so the earliest of equal operands wins, then data first."""
    ufunc = _UFUNCS[reduction]
    acc = np.full(flat_data.size, reduction_identity(reduction, flat_data.dtype), flat_data.dtype)
    touched = None if use_init_val else np.zeros(flat_data.size, bool)
    for targets, where in chunks.iterate(reverse=True):
        ufunc.at(acc, targets[::-1], values[where][::-1])
        if touched is not None:
            touched[targets] = True
    if touched is not None:
        return np.where(touched, acc, flat_data)
    # data is the first operand: it wins ties; NaN on either side gives NaN.
    better = acc < flat_data if reduction == "min" else acc > flat_data
    return np.where(better | np.isnan(acc), acc, flat_data)


def _bool(flat_data, values, chunks, reduction, use_init_val) -> np.ndarray:
    """bool as uint8: sum and max are OR (maximum), prod and min are AND (minimum)."""
    ufunc = np.maximum if reduction in ("sum", "max") else np.minimum
    data8, values8 = flat_data.view(np.uint8), values.view(np.uint8)
    if use_init_val:
        acc, touched = data8.copy(), None
    else:
        acc = np.full(flat_data.size, 0 if ufunc is np.maximum else 1, np.uint8)
        touched = np.zeros(flat_data.size, bool)
    for targets, where in chunks:
        ufunc.at(acc, targets, values8[where])
        if touched is not None:
            touched[targets] = True
    if touched is not None:
        acc = np.where(touched, acc, data8)
    return acc.view(np.bool_)


def _mean(flat_data, values, chunks, use_init_val) -> np.ndarray:
    dtype, size = flat_data.dtype, flat_data.size
    counts = np.full(size, 1 if use_init_val else 0, np.int64)
    wide64 = dtype.kind in "iu" and dtype.itemsize == 8
    sums = None
    if dtype.kind == "f":
        sums = flat_data.astype(np.float64) if use_init_val else np.zeros(size, np.float64)
    elif wide64:
        high, low = _halves(flat_data) if use_init_val else (np.zeros(size, np.int64), np.zeros(size, np.int64))
    else:
        sums = flat_data.astype(np.int64) if use_init_val else np.zeros(size, np.int64)
    converted = None if sums is None or dtype == sums.dtype else np.empty(chunks.chunk_size, sums.dtype)
    for targets, where in chunks:
        np.add.at(counts, targets, 1)
        if wide64:
            chunk_high, chunk_low = _halves(values[where])
            np.add.at(high, targets, chunk_high)
            np.add.at(low, targets, chunk_low)
            continue
        operands = values[where]
        if converted is not None:  # to float64 or int64, into one reused buffer
            operands = converted[: operands.size]
            np.copyto(operands, values[where])
        np.add.at(sums, targets, operands)
    result = flat_data.copy()
    touched = np.flatnonzero(counts > (1 if use_init_val else 0))
    count = counts[touched]
    if dtype.kind == "f":
        result[touched] = sums[touched] / count  # float64, rounded once to the element type
    elif wide64:
        result[touched] = _floor_mean_64(high[touched], low[touched], count).view(dtype)
    else:
        result[touched] = sums[touched] // count  # floor: toward -inf, as the spec says
    return result


def _halves(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A 64-bit integer v as int64 halves: v = high * 2**32 + low, 0 <= low < 2**32."""
    low = (values.view(np.uint64) & _LOW_MASK).astype(np.int64)
    high = (values >> 32).astype(np.int64)  # arithmetic shift for int64, logical for uint64
    return high, low


def _floor_mean_64(high: np.ndarray, low: np.ndarray, count: np.ndarray) -> np.ndarray:
    """floor((high * 2**32 + low) / count) modulo 2**64, as uint64, exactly.

    With high = count*qh + rh and low = count*ql + rl (floor division, 0 <= r < count):
    the total is count*(qh*2**32 + ql) + (rh*2**32 + rl), and the last term is below
    count*2**32 + count, which fits in int64 while count < 2**31. The mean itself fits the
    element type, so computing it modulo 2**64 and reinterpreting it is exact.
    """
    qh, rh = np.divmod(high, count)
    ql, rl = np.divmod(low, count)
    extra = ((rh << 32) + rl) // count
    return (qh.view(np.uint64) << np.uint64(32)) + ql.view(np.uint64) + extra.view(np.uint64)
