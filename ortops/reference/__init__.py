"""Plain NumPy references for ortops' operators: one readable function per op.

Each follows its source spec literally and writes down every deliberate choice in its
docstring's Notes. The fast kernels are tested against these.
"""

from .arg_max import arg_max
from .scatter_elements_update import scatter_elements_update
from .top_k import TopKResult, top_k

__all__ = ["top_k", "TopKResult", "scatter_elements_update", "arg_max"]
