"""Reference for OpenVINO ScatterElementsUpdate-12 (``ortops.openvino::ScatterElementsUpdate``)."""

from __future__ import annotations

import math
import operator

import numpy as np

from ...dtypes import wrap
from ...errors import OpError
from .spec import SCATTER_ELEMENTS_UPDATE

__all__ = ["scatter_elements_update", "reduction_identity"]


def scatter_elements_update(
    data, indices, updates, axis, *, reduction: str = "none", use_init_val: int = 1
) -> np.ndarray:
    """A copy of ``data`` with ``updates`` combined in at ``indices`` along ``axis``.

    Signature: ``ortops.openvino::ScatterElementsUpdate(data, indices, updates, axis) -> output``.

    Parameters
    ----------
    data : array_like, shape (d_0, ..., d_{r-1}), r >= 1
        float32, float64, any of the 8 integer types, or bool.
    indices : array_like of any integer type, shape (n_0, ..., n_{r-1})
        The index along ``axis`` of the element each update goes to, in [-d, d-1] with
        d = data.shape[axis]; negative values count from the back. n_i <= d_i for every
        i != axis; n_axis may be larger than d_axis.
    updates : array_like, shape (n_0, ..., n_{r-1})
        Same dtype as ``data``.
    axis : array_like of any integer type, shape () or (1,)
        The scatter axis, in [-r, r-1]. A Python int is accepted.
    reduction : {"none", "sum", "prod", "min", "max", "mean"}, default "none"
        How an update combines with its target element.
    use_init_val : {0, 1}, default 1
        Whether ``data``'s element takes part in the reduction. No effect for "none".

    Returns
    -------
    output : ndarray, shape and dtype of ``data``
        A new array; the inputs are not modified.

    Raises
    ------
    OpError
        For an unsupported dtype of ``data``; ``updates`` of another dtype than ``data``;
        non-integer ``indices`` or ``axis``; a rank or shape mismatch; an axis outside
        [-r, r-1]; an index outside [-d, d-1]; ``reduction="mean"`` on bool data; an
        attribute value outside its range.

    Notes
    -----
    Source: OpenVINO ScatterElementsUpdate-12 operation specification. For each position ``p`` of
    ``indices``, in row-major order, the target is ``p`` with coordinate ``axis`` replaced by
    ``indices[p]`` (plus d when negative), and ``output[target] = reduction(updates[p],
    output[target])``. Where the spec leaves a choice, ortops makes this one:

    * ``reduction="none"`` with several updates for one target (spec: undefined order): the
      last one in row-major order of ``indices`` wins.
    * ``use_init_val=0``: a target that receives at least one update starts from the
      reduction's identity, so ``data`` takes no part; a target that receives none keeps
      ``data``'s value. The identities: sum and mean 0 (+0.0 for floats, as OpenVINO's ``T{0}``,
      so a lone update of -0.0 sums to +0.0); prod 1; min the type's maximum and max its
      minimum, which for floats are +inf and -inf. OpenVINO's reference starts float min and
      max from the largest finite value instead, so there min of a lone +inf update is
      FLT_MAX; ortops gives +inf.
    * Integer sum and prod wrap around in the element type (modulo 2**bits), as C++
      accumulation in the element type does; they are computed exactly, then wrapped.
    * Integer mean is exact (no overflow in any type) and rounded toward negative infinity,
      as the spec says: mean(-3, -4) = -4. The OpenVINO CPU plugin truncates toward zero and
      accumulates in the element type instead (docs/divergences.md); ortops follows the spec.
    * Floats accumulate in float64, in row-major order of ``indices``; float32 results are
      rounded to float32 once, at the end (and may overflow to +-inf there).
    * Float min and max: a NaN operand makes the result NaN; of equal operands (-0.0 and
      +0.0) the earlier one is kept (``data``'s value first, then updates in row-major order).
    * bool: sum is logical OR, prod logical AND, min AND, max OR (the spec names sum and
      prod; min and max follow from False < True).
    """
    data, indices, updates = np.asarray(data), np.asarray(indices), np.asarray(updates)
    attrs = SCATTER_ELEMENTS_UPDATE.parse_attributes({"reduction": reduction, "use_init_val": use_init_val})
    SCATTER_ELEMENTS_UPDATE.check_dtype("data", data.dtype)
    if updates.dtype != data.dtype:
        raise OpError(SCATTER_ELEMENTS_UPDATE.op_type, f"input 'updates' has dtype {updates.dtype}; it must equal the "
                      f"dtype of data {data.dtype}", kind="dtype")
    axis = _validate(data, indices, updates, np.asarray(axis), attrs["reduction"])
    return _scatter_elements_update(data, indices, updates, axis, attrs["reduction"], attrs["use_init_val"])


