"""The registered TopK kernel (OpenVINO TopK-11): validated, then selected by ORT's own TopK."""

from __future__ import annotations

from .checks import INDEX_ELEMENT_TYPES, check_top_k
from ...kernels.selection import top_k_indices

__all__ = ["top_k"]


def top_k(data, k, *, axis, mode, sort, stable=0, index_element_type="i32"):
    """Fast TopK with the semantics of :func:`ortops.reference.top_k` (same signature).

    ``stable`` does not change the result: ortops always returns the stable answer, which is
    one of the answers the spec allows for ``stable=0`` and ``sort="none"``.
    """
    axis, k = check_top_k(data, k, axis=axis, index_element_type=index_element_type)
    values, indices = top_k_indices(data, k, axis, largest=mode == "max", by_index=sort == "index")
    return values, indices.astype(INDEX_ELEMENT_TYPES[index_element_type], copy=False)
