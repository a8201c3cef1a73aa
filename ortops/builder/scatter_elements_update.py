"""Builders for ScatterElementsUpdate: the ortops node (standard ScatterElements: to come)."""

from __future__ import annotations

import onnx

from ..opdefs import SCATTER_ELEMENTS_UPDATE
from .common import custom_node

__all__ = ["scatter_elements_update"]


def scatter_elements_update(data: str, indices: str, updates: str, axis: str, *, reduction: str = "none",
                            use_init_val: int = 1, output: str = "output", name: str = "") -> onnx.NodeProto:
    """``ortops.openvino::ScatterElementsUpdate`` node (OpenVINO ScatterElementsUpdate-12)."""
    attrs = dict(reduction=reduction, use_init_val=use_init_val)
    return custom_node(SCATTER_ELEMENTS_UPDATE, (data, indices, updates, axis), (output,), name, attrs)
