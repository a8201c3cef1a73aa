"""Builders for TopK: the ortops node, the standard ONNX TopK-1/10/11/24, side by side."""

from __future__ import annotations

from typing import Sequence

import onnx
from onnx import TensorProto, helper

from ... import dtypes
from .checks import INDEX_ELEMENT_TYPES
from ...checks import normalize_axis
from .spec import TOP_K
from ...builder.common import custom_node, dims, make_model

__all__ = ["TOP_K_VERSIONS", "top_k", "onnx_top_k", "top_k_model", "onnx_top_k_model", "top_k_side_by_side"]

#: The standard TopK versions and the default-domain opset each is built at.
TOP_K_VERSIONS = {1: 9, 10: 10, 11: 11, 24: 24}


def top_k(data: str, k: str, *, axis: int, mode: str, sort: str, stable: int = 0, index_element_type: str = "i32",
          outputs: Sequence[str] = ("values", "indices"), name: str = "") -> onnx.NodeProto:
    """``ortops.openvino::TopK`` node (OpenVINO TopK-11), every attribute written out.

    The bridge needs every attribute present on the node (an absent one fails session
    creation), so defaults are written explicitly.
    """
    attrs = dict(axis=axis, mode=mode, sort=sort, stable=stable, index_element_type=index_element_type)
    return custom_node(TOP_K, (data, k), outputs, name, attrs)


def onnx_top_k(version: int, X: str, K: str | None, *, axis: int = -1, largest: int = 1, sorted: int = 1,
               k: int | None = None, outputs: Sequence[str] = ("Values", "Indices"), name: str = "") -> onnx.NodeProto:
    """Standard ``ai.onnx@version::TopK`` node, version 1, 10, 11 or 24.

    TopK-1 takes ``k`` as an attribute (``K`` must be None); TopK-10 takes K as an input and
    has no ``largest``/``sorted`` (it is always largest, sorted); TopK-11/24 have both.
    """
    if version not in TOP_K_VERSIONS:
        raise ValueError(f"TopK version {version} is not one of {list(TOP_K_VERSIONS)}")
    if version == 1:
        if k is None or K is not None:
            raise ValueError("TopK-1 takes k as an attribute: pass k=... and K=None")
        return helper.make_node("TopK", [X], list(outputs), name=name or None, axis=axis, k=k)
    if version == 10:
        if (largest, sorted) != (1, 1):
            raise ValueError(f"TopK-10 has no largest/sorted attributes; got largest={largest}, sorted={sorted}")
        return helper.make_node("TopK", [X, K], list(outputs), name=name or None, axis=axis)
    return helper.make_node("TopK", [X, K], list(outputs), name=name or None, axis=axis, largest=largest, sorted=sorted)


def top_k_model(data_type: int, rank: int, *, axis: int, mode: str, sort: str, stable: int = 0,
                index_element_type: str = "i32", k_type: int = TensorProto.INT64, k_shape: Sequence[int] = (1,)) -> onnx.ModelProto:
    """Model ``(data, k) -> (values, indices)`` with one ortops TopK node; OpError for an
    invalid attribute or an ``axis`` outside [-rank, rank-1]."""
    node = top_k("data", "k", axis=axis, mode=mode, sort=sort, stable=stable,
                 index_element_type=index_element_type, name="top_k")
    normalize_axis("TopK", axis, rank)
    index_type = dtypes.from_numpy(INDEX_ELEMENT_TYPES[index_element_type]).onnx
    out_dims = [None] * rank
    return make_model(
        [node],
        [("data", data_type, dims(rank)), ("k", k_type, list(k_shape))],
        [("values", data_type, out_dims), ("indices", index_type, out_dims)],
    )


def onnx_top_k_model(version: int, data_type: int, rank: int, *, axis: int = -1, largest: int = 1, sorted: int = 1,
                     k: int | None = None) -> onnx.ModelProto:
    """Model with one standard TopK node: inputs ``(X, K)``, or ``(X,)`` for TopK-1."""
    K = None if version == 1 else "K"
    node = onnx_top_k(version, "X", K, axis=axis, largest=largest, sorted=sorted, k=k, name=f"onnx_top_k_{version}")
    inputs = [("X", data_type, dims(rank))] + ([] if K is None else [("K", TensorProto.INT64, [1])])
    out_dims = [None] * rank
    return make_model([node], inputs, [("Values", data_type, out_dims), ("Indices", TensorProto.INT64, out_dims)],
                      onnx_opset=TOP_K_VERSIONS[version])


def top_k_side_by_side(version: int, data_type: int, rank: int, *, k: int, axis: int, mode: str, sort: str,
                       stable: int = 0, index_element_type: str = "i32") -> onnx.ModelProto:
    """One input ``data`` feeding the ortops TopK and the standard TopK-``version``.

    ``k`` is a constant (TopK-1 needs it as an attribute). Outputs: ``values``, ``indices``
    (ortops) and ``onnx_values``, ``onnx_indices`` (standard). The mapping: mode max/min is
    ``largest`` 1/0 (TopK-1/10 have no ``largest``: pass mode="max"); the standard node is
    always ``sorted=1``. OpError for an invalid attribute or an ``axis`` outside [-rank, rank-1].
    """
    normalize_axis("TopK", axis, rank)
    largest = 1 if mode == "max" else 0
    if version in (1, 10) and not largest:
        raise ValueError(f"TopK-{version} has no largest attribute, so it cannot map mode='min'")
    k_init = helper.make_tensor("k", TensorProto.INT64, [1], [k])
    custom = top_k("data", "k", axis=axis, mode=mode, sort=sort, stable=stable,
                   index_element_type=index_element_type, name="ortops_top_k")
    standard = onnx_top_k(version, "data", None if version == 1 else "k", axis=axis, largest=largest, sorted=1,
                          k=k if version == 1 else None, outputs=("onnx_values", "onnx_indices"),
                          name=f"onnx_top_k_{version}")
    index_type = dtypes.from_numpy(INDEX_ELEMENT_TYPES[index_element_type]).onnx
    out_dims = [None] * rank
    return make_model(
        [custom, standard],
        [("data", data_type, dims(rank))],
        [("values", data_type, out_dims), ("indices", index_type, out_dims),
         ("onnx_values", data_type, out_dims), ("onnx_indices", TensorProto.INT64, out_dims)],
        onnx_opset=TOP_K_VERSIONS[version],
        initializers=[k_init],
    )
