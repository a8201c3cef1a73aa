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


def _top_k_then(path, name: str, tail: list, tail_inits: list, out_type: int) -> str:
    """``x [n, 16] float -> TopK(k=5) -> indices (int64)`` followed by ``tail`` ending in ``out``."""
    nodes = [helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=-1, name="topk"), *tail]
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 16])],
                              [helper.make_tensor_value_info("out", out_type, None)],
                              [helper.make_tensor("k", TensorProto.INT64, [1], [5]), *tail_inits])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=IR), path)


def tie_masking(path, shift: bool = False) -> str:
    """``x -> TopK(k=5) -> indices -> Mul(2**32) -> out`` in int64: OpenVINO's CPU plugin computes
    the Mul in int32, so ``out`` differs wherever an index is not 0, tie or no tie. ``shift``: an
    exact ``Add(1)`` between the TopK and the Mul."""
    source = "shifted" if shift else "indices"
    tail = [helper.make_node("Add", ["indices", "one"], ["shifted"], name="shift")] if shift else []
    tail.append(helper.make_node("Mul", [source, "big"], ["out"], name="scale"))
    return _top_k_then(path, "tie_masking", tail, [helper.make_tensor("big", TensorProto.INT64, [], [2**32]),
                                                   helper.make_tensor("one", TensorProto.INT64, [], [1])],
                       TensorProto.INT64)


def tie_chain_of_two(path) -> str:
    """``x -> TopK(k=5) -> indices -> Cast(float) -> TopK(k=3) -> out``: the second TopK's input
    differs wherever the first one's ties went another way (its audit: ``upstream``)."""
    tail = [helper.make_node("Cast", ["indices"], ["as_float"], to=TensorProto.FLOAT, name="cast"),
            helper.make_node("TopK", ["as_float", "k3"], ["top_values", "out"], axis=-1, name="topk2")]
    return _top_k_then(path, "tie_chain_of_two", tail, [helper.make_tensor("k3", TensorProto.INT64, [1], [3])],
                       TensorProto.INT64)


def tie_caused(path) -> str:
    """``x -> TopK(k=5) -> indices -> Gather(table) -> Cast(float) -> Add(0.5) -> out``: every
    difference of ``out`` comes from the indices TopK picked."""
    tail = [helper.make_node("Gather", ["table", "indices"], ["picked"], axis=0, name="gather"),
            helper.make_node("Cast", ["picked"], ["picked_f"], to=TensorProto.FLOAT, name="cast"),
            helper.make_node("Add", ["picked_f", "half"], ["out"], name="add")]
    inits = [helper.make_tensor("table", TensorProto.INT64, [16], [3 * i + 1 for i in range(16)]),
             helper.make_tensor("half", TensorProto.FLOAT, [], [0.5])]
    return _top_k_then(path, "tie_caused", tail, inits, TensorProto.FLOAT)


def many_top_k(path, count: int = 90) -> str:
    """``count`` TopK nodes (k=5) on one ``x [n, 16]``, named as torch.onnx names them (``/TopK``,
    ``/TopK_1``, ...), their indices concatenated into ``indices`` and their values into ``values``."""
    names = ["/TopK"] + [f"/TopK_{i}" for i in range(1, count)]
    nodes = [helper.make_node("TopK", ["x", "k"], [f"v{i}", f"i{i}"], axis=-1, name=name)
             for i, name in enumerate(names)]
    nodes += [helper.make_node("Concat", [f"i{i}" for i in range(count)], ["indices"], axis=1, name="/Concat"),
              helper.make_node("Concat", [f"v{i}" for i in range(count)], ["values"], axis=1, name="/Concat_1")]
    graph = helper.make_graph(nodes, "many_top_k", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 16])],
                              [helper.make_tensor_value_info("indices", TensorProto.INT64, None),
                               helper.make_tensor_value_info("values", TensorProto.FLOAT, None)],
                              [helper.make_tensor("k", TensorProto.INT64, [1], [5])])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=IR), path)


def tie_scatter_chain(path) -> str:
    """``x -> TopK(k=8) -> ScatterElements(add) -> TopK(k=8) -> ScatterElements(add) -> out``: a tie
    at the first TopK travels through three audited nodes, each reading the one before it."""
    nodes = [helper.make_node("Sub", ["x", "x"], ["zeros"], name="zeros")]
    source = "x"
    for i, suffix in enumerate(("", "2")):
        nodes += [helper.make_node("TopK", [source, "k"], [f"v{i}", f"i{i}"], axis=-1, name=f"topk{suffix}"),
                  helper.make_node("ScatterElements", ["zeros", f"i{i}", f"v{i}"], [f"s{i}"], axis=1, reduction="add",
                                   name=f"scatter{suffix}")]
        source = f"s{i}"
    graph = helper.make_graph(nodes, "tie_scatter_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 16])],
                              [helper.make_tensor_value_info("s1", TensorProto.FLOAT, None)],
                              [helper.make_tensor("k", TensorProto.INT64, [1], [8])])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=IR), path)


def slow_loop(path, trips: int = 200_000) -> str:
    """A Loop of ``trips`` Adds (onnx's reference takes tens of seconds), then a TopK; every
    initializer in an external data file next to the model. Input ``x`` float32 [16]."""
    body = helper.make_graph(
        [helper.make_node("Add", ["acc_in", "step"], ["acc_out"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                 helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
                 helper.make_tensor_value_info("acc_in", TensorProto.FLOAT, [16])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc_out", TensorProto.FLOAT, [16])])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["trips", "cond", "x"], ["acc"], body=body),
         helper.make_node("TopK", ["acc", "k"], ["values", "indices"], name="top")],
        "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [16])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [3])],
        [onnx.numpy_helper.from_array(v, n) for n, v in (
            ("step", np.zeros(16, np.float32)), ("trips", np.array(trips, np.int64)), ("cond", np.array(True)),
            ("k", np.array([3], np.int64)))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    onnx.save(model, str(path), save_as_external_data=True, all_tensors_to_one_file=True, location="slow.data",
              size_threshold=0)
    return str(path)
