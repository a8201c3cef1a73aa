"""The causal check with the real runtimes: a node explains an output difference only when
feeding the baseline the other runtime's values at that node reproduces the other runtime's output."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from ortops.compare import compare
from ortops.compare.causal import RECOMPUTED, cut_model, node_model
from . import models


def _run(maker, folder, ties: bool):
    """The model ``maker`` writes, compared in ORT and OpenVINO on [64, 16] inputs: (report, out's
    row, the first TopK's row)."""
    pytest.importorskip("openvino")
    report = compare(maker(folder / "model.onnx"), dims={"n": 64}, ties=ties, runtimes=["onnxruntime", "openvino"])
    (row,) = [o for o in report["outputs"] if o["runtime"] == "openvino"]
    return report, row, report["nodes"][0]


@pytest.mark.parametrize("ties", [False, True])
def test_a_bug_behind_a_tie_is_unexplained_with_and_without_ties(tmp_path, ties):
    """``TopK -> indices -> Mul(2**32)`` in int64: OpenVINO's CPU plugin multiplies in int32, so
    ``out`` differs where the indices agree too. A tie at the TopK must not take the blame."""
    report, row, node = _run(models.tie_masking, tmp_path, ties)
    if row["verdict"] == "match":
        pytest.skip("this OpenVINO computes the int64 Mul exactly")
    assert row["verdict"] == "unexplained", row
    assert report["summary"]["exit_status"] == 1
    if node["status"] == "agree":  # no tie split the TopK: nothing upstream to blame
        assert row["causal"] is None and "no audited node upstream differs" in row["explanation"]
        return
    assert node["status"] == "explained" and node["topic"] == "ties", node
    assert row["causal"]["status"] == "failed" and row["causal"]["cut"] == ["topk"], row["causal"]
    assert row["causal"]["trace"]["node"] == "scale" and row["node"] == "scale"
    assert "does not cause this difference" in row["explanation"]


def test_the_trace_names_the_node_behind_an_exact_one(tmp_path):
    """An exact Add between the TopK and the Mul: the trace runs OpenVINO again with the tensors
    between the cut and the output exposed, and names the Mul, not the Add."""
    report, row, node = _run(lambda p: models.tie_masking(p, shift=True), tmp_path, True)
    if row["verdict"] == "match" or node["status"] == "agree":
        pytest.skip("this OpenVINO computes the int64 Mul exactly, or broke no tie differently")
    assert row["verdict"] == "unexplained" and row["causal"]["status"] == "failed", row
    assert row["causal"]["trace"]["node"] == "scale", row["causal"]


def test_a_chain_of_selections_cut_at_both_is_explained(tmp_path):
    """The second TopK differs because its input does (``upstream``): it is cut too, recomputed by
    ORT from OpenVINO's first indices, and its inputs then agree."""
    report, row, node = _run(models.tie_chain_of_two, tmp_path, True)
    if node["status"] == "agree":
        pytest.skip("this OpenVINO breaks ties as ORT does: nothing to explain")
    second = report["nodes"][1]
    assert second["node"] == "topk2" and second["status"] == "upstream", second
    if row["verdict"] == "match":
        pytest.skip("the second selection came out the same")
    assert row["causal"]["cut"] == ["topk", "topk2"], row["causal"]
    assert row["verdict"] == "explained" and row["causal"]["status"] == "passed", row


def test_a_chain_cut_at_three_nodes_judges_each_on_what_it_read(tmp_path):
    """TopK -> ScatterElements -> TopK -> ScatterElements: the cut run feeds each cut node's
    inputs with OpenVINO's values; the second scatter is judged on the TopK values it read
    there, not on ORT's recomputation of that TopK (which may break its ties another way)."""
    report, row, node = _run(models.tie_scatter_chain, tmp_path, True)
    if node["status"] == "agree":
        pytest.skip("this OpenVINO breaks ties as ORT does: nothing to explain")
    if row["verdict"] == "match":
        pytest.skip("the chain came out the same")
    assert row["verdict"] == "explained" and row["causal"]["status"] == "passed", row


def test_a_tie_that_causes_the_difference_explains_it(tmp_path):
    """``TopK -> indices -> Gather -> Cast -> Add``: every difference of ``out`` comes from the picks."""
    report, row, node = _run(models.tie_caused, tmp_path, True)
    if node["status"] == "agree":
        pytest.skip("this OpenVINO breaks ties as ORT does: nothing to explain")
    assert node["topic"] == "ties"
    assert row["verdict"] == "explained" and "causal check passed" in row["explanation"], row
    assert row["causal"]["status"] == "passed" and row["causal"]["comparison"]["mismatches"] == 0
    assert report["summary"]["exit_status"] == 0


def test_the_cut_model_reads_the_cut_tensor_from_its_inputs(tmp_path):
    """Cut at the TopK: the downstream part computes ``table[indices] + 0.5`` from the indices fed."""
    model = onnx.load(models.tie_caused(tmp_path / "caused.onnx"))
    indices = np.array([[15, 0, 3, 3, 7]], np.int64)
    values = np.zeros((1, 5), np.float32)
    cut = cut_model(model, {"indices": indices, "values": values}, ["out"], recompute=[0])
    session = ort.InferenceSession(cut.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.arange(16, dtype=np.float32).reshape(1, 16)
    out, recomputed_values, recomputed_indices = session.run(
        ["out", "values" + RECOMPUTED, "indices" + RECOMPUTED], {"x": x, "indices": indices, "values": values})
    np.testing.assert_array_equal(out, (3 * indices + 1).astype(np.float32) + 0.5)
    np.testing.assert_array_equal(recomputed_indices, [[15, 14, 13, 12, 11]])  # the TopK still runs
    np.testing.assert_array_equal(recomputed_values, [[15, 14, 13, 12, 11]])
    dropped = cut_model(model, {"indices": indices, "values": values}, ["out"])
    assert [n.name for n in dropped.graph.node] == ["gather", "cast", "add"]


def test_a_node_alone_keeps_its_initializers():
    model = onnx.load_from_string(onnx.helper.make_model(onnx.helper.make_graph(
        [onnx.helper.make_node("TopK", ["x", "k"], ["v", "i"], name="t")], "g",
        [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
        [onnx.helper.make_tensor_value_info("v", onnx.TensorProto.FLOAT, None)],
        [onnx.helper.make_tensor("k", onnx.TensorProto.INT64, [1], [2])]),
        opset_imports=[onnx.helper.make_opsetid("", 13)], ir_version=8).SerializeToString())
    alone = node_model(model, 0, {"x": np.array([[1, 3, 2], [0, 0, 5]], np.float32)})
    session = ort.InferenceSession(alone.SerializeToString(), providers=["CPUExecutionProvider"])
    values, indices = session.run(None, {"x": np.array([[1, 3, 2], [0, 0, 5]], np.float32)})
    np.testing.assert_array_equal(indices, [[1, 2], [2, 0]])


def _top_k_model(tmp_path, k: int):
    graph = onnx.helper.make_graph([onnx.helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, name="t")], "g",
                                   [onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
                                   [onnx.helper.make_tensor_value_info("i", onnx.TensorProto.INT64, None)],
                                   [onnx.helper.make_tensor("k", onnx.TensorProto.INT64, [1], [k])])
    path = tmp_path / f"k{k}.onnx"
    onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 13)], ir_version=8), path)
    return onnx.load(path), path


@pytest.mark.parametrize("k, status", [(4, "passed"), (2, "failed")])
def test_a_failure_is_blamed_on_a_node_only_when_the_node_alone_fails(tmp_path, k, status):
    """The node alone in ORT, on the same inputs: k=4 of 3 fails there too; k=2 runs, so a failure
    of the whole model cannot be that node's doing."""
    from ortops.compare.audit import audited_nodes
    from ortops.compare.causal import check_failure
    from ortops.compare.runtimes import Runner

    model, path = _top_k_model(tmp_path, k)
    (node,) = audited_nodes(model)
    feed = {"x": np.array([[1, 3, 2], [0, 0, 5]], np.float32)}
    check = check_failure(model, feed, {}, "onnxruntime", node, runner=Runner(path, {}, {}, 120, tmp_path))
    if k == 4 and check.status == "failed":
        pytest.skip("this ORT accepts k above the axis size")
    assert check.status == status and check.cut == ("t",), check
