"""Portable selection: the k best elements of every slice, composed of standard ONNX ops
whose answer does not depend on how a runtime orders equal values.

ONNX TopK-11 says the lower index comes first among equal values, and ORT's TopK does so, but
OpenVINO's ONNX frontend reads it as its own TopK with ``stable=false``: on larger slices the
order of ties (and which of the tied elements is selected at the k-th place) differs. The
compositions here use a runtime's TopK only where its answer is order-free:

* the k-th best value itself (the last of TopK's sorted values, or, for finite values, the
  worst of its unsorted ones: the same multiset in any order);
* a TopK over keys that are all distinct.

The selected set is then every element better than the k-th value, plus the lowest-indexed
elements equal to it (a running count, ``CumSum``); the selected elements are put in ascending
index order (``NonZero`` along the last axis, else a ``ScatterElements`` to their running slot),
and ordered by value through the
distinct keys ``(group of equal values, tier, slot)``. NaN ranks above +inf, all NaNs equal
(ortops' TopK and ArgMax, and ``standard=True``'s rule): it stands in as +inf for the
comparisons, and a tier puts NaN before (largest) or after (smallest) the real +inf.

Used by the standalone lowerings (``fallback="none"``) of ``ortops/ops/*/lowering.py`` and by
``ortops.lower(..., standard=True)`` (:mod:`ortops.standard`). ``b`` is an
:class:`ortops.lowering.Builder`.
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper, numpy_helper

__all__ = ["PORTABLE", "PAIRWISE_MAX", "wide_int", "best", "pairwise", "positions", "prefiltered", "finite", "dim",
           "with_axes", "in_blocks", "block_index"]

#: Key types widened (exactly) before the selection, to the types every runtime compares,
#: reduces and sorts (ORT's Greater/Equal/ReduceMin/TopK lack some small integer types).
PORTABLE = {TensorProto.INT8: TensorProto.INT32, TensorProto.UINT8: TensorProto.INT32,
            TensorProto.INT16: TensorProto.INT32, TensorProto.UINT16: TensorProto.INT32,
            TensorProto.UINT32: TensorProto.INT64, TensorProto.FLOAT16: TensorProto.FLOAT,
            TensorProto.BFLOAT16: TensorProto.FLOAT}
_INT64_MAX = np.iinfo(np.int64).max
#: The longest static slice :func:`pairwise` is used on (n² comparisons; a dozen nodes).
PAIRWISE_MAX = 64


#: The default-domain opset from which each op takes its ``axes`` as an input, not an attribute.
_AXES_INPUT = {"Squeeze": 13, "Unsqueeze": 13, "ReduceSum": 13, "ReduceMax": 18, "ReduceMin": 18}


def with_axes(b, op_type: str, x: str, axes: list[int], **attrs) -> str:
    """``op_type`` (:data:`_AXES_INPUT`) of ``x`` over ``axes``: an input or an attribute, by ``b.opset``."""
    if b.opset >= _AXES_INPUT[op_type]:
        return b.add(op_type, [x, b.const(np.array(axes, np.int64))], **attrs)
    return b.add(op_type, [x], axes=axes, **attrs)


def positions(b, x: str, axis: int) -> str:
    """0, 1, 2, ... along ``axis``, int64, in the shape of ``x``."""
    ones = b.add("ConstantOfShape", [b.add("Shape", [x])], value=numpy_helper.from_array(np.ones(1, np.int64)))
    return b.add("CumSum", [ones, b.const(np.int64(axis))], exclusive=1)


def dim(b, x: str, axis: int) -> str:
    """The length of ``x`` along ``axis``, int64 ``[1]``."""
    return b.add("Gather", [b.add("Shape", [x]), b.const(np.array([axis], np.int64))])


def _count(b, mask: str, axis: int, exclusive: int = 1) -> str:
    """The running count of ``mask`` along ``axis`` (int64; exclusive: before each element)."""
    return b.add("CumSum", [b.cast(mask, TensorProto.INT64), b.const(np.int64(axis))], exclusive=exclusive)


def _total(b, x: str, axis: int) -> str:
    """The sum of ``x`` (int64) along ``axis``, kept: the last of a running sum. Not ReduceSum:
    OpenVINO 2026.4.1's CPU plugin fuses a ReduceSum over the last axis of a rank-3 tensor with a
    following ``k - sum`` into a wrong result (e.g. [-1, 3, 3, 3] for [-1, 1, -4, -4] on a
    [4, 1, 5] input); a running sum was not fused."""
    running = b.add("CumSum", [x, b.const(np.int64(axis))])
    return _slice(b, running, -1, _INT64_MAX, axis)


#: The key types whose values a runtime may compare inexactly, and so compared by
#: :func:`_compare`: OpenVINO 2026.4.1's CPU plugin compares int32 and int64 as float32, which
#: holds them exactly only up to 2**24 (the narrower integer types are widened to int32 here, and
#: hold at most 2**16).
_WIDE_INTS = {TensorProto.INT32: np.int32, TensorProto.INT64: np.int64}


def wide_int(elem: int, key_elem: int):
    """The NumPy type :func:`best` and :func:`pairwise` take as ``integer`` for data of ONNX type
    ``elem`` compared as ``key_elem``: the key's type when the data may pass 2**24, else None."""
    return _WIDE_INTS.get(key_elem) if elem in (TensorProto.INT32, TensorProto.INT64, TensorProto.UINT32) else None


