"""The old home of the op definitions, kept so that old imports work: each op's specification
now lives in ``ortops/ops/<op>/spec.py`` and the op list in :mod:`ortops.ops`."""

from .ops import ARG_MAX, NCNN_DOMAIN, OPENVINO_DOMAIN, OPS, SCATTER_ELEMENTS_UPDATE, TOP_K, find_op
from .ops.spec import AttrDef, OpDef, OpSpec

__all__ = ["AttrDef", "OpDef", "OpSpec", "TOP_K", "SCATTER_ELEMENTS_UPDATE", "ARG_MAX", "OPS", "OPENVINO_DOMAIN",
           "NCNN_DOMAIN", "find_op"]
