"""OpenVINO TopK-11 (``ortops.openvino::TopK``) as standard ONNX ops (see :mod:`ortops.lowering`).

ONNX TopK-11 with ``sorted=1`` is a stable sort: of equal values (-0.0 and +0.0 included) the
lower index comes first, for ``largest`` 1 and 0. That is ortops' order, so the fast
composition is ONNX TopK on the data (integers of a type ORT's TopK lacks are widened first,
float16/bfloat16 go through float32: both exact), then for ``sort="index"`` a second TopK
that sorts the selected indices ascending (padded with a sentinel where that lets ORT run it
on two threads), and a GatherElements of the values (the first
TopK unsorted where ORT's ``sorted=0`` selects the same set: ``"topk_unsorted_set"``).

* NaN: ortops ranks NaN above +inf, all NaNs equal; ORT's order of NaN is undefined (it
  changed between releases). The hazard is ``IsNaN(ReduceSum(data))`` (cheap; +inf and -inf
  together also trip it, which only costs the slower path). The exact path sorts twice,
  both stable: the whole slice by value with NaN replaced by 0, then that order by "is NaN"
  (first for mode max, last for mode min), keeping k.
* k: ONNX TopK accepts k=0 (empty outputs) and ORT's own error for k > dim; both are checks.
  In a session that re-runs a failed call on the PyOp path (``ERRORS_TRANSLATED``), on an ORT
  whose TopK rejects a negative k and a k above the axis (probed: ``"topk_rejects_bad_k"``),
  a k outside [1, 2**31 - 1] is mapped to -1 instead and the TopK itself fails: no ``If``, no PyOp.
* uint64 has no ORT TopK kernel and no wider exact type: not lowered.
* Long slices, small k: where the measured rule (:mod:`ortops.ops.prefilter`) predicts it is
  faster, the fast path selects among the k best blocks of B elements (the block-maxima
  prefilter) instead of the whole slice; needs a constant k, a static last axis and a key ORT
  can ``ReduceMax``.
  It is exact only without NaN, so where the session's ``"topk_nan_order"`` would drop the NaN
  hazard, the prefilter brings it back.
* ``sort="index"`` with a constant k equal to a static axis length selects every element in
  index order: the data itself and the positions, no sort.
* A strided axis with no row before it (a static shape, large enough): in a session on two
  threads or more (``PARALLEL``) the data is transposed so that the axis is last, where ORT's
  TopK splits the slices between threads, and the outputs transposed back (exact).
* Standalone (``fallback="none"``): no reliance on any runtime's order of equal values
  (:func:`ortops.portable.best`; OpenVINO's ONNX TopK is not stable); the prefilter's graph
  form there is :func:`ortops.portable.prefiltered`, with its own rule (:data:`PORTABLE_RULE`:
  the tie-independent selection costs more than one TopK, so it pays to prefilter sooner).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import onnx
from onnx import TensorProto, helper

from ...checks import INT32_MAX
from ...portable import PAIRWISE_MAX, PORTABLE, finite, pairwise, prefiltered, wide_int
from .. import prefilter
from ..compose import ERRORS_TRANSLATED, NAN_ORDER, PARALLEL, NotLowerable, no_nan, positions, select, static_size

__all__ = ["prepare", "checks", "hazards", "fast", "exact", "select", "WIDENED"]

#: Integer types without an ORT TopK kernel, and the type their keys are widened to (exact).
WIDENED = {TensorProto.UINT16: TensorProto.INT32, TensorProto.UINT32: TensorProto.INT64,
           TensorProto.FLOAT16: TensorProto.FLOAT, TensorProto.BFLOAT16: TensorProto.FLOAT}
_FLOATS = (TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.BFLOAT16)


def prepare(site) -> int:
    elem = site.elem_types[0]
    if elem == TensorProto.UINT64:
        raise NotLowerable("uint64 data: ORT has no uint64 TopK kernel, and no wider integer type holds every "
                           "uint64 value")
    rank = site.ranks[0]
    if not -rank <= site.attrs["axis"] < rank:
        raise NotLowerable(f"axis={site.attrs['axis']} is outside [-{rank}, {rank - 1}] (the PyOp raises)")
    k, shape, axis = site.constants[1], site.shapes[0], _axis(site)
    if k is not None and shape is not None and shape[axis] is not None and _static_k(site) is None:
        # ONNX shape inference would refuse the composition when the session is created.
        raise NotLowerable(f"the constant k={k.tolist()} does not fit the static axis length {shape[axis]} "
                           "(the PyOp raises)")
    return 13 if elem == TensorProto.BFLOAT16 else 11


def _axis(site) -> int:
    return site.attrs["axis"] % site.ranks[0]


def _static_k(site) -> int | None:
    """k when it is a constant that passes every check against a static dimension."""
    k, shape = site.constants[1], site.shapes[0]
    if k is None or k.size != 1 or shape is None or shape[_axis(site)] is None:
        return None
    value, dim = int(k.reshape(-1)[0]), shape[_axis(site)]
    if not 1 <= value <= dim or (site.attrs["index_element_type"] == "i32" and dim - 1 > INT32_MAX):
        return None
    return value


def _in_topk(site) -> bool:
    """Whether k's check is left to the TopK node itself (see :func:`_k`): in a guarded
    lowering whose caller turns an ORT failure into the PyOp's OpError, on an ORT whose TopK
    rejects a negative k and a k above the axis length."""
    return (_static_k(site) is None and ERRORS_TRANSLATED in site.assume and REJECTS_K in site.assume)


def checks(b, site) -> list[tuple[str, str]]:
    if _static_k(site) is not None or (b.guarded and _in_topk(site)):
        return []
    data, k = site.node.input
    value = b.first(b.cast(k, TensorProto.INT64))
    dim = b.add("Gather", [b.add("Shape", [data]), b.const(np.int64(_axis(site)))])
    one = b.const(np.int64(1))
    in_range = b.all_of([
        b.add("Equal", [b.add("Size", [k]), one]),
        b.add("Not", [b.add("Less", [value, one])]),
        b.add("Not", [b.exceeds(value, dim)]),
    ])
    result = [(in_range, "k must be a single integer in [1, data.shape[axis]] (ONNX TopK would give empty "
                         "outputs for k=0)")]
    if site.attrs["index_element_type"] == "i32":
        fits = b.add("Not", [b.exceeds(dim, b.const(np.int64(INT32_MAX + 1)))])
        result.append((fits, "the axis is too long for int32 indices (index_element_type='i32')"))
    return result


#: The runtime fact that ORT's TopK fails for a negative k and a k above the axis length.
REJECTS_K = "topk_rejects_bad_k"


#: The runtime fact that ORT's TopK-11 with ``sorted=0`` selects the same elements as with
#: ``sorted=1`` (of equal values at the k-th place, the lower indices; NaN as ortops orders it).
UNSORTED_SET = "topk_unsorted_set"


def runtime_facts() -> set[str]:
    """The facts about this process's ORT TopK-11 that the lowering may rely on, probed:

    * ``"topk_nan_order"``: it orders NaN as ortops does (NaN above +inf, the lower index
      first among NaNs, for largest 1 and 0, float and double, on the heap and the sort
      paths); ORT 1.32 does, 1.31 does not. Probed on a few NaN-heavy inputs against
      :func:`ortops.reference.top_k`.
    * ``"topk_unsorted_set"``: with ``sorted=0`` it selects the elements ``sorted=1`` selects
      (ORT 1.32's comparators break ties by index on every path), so that ``sort="index"``
      skips the sort by value. Probed with the NaN order, on the selected index sets.
    * ``"topk_rejects_bad_k"``: it fails (never returns outputs) for k = -1, k = -2**63, k
      one above the axis length and a 1-D k of two values, as ONNX TopK's "a single positive
      value" asks.
    """
    return _selection_facts() | _rejects_bad_k()


def _probe_model(elem_type: int, largest: int) -> onnx.ModelProto:
    """ONNX TopK-11 ``(X, K) -> (Values, Indices)``, ``sorted=1``, on a 2-D ``X`` and any 1-D ``K``."""
    def value(name, elem, rank):
        return helper.make_tensor_value_info(name, elem, [None] * rank)

    node = helper.make_node("TopK", ["X", "K"], ["Values", "Indices"], axis=1, largest=largest, sorted=1)
    graph = helper.make_graph([node], "probe", [value("X", elem_type, 2), value("K", TensorProto.INT64, 1)],
                              [value("Values", elem_type, 2), value("Indices", TensorProto.INT64, 2)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)


def _rejects_bad_k() -> set[str]:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4  # the failures are the point: not on stderr
    model = _probe_model(TensorProto.FLOAT, 1)
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    for k in ([-1], [-2 ** 63], [4], [2, 2]):
        try:
            session.run(None, {"X": np.ones((2, 3), np.float32), "K": np.array(k, np.int64)})
        except Exception:  # noqa: BLE001 - ORT's error: what is probed
            continue
        return set()
    return {REJECTS_K}


def _selection_facts() -> set[str]:
    """``"topk_nan_order"`` and ``"topk_unsorted_set"`` where ORT's TopK-11, ``sorted`` 1 and 0,
    selects as :func:`ortops.reference.top_k` on a few tie- and NaN-heavy float and double
    inputs, largest 1 and 0, on its heap and sort paths."""
    import onnxruntime as ort

    from .reference import top_k

    rng = np.random.default_rng(0)
    ordered = unsorted = True
    for elem, dtype in ((TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64)):
        pool = np.array([np.nan, -np.nan, 1, -np.inf, np.inf, 0.0, -0.0, 2], dtype)
        for largest in (1, 0):
            model = _probe_model(elem, largest)
            model.graph.node.append(helper.make_node("TopK", ["X", "K"], ["Set", "SetIndices"], axis=1,
                                                     largest=largest, sorted=0))
            model.graph.output.append(helper.make_tensor_value_info("SetIndices", TensorProto.INT64, [None, None]))
            session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
            for n, k in ((7, 4), (64, 3), (300, 250), (2000, 40)):
                x = rng.choice(pool, size=(3, n))
                indices, chosen = session.run(["Indices", "SetIndices"], {"X": x, "K": np.array([k])})
                want = np.asarray(top_k(x, k, axis=1, mode="max" if largest else "min", sort="value").indices)
                ordered &= np.array_equal(indices, want)
                unsorted &= np.array_equal(np.sort(chosen, axis=1), np.sort(want, axis=1))
    return {fact for fact, holds in ((NAN_ORDER, ordered), (UNSORTED_SET, unsorted)) if holds}


def _pairwise(b, site) -> bool:
    """Whether the standalone composition compares every pair (a short static last axis; not
    when the prefilter is forced on everywhere, for tests and the cost-model script)."""
    shape, axis = site.shapes[0], _axis(site)
    return (not b.guarded and axis == site.ranks[0] - 1 and shape is not None and shape[axis] is not None
            and shape[axis] <= PAIRWISE_MAX and prefilter.RULE.force is None)


def hazards(b, site) -> list[str]:
    if _pairwise(b, site):
        return []  # handles NaN itself: no If
    block = _block(site, not b.guarded)
    if site.elem_types[0] not in _FLOATS or (NAN_ORDER in site.assume and block is None):
        return []
    if block is None:
        return [no_nan(b, _key(b, site))]
    elem, largest = _widened(site.elem_types[0], not b.guarded), int(site.attrs["mode"] == "max")
    if not b.guarded:
        return [finite(b, _key(b, site), site.shapes[0][-1], block, site.ranks[0], prefilter.identity(elem, largest))]
    return [prefilter.no_nan(b, _key(b, site), site.shapes[0][-1], block, site.ranks[0], elem, largest)]


#: When the standalone composition prefilters (measured with scripts/bench.py, docs/lowering.md).
PORTABLE_RULE = prefilter.Rule(min_n=512, min_ratio=8, min_elements=16384)


def _block(site, portable: bool = False) -> int | None:
    """The prefilter's block size B for this node (:func:`ortops.ops.prefilter.block_size`), or
    None where it does not apply or the rule predicts ONNX TopK alone is faster; ``portable``:
    for the standalone composition (:data:`PORTABLE_RULE`)."""
    k, rank, shape = _static_k(site), site.ranks[0], site.shapes[0]
    if k is None or site.opset < 13 or _axis(site) != rank - 1:
        return None
    if _widened(site.elem_types[0], portable) not in prefilter.REDUCIBLE:
        return None
    if portable and _integer(site) is not None:  # OpenVINO reduces int32 in float32 (docs/lowering.md)
        return None
    batch = static_size(shape[:-1])
    forced = prefilter.RULE.force is not None  # tests and the cost-model script force every path
    return prefilter.block_size(shape[-1], k, batch, PORTABLE_RULE if portable and not forced else None)


def _integer(site):
    """The standalone composition's ``integer`` key type (:func:`ortops.portable.wide_int`)."""
    return wide_int(site.elem_types[0], _widened(site.elem_types[0], True))


def _widened(elem: int, portable: bool) -> int:
    """The type the key is compared in: ORT's TopK types, or every runtime's (``portable``)."""
    return (PORTABLE if portable else WIDENED).get(elem, elem)


def _key(b, site) -> str:
    """The data in a type ORT's TopK sorts exactly like ortops (standalone: a type every
    runtime compares and sorts; one Cast per builder)."""
    data = site.node.input[0]
    widened = _widened(site.elem_types[0], not b.guarded)
    if widened == site.elem_types[0]:
        return data
    return b.memo(("cast", data, widened), lambda: b.cast(data, widened))


#: ORT's CPU TopK gives a slice of its rows to one more thread for each 2**17 of
#: (elements × k) (``threads_needed`` in ORT's top_k.cc, 1.x).
_TOP_K_WORK_PER_THREAD = 2**17


def _index_order(b, site, values: str, indices: str, k: str) -> tuple[str, str]:
    """The k selected indices ascending, and the values in that order, gathered from the k
    selected values (a small tensor; the data would do as well).

    The sort is a second TopK over the k indices. With many short slices ORT runs it on one
    thread; padding each slice past k with a sentinel that sorts last gives it two (ORT splits
    the rows before the axis), which pays while the padding stays within 4k
    (docs/performance.md, sort="index").
    """
    axis, keys = _axis(site), indices
    static, shape, n = _static_k(site), site.shapes[0], static_size(site.shapes[0])
    if static is not None and n is not None:
        slices = n // shape[axis]
        width = -(-2 * _TOP_K_WORK_PER_THREAD // (slices * static)) if slices else 0
        if math.prod(shape[:axis]) >= 2 and static < width <= 4 * static:
            pads = np.zeros(2 * len(shape), np.int64)
            pads[len(shape) + axis] = width - static
            keys = b.add("Pad", [indices, b.const(pads), b.const(np.array(np.iinfo(np.int64).max))])
    indices, order = b.add("TopK", [keys, k], 2, axis=axis, largest=0, sorted=1)
    return b.add("GatherElements", [values, order], axis=axis), indices


def _k(b, site) -> str:
    static = _static_k(site)
    if static is not None:
        return b.const(np.array([static], np.int64))
    if not (b.guarded and _in_topk(site)):
        return b.memo(("k", site.node.input[1]), lambda: b.add(
            "Reshape", [b.cast(site.node.input[1], TensorProto.INT64), b.const(np.array([1], np.int64))]))
    return b.memo(("k", site.node.input[1]), lambda: _k_failing_in_topk(b, site))


def _k_failing_in_topk(b, site) -> str:
    """k as int64 ``[1]``, with a k outside [1, 2**31 - 1] (ONNX TopK takes k = 0, giving empty
    outputs, and ORT 1.32's TopK reads a k's low 32 bits: 2**32 + 2 as 2) and, for int32
    indices, an axis longer than int32 holds mapped to -1: ORT's TopK then fails for every
    bad k (as does the Reshape for a k of another size), and the caller re-runs the call on
    the PyOp path for its OpError."""
    k = site.node.input[1]
    if site.elem_types[1] != TensorProto.INT64:
        k = b.cast(k, TensorProto.INT64)
    if site.ranks[1] != 1:  # a 1-D k of another size: ORT's TopK fails on it too
        k = b.add("Reshape", [k, b.const(np.array([1], np.int64))])
    bad = b.add("Or", [b.add("Less", [k, b.const(np.ones(1, np.int64))]),
                       b.add("Greater", [k, b.const(np.array([INT32_MAX], np.int64))])])
    if site.attrs["index_element_type"] == "i32":
        axis, data = _axis(site), site.node.input[0]
        dim = b.add("Shape", [data], start=axis, end=axis + 1) if b.opset >= 15 else \
            b.add("Gather", [b.add("Shape", [data]), b.const(np.array([axis], np.int64))])
        bad = b.add("Or", [bad, b.add("Greater", [dim, b.const(np.array([INT32_MAX + 1], np.int64))])])
    return b.add("Where", [bad, b.const(np.array([-1], np.int64)), k])


#: Where the axis is moved last (:func:`_moved_last`): at least this many elements after the
#: axis, and this many elements in all (or half as many, with a constant k >= 2).
MOVED_LAST_INNER, MOVED_LAST_ELEMENTS = 64, 2**18


def _moved_last(site) -> list[int] | None:
    """The permutation that moves the axis last, where that measured faster in a session on two
    threads or more (docs/performance.md, "A leading strided axis"), else None.

    ORT's TopK splits the rows before the axis between threads, and reads a strided axis one
    slice at a time: with no row before the axis it runs on one thread. Transposed, every slice
    is a row. Needs a static shape with no element before the axis, and the axis not last.
    """
    shape, axis, n = site.shapes[0], _axis(site), static_size(site.shapes[0])
    if PARALLEL not in site.assume or n is None or axis == len(shape) - 1:
        return None
    k = _static_k(site)
    if math.prod(shape[:axis]) != 1 or math.prod(shape[axis + 1:]) < MOVED_LAST_INNER:
        return None
    if n < MOVED_LAST_ELEMENTS and not (2 * n >= MOVED_LAST_ELEMENTS and k is not None and k >= 2):
        return None
    return [d for d in range(len(shape)) if d != axis] + [axis]


def _compose_moved_last(b, site, nan: bool, perm: list[int]) -> list[str]:
    """:func:`_compose` on the data transposed by ``perm`` (the axis last), its outputs
    transposed back: exact, a permutation moves no element within a slice."""
    node = onnx.NodeProto()
    node.CopyFrom(site.node)
    node.input[0] = b.add("Transpose", [site.node.input[0]], perm=perm)
    moved = replace(site, node=node, attrs={**site.attrs, "axis": len(perm) - 1},
                    shapes=[tuple(site.shapes[0][d] for d in perm), *site.shapes[1:]], assume=site.assume - {PARALLEL})
    back = [int(d) for d in np.argsort(perm)]
    return [b.add("Transpose", [out], perm=back) for out in _compose(b, moved, nan, prefilter_ok=False)]


def fast(b, site) -> list[str]:
    return _compose(b, site, nan=False)


def exact(b, site) -> list[str]:
    return _compose(b, site, nan=True)


def _compose(b, site, nan: bool, prefilter_ok: bool = True) -> list[str]:
    """The outputs for ``site``; ``prefilter_ok=False``: never prefilter (the hazards were
    worked out for another layout)."""
    data = site.node.input[0]
    axis, attrs = _axis(site), site.attrs
    dtype = np.float64 if site.elem_types[0] == TensorProto.DOUBLE else np.float32
    largest, by_index = int(attrs["mode"] == "max"), attrs["sort"] == "index"
    block = None if nan or not prefilter_ok else _block(site, not b.guarded)
    static = _static_k(site)
    if by_index and static is not None and static == site.shapes[0][axis]:
        # Every element selected, in index order: the data as it is (NaN included), no sort.
        values, indices = b.add("Identity", [data]), positions(b, data, axis)
        if attrs["index_element_type"] == "i32":
            indices = b.cast(indices, TensorProto.INT32)
        return [values, indices]
    perm = _moved_last(site) if b.guarded and block is None else None
    if perm is not None:
        return _compose_moved_last(b, site, nan, perm)
    key = _key(b, site)
    if _pairwise(b, site):
        values, indices = pairwise(b, key, _k(b, site), site.shapes[0][axis], site.ranks[0], largest,
                                   nan=site.elem_types[0] in _FLOATS, by_index=by_index, dtype=dtype,
                                   integer=_integer(site))
    elif block is not None and not b.guarded:
        values, indices = prefiltered(b, key, static, site.shapes[0][-1], block, site.ranks[0],
                                      prefilter.identity(_widened(site.elem_types[0], True), largest), largest, by_index)
    elif block is not None:
        values, indices = prefilter.compose(b, key, static, site.shapes[0][-1], block, site.ranks[0],
                                            _widened(site.elem_types[0], False), largest, by_index)
    elif not b.guarded:
        values, indices = select(b, key, _k(b, site), axis, largest, nan, dtype, by_index=by_index, k_static=static,
                                 rank=site.ranks[0], integer=_integer(site))
    elif by_index and not nan and UNSORTED_SET in site.assume:  # the set, then by index: no sort by value
        k = _k(b, site)
        values, indices = b.add("TopK", [key, k], 2, axis=axis, largest=largest, sorted=0)
        values, indices = _index_order(b, site, values, indices, k)
    else:
        k = _k(b, site)
        values, indices = select(b, key, k, axis, largest, nan, dtype)
        if by_index:
            values, indices = _index_order(b, site, values, indices, k)
    if key != data:
        values = b.cast(values, site.elem_types[0])  # exact: the values came from this type
    if attrs["index_element_type"] == "i32":
        indices = b.cast(indices, TensorProto.INT32)
    return [values, indices]
