"""Model builders: ortops' custom nodes, the standard ONNX nodes they map to, side by side.

Never imports onnxruntime. One module per op (:mod:`.top_k`, :mod:`.scatter_elements_update`,
:mod:`.arg_max`); :mod:`.common` assembles and checks models; :mod:`.schemas` registers the
ONNX schemas of our domains.
"""

from .arg_max import (
    ARG_MAX_OPSET,
    arg_max,
    arg_max_model,
    arg_max_side_by_side,
    onnx_arg_max_equivalent,
    onnx_arg_max_equivalent_model,
)
from .common import IR_VERSION, custom_node, dims, make_model
from .scatter_elements_update import scatter_elements_update
from .schemas import SCHEMA_VERSION, register_schemas
from .top_k import TOP_K_VERSIONS, onnx_top_k, onnx_top_k_model, top_k, top_k_model, top_k_side_by_side

__all__ = [
    "ARG_MAX_OPSET", "arg_max_model", "arg_max_side_by_side", "onnx_arg_max_equivalent",
    "onnx_arg_max_equivalent_model",
    "IR_VERSION", "SCHEMA_VERSION", "TOP_K_VERSIONS", "arg_max", "custom_node", "dims", "make_model", "onnx_top_k",
    "onnx_top_k_model", "register_schemas", "scatter_elements_update", "top_k", "top_k_model", "top_k_side_by_side",
]
