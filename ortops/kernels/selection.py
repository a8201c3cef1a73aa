"""Fast top-k selection along one axis, exact for every numeric type and for NaN.

The selection runs in ORT's own built-in TopK-11 kernel, called from inside the PyOp through
a small cached single-threaded ``onnxruntime.InferenceSession`` of :mod:`ortops.runtime`
(large inputs are split across the runtime's threads): NumPy's ``argpartition`` is about 20x slower
on [64, 32000] k=50 (see docs/performance.md). Three things make the built-in exact for ortops' semantics:

* **Ties.** TopK-11 with ``sorted=1`` puts the lower index first among equal values, which is
  a stable sort by value: exactly ortops' rule for every TopK mode. ONNX does not promise
  this, so each selection is probed once per process on tie-heavy data (:func:`_probe`); one
  that fails runs on NumPy's stable sort instead (:func:`probe_results` says which).
* **Types ORT lacks.** uint16 and uint32 are widened (to int32, int64) and uint64 is mapped to
  int64 by flipping its top bit; all three maps preserve order, and values are gathered back
  from the original tensor, so they stay exact.
* **NaN.** ORT's comparator is undefined with NaN (ORT 1.31: [inf, 3, 1, nan]). A float input
  whose maximum is NaN is mapped to integer keys that implement ortops' total order:
  -inf < ... < -0.0 == +0.0 < ... < +inf < NaN (all NaNs equal). The check costs one
  reduction (0.25 ms on [64, 32000]), run per block of slices on the runtime's threads (see
  :data:`PARALLEL_MIN`); only blocks holding NaN pay for the keys.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes, runtime

__all__ = ["top_k_indices", "probe_results"]

# The types ORT's CPU TopK-11 implements (1.31 and 1.32: uint16, uint32 and uint64 are NOT_IMPLEMENTED;
# widening them is exact whether or not a later release adds them).
_NATIVE = {np.dtype(t) for t in (np.float32, np.float64, np.int8, np.uint8, np.int16, np.int32, np.int64)}
_WIDER = {np.dtype(np.uint16): np.int32, np.dtype(np.uint32): np.int64}  # exact; uint64 is mapped by its top bit


def _session(elem_type: int, largest: int, rank: int, by_index: bool = False):
    """The inner session of this selection, or None when the installed ORT failed the probe."""
    key = ("selection", elem_type, largest, rank, by_index)
    session = runtime.inner_session(key, lambda: _make_session(elem_type, largest, rank, by_index))
    trusted = runtime.cached(PROBE_CACHE, key, lambda: _probe(session, elem_type, largest, rank, by_index))
    return session if trusted else None


#: The :func:`ortops.runtime.cached` cache of the probe's findings, per selection.
PROBE_CACHE = "selection.probe"

#: (slice length, k) pairs the probe runs: k=1, a small heap, half and all of the slice, a
#: long slice: ORT's TopK takes a different path for each.
_PROBES = ((40, 1), (40, 2), (40, 5), (40, 20), (40, 40), (1000, 3), (1000, 100), (1000, 1000))


def _probe(session, elem_type: int, largest: int, rank: int, by_index: bool) -> bool:
    """Whether ``session`` selects as NumPy's stable sort does (the lower index first among equal
    values, -0.0 == +0.0) on slices of a few distinct values (with -0.0 and +0.0 for floats):
    the module's "Ties". A selection that fails runs on :func:`_numpy_select`: slower, still exact."""
    from onnx import helper

    dtype = helper.tensor_dtype_to_np_dtype(elem_type)
    rng = np.random.default_rng(20261123)
    for n, k in _PROBES:
        x = rng.integers(0, 3, size=(3, n)).astype(dtype)
        if dtype.kind == "f":
            x[x == 0] = np.where(rng.random(int((x == 0).sum())) < 0.5, -0.0, 0.0)
        if rank == 3:
            x = np.ascontiguousarray(np.stack([x, x[::-1]], axis=-1))
        kk = np.array([k], np.int64)
        values, indices = session.run(None, {"x": x, "k": kk})
        want_values, want_indices = _numpy_select(x, kk, largest, by_index)
        if not (np.array_equal(indices, want_indices) and np.array_equal(values, want_values)):
            return False
    return True


def probe_results() -> dict[tuple[str, str, int, bool], bool]:
    """What the probe found so far in this process: (element type, "largest"/"smallest",
    rank, sorted by index) -> whether ORT's TopK-11 is used (False: the NumPy fallback)."""
    from onnx import TensorProto

    return {(TensorProto.DataType.Name(t), "largest" if largest else "smallest", rank, by_index): ok
            for (_, t, largest, rank, by_index), ok in runtime.entries(PROBE_CACHE).items()}


