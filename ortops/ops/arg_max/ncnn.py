"""Real ncnn's ArgMax layer on a NumPy array (the ``ncnn`` package that ``ortops install-oracle
ncnn`` builds). Runs inside the ncnn oracle's child process (:mod:`ortops.processes`):
real ncnn can crash on inputs ortops refuses.

How the data is fed: no padding
-------------------------------
ncnn's ArgMax ranks ``bottom_blob.total()`` floats, and ``total()`` counts padding: an
ncnn-allocated Mat rounds each channel up to 16 bytes (since release 20250916 1-D and 2-D Mats
too), and a 1-D or 2-D Mat wrapped around NumPy memory keeps that rounding, so ncnn reads past
the array's end. The Python binding wraps a 3-D C-contiguous array with the channel step of
the array itself (``cstep = h * w``). So the data goes in as a ``(1, 1, N)`` array: one channel,
``total() == N``, the elements in C order. ncnn's flat index i is then ortops' flat index i,
and no padding value can be ranked.

:func:`run_native` is the other way, for showing what padding does: the data in a Mat that
ncnn allocates itself for the data's shape (``Mat(w, h, d, c)``), its padding filled with a
value of the caller's choice (ncnn leaves it uninitialised); :func:`logical_indices` maps
ncnn's indices there (``channel * cstep + offset``) back to ortops' flat indices.

The binding's trap: ``layer.forward(m, out, opt)`` with positional arguments picks the
list-of-Mats overload (an ``ncnn.Mat`` counts as a sequence) and segfaults; the call below uses
keywords.
"""

from __future__ import annotations

import numpy as np

__all__ = ["run", "run_native", "logical_indices"]


def _layer(out_max_val: int, topk: int):
    import ncnn

    layer = ncnn.create_layer("ArgMax")
    if layer is None:
        raise RuntimeError(f"ncnn {ncnn.__version__} has no ArgMax layer (build it with: ortops install-oracle ncnn)")
    params = ncnn.ParamDict()
    params.set(0, int(out_max_val))
    params.set(1, int(topk))
    layer.load_param(params)
    option = ncnn.Option()
    option.num_threads = 1
    layer.create_pipeline(option)
    return layer, option


def _forward(layer, option, bottom) -> np.ndarray:
    import ncnn

    top = ncnn.Mat()
    status = layer.forward(bottom_blob=bottom, top_blob=top, opt=option)  # keywords: see the module docstring
    if status != 0:
        raise RuntimeError(f"ncnn ArgMax forward returned {status}")
    result = np.array(top, dtype=np.float32, copy=True).reshape(top.h, top.w)
    layer.destroy_pipeline(option)
    return result


def run(data: np.ndarray, *, out_max_val: int = 0, topk: int = 1) -> np.ndarray:
    """ncnn's ArgMax layer on ``data`` flattened in C order, without padding.

    Parameters
    ----------
    data : ndarray
        Converted to float32 (ncnn's only type), any shape.
    out_max_val, topk : int
        The layer's params 0 and 1.

    Returns
    -------
    ndarray of float32, shape (1, topk) or (2, topk)
        The layer's top blob (row 0 the values when ``out_max_val``; the last row the indices).

    Raises
    ------
    RuntimeError
        The layer does not exist in the imported ncnn, or its ``forward`` returns non-zero.
        Undefined inputs (``topk`` above the element count, no element) are passed on as
        they are: ncnn may return stray memory, or crash the process.
    """
    import ncnn

    layer, option = _layer(out_max_val, topk)
    flat = np.ascontiguousarray(data, dtype=np.float32).reshape(1, 1, -1)
    bottom = ncnn.Mat(flat)
    if bottom.cstep * bottom.c != flat.size and flat.size:
        raise RuntimeError(f"ncnn wrapped {flat.size} elements as total() == {bottom.cstep * bottom.c}")
    return _forward(layer, option, bottom)


def run_native(data: np.ndarray, *, pad: float, out_max_val: int = 0, topk: int = 1) -> tuple[np.ndarray, int]:
    """ncnn's ArgMax layer on ``data`` (rank 1 to 4) in a Mat ncnn allocates for its shape.

    Returns the top blob and the Mat's channel step ``cstep`` (elements per channel, padding
    included; a 1-D or 2-D Mat is one channel). The padding holds ``pad``.
    """
    import ncnn

    data = np.asarray(data, dtype=np.float32)
    if not 1 <= data.ndim <= 4:
        raise ValueError(f"an ncnn Mat has 1 to 4 dims, not {data.ndim}")
    layer, option = _layer(out_max_val, topk)
    bottom = ncnn.Mat(*reversed(data.shape))  # ncnn's order: w, h, d, c
    bottom.fill(float(pad))
    np.asarray(bottom)[...] = data  # the channels' padding keeps ``pad``
    return _forward(layer, option, bottom), int(bottom.cstep)


def logical_indices(indices, shape: tuple[int, ...], cstep: int) -> np.ndarray:
    """ncnn's flat indices in a Mat of ``shape`` with channel step ``cstep`` -> ortops' flat
    indices (C order of the logical elements); -1 where ncnn's index points into padding."""
    indices = np.asarray(indices, np.int64)
    per_channel = int(np.prod(shape[1:])) if len(shape) >= 3 else int(np.prod(shape))
    channel, offset = np.divmod(indices, cstep)
    return np.where(offset < per_channel, channel * per_channel + offset, -1)
