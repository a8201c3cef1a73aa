"""The runtimes of ortops compare: the reference with ortops' ops, child processes, crashes, absence."""

from __future__ import annotations

import pathlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

from ortops import builder
from ortops.compare import compare, runtimes
from . import models
from conftest import brute_top_k


def _side_by_side() -> onnx.ModelProto:
    """The same data into a standard TopK (largest) and an ortops TopK (mode=min) of one name."""
    nodes = [helper.make_node("TopK", ["x", "k"], ["std_values", "std_indices"], axis=-1, largest=1, sorted=1,
                              name="standard"),
             builder.top_k("x", "k", axis=-1, mode="min", sort="value", stable=1, index_element_type="i64",
                           outputs=("ov_values", "ov_indices"), name="custom")]
    graph = helper.make_graph(nodes, "both", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 7])],
                              [helper.make_tensor_value_info(n, t, None) for n, t in
                               (("std_values", TensorProto.FLOAT), ("std_indices", TensorProto.INT64),
                                ("ov_values", TensorProto.FLOAT), ("ov_indices", TensorProto.INT64))],
                              [helper.make_tensor("k", TensorProto.INT64, [1], [3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                   helper.make_opsetid("ortops.openvino", builder.SCHEMA_VERSION)],
                             ir_version=8)


def test_reference_keeps_a_custom_top_k_apart_from_the_standard_one():
    """onnx's ReferenceEvaluator, given new_ops naively, confuses a custom TopK with the standard one of the same name."""
    x = np.random.default_rng(3).integers(0, 4, (6, 7)).astype(np.float32)
    evaluator = ReferenceEvaluator(_side_by_side(), new_ops=runtimes.reference_ops())
    out = dict(zip(evaluator.output_names, evaluator.run(None, {"x": x})))
    assert out["std_indices"].tolist() == [brute_top_k(list(r), 3, largest=True) for r in x]
    assert out["ov_indices"].tolist() == [brute_top_k(list(r), 3, largest=False) for r in x]


def test_reference_keeps_the_ncnn_arg_max_apart_from_the_standard_one():
    nodes = [helper.make_node("ArgMax", ["x"], ["std"], axis=1, keepdims=0, name="standard"),
             builder.arg_max("x", out_max_val=0, topk=1, name="ncnn")]
    graph = helper.make_graph(nodes, "both", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 6])],
                              [helper.make_tensor_value_info("std", TensorProto.INT64, None),
                               helper.make_tensor_value_info("output", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                    helper.make_opsetid("ortops.ncnn", builder.SCHEMA_VERSION)],
                              ir_version=8)
    x = np.array([[2, 7, 1, 7, 0, 7]], np.float32)  # maxima at 1, 3, 5
    evaluator = ReferenceEvaluator(model, new_ops=runtimes.reference_ops())
    out = dict(zip(evaluator.output_names, evaluator.run(None, {"x": x})))
    assert out["std"].tolist() == [1]  # ONNX: the first maximum
    assert out["output"].tolist() == [[5.0]]  # ncnn: the last maximum, as float32


