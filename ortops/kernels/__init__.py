"""The fast kernels registered with the PyOp bridge. Property tests hold each one against
its pure-NumPy reference in :mod:`ortops.reference`."""

from .arg_max import arg_max
from .scatter_elements_update import scatter_elements_update
from .top_k import top_k

__all__ = ["top_k", "scatter_elements_update", "arg_max"]
