"""Smaller reliability points: long values in messages, rank above 32, warnings as errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

import ortops
from child_process import run_child
from ortops import bridge, errors, reference
from ortops.ops.top_k.kernel import top_k as top_k_kernel


def test_truncated_keeps_head_and_tail():
    text = "a" * 600 + "MIDDLE" + "z" * 600
    short = errors.truncated(text)
    assert len(short) < 1100 and short.startswith("a" * 500) and short.endswith("z" * 500)
    assert "[206 characters omitted]" in short
    assert errors.truncated("short") == "short"


def test_a_50_mb_attribute_gives_a_short_message():
    huge = "x" * 50_000_000
    node = helper.make_node("TopK", ["data", "k"], ["values", "indices"], domain="ortops.openvino", name="n" * 10_000,
                            axis=0, mode=huge, sort="value")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [3]),
                                            helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("indices", TensorProto.INT32, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid("ortops.openvino", 1)], ir_version=8)
    with pytest.raises(ortops.OpError) as info:
        ortops.prepare_model(model)
    assert len(str(info.value)) < 3000 and "characters omitted" in str(info.value)


def test_a_50_mb_attribute_on_the_raw_path_logs_a_short_line():
    """The raw path logs each failing call: the line must be short, and the process alive."""
    child = run_child("""
import logging, sys
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper
import ortops

lines = []
handler = logging.Handler()
handler.emit = lambda record: lines.append(record.getMessage())
logging.getLogger("ortops").addHandler(handler)
node = helper.make_node("TopK", ["data", "k"], ["values", "indices"], domain="ortops.openvino",
                        axis=0, mode="y" * 50_000_000, sort="value", stable=0, index_element_type="i32")
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [3]),
                                        helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
                          [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
                           helper.make_tensor_value_info("indices", TensorProto.INT32, None)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                helper.make_opsetid("ortops.openvino", 1)], ir_version=8)
options = ortops.session_options()
options.log_severity_level = 3
session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
for _ in range(3):
    values, _ = session.run(None, {"data": np.ones(3, np.float32), "k": np.array([1])})
print(len(lines), max(len(line) for line in lines), values.shape)
""", timeout=120)
    assert child.status == 0, child.describe()
    count, longest, shape = child.lines()[-1].split(" ", 2)
    assert count == "3" and int(longest) < 3000 and shape == "(0,)", child.describe()


@pytest.mark.parametrize("shape, axis", [((1,) * 32 + (3,), -1), ((2,) + (1,) * 33 + (2,), 0), ((1,) * 40, 5)])
def test_reference_top_k_above_rank_32(shape, axis):
    data = np.random.default_rng(0).integers(0, 3, size=shape).astype(np.float32)
    for sort in ("value", "index"):
        got = reference.top_k(data, 1, axis=axis, mode="min", sort=sort)
        fast = top_k_kernel(data, np.array([1]), axis=axis, mode="min", sort=sort)
        for a, b in zip(got, fast):
            assert a.shape == b.shape and np.array_equal(a, b)


def test_reference_top_k_bad_k_above_rank_32_is_an_op_error():
    with pytest.raises(ortops.OpError, match="k=5 is outside"):
        reference.top_k(np.zeros((1,) * 33 + (2,), np.float32), 5, axis=-1, mode="max", sort="value")


def test_rounding_next_to_the_float64_maximum_warns_nothing():
    x = np.array([np.finfo(np.float64).max, -np.finfo(np.float64).max, 1.0, np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rounded = bridge.round_to_precision(x, "bfloat16")
    assert np.isinf(rounded[0]) and rounded[0] > 0 and np.isinf(rounded[1]) and rounded[1] < 0
    assert rounded[2] == 1.0 and np.isnan(rounded[3])