def _compare(b, op: str, x: str, y: str, integer) -> str:
    """``op`` (``Greater``, ``Less`` or ``Equal``) of ``x`` and ``y``. For ``integer`` keys (their
    NumPy type; None for others): from their signs and, where the signs agree, the sign of their
    difference (which cannot overflow there), each compared with 0, which float32 does exactly."""
    if integer is None:
        return b.add(op, [x, y])
    zero = b.const(np.zeros((), integer))
    x_negative, y_negative = b.add("Less", [x, zero]), b.add("Less", [y, zero])
    same_sign = b.add("Equal", [x_negative, y_negative])
    by_difference = b.add("And", [same_sign, b.add(op, [b.add("Sub", [x, y]), zero])])
    if op == "Equal":
        return by_difference
    first, second = (y_negative, x_negative) if op == "Greater" else (x_negative, y_negative)
    return b.add("Or", [b.add("And", [first, b.add("Not", [second])]), by_difference])


def _slice(b, x: str, start: int, end: int, axis: int) -> str:
    return b.add("Slice", [x, *(b.const(np.array([v], np.int64)) for v in (start, end, axis))])


def _nan_as_inf(b, key: str, nan: bool, dtype) -> tuple[str | None, str]:
    """(``IsNaN(key)``, ``key`` with NaN standing in as +inf), or (None, ``key``) without ``nan``."""
    if not nan:
        return None, key
    is_nan = b.add("IsNaN", [key])  # Where keeps -0.0 only from its last input: the data goes there
    return is_nan, b.add("Where", [is_nan, b.const(np.array(np.inf, dtype)), key])


