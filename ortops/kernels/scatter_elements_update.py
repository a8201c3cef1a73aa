"""The registered ScatterElementsUpdate kernel (OpenVINO ScatterElementsUpdate-12), vectorised.

Every update is first turned into the flat position of its target in ``data``; the
reductions then run over flat positions:

* float ``sum`` and every ``mean``: ``np.bincount`` (float64 accumulation) - as fast as ORT's
  own ScatterElements (FINDINGS), where ``np.add.at`` is 3-4x slower;
* integer ``sum``/``prod``, ``min``/``max``: NumPy's unbuffered ``ufunc.at``, exact in the
  element type (integers wrap around like C++ accumulation in that type);
* integer ``mean``: exact sums in int64 (or Python ints for 64-bit types), floored.
"""

from __future__ import annotations

import numpy as np

from ..checks import check_scatter_elements_update

__all__ = ["scatter_elements_update"]

_UFUNCS = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}
_BOOL_UFUNCS = {"sum": np.logical_or, "prod": np.logical_and, "min": np.logical_and, "max": np.logical_or}


def _flat_targets(indices: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """Flat position in ``data`` (C order) of the target of every element of ``indices``."""
    strides = np.cumprod((shape[1:] + (1,))[::-1])[::-1].astype(np.int64)
    dim = shape[axis]
    idx = indices.astype(np.int64)
    if idx.size and idx.min() < 0:
        idx += np.where(idx < 0, dim, 0)
    flat = idx * strides[axis] if strides[axis] != 1 else idx
    for d, n in enumerate(indices.shape):
        if d != axis and n > 1:
            offsets = np.arange(n, dtype=np.int64) * strides[d]
            flat += offsets.reshape((n,) + (1,) * (indices.ndim - d - 1))
    return flat.reshape(-1)


def _identity(reduction: str, dtype: np.dtype):
    if dtype == np.bool_:
        return reduction in ("prod", "min")
    if reduction in ("sum", "mean"):
        return 0
    if reduction == "prod":
        return 1
    if dtype.kind == "f":
        return np.inf if reduction == "min" else -np.inf
    info = np.iinfo(dtype)
    return info.max if reduction == "min" else info.min


def _mean(data, flat_data, targets, values, use_init_val):
    size = flat_data.size
    counts = np.bincount(targets, minlength=size)
    touched = counts > 0
    if data.dtype.kind == "f":
        sums = np.bincount(targets, weights=values, minlength=size)
        if use_init_val:
            sums += flat_data
            counts = counts + 1
        result = flat_data.copy()
        result[touched] = (sums[touched] / counts[touched]).astype(data.dtype)
        return result
    wide = object if data.dtype.itemsize == 8 else np.int64
    sums = np.zeros(size, dtype=wide)
    np.add.at(sums, targets, values.astype(wide))
    if use_init_val:
        sums += flat_data.astype(wide)
        counts = counts + 1
    result = flat_data.copy()
    result[touched] = (sums[touched] // counts[touched]).astype(data.dtype)  # floor: toward -inf
    return result


def scatter_elements_update(data, indices, updates, axis, *, reduction="none", use_init_val=1):
    """Fast ScatterElementsUpdate with the semantics of
    :func:`ortops.reference.scatter_elements_update` (same signature)."""
    axis = check_scatter_elements_update(data, indices, updates, axis, reduction=reduction)
    flat_data = data.reshape(-1)
    if indices.size == 0:
        return data.copy()
    targets = _flat_targets(indices, data.shape, axis)
    values = updates.reshape(-1)
    if reduction == "none":
        result = flat_data.copy()
        if _has_duplicates(targets, flat_data.size):
            last = np.full(flat_data.size, -1, np.int64)
            np.maximum.at(last, targets, np.arange(targets.size, dtype=np.int64))  # last update wins
            hit = np.flatnonzero(last >= 0)
            result[hit] = values[last[hit]]
        else:
            result[targets] = values
        return result.reshape(data.shape)
    if reduction == "mean":
        return _mean(data, flat_data, targets, values, use_init_val).reshape(data.shape)
    if reduction == "sum" and data.dtype.kind == "f":
        sums = np.bincount(targets, weights=values, minlength=flat_data.size)
        if use_init_val:
            return (sums + flat_data).astype(data.dtype).reshape(data.shape)
        touched = np.bincount(targets, minlength=flat_data.size) > 0
        return np.where(touched, sums.astype(data.dtype), flat_data).reshape(data.shape)
    ufunc = (_BOOL_UFUNCS if data.dtype == np.bool_ else _UFUNCS)[reduction]
    work_dtype = np.float64 if data.dtype.kind == "f" else data.dtype
    result = flat_data.astype(work_dtype)
    if not use_init_val:
        result[targets] = _identity(reduction, data.dtype)
    ufunc.at(result, targets, values.astype(work_dtype, copy=False))
    return result.astype(data.dtype, copy=False).reshape(data.shape)


def _has_duplicates(targets: np.ndarray, size: int) -> bool:
    return bool(np.bincount(targets, minlength=size).max() > 1)
