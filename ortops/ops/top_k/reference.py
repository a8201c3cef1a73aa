"""Reference for OpenVINO TopK-11 (``ortops.openvino::TopK``), in plain NumPy."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ...checks import INT32_MAX
from ...errors import OpError
from .spec import INDEX_ELEMENT_TYPES, TOP_K

__all__ = ["TopKResult", "top_k"]


class TopKResult(NamedTuple):
    """The two outputs of TopK.

    values : ndarray, dtype of ``data``
        The selected elements.
    indices : ndarray, int32 or int64
        Where each selected element sits along the axis of ``data``.
    """

    values: np.ndarray
    indices: np.ndarray


def top_k(
    data,
    k,
    *,
    axis: int,
    mode: str,
    sort: str,
    stable: int = 0,
    index_element_type: str = "i32",
) -> TopKResult:
    """The k largest or smallest elements of every slice along ``axis`` (OpenVINO TopK-11).

    Signature: ``ortops.openvino::TopK(data, k) -> (values, indices)``.

    Parameters
    ----------
    data : array_like, shape (d_0, ..., d_{r-1}), r >= 1
        float32, float64 or any of the 8 integer types.
    k : array_like of an integer type, shape () or (1,)
        How many elements to select per slice; 1 <= k <= data.shape[axis]. A Python int is
        accepted.
    axis : int
        The axis of the slices, in [-r, r-1]; negative counts from the back. Required.
    mode : {"max", "min"}
        Select the largest ("max") or the smallest ("min") elements. Required.
    sort : {"value", "index", "none"}
        Output order: by value in the mode's direction, or by ascending index. "none" gives
        the same order as "value". Required.
    stable : {0, 1}, default 0
        Keep the input order of equal elements. ortops always does, so it changes nothing.
    index_element_type : {"i32", "i64"}, default "i32"
        dtype of ``indices``: int32 or int64.

    Returns
    -------
    TopKResult
        ``values`` with the dtype of ``data`` and ``indices`` with dtype int32 or int64, both
        of ``data``'s shape with ``shape[axis]`` replaced by k.

    Raises
    ------
    OpError
        For an unsupported dtype of ``data``; an axis outside [-r, r-1]; a k that is not an
        integer scalar or is outside [1, data.shape[axis]]; an axis too long for int32 indices;
        an attribute value outside its range (e.g. ``mode="largest"``).

    Notes
    -----
    Source: OpenVINO's TopK-11 operation specification. Where the spec leaves a choice, ortops makes
    one, so that every call has exactly one answer:

    * Order. Numbers compare in ordinary numeric order. For floats, NaN is greater than +inf
      and all NaNs are equal to each other; -0.0 and +0.0 are equal (a tie). The spec does
      not define NaN, and OpenVINO and ONNX Runtime place it differently (docs/divergences.md).
    * Ties. The selected elements are the first k of a stable sort of the slice in the mode's
      direction: of equal values, the lower index is selected first. This is the spec's
      ``stable=true`` result, and ortops gives it for ``stable=0`` too (where the spec allows
      any of several answers).
    * ``sort="none"`` (spec: undefined order) gives the ``sort="value"`` order.
    * Integers are compared exactly, never through float, so int64 beyond 2**53 and uint64
      stay exact.
    """
    data = np.asarray(data)
    attrs = TOP_K.parse_attributes(
        {"axis": axis, "mode": mode, "sort": sort, "stable": stable, "index_element_type": index_element_type}
    )
    TOP_K.check_dtype("data", data.dtype)
    axis, k = _validate(data, np.asarray(k), attrs["axis"], attrs["index_element_type"])
    return _top_k(data, k, axis, attrs["mode"], attrs["sort"], INDEX_ELEMENT_TYPES[attrs["index_element_type"]])


def _validate(data: np.ndarray, k: np.ndarray, axis: int, index_element_type: str) -> tuple[int, int]:
    """``(axis in [0, rank - 1], k)``, or OpError. Written apart from the kernel's checks
    (``checks.check_top_k``) on purpose: tests hold those against this."""
    rank = data.ndim
    if axis < -rank or axis >= rank:
        bounds = f"is outside [{-rank}, {rank - 1}] for rank {rank}" if rank else "is refused: a rank-0 tensor has no axis (the rank must be at least 1)"
        raise OpError("TopK", f"axis={axis} {bounds}", kind="axis")
    axis = axis + rank if axis < 0 else axis
    if k.dtype.kind not in "iu":
        raise OpError("TopK", f"input 'k' has dtype {k.dtype}; it must be an integer type", kind="dtype")
    if k.shape not in ((), (1,)):
        raise OpError("TopK", f"input 'k' has shape {k.shape}; it must be a scalar: shape () or (1,)", kind="shape")
    k_value, length = int(k.reshape(-1)[0]), data.shape[axis]
    if k_value < 1 or k_value > length:
        bounds = f"[1, {length}]" if length else "empty because the axis has length 0"
        raise OpError("TopK", f"k={k_value} is outside {bounds} for axis {axis} of shape {data.shape}", kind="k_range")
    if index_element_type == "i32" and length > INT32_MAX + 1:
        raise OpError("TopK", f"axis {axis} of shape {data.shape} has indices up to {length - 1}, above the int32 "
                      f"maximum {INT32_MAX}; use index_element_type='i64'", kind="precision")
    return axis, k_value


def _top_k(data: np.ndarray, k: int, axis: int, mode: str, sort: str, index_dtype: np.dtype) -> TopKResult:
    # NumPy sorts along an axis of an array of at most 32 dimensions (a RuntimeError above):
    # work on the [outer, dim, inner] view, the same slices along axis 1, for every rank.
    shape = data.shape
    data = data.reshape(math.prod(shape[:axis]), shape[axis], math.prod(shape[axis + 1 :]))
    axis, out_shape = 1, shape[:axis] + (k,) + shape[axis + 1 :]

    # Dense rank of every element in ortops' total order. np.unique sorts NaN last and merges
    # all NaNs (equal_nan=True); -0.0 and +0.0 compare equal, so they share a rank. The ranks
    # compare exactly like the values, for every dtype, without any conversion.
    _, rank = np.unique(data, return_inverse=True, equal_nan=True)
    rank = rank.reshape(data.shape)
    key = -rank if mode == "max" else rank

    # A stable sort along the axis: equal keys keep their input order (lower index first).
    order = np.argsort(key, axis=axis, kind="stable")
    selected = np.take(order, np.arange(k), axis=axis)
    if sort == "index":
        selected = np.sort(selected, axis=axis)

    values = np.take_along_axis(data, selected, axis=axis)
    return TopKResult(values.reshape(out_shape), selected.astype(index_dtype).reshape(out_shape))
