"""Small hand-written models for the compare tests (real runtimes run them; nothing is mocked)."""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from ortops import builder

IR = 8


def save(model: onnx.ModelProto, path) -> str:
    onnx.save(model, str(path))
    return str(path)


def tie_chain(path) -> str:
    """``x -> Relu -> ortops TopK (sort=index) -> values * 2 (Mul) -> doubled``: a difference at the
    TopK travels to ``doubled`` through a node ortops does not audit."""
    k = helper.make_tensor("k", TensorProto.INT64, [1], [5])
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        builder.top_k("r", "k", axis=-1, mode="max", sort="index", stable=0, name="selection"),
        helper.make_node("Mul", ["values", "two"], ["doubled"], name="double"),
    ]
    graph = helper.make_graph(nodes, "tie_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 16])],
                              [helper.make_tensor_value_info("doubled", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("indices", TensorProto.INT32, None)], [k, two])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("ortops.openvino", builder.SCHEMA_VERSION)],
                              ir_version=IR)
    return save(model, path)


def batch_norm_with_momentum(path) -> str:
    """BatchNormalization-9 with a ``momentum`` attribute (as PaddlePaddle's exporter writes it),
    feeding a standard TopK; the running statistics are far from the batch's."""
    c = 8
    inits = [helper.make_tensor(n, TensorProto.FLOAT, [c], v) for n, v in
             (("scale", [1.0] * c), ("bias", [0.0] * c), ("mean", [5.0] * c), ("var", [0.25] * c))]
    inits.append(helper.make_tensor("k", TensorProto.INT64, [1], [2]))
    nodes = [helper.make_node("BatchNormalization", ["x", "scale", "bias", "mean", "var"], ["y"], epsilon=1e-5,
                              momentum=0.9, name="bn"),
             helper.make_node("TopK", ["y", "k"], ["v", "i"], axis=-1, name="top2")]
    graph = helper.make_graph(nodes, "bn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, c, 3, 3])],
                              [helper.make_tensor_value_info("v", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("i", TensorProto.INT64, None)], inits)
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)], ir_version=IR), path)


def scatter_update(path) -> str:
    """One ortops ScatterElementsUpdate (sum) over 1-D float data."""
    return save(builder.scatter_elements_update_model(TensorProto.FLOAT, 1, reduction="sum"), path)


def tie_heavy(shape, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 4, shape).astype(np.float32)