def best(b, key: str, k: str, axis: int, largest: int, *, nan: bool, by_index: bool = False,
         k_static: int | None = None, dtype=np.float32, rank: int | None = None,
         bounded: bool = False, integer=None) -> tuple[str, str]:
    """(values, int64 indices) of the k best elements of every slice of ``key`` along ``axis``:
    by value (descending for ``largest``, ascending otherwise), the lower index first among
    equal values (-0.0 == +0.0), or in ascending index order with ``by_index``; whatever order
    the runtime's TopK gives equal values.

    ``key`` is a tensor of a type in none of :data:`PORTABLE`'s keys; ``k`` an int64 ``[1]``
    in [1, dim] (``k_static`` its value when constant); ``nan``: ``key`` may hold NaN, which
    ranks above +inf, all NaNs equal (without it, NaN must not occur); ``dtype`` the NumPy
    float type of ``key`` when ``nan``; ``rank`` the rank of ``key`` when known; ``bounded``:
    the k best of every slice are finite (a cheaper k-th value); ``integer``: the NumPy type of an
    integer ``key`` whose values may pass 2**24 (:func:`wide_int`), compared exactly by
    :func:`_compare` (and never ``bounded``).
    """
    is_nan, finite = _nan_as_inf(b, key, nan, dtype)
    chosen = _chosen(b, finite, is_nan, k, axis, largest, k_static, bounded and integer is None, integer)
    if k_static == 1:  # one element: the one maximum of the mask. Not Where(chosen, positions): OpenVINO
        # 2026.4.1 fuses it with the float comparisons before it and rounds the positions to float32.
        index = b.add("ArgMax", [b.cast(chosen, TensorProto.INT32)], axis=axis, keepdims=1)
        return b.add("GatherElements", [key, index], axis=axis), index
    index = _compact(b, chosen, k, key, axis, rank)  # ascending index order
    if by_index:
        return b.add("GatherElements", [key, index], axis=axis), index
    stand_in = b.add("GatherElements", [finite, index], axis=axis)
    sorted_values, slot = b.add("TopK", [stand_in, k], 2, axis=axis, largest=largest, sorted=1)
    group = _groups(b, sorted_values, axis, integer)
    if nan:  # NaN and +inf share a group: NaN first for largest, after the real +inf otherwise
        nan_here = b.add("GatherElements", [b.cast(is_nan, TensorProto.INT64), index], axis=axis)
        nan_slot = b.add("GatherElements", [nan_here, slot], axis=axis)
        tier = b.add("Sub", [b.const(np.int64(1)), nan_slot]) if largest else nan_slot
        group = b.add("Add", [b.add("Mul", [group, b.const(np.int64(2))]), tier])
    index = b.add("GatherElements", [index, b.add("GatherElements", [slot, _order(b, group, slot, k, k, axis)],
                                                  axis=axis)], axis=axis)
    return b.add("GatherElements", [key, index], axis=axis), index


def _groups(b, sorted_values: str, axis: int, integer=None) -> str:
    """The groups of equal values of ``sorted_values`` (sorted along ``axis``; their members'
    order is the runtime's), int64, numbered by a running count of the places where the value
    changes."""
    previous = b.add("Concat", [_slice(b, sorted_values, 0, 1, axis), _slice(b, sorted_values, 0, -1, axis)],
                     axis=axis)
    return _count(b, b.add("Not", [_compare(b, "Equal", sorted_values, previous, integer)]), axis, exclusive=0)


def _order(b, group: str, slot: str, width: str, k: str, axis: int) -> str:
    """The order (int64 positions) of the distinct keys ``(group, slot)``, ascending: within a
    group, the lower ``slot`` first (int64, distinct, below ``width``)."""
    keys = b.add("Add", [b.add("Mul", [group, width]), slot])
    return b.add("TopK", [keys, k], 2, axis=axis, largest=0, sorted=1)[1]


