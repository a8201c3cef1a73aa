"""ncnn ArgMax (``ortops.ncnn::ArgMax``) as standard ONNX ops (see :mod:`ortops.lowering`).

ncnn orders by value descending and, of equal values, the higher flat index first. ONNX TopK
(stable, the lower index first) gives that order on the reversed flattened data: a position
j there is the flat index n-1-j. NaN (above +inf, all equal) is the hazard, composed exactly
like TopK's (:func:`ortops.ops.compose.select`). Checks: topk <= the element count;
the selected flat indices must fit float32 exactly (<= 2**24): guarded mode sends tensors of
more than 2**24 + 1 elements to the PyOp, standalone mode checks the selected values against
the elements past 2**24 (not the indices as computed, which a runtime may compare as float32).
The element count comes from ``Shape``, not ``Size`` (see :func:`_size`).
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from ...checks import FLOAT32_EXACT_INT_MAX
from .. import prefilter
from ..compose import NAN_ORDER, NotLowerable, no_nan, select, static_size

__all__ = ["prepare", "checks", "hazards", "fast", "exact", "block_size", "session_path", "SMALL"]


def prepare(site) -> int:
    n = static_size(site.shapes[0])
    if n is not None and n < site.attrs["topk"]:
        # ONNX shape inference would refuse the composition when the session is created.
        raise NotLowerable(f"topk={site.attrs['topk']} exceeds the {n} elements of the static "
                           f"shape {tuple(site.shapes[0])} (the PyOp raises)")
    return 11


def _flat(b, site) -> str:
    data = site.node.input[0]
    return b.memo(("flat", data), lambda: b.add("Reshape", [data, b.const(np.array([-1], np.int64))]))


def _size(b, site) -> str:
    """The element count, a scalar: the shape of the flattened data, not ``Size``, as OpenVINO
    2026.4.1 computes arithmetic that follows ``Size`` in float32 (docs/lowering.md)."""
    data = site.node.input[0]
    return b.memo(("size", data), lambda: b.add("Reshape", [b.add("Shape", [_flat(b, site)]),
                                                             b.const(np.array([], np.int64))]))


def checks(b, site) -> list[tuple[str, str]]:
    size = _size(b, site)
    enough = b.add("Not", [b.exceeds(b.const(np.int64(site.attrs["topk"])), size)])
    result = [(enough, f"topk={site.attrs['topk']} must be at most the number of elements")]
    if b.guarded:
        exact = b.add("Not", [b.add("Greater", [size, b.const(np.int64(FLOAT32_EXACT_INT_MAX + 1))])])
        result.append((exact, "more elements than float32 indices hold exactly"))
    return result


def hazards(b, site) -> list[str]:
    block = _block(b, site)
    if block is not None:  # the prefilter is exact only without NaN, whatever ORT's TopK does with it
        return [prefilter.no_nan(b, _flat(b, site), static_size(site.shapes[0]), block, 1, site.elem_types[0], 1)]
    if NAN_ORDER in site.assume:
        return []
    return [no_nan(b, site.node.input[0])]


def fast(b, site) -> list[str]:
    return _compose(b, site, nan=False)


def exact(b, site) -> list[str]:
    return _compose(b, site, nan=True)


def block_size(topk: int, shape: tuple | None, elem_type: int) -> int | None:
    """The block size B of the block-maxima prefilter (:mod:`ortops.ops.prefilter`, TopK's
    measured rule) for ``topk`` of the flattened data (``shape``, ONNX type ``elem_type``), or
    None where it does not apply: topk=1, a shape that is not static, more elements than the
    guarded composition takes (2**24 + 1: the PyOp runs them), a key ORT cannot reduce, or the
    rule predicts ONNX TopK alone is faster."""
    n = static_size(shape)
    if topk == 1 or n is None or n > FLOAT32_EXACT_INT_MAX + 1 or elem_type not in prefilter.REDUCIBLE:
        return None
    return prefilter.block_size(n, topk)


#: ``path="auto"`` also lowers an ArgMax whose static shape has at most this many elements (for
#: topk=1, for topk > 1): there the composition's fixed cost is below the bridge's (measured:
#: docs/performance.md).
SMALL = (16384, 65536)


def session_path(attrs: dict, shapes: list, elem_types: list) -> str:
    """The faster exact path for a session (``OpSpec.session_path``): ``"lowered"`` on a static
    shape that is small (:data:`SMALL`) or where the prefilter applies (:func:`block_size`),
    else ``"pyop"`` (ortops' NumPy kernel)."""
    n, topk = static_size(shapes[0]), attrs["topk"]
    if n is None:
        return "pyop"
    return "lowered" if n <= SMALL[topk > 1] or block_size(topk, shapes[0], elem_types[0]) else "pyop"


def _block(b, site) -> int | None:
    """:func:`block_size` for this node; None for the standalone composition (no prefilter)."""
    if not b.guarded or site.opset < 13:
        return None
    return block_size(site.attrs["topk"], site.shapes[0], site.elem_types[0])


def _compose(b, site, nan: bool) -> list[str]:
    topk = site.attrs["topk"]
    flat = _flat(b, site)
    block = None if nan else _block(b, site)
    if block is not None:
        # ncnn's order straight from the data: no reversed copy of it.
        values, indices = prefilter.compose(b, flat, topk, static_size(site.shapes[0]), block, 1, site.elem_types[0],
                                            1, False, last_first=True)
    else:
        values, positions = select(b, b.reversed(flat, 0), b.const(np.array([topk], np.int64)), 0, 1, nan,
                                   k_static=topk, rank=1)
        last = b.add("Sub", [_size(b, site), b.const(np.int64(1))])
        indices = b.add("Sub", [last, positions])
    if not b.guarded:
        indices = b.check(_indices_fit(b, flat, values, topk), indices, f"ArgMax node {site.node.name!r} rejects its "
                          "input: a selected flat index is above 2**24, which float32 cannot hold exactly",
                          TensorProto.INT64, 1)
    row = np.array([1, topk], np.int64)
    indices = b.add("Reshape", [b.cast(indices, TensorProto.FLOAT), b.const(row)])
    if not site.attrs["out_max_val"]:
        return [indices]
    return [b.add("Concat", [b.add("Reshape", [values, b.const(row)]), indices], axis=0)]


def _indices_fit(b, flat: str, values: str, topk: int) -> str:
    """True when every selected flat index is at most 2**24, from the values alone, not the
    indices as computed (a runtime that compares integers as float32, as OpenVINO 2026.4.1
    does, would pass the index 2**24 + 1: docs/lowering.md). In ncnn's order (of equal values,
    the higher index first) some selected index is above 2**24 iff some element past 2**24
    ranks at least as high as the topk-th value, which is order-free: NaN (above +inf) always
    does, a number when it is >= the topk-th value."""
    past = (FLOAT32_EXACT_INT_MAX + 1, 2 ** 63 - 1, 0)
    tail = b.add("Slice", [flat, *(b.const(np.array([v], np.int64)) for v in past)])
    kth = b.add("Gather", [values, b.const(np.array([topk - 1], np.int64))])
    at_least = b.add("Or", [b.add("Greater", [tail, kth]), b.add("Equal", [tail, kth])])
    high = b.add("Or", [b.add("IsNaN", [tail]), at_least])
    return b.add("Equal", [b.reduce("ReduceSum", b.cast(high, TensorProto.INT64)), b.const(np.int64(0))])
