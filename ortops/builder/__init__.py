"""Model builders: ortops' custom nodes, the standard ONNX nodes they map to, side by side.

Never imports onnxruntime. Each op's builders live in its folder
(``ortops/ops/<op>/builder.py``) and are re-exported here, so ``ortops.builder.top_k`` is the
node builder function and no module hides behind it. :mod:`.common` assembles and checks
models; :func:`append_nodes` (:mod:`.append`) attaches nodes to a real model's outputs;
:mod:`.schemas` registers the ONNX schemas of our domains; :mod:`.examples` lists
the models kept in ``models/``.
"""

from ..ops.arg_max.builder import (
    ARG_MAX_OPSET,
    arg_max,
    arg_max_model,
    arg_max_side_by_side,
    onnx_arg_max_equivalent,
    onnx_arg_max_equivalent_model,
)
from .append import append_nodes
from .common import IR_VERSION, custom_node, dims, make_model
from ..ops.scatter_elements_update.builder import (
    COMPOSITION_OPSET,
    ONNX_REDUCTION,
    SCATTER_ELEMENTS_REDUCTIONS,
    SCATTER_ELEMENTS_VERSIONS,
    onnx_scatter_elements,
    onnx_scatter_elements_model,
    scatter_elements_update,
    scatter_elements_update_model,
    scatter_elements_update_side_by_side,
    scatter_mean_composition,
)
from .schemas import SCHEMA_VERSION, register_schemas
from ..ops.top_k.builder import TOP_K_VERSIONS, onnx_top_k, onnx_top_k_model, top_k, top_k_model, top_k_side_by_side

__all__ = [
    "ARG_MAX_OPSET", "COMPOSITION_OPSET", "IR_VERSION", "ONNX_REDUCTION", "SCATTER_ELEMENTS_REDUCTIONS",
    "SCATTER_ELEMENTS_VERSIONS", "SCHEMA_VERSION", "TOP_K_VERSIONS",
    "append_nodes", "arg_max", "arg_max_model", "arg_max_side_by_side", "custom_node", "dims", "make_model", "onnx_arg_max_equivalent",
    "onnx_arg_max_equivalent_model", "onnx_scatter_elements", "onnx_scatter_elements_model", "onnx_top_k",
    "onnx_top_k_model", "register_schemas", "scatter_elements_update", "scatter_elements_update_model",
    "scatter_elements_update_side_by_side", "scatter_mean_composition", "top_k", "top_k_model", "top_k_side_by_side",
]