def _numpy_select(x: np.ndarray, k: np.ndarray, largest: int, by_index: bool) -> tuple[np.ndarray, np.ndarray]:
    """The selection along axis 1 with NumPy's stable sort: the fallback of :func:`_probe`.

    ``x`` holds a type ORT's TopK takes and no NaN (:func:`_comparable`); ``~`` (integers)
    and ``-`` (floats; -0.0 and +0.0 stay equal) reverse its order exactly.
    """
    key = (~x if x.dtype.kind in "iu" else -x) if largest else x
    indices = np.argsort(key, axis=1, kind="stable")[:, : int(k[0])]
    if by_index:
        indices = np.sort(indices, axis=1)
    return np.take_along_axis(x, indices, axis=1), indices.astype(np.int64)


def _make_session(elem_type: int, largest: int, rank: int, by_index: bool) -> bytes:
    """The serialised model of TopK-11 along axis 1 of a rank-2 [outer, dim] or rank-3 [outer, dim, inner] tensor.

    Rank 2 keeps the selection axis innermost, where ORT's TopK takes its fast path (about
    2x faster than the same data viewed as [outer, dim, 1]). With ``by_index`` the selected
    elements are re-ordered by ascending index in the same run: a second TopK (smallest) on
    the k indices, and GatherElements of the values.
    """
    from onnx import TensorProto, helper

    nodes = [helper.make_node("TopK", ["x", "k"], ["by_value", "by_value_indices"], axis=1, largest=largest, sorted=1)]
    if by_index:
        nodes += [helper.make_node("TopK", ["by_value_indices", "k"], ["indices", "order"], axis=1, largest=0, sorted=1),
                  helper.make_node("GatherElements", ["by_value", "order"], ["values"], axis=1)]
    else:
        nodes += [helper.make_node("Identity", ["by_value"], ["values"]),
                  helper.make_node("Identity", ["by_value_indices"], ["indices"])]
    dims = [None] * rank
    value = helper.make_tensor_value_info
    inputs = [value("x", elem_type, dims), value("k", TensorProto.INT64, [1])]
    graph = helper.make_graph(nodes, "ortops_selection", inputs,
                              [value("values", elem_type, dims), value("indices", TensorProto.INT64, dims)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)
    return model.SerializeToString()


def _float_keys(x: np.ndarray) -> np.ndarray:
    """Signed integer keys whose order is ortops' total order of the floats in ``x``.

    One full-size copy, then modified in place (two boolean masks): the keys of a NaN-holding
    [64, 32000] float32 tensor need about 12 MB beyond the input, where a chain of ``np.where``
    needed about 40 MB and raised the process's peak memory.
    """
    int_type = np.int32 if x.dtype == np.float32 else np.int64
    keys = (x + x.dtype.type(0)).view(int_type)  # a copy; -0.0 + 0.0 is +0.0
    keys[np.isnan(x)] = np.array(np.nan, x.dtype).view(int_type)  # one positive quiet NaN, above +inf
    np.bitwise_xor(keys, np.iinfo(int_type).max, out=keys, where=keys < 0)  # negatives: reverse magnitude
    return keys


def _has_nan(x: np.ndarray) -> bool:
    return bool(np.isnan(x.max()))  # max propagates NaN: one reduction, no temporary


def _comparable(x: np.ndarray) -> tuple[np.ndarray, bool]:
    """A tensor of a type ORT's TopK takes, with the same order as ``x`` (NaN: ortops' order),
    and whether its values differ from ``x``'s (then values are gathered back from ``x``)."""
    if x.dtype.kind == "f":
        return (_float_keys(x), True) if _has_nan(x) else (x, False)  # ORT's comparator is undefined with NaN
    if x.dtype in _NATIVE:
        return x, False
    if x.dtype in _WIDER:
        return x.astype(_WIDER[x.dtype]), True
    if x.dtype == np.uint64:
        return (x ^ np.uint64(1 << 63)).view(np.int64), True
    raise TypeError(f"no selection for dtype {x.dtype}")


def top_k_indices(x: np.ndarray, k: int, axis: int, largest: bool,
                  by_index: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Values and int64 indices of the k largest (or smallest) along ``axis``, stably sorted.

    ``x`` is any numeric array with ``1 <= k <= x.shape[axis]`` (checked by the caller).
    Among equal values the lower index comes first; NaN is above +inf. With ``by_index`` the
    same k elements come in ascending index order.
    """
    shape = x.shape
    outer = math.prod(shape[:axis])
    inner = math.prod(shape[axis + 1 :])
    out_shape = shape[:axis] + (k,) + shape[axis + 1 :]
    if outer * inner == 0:
        return np.empty(out_shape, x.dtype), np.empty(out_shape, np.int64)
    layout = (outer, shape[axis]) if inner == 1 else (outer, shape[axis], inner)
    x3 = np.ascontiguousarray(x).reshape(layout)
    values, indices = _select(x3, np.array([k], np.int64), int(largest), by_index)
    return values.reshape(out_shape), indices.reshape(out_shape)


#: A single slice at least this long is cut into :data:`CHUNKS` rows (see :func:`_select`).
CHUNK_MIN = 1 << 17
CHUNKS = 2
#: Inputs of at least this many elements are split into blocks of whole slices, selected
#: in parallel: one block per thread of :mod:`ortops.runtime`, and at least this many
#: elements per block.
PARALLEL_MIN = 1 << 16


def _select(x: np.ndarray, k: np.ndarray, largest: int, by_index: bool,
            comparable: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The selection along axis 1 of ``x`` ([outer, dim] or [outer, dim, inner]).

    ``comparable``: ``x`` is known to be of a type ORT's TopK takes and free of NaN.

    The inner sessions are single-threaded (:mod:`ortops.runtime`). A large input is split
    into blocks of whole slices, which run on the runtime's threads at once (ORT releases the
    GIL); each block is checked for NaN and mapped on its own thread too. Exact: slices are
    independent. One long slice goes to :func:`_select_long_slice`.
    """
    n = x.shape[1]
    if x.ndim == 2 and x.shape[0] == 1 and n >= CHUNK_MIN and int(k[0]) <= n // CHUNKS:
        return _select_long_slice(x[0], int(k[0]), largest, by_index)
    axis = 0 if x.shape[0] > 1 or x.ndim == 2 else 2  # split the outer slices, else the inner ones
    parts = min(runtime.worker_count() + 1, x.shape[axis], x.size // PARALLEL_MIN)
    if parts < 2:
        return _select_block(x, k, largest, by_index, comparable)
    blocks = [np.ascontiguousarray(b) for b in np.array_split(x, parts, axis=axis)]
    results = runtime.parallel_map(lambda block: _select_block(block, k, largest, by_index, comparable), blocks)
    return tuple(np.concatenate([r[i] for r in results], axis=axis) for i in range(2))


def _select_block(x: np.ndarray, k: np.ndarray, largest: int, by_index: bool,
                  comparable: bool = False) -> tuple[np.ndarray, np.ndarray]:
    keys, mapped = (x, False) if comparable else _comparable(x)
    session = _session(dtypes.from_numpy(keys.dtype).onnx, largest, x.ndim, by_index)
    if session is None:
        values, indices = _numpy_select(keys, k, largest, by_index)
    else:
        values, indices = session.run(None, {"x": keys, "k": k})
    if mapped:
        values = np.take_along_axis(x, indices, axis=1)
    return values, indices


def _select_long_slice(row: np.ndarray, k: int, largest: int, by_index: bool) -> tuple[np.ndarray, np.ndarray]:
    """The selection in one long slice (ORT parallelises TopK over slices only).

    The slice is cut into :data:`CHUNKS` rows whose top k are selected in parallel; the
    candidates are then merged by (value, index). Exact: each chunk's top k holds every
    element of the chunk that is in the overall top k, under the same lower-index-first tie
    rule.
    """
    length = row.size // CHUNKS
    body = CHUNKS * length
    kk = np.array([k], np.int64)
    if row.dtype.kind == "f":
        # Each chunk is checked for NaN on its own thread (_select_block) and selected exactly.
        # Without NaN among the candidates, merging them by value is exact too.
        comparable, mapped = row, False
        values, indices = _select(row[:body].reshape(CHUNKS, length), kk, largest, False)
        if _has_nan(np.concatenate([values.reshape(-1), row[body:]])):
            comparable, mapped = _float_keys(row), True  # select again by keys, merged by key
            values, indices = _select(comparable[:body].reshape(CHUNKS, length), kk, largest, False, comparable=True)
    else:
        comparable, mapped = _comparable(row)
        values, indices = _select(comparable[:body].reshape(CHUNKS, length), kk, largest, False, comparable=True)
    indices += (np.arange(CHUNKS, dtype=np.int64) * length)[:, None]  # chunk-local -> row positions
    values = np.concatenate([values.reshape(-1), comparable[body:]])  # the tail (< CHUNKS elements) joins too
    indices = np.concatenate([indices.reshape(-1), np.arange(body, row.size, dtype=np.int64)])
    # Only integers and NaN-free floats get here; ~v and -v reverse the order without overflow.
    key = (~values if values.dtype.kind in "iu" else -values) if largest else values
    order = np.lexsort((indices, key))[:k]
    if by_index:
        order = order[np.argsort(indices[order], kind="stable")]
    indices = indices[order].reshape(1, k)
    values = row[indices[0]].reshape(1, k) if mapped else values[order].reshape(1, k)
    return values, indices
