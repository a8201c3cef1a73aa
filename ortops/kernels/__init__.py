"""The selection the fast kernels share (:mod:`.selection`: ORT's own TopK, called from inside
an op). Each op's kernel lives in its folder, ``ortops/ops/<op>/kernel.py``, and property
tests hold it against the op's reference.

The old names ``ortops.kernels.top_k``, ``.scatter_elements_update`` and ``.arg_max`` still
give each op's kernel (resolved on first use, from the op's spec).
"""


def __getattr__(name: str):
    from ..ops import OPS

    for op in OPS:
        if op.kernel is not None and op.kernel.resolve().__name__ == name:
            return op.kernel.resolve()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