def _chosen(b, finite: str, is_nan: str | None, k: str, axis: int, largest: int, k_static: int | None,
            bounded: bool = False, integer=None) -> str:
    """Boolean, in the shape of ``finite``: the element is one of the k best of its slice;
    ``bounded``: the k best of every slice are finite numbers."""
    if bounded and k_static != 1:
        # The k-th best value, the worst of the k (order-free; unsorted is cheaper). Only for
        # finite values: OpenVINO 2026.4's CPU ReduceMin of +inf alone is the largest finite
        # float, ReduceMax of -inf alone the lowest.
        values, _ = b.add("TopK", [finite, k], 2, axis=axis, largest=largest, sorted=0)
        kth = with_axes(b, "ReduceMin" if largest else "ReduceMax", values, [axis], keepdims=1)
    else:  # the k-th best value, the last of the k sorted (order-free)
        values, _ = b.add("TopK", [finite, k], 2, axis=axis, largest=largest, sorted=1)
        kth = values if k_static == 1 else \
            b.add("Gather", [values, b.add("Sub", [k, b.const(np.array([1], np.int64))])], axis=axis)
    better = _compare(b, "Greater" if largest else "Less", finite, kth, integer)
    equal = _compare(b, "Equal", finite, kth, integer)
    # How many are better; each equal one's place among the k is that plus the equal ones before
    # it. In the prefilter (bounded) a ReduceSum, added, not subtracted: OpenVINO fused `k - sum`
    # wrongly (see _total), and the prefilter's tests run rank-3 inputs there.
    ahead = _total(b, b.cast(better, TensorProto.INT64), axis) if not bounded else \
        with_axes(b, "ReduceSum", b.cast(better, TensorProto.INT64), [axis], keepdims=1)
    if is_nan is None:
        rank = b.add("Add", [_count(b, equal, axis), ahead])  # the place among the k: below k is chosen
    else:  # among the equal (only +inf can be NaN's equal): NaN first for largest, last for smallest
        nan_equal = b.add("And", [equal, is_nan])
        real_equal = b.add("And", [equal, b.add("Not", [is_nan])])
        first, second = (nan_equal, real_equal) if largest else (real_equal, nan_equal)
        before = _total(b, b.cast(first, TensorProto.INT64), axis)
        rank = b.add("Where", [first, _count(b, first, axis), b.add("Add", [before, _count(b, second, axis)])])
        rank = b.add("Add", [rank, ahead])
    # k > rank as a difference (Builder.exceeds): k may pass 2**24 (docs/lowering.md).
    return b.add("Or", [better, b.add("And", [equal, b.exceeds(k, rank)])])


def _compact(b, chosen: str, k: str, like: str, axis: int, rank: int | None) -> str:
    """The positions of the k chosen elements of every slice, ascending, int64. Along the last
    axis (``rank`` known): the last coordinate of ``NonZero``, which lists the chosen elements
    in row-major order, k per slice. Otherwise each chosen element's running count is its slot
    in a ``ScatterElements``; the others go to a slot k, cut off."""
    if rank is not None and axis == rank - 1:
        last = b.add("Gather", [b.add("NonZero", [chosen]), b.const(np.int64(axis))], axis=0)
        shape = b.add("Concat", [_slice(b, b.add("Shape", [like]), 0, -1, 0), k], axis=0)
        # Reshape reads a 0 in the shape as "keep the input's dimension" (allowzero needs opset
        # 14). Where a dimension is 0 there is no element: one stand-in element is reshaped to
        # ones and expanded to the shape. No size is multiplied: OpenVINO's CPU plugin computes
        # integers past 2**24 as float32.
        empty = b.add("Equal", [b.add("ReduceMin", [shape], keepdims=1), b.const(np.zeros(1, np.int64))])
        stand_in = b.add("Slice", [b.const(np.zeros(1, np.int64)), b.const(np.zeros(1, np.int64)),
                                   b.cast(empty, TensorProto.INT64)])
        target = b.add("Where", [empty, b.const(np.ones(1, np.int64)), shape])
        return b.add("Expand", [b.add("Reshape", [b.add("Concat", [last, stand_in], axis=0), target]), shape])
    slot = _count(b, chosen, axis)
    target = b.add("Where", [chosen, slot, k])
    shape = b.add("Shape", [like])
    wider = b.add("ScatterElements", [shape, b.const(np.array([axis], np.int64)),
                                      b.add("Add", [k, b.const(np.array([1], np.int64))])], axis=0)
    slots = b.add("ConstantOfShape", [wider], value=numpy_helper.from_array(np.zeros(1, np.int64)))
    filled = b.add("ScatterElements", [slots, target, positions(b, like, axis)], axis=axis)
    return b.add("Slice", [filled, b.const(np.array([0], np.int64)), k, b.const(np.array([axis], np.int64))])


