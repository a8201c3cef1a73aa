"""Builders for ncnn ArgMax: the ortops node (standard-op equivalents: to come)."""

from __future__ import annotations

import onnx

from ..opdefs import ARG_MAX
from .common import custom_node

__all__ = ["arg_max"]


def arg_max(data: str, *, out_max_val: int = 0, topk: int = 1, output: str = "output", name: str = "") -> onnx.NodeProto:
    """``ortops.ncnn::ArgMax`` node (ncnn's ArgMax layer)."""
    return custom_node(ARG_MAX, (data,), (output,), name, dict(out_max_val=out_max_val, topk=topk))
