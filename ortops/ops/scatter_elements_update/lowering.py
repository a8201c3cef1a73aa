"""OpenVINO ScatterElementsUpdate-12 as standard ONNX ops (see :mod:`ortops.lowering`).

ONNX ScatterElements (reduction from opset 16, min/max from 18) applies the updates in
row-major order of the indices: with ``none`` the last duplicate wins, as in ortops. What
differs, and how the composition makes it exact:

* ``axis`` is an input here and an attribute there: it must be a constant.
* Float sum, prod and mean: ORT accumulates float32 in float32; ortops accumulates in float64
  and rounds once. The composition widens float32 to float64 and casts back once (exact).
  float16/bfloat16 would need one rounding from float64, and ORT casts float64 to them
  through float32 (two roundings): not lowered.
* Integer mean: ortops' mean is exact and floors; the composition sums in int64 (exact for
  types up to 32 bits) and floors with ``(s - Mod(s, n)) / n``. int64/uint64 sums can
  overflow int64: not lowered.
* ``use_init_val=0``: the targets are first set to the reduction's identity (ScatterElements
  ``none``), then reduced.
* Float min/max: ORT keeps the later operand on ties and replaces a NaN accumulator with the
  next update; ortops keeps the earlier and propagates NaN. They agree unless a NaN or a -0.0
  takes part: the hazard (guarded mode routes such input to the PyOp). The exact path
  reduces NaN-free values, and a second, integer ``min`` scatter finds per target whether a
  NaN took part and the sign of its first zero (a zero result takes the first zero's sign).
* bool min/max (AND/OR) go through uint8; bool sum/prod are ORT's add/mul on bool (OR/AND).
* uint64 indices: Cast to int64 would wrap large values into valid negative ones: not lowered.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from ... import dtypes
from ..compose import NotLowerable, static_size
from .reference import reduction_identity

__all__ = ["prepare", "checks", "hazards", "fast", "exact", "session_path", "CONSTANT_INPUTS", "SMALL"]

#: The inputs that must be constants for the node to be lowered.
CONSTANT_INPUTS = ("axis",)

_ONNX_REDUCTION = {"none": "none", "sum": "add", "prod": "mul", "min": "min", "max": "max", "mean": "add"}
_FLOATS = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16)
_HALF = (TensorProto.FLOAT16, TensorProto.BFLOAT16)
_WIDE_INTS = (TensorProto.INT64, TensorProto.UINT64)
_NATIVE_INDICES = (TensorProto.INT32, TensorProto.INT64)
#: A key above every position key: 2**62 where ORT alone runs the model (guarded); 2**30 in a
#: standalone one, which OpenVINO's CPU plugin computes in int32 (it took 2**62 as 0), so that
#: fewer than 2**29 updates along the axis keep their keys below it there.
_BIG = {True: 2 ** 62, False: 2 ** 30}


#: The most elements of data and of updates, each, on which ``path="auto"`` lowers the node:
#: there the composition's fixed cost is below the bridge's (docs/performance.md).
SMALL = 8192


def session_path(attrs: dict, shapes: list, elem_types: list) -> str:
    """The faster exact path for a session (``OpSpec.session_path``): ``"lowered"`` where data
    and updates have static shapes of at most :data:`SMALL` elements each, else ``"pyop"``
    (ortops' NumPy kernel). Where the node cannot be lowered (the axis not a constant, float16
    sums, ...), the session keeps the PyOp all the same."""
    sizes = (static_size(shapes[0]), static_size(shapes[2]))  # data and updates
    return "lowered" if all(n is not None and n <= SMALL for n in sizes) else "pyop"


def _axis(site) -> int:
    return int(site.constants[3].reshape(-1)[0]) % site.ranks[0]


def prepare(site) -> int:
    data_t, index_t, update_t, _ = site.elem_types
    reduction = site.attrs["reduction"]
    axis = site.constants[3]
    if axis is None:
        raise NotLowerable("the axis input is not a constant (ONNX ScatterElements takes the axis as an attribute)")
    rank = site.ranks[0]
    if axis.size != 1 or axis.dtype.kind not in "iu" or not -rank <= int(axis.reshape(-1)[0]) < rank:
        raise NotLowerable(f"the axis {axis.tolist()} is not an integer in [-{rank}, {rank - 1}] (the PyOp raises)")
    if len(set(site.ranks[:3])) != 1 or update_t != data_t:
        raise NotLowerable("data, indices and updates differ in rank or type (the PyOp raises)")
    if index_t == TensorProto.UINT64:
        raise NotLowerable("uint64 indices: ONNX takes int32/int64 indices, and a Cast to int64 would turn indices "
                           "above the int64 maximum into valid negative ones")
    if reduction == "mean" and data_t == TensorProto.BOOL:
        raise NotLowerable("mean of bool data (the PyOp raises)")
    if data_t in _HALF and reduction in ("sum", "prod", "mean"):
        raise NotLowerable(f"{reduction} of {dtypes.onnx_name(data_t)}: ortops rounds the float64 result once, and "
                           "ORT casts float64 to it through float32 (two roundings)")
    if data_t in _WIDE_INTS and reduction == "mean":
        raise NotLowerable(f"mean of {dtypes.onnx_name(data_t)}: the sum can overflow int64; ortops' mean is exact")
    opset = {"none": 11, "sum": 16, "prod": 16, "mean": 16, "min": 18, "max": 18}[reduction]
    return max(13, opset) if data_t == TensorProto.BFLOAT16 else opset


def _compute_type(site) -> int:
    data_t, reduction = site.elem_types[0], site.attrs["reduction"]
    if reduction in ("sum", "prod", "mean") and data_t == TensorProto.FLOAT:
        return TensorProto.DOUBLE
    if reduction == "mean" and data_t not in _FLOATS:
        return TensorProto.INT64
    if data_t in _HALF:
        return TensorProto.FLOAT
    if data_t == TensorProto.BOOL and reduction in ("min", "max"):
        return TensorProto.UINT8
    return data_t


def _inputs(b, site) -> tuple[str, str, str]:
    """data and updates in the compute type, indices as int32/int64 (memoised per graph)."""
    data, indices, updates, _ = site.node.input
    compute = _compute_type(site)

    def as_compute(name: str) -> str:
        if compute == site.elem_types[0]:
            return name
        return b.memo(("cast", name, compute), lambda: b.cast(name, compute))

    if site.elem_types[1] not in _NATIVE_INDICES:
        indices = b.memo(("cast", indices, TensorProto.INT64), lambda: b.cast(indices, TensorProto.INT64))
    return as_compute(data), indices, as_compute(updates)


def checks(b, site) -> list[tuple[str, str]]:
    data, _, updates, _ = site.node.input
    indices = _inputs(b, site)[1]  # int32 or int64: ReduceMin/Max take those
    axis = _axis(site)
    data_shape, index_shape = b.add("Shape", [data]), b.add("Shape", [indices])
    dim = b.add("Gather", [data_shape, b.const(np.int64(axis))])
    empty = b.add("Equal", [b.add("Size", [indices]), b.const(np.int64(0))])
    in_range = b.add("Or", [empty, _in_range(b, site, indices, dim)])
    axis_mask = np.zeros(site.ranks[0], bool)
    axis_mask[axis] = True
    fits = b.add("And", [
        b.add("Equal", [b.add("Shape", [updates]), index_shape]),
        b.add("Or", [b.add("Not", [b.add("Greater", [index_shape, data_shape])]), b.const(axis_mask)]),
    ])
    shapes_ok = b.add("Equal", [b.reduce("ReduceMin", b.cast(fits, TensorProto.INT64)), b.const(np.int64(1))])
    return [(shapes_ok, "updates must have the shape of indices, and indices.shape[d] <= data.shape[d] for every "
                        "d but the axis"),
            (in_range, "every index must be in [-d, d-1] for d = data.shape[axis]")]


def _in_range(b, site, indices: str, dim: str) -> str:
    """True when every index is in [-dim, dim - 1] (any when there is none). Guarded (ORT): from
    the smallest and the largest index. Standalone: each index's distance to the bounds against
    0, as OpenVINO 2026.4.1 compares integers as float32 and computes arithmetic that follows an
    integer reduction in float32 (docs/lowering.md)."""
    zero = b.const(np.zeros(1, np.int32 if site.elem_types[1] == TensorProto.INT32 else np.int64))
    flat = b.add("Concat", [b.add("Reshape", [indices, b.const(np.array([-1], np.int64))]), zero], axis=0)
    if b.guarded:
        low = b.cast(b.reduce("ReduceMin", flat), TensorProto.INT64)
        high = b.cast(b.reduce("ReduceMax", flat), TensorProto.INT64)
        return b.all_of([b.add("Not", [b.add("Less", [low, b.add("Neg", [dim])])]), b.add("Less", [high, dim])])
    flat = b.cast(flat, TensorProto.INT64) if site.elem_types[1] == TensorProto.INT32 else flat
    inside = b.add("And", [b.add("Not", [b.exceeds(b.add("Neg", [dim]), flat)]), b.exceeds(dim, flat)])
    return b.add("Equal", [b.reduce("ReduceMin", b.cast(inside, TensorProto.INT64)), b.const(np.int64(1))])


def _float_min_max(site) -> bool:
    return site.attrs["reduction"] in ("min", "max") and site.elem_types[0] in _FLOATS


def _no_updates(site) -> bool:
    """Updates of a static size 0: the result is data (OpenVINO 2026.4 fails to compile the
    float16 min/max ``If`` of such a model)."""
    return static_size(site.shapes[2]) == 0


def hazards(b, site) -> list[str]:
    if not _float_min_max(site) or _no_updates(site):
        return []
    data, _, updates = _inputs(b, site)
    operands = [updates, data] if site.attrs["use_init_val"] else [updates]
    result = []
    for x in operands:
        # sum(1/x): NaN for a NaN (or -0.0 next to +0.0), -inf for a -0.0 (or a tiny negative).
        total = b.reduce("ReduceSum", b.add("Reciprocal", [x]))
        result.append(b.add("Not", [b.add("Or", [b.add("IsNaN", [total]),
                                                 b.add("IsInf", [total], detect_positive=0)])]))
    return result


def _fill(b, like: str, value, elem: int) -> str:
    """A tensor of the shape of ``like`` filled with ``value`` of ONNX type ``elem``."""
    array = np.array([value], dtype=dtypes.from_onnx(elem).numpy)
    return b.add("ConstantOfShape", [b.add("Shape", [like])],
                 value=helper.make_tensor("value", elem, [1], array.tolist()))


def _scatter(b, site, data: str, indices: str, updates: str, reduction: str) -> str:
    attrs = {} if reduction == "none" else {"reduction": reduction}
    return b.add("ScatterElements", [data, indices, updates], axis=_axis(site), **attrs)


def _start(b, site, data: str, indices: str, identity, elem: int) -> str:
    """``data``, with the targets set to ``identity`` when ``use_init_val=0``."""
    if site.attrs["use_init_val"]:
        return data
    return _scatter(b, site, data, indices, _fill(b, indices, identity, elem), "none")


def _identity(site, elem: int):
    reduction = site.attrs["reduction"]
    if site.elem_types[0] == TensorProto.BOOL:
        return int(reduction_identity(reduction, np.dtype(bool)))
    return reduction_identity(reduction, dtypes.from_onnx(elem).numpy)


def fast(b, site) -> list[str]:
    if _no_updates(site):
        return [b.add("Identity", [site.node.input[0]])]
    data, indices, updates = _inputs(b, site)
    compute, reduction = _compute_type(site), site.attrs["reduction"]
    if reduction == "none":
        result = _scatter(b, site, data, indices, updates, "none")
    elif reduction != "mean":
        start = _start(b, site, data, indices, _identity(site, compute), compute)
        result = _scatter(b, site, start, indices, updates, _ONNX_REDUCTION[reduction])
    else:
        total = _scatter(b, site, _start(b, site, data, indices, 0, compute), indices, updates, "add")
        count = _scatter(b, site, _start(b, site, _fill(b, data, 1, compute), indices, 0, compute), indices,
                         _fill(b, indices, 1, compute), "add")
        if compute == TensorProto.DOUBLE:
            result = b.add("Div", [total, count])
        else:  # floor((s) / n) for n > 0: Mod takes the divisor's sign
            result = b.add("Div", [b.add("Sub", [total, b.add("Mod", [total, count])]), count])
    return [result if compute == site.elem_types[0] else b.cast(result, site.elem_types[0])]


def exact(b, site) -> list[str]:
    """Float min/max with NaN and signed zeros (see the module's notes)."""
    data, indices, updates = _inputs(b, site)
    compute, reduction = _compute_type(site), site.attrs["reduction"]
    numpy_type = dtypes.from_onnx(compute).numpy
    zero = b.const(np.zeros((), numpy_type))
    axis = _axis(site)

    def finite(x: str) -> str:  # NaN -> 0; the value in Where's Y keeps its sign
        return b.add("Where", [b.add("IsNaN", [x]), zero, x])

    def key(x: str, base) -> str:
        """-4 for NaN; for a zero, its position key (``base``) plus 1 if it is -0.0; else big."""
        negative = b.cast(b.add("Less", [b.add("Reciprocal", [x]), zero]), TensorProto.INT64)
        zero_key = b.add("Add", [base, negative])
        big = b.const(np.int64(_BIG[b.guarded]))
        return b.add("Where", [b.add("IsNaN", [x]), b.const(np.int64(-4)),
                               b.add("Where", [b.add("Equal", [x, zero]), zero_key, big])])

    identity = _identity(site, compute)
    values = _scatter(b, site, _start(b, site, finite(data), indices, identity, compute), indices, finite(updates),
                      reduction)
    # Position keys of the updates along the axis (2 * position, +1 for -0.0): the first zero
    # in row-major order of one target has the smallest key; data's zero comes before all (-2).
    count = b.add("Gather", [b.add("Shape", [indices]), b.const(np.int64(axis))])
    positions = b.add("Range", [b.const(np.int64(0)), count, b.const(np.int64(1))])
    line = [1] * site.ranks[0]
    line[axis] = -1
    positions = b.add("Mul", [b.add("Reshape", [positions, b.const(np.array(line, np.int64))]),
                              b.const(np.int64(2))])
    start_keys = _start(b, site, key(data, b.const(np.int64(-2))), indices, _BIG[b.guarded], TensorProto.INT64)
    keys = _scatter(b, site, start_keys, indices, key(updates, positions), "min")
    # A zero result takes the sign of the first zero. Not by Where(c, zero, -0.0): ORT's
    # optimiser rewrites Where(Not(c), x, y) to Where(c, y, x), and Where turns a -0.0 taken
    # from its first value into +0.0. Instead +0.0 * -1.0 gives -0.0.
    is_zero = b.add("Equal", [values, zero])
    negative_zero = b.add("And", [is_zero, b.add("Equal", [b.add("Mod", [keys, b.const(np.int64(2))]),
                                                           b.const(np.int64(1))])])
    factor = b.add("Where", [negative_zero, b.const(np.array(-1, numpy_type)), b.const(np.array(1, numpy_type))])
    result = b.add("Mul", [b.add("Where", [is_zero, zero, values]), factor])
    result = b.add("Where", [b.add("Equal", [keys, b.const(np.int64(-4))]), b.const(np.array(np.nan, numpy_type)),
                             result])
    return [result if compute == site.elem_types[0] else b.cast(result, site.elem_types[0])]
