"""Model builders: ortops' custom nodes, the standard ONNX nodes they map to, side by side.

Never imports onnxruntime. See :mod:`ortops.builder.models`.
"""

from .models import (
    IR_VERSION,
    TOP_K_VERSIONS,
    arg_max,
    make_model,
    onnx_top_k,
    onnx_top_k_model,
    scatter_elements_update,
    top_k,
    top_k_model,
    top_k_side_by_side,
)
from .schemas import SCHEMA_VERSION, register_schemas

__all__ = [
    "IR_VERSION", "SCHEMA_VERSION", "TOP_K_VERSIONS", "arg_max", "make_model", "onnx_top_k", "onnx_top_k_model",
    "register_schemas", "scatter_elements_update", "top_k", "top_k_model", "top_k_side_by_side",
]