def _validate(data: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: np.ndarray, reduction: str) -> int:
    """The axis in [0, rank - 1], or OpError. Written apart from the kernel's checks
    (``checks.check_scatter_elements_update``) on purpose: tests hold those against this."""
    def fail(detail: str, kind: str):
        raise OpError("ScatterElementsUpdate", detail, kind=kind)

    if indices.dtype.kind not in "iu":
        fail(f"input 'indices' has dtype {indices.dtype}; it must be an integer type", "dtype")
    if axis.dtype.kind not in "iu":
        fail(f"input 'axis' has dtype {axis.dtype}; it must be an integer type", "dtype")
    if axis.shape not in ((), (1,)):
        fail(f"input 'axis' has shape {axis.shape}; it must be a scalar: shape () or (1,)", "shape")
    if indices.ndim != data.ndim:
        fail(f"indices has rank {indices.ndim} (shape {indices.shape}); it must equal the rank of data {data.ndim} "
             f"(shape {data.shape})", "shape")
    if updates.shape != indices.shape:
        fail(f"updates has shape {updates.shape}; it must equal the shape of indices {indices.shape}", "shape")
    rank, value = data.ndim, int(axis.reshape(-1)[0])
    if value < -rank or value >= rank:
        fail(f"axis={value} " + (f"is outside [{-rank}, {rank - 1}] for rank {rank}" if rank
                                 else "is refused: a rank-0 tensor has no axis (the rank must be at least 1)"), "axis")
    value %= max(rank, 1)
    wider = [d for d in range(rank) if d != value and indices.shape[d] > data.shape[d]]
    if wider:
        d = wider[0]
        fail(f"indices.shape[{d}]={indices.shape[d]} exceeds data.shape[{d}]={data.shape[d]} (shape {indices.shape} "
             f"vs {data.shape}); only the axis dimension {value} may be larger", "shape")
    if reduction == "mean" and data.dtype == bool:
        fail("reduction='mean' is not defined for bool data (OpenVINO ScatterElementsUpdate-12)", "dtype")
    length = data.shape[value]
    outside = indices[(indices < -length) | (indices >= length)] if indices.size else indices
    if outside.size:
        bad = int(indices.min()) if int(indices.min()) < -length else int(indices.max())
        fail(f"index {bad} is outside " + (f"[{-length}, {length - 1}]" if length else
                                            "empty because the axis has length 0")
             + f" for axis {value} of data shape {data.shape}", "index_range")
    return value


def _scatter_elements_update(
    data: np.ndarray, indices: np.ndarray, updates: np.ndarray, axis: int, reduction: str, use_init_val: int
) -> np.ndarray:
    dim = data.shape[axis]

    # The updates each target receives, in row-major order of indices. tolist() gives exact
    # Python numbers: ints for every integer type, float64 values for floats, bools for bool.
    received: dict[tuple[int, ...], list] = {}
    for position, index, update in zip(np.ndindex(indices.shape), indices.ravel().tolist(), updates.ravel().tolist()):
        target = list(position)
        target[axis] = index + dim if index < 0 else index
        received.setdefault(tuple(target), []).append(update)

    output = data.copy()
    with np.errstate(over="ignore"):  # a float64 result may round to +-inf in float32
        for target, target_updates in received.items():
            if reduction == "none":
                output[target] = target_updates[-1]
                continue
            if use_init_val:
                start, start_count = data[target].item(), 1
            else:
                start, start_count = reduction_identity(reduction, data.dtype), 0
            output[target] = _reduce(reduction, start, start_count, target_updates, data.dtype)
    return output


def reduction_identity(reduction: str, dtype: np.dtype):
    """The value that leaves every operand unchanged: where use_init_val=0 targets start."""
    if dtype.kind == "b":
        return reduction in ("prod", "min")  # True for AND, False for OR
    if dtype.kind == "f":
        return {"sum": 0.0, "mean": 0.0, "prod": 1.0, "min": math.inf, "max": -math.inf}[reduction]
    info = np.iinfo(dtype)
    return {"sum": 0, "mean": 0, "prod": 1, "min": int(info.max), "max": int(info.min)}[reduction]


def _reduce(reduction: str, start, start_count: int, updates: list, dtype: np.dtype):
    """Combine ``updates`` (Python numbers, in order) into ``start`` as the element type does.

    ``start`` is data's value (``start_count=1``) or the identity (``start_count=0``).
    """
    is_integer = dtype.kind in "iu"
    if reduction == "mean":
        total = start
        for update in updates:
            total = total + update  # exact for integers, float64 for floats
        count = start_count + len(updates)
        if is_integer:
            return total // count  # exact, rounded toward negative infinity
        return total / count
    combine = _COMBINE[dtype.kind][reduction]
    result = start
    for update in updates:
        result = combine(result, update)
        if is_integer:
            result = wrap(result, dtype)  # like C++ arithmetic in the element type
    return result


def _float_min(result: float, operand: float) -> float:
    if math.isnan(result) or math.isnan(operand):
        return math.nan
    return operand if operand < result else result


def _float_max(result: float, operand: float) -> float:
    if math.isnan(result) or math.isnan(operand):
        return math.nan
    return operand if operand > result else result


_INTEGER = {"sum": operator.add, "prod": operator.mul, "min": min, "max": max}
_COMBINE = {
    "i": _INTEGER,  # exact Python ints, wrapped after every step by _reduce
    "u": _INTEGER,
    "f": {"sum": operator.add, "prod": operator.mul, "min": _float_min, "max": _float_max},  # Python floats: float64
    "b": {"sum": operator.or_, "prod": operator.and_, "min": operator.and_, "max": operator.or_},  # sum OR, prod AND
}
