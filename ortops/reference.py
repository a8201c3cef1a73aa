"""Plain NumPy references for ortops' operators: one readable function per op.

Each follows its source spec literally and writes down every deliberate choice in its
docstring's Notes. The fast kernels are tested against these. Each lives in its op's folder,
``ortops/ops/<op>/reference.py``.
"""

from .ops.arg_max.reference import arg_max
from .ops.scatter_elements_update.reference import scatter_elements_update
from .ops.top_k.reference import TopKResult, top_k

__all__ = ["top_k", "TopKResult", "scatter_elements_update", "arg_max"]