def test_each_runtime_runs_in_a_child_and_returns_named_outputs(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(_side_by_side(), path)
    x = np.random.default_rng(4).standard_normal((6, 7)).astype(np.float32)
    for name in ("onnxruntime", "reference"):
        result = runtimes.run_in_child(name, path, {"x": x}, {})
        assert result.status == "ok", result.detail
        assert result.outputs["ov_indices"].tolist() == [brute_top_k(list(r), 3, largest=False) for r in x]


def test_a_runtime_that_aborts_is_reported_as_crashed_not_fatal(tmp_path):
    """OpenVINO's CPU plugin writes out of bounds for a scatter index far below -d."""
    pytest.importorskip("openvino")
    path = models.scatter_update(tmp_path / "scatter.onnx")
    feed = {"data": np.zeros(16, np.float32), "indices": np.array([0, -1_000_000_000, 2]),
            "updates": np.ones(3, np.float32), "axis": np.array([0])}
    report = compare(path, inputs=feed)
    status = {r["name"]: r for r in report["runtimes"]}
    assert status["onnxruntime"]["status"] == "failed" and "OpError" in status["onnxruntime"]["detail"]
    assert status["openvino"]["status"] in ("crashed", "failed", "ok")  # what OpenVINO does is data
    for row in report["runtimes"]:
        if row["status"] in ("crashed", "failed"):
            assert row["verdict"] == "explained" and row["topic"] == "out-of-range-indices", row
    if status["openvino"]["status"] == "crashed":
        assert "died" in status["openvino"]["detail"]
    assert report["summary"]["exit_status"] == 2  # nothing could be compared


def test_a_runtime_that_is_not_installed_is_reported_as_missing(tmp_path, monkeypatch):
    fake = tmp_path / "site" / "openvino"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('hidden for this test')\n")
    monkeypatch.syspath_prepend(str(fake.parent))  # a runtime's child process imports with the parent's path
    path = models.tie_chain(tmp_path / "m.onnx")
    report = compare(path, inputs={"x": models.tie_heavy((4, 16))})
    status = {r["name"]: r for r in report["runtimes"]}
    assert status["openvino"]["status"] == "missing" and "ortops[openvino]" in status["openvino"]["detail"]
    assert status["onnxruntime"]["status"] == status["reference"]["status"] == "ok"
    assert report["summary"]["exit_status"] == 0


@pytest.mark.parametrize("name", ["t", ""])
def test_a_model_a_runtime_refuses_is_reported_as_failed(tmp_path, name):
    """ORT has no TopK kernel for uint64 (ORT 1.31, 1.32): reported, with ORT's message, and
    explained at the node, named or not (ORT then says "name ''")."""
    graph = helper.make_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"], name=name)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.UINT64, [5])],
                              [helper.make_tensor_value_info("v", TensorProto.UINT64, None),
                               helper.make_tensor_value_info("i", TensorProto.INT64, None)],
                              [helper.make_tensor("k", TensorProto.INT64, [1], [2])])
    path = pathlib.Path(tmp_path / "u64.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), path)
    report = compare(path, inputs={"x": np.array([5, 1, 9, 2, 7], np.uint64)}, runtimes=["onnxruntime", "reference"])
    ort = report["runtimes"][0]
    if ort["status"] == "ok":
        pytest.skip("this ORT has a uint64 TopK kernel")
    assert ort["status"] == "failed" and ort["detail"]
    assert ort["verdict"] == "explained" and ort["topic"] == "uint64" and ort["node"] == (name or "#0"), ort


@pytest.mark.parametrize("make, feed", [
    (lambda: builder.scatter_elements_update_model(TensorProto.INT32, 1, reduction="mean"),
     {"data": np.array([0, 5, -7, 2], np.int32), "indices": np.array([0, 0, 2, 2, 1]),
      "updates": np.array([-3, -4, 3, -2, 9], np.int32), "axis": np.array([0])}),
    (lambda: builder.arg_max_model(2, out_max_val=1, topk=3),
     {"data": np.random.default_rng(0).integers(0, 3, (4, 5)).astype(np.float32)}),
    (lambda: builder.top_k_model(TensorProto.FLOAT, 2, axis=0, mode="min", sort="index", stable=1),
     {"data": np.random.default_rng(1).integers(0, 3, (6, 5)).astype(np.float32), "k": np.array([2])}),
])
def test_every_ortops_op_in_the_reference_equals_ortops_in_onnxruntime(tmp_path, make, feed):
    """ortops' kernels equal its references: the reference runtime must agree exactly, every output."""
    path = tmp_path / "m.onnx"
    onnx.save(make(), path)
    report = compare(path, inputs=feed, runtimes=["onnxruntime", "reference"], atol=0, rtol=0)
    assert [r["status"] for r in report["runtimes"]] == ["ok", "ok"]
    assert {o["verdict"] for o in report["outputs"]} == {"match"}, report["outputs"]
    assert {n["status"] for n in report["nodes"]} == {"agree"}


def test_a_model_saved_for_a_block_survives_another_run_inside_it(tmp_path):
    """compare retries a runtime on the plain model while the audited one is still in use: the
    retry's file deleted the audited one (FileNotFoundError for every later runtime)."""
    path = tmp_path / "m.onnx"
    onnx.save(_side_by_side(), path)
    runner = runtimes.Runner(path, {}, {}, None, tmp_path)
    x = np.random.default_rng(4).standard_normal((6, 7)).astype(np.float32)
    with runner.saved(_side_by_side()) as run:
        assert runner.run("reference", _side_by_side(), {"x": x}).status == "ok"
        result = run("reference", {"x": x})
        assert result.status == "ok", result.detail
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.onnx"]