def in_blocks(b, key: str, n: int, block: int, rank: int, pad, first: bool = False) -> str:
    """``key`` (static length ``n`` along its last axis) padded with ``pad`` to whole blocks and
    reshaped to ``[..., m, block]`` (once per builder). The padding goes where ties rank it last:
    after every real index, or before them with ``first`` (an order that puts the higher index first)."""
    blocks = -(-n // block)
    first = first and blocks * block != n

    def make():
        x = key
        if blocks * block != n:
            pads = np.zeros(2 * rank, np.int64)
            pads[rank - 1 if first else 2 * rank - 1] = blocks * block - n
            x = b.add("Pad", [x, b.const(pads), b.const(pad)], mode="constant")
        return b.add("Reshape", [x, b.const(np.array([0] * (rank - 1) + [blocks, block], np.int64))])

    return b.memo(("blocks", key, block, first, np.asarray(pad).tobytes()), make)


def block_index(b, chosen: str, places: str, block: int, axis: int) -> str:
    """A candidate's index in its slice, from its place (``places``, int64) among the elements
    of the blocks ``chosen`` (their numbers, in that order) of ``block`` elements each."""
    if block == 1:
        return b.add("GatherElements", [chosen, places], axis=axis)
    width = b.const(np.array(block, np.int64))
    first = b.add("Mul", [b.add("GatherElements", [chosen, b.add("Div", [places, width])], axis=axis), width])
    return b.add("Add", [first, b.add("Mod", [places, width])])


def finite(b, key: str, n: int, block: int, rank: int, pad) -> str:
    """True when ``key`` (a float tensor) holds neither NaN nor an infinity (its sum, by blocks,
    is finite; an overflowing sum also says no, which only costs the slower path): the
    condition under which :func:`prefiltered` is exact in every runtime. A padded ``key`` is
    summed per slice (its padding is infinite)."""
    if -(-n // block) * block == n:
        sums = with_axes(b, "ReduceSum", in_blocks(b, key, n, block, rank, pad), [rank], keepdims=0)
    else:
        sums = with_axes(b, "ReduceSum", key, [rank - 1], keepdims=0)
    total = b.reduce("ReduceSum", sums)
    return b.add("Not", [b.add("Or", [b.add("IsNaN", [total]), b.add("IsInf", [total])])])


def prefiltered(b, key: str, k: int, n: int, block: int, rank: int, pad, largest: int,
                by_index: bool) -> tuple[str, str]:
    """:func:`best` along the last axis (static length ``n``, constant ``k``) on the candidates
    of a block-maxima prefilter: ``key`` cut into blocks of ``block`` (the last one padded with
    ``pad``, a value no real element ranks after), each block reduced to its best, the k best
    blocks chosen (the lower block first among equal maxima), their elements gathered and k
    chosen among them. Exact: every block holding a selected element is chosen (see
    :mod:`ortops.ops.prefilter`).

    Each choice is a runtime's TopK of k + 1, order-free where the k-th best value beats the
    (k+1)-th in every slice: the k chosen are then the one set of the k best, whatever order the
    runtime gives equal values, and the order within the set comes from the distinct keys
    (group of equal values, index). Where a tie straddles the k-th place (in the block maxima or
    the candidates), both choices are made by :func:`best` instead (an ``If``), on candidates in
    ascending index order, padding last.

    A float ``key`` must hold no NaN and no infinity (:func:`finite`): OpenVINO 2026.4.1's CPU
    ``ReduceMax`` of a block of only -inf is the lowest finite float (``ReduceMin`` of only +inf
    the largest), which would tie a real one; with a real element in every block it is exact."""
    axis, m = rank - 1, -(-n // block)
    x = in_blocks(b, key, n, block, rank, pad)
    maxima = with_axes(b, "ReduceMax" if largest else "ReduceMin", x, [rank], keepdims=0)
    kk = b.const(np.array([k], np.int64))

    def candidates(b, chosen):  # the chosen blocks' elements, [..., k * block]
        index = with_axes(b, "Unsqueeze", chosen, [-1])
        return b.add("Reshape", [b.add("GatherND", [x, index], batch_dims=axis),
                                 b.const(np.array([0] * axis + [k * block], np.int64))])

    def by_best(b):
        _, chosen = best(b, maxima, kk, axis, largest, nan=False, by_index=True, k_static=k, rank=rank, bounded=True)
        values, places = best(b, candidates(b, chosen), kk, axis, largest, nan=False, by_index=by_index, k_static=k,
                              rank=rank, bounded=True)  # at least k real candidates: the k best are finite
        return [values, block_index(b, chosen, places, block, axis)]

    if m == k or block == 1:  # no (k+1)-th block or candidate
        return tuple(by_best(b))
    kk1 = b.const(np.array([k + 1], np.int64))
    separate = []  # per choice: the k-th best value differs from the (k+1)-th in every slice

    def top(values):  # the set of the k best by a TopK of k + 1; its places
        sorted_values, places = b.add("TopK", [values, kk1], 2, axis=axis, largest=largest, sorted=1)
        tied = b.add("Equal", [_slice(b, sorted_values, k - 1, k, axis), _slice(b, sorted_values, k, k + 1, axis)])
        separate.append(b.reduce("ReduceMin", b.cast(b.add("Not", [tied]), TensorProto.INT32)))
        return _slice(b, sorted_values, 0, k, axis), _slice(b, places, 0, k, axis)

    _, chosen = top(maxima)  # in no particular order: the candidates' indices are mapped back
    sorted_values, places = top(candidates(b, chosen))
    index = block_index(b, chosen, places, block, axis)
    if by_index:  # ascending (distinct keys)
        index = b.add("TopK", [index, kk], 2, axis=axis, largest=0, sorted=1)[0]
    else:  # equal values by ascending index (distinct keys)
        index = b.add("GatherElements", [index, _order(b, _groups(b, sorted_values, axis), index,
                                                       b.const(np.int64(n)), kk, axis)], axis=axis)
    fast = [b.add("GatherElements", [key, index], axis=axis), index]
    condition = b.cast(b.add("Mul", separate), TensorProto.BOOL)
    elem = helper.np_dtype_to_tensor_dtype(np.asarray(pad).dtype)
    return tuple(b.if_(condition, lambda sub: fast, by_best, [elem, TensorProto.INT64], [rank, rank]))


def pairwise(b, key: str, k: str, n: int, rank: int, largest: int, *, nan: bool, by_index: bool = False,
             dtype=np.float32, integer=None) -> tuple[str, str]:
    """:func:`best` along the last axis of static length ``n`` (at most :data:`PAIRWISE_MAX`)
    by comparing every pair: each element's place in the order is the number of elements that
    come before it (better, or equal with a lower index), a permutation of 0..n-1, so a TopK
    over it has distinct keys. Fewer nodes than :func:`best` (for tiny inputs, where each node's
    cost counts); ``nan``: NaN may occur and ranks above +inf; ``integer`` as for :func:`best`."""
    def unsqueeze(x, axis):
        return with_axes(b, "Unsqueeze", x, [axis])

    compare = "Greater" if largest else "Less"
    earlier = b.const(np.tril(np.ones((n, n), bool), -1))  # [i, j]: j < i
    is_nan, finite = _nan_as_inf(b, key, nan, dtype)
    mine, theirs = unsqueeze(finite, rank), unsqueeze(finite, rank - 1)  # [..., i, 1], [..., 1, j]
    better = _compare(b, compare, theirs, mine, integer)
    equal = _compare(b, "Equal", theirs, mine, integer)
    if nan:  # NaN and +inf compare equal here: NaN before +inf for largest, after it otherwise
        nan_mine, nan_theirs = unsqueeze(is_nan, rank), unsqueeze(is_nan, rank - 1)
        first, second = (nan_theirs, nan_mine) if largest else (nan_mine, nan_theirs)
        better = b.add("Or", [better, b.add("And", [first, b.add("Not", [second])])])
        equal = b.add("And", [equal, b.add("Equal", [nan_theirs, nan_mine])])
    before = b.add("Or", [better, b.add("And", [equal, earlier])])
    place = _total(b, b.cast(before, TensorProto.INT64), rank)  # [..., n, 1] (see _total)
    place = with_axes(b, "Squeeze", place, [rank])
    if by_index:
        position = positions(b, key, rank - 1)
        place = b.add("Where", [b.add("Less", [place, k]), position,
                                b.add("Add", [position, b.const(np.int64(n))])])
    _, index = b.add("TopK", [place, k], 2, axis=rank - 1, largest=0, sorted=1)
    return b.add("GatherElements", [key, index], axis=rank - 1), index
