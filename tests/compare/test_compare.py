"""ortops compare end to end on small models, with the real runtimes: a tie explained at the right
node and followed downstream, a genuine difference unexplained, scatters, external data."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ortops.compare import compare
from . import models


def _rows(report, runtime):
    return {o["output"]: o for o in report["outputs"] if o["runtime"] == runtime}


def test_a_tie_is_explained_at_the_right_node_and_downstream(tmp_path):
    """ortops TopK with sort='index' on tie-heavy data: OpenVINO keeps other equal values at the k
    boundary. The difference reaches ``doubled`` through a Mul nobody audits."""
    pytest.importorskip("openvino")
    path = models.tie_chain(tmp_path / "ties.onnx")
    report = compare(path, inputs={"x": models.tie_heavy((64, 16))}, runtimes=["onnxruntime", "openvino"])
    node = next(n for n in report["nodes"] if n["runtime"] == "openvino")
    assert node["node"] == "selection"  # Relu and Mul are not audited
    rows = _rows(report, "openvino")
    if node["status"] == "agree":
        pytest.skip("this OpenVINO keeps the lowest-index ties at the boundary: no difference to explain")
    assert node["status"] == "explained" and node["topic"] == "ties", node
    assert "onnxruntime takes the lower index" in node["detail"] and node["reason"]
    for name in ("doubled", "indices"):
        assert rows[name]["verdict"] == "explained" and rows[name]["node"] == "selection", rows[name]
    assert report["summary"]["exit_status"] == 0


def test_reference_agrees_with_ortops_in_onnxruntime_on_the_same_model(tmp_path):
    path = models.tie_chain(tmp_path / "ties.onnx")
    report = compare(path, inputs={"x": models.tie_heavy((64, 16))}, runtimes=["onnxruntime", "reference"])
    assert {o["verdict"] for o in report["outputs"]} == {"match"}
    assert [n["status"] for n in report["nodes"]] == ["agree"]


def test_each_model_is_written_once_for_all_runtimes(tmp_path, monkeypatch):
    """A model with large weights costs a write per save: the runtimes share one."""
    from ortops.compare import model as model_mod

    written = []
    save = model_mod.save
    monkeypatch.setattr(model_mod, "save", lambda model, *a: written.append(model) or save(model, *a))
    path = models.tie_chain(tmp_path / "ties.onnx")
    report = compare(path, inputs={"x": models.tie_heavy((8, 16))}, runtimes=["onnxruntime", "reference"])
    assert {o["verdict"] for o in report["outputs"]} == {"match"}
    assert len(written) == 1


def test_a_genuine_difference_is_unexplained_and_traced_to_its_node(tmp_path):
    """onnx's ReferenceEvaluator applies BatchNormalization-9's momentum as if training (batch
    statistics); ORT uses the running statistics. Nothing in ortops' table explains that."""
    path = models.batch_norm_with_momentum(tmp_path / "bn.onnx")
    report = compare(path, seed=3, runtimes=["onnxruntime", "reference"], trace=True)
    rows = _rows(report, "reference")
    if rows["v"]["verdict"] == "match":
        pytest.skip("this onnx reference uses the running statistics: no difference")
    assert rows["v"]["verdict"] == "unexplained"
    assert "top2" in rows["v"]["explanation"] and "already differ" in rows["v"]["explanation"]
    assert "bn (BatchNormalization)" in rows["v"]["explanation"]
    assert [t["name"] for t in report["trace"]] == ["bn"]
    from ortops.compare import write_reports

    _, md, html = write_reports(report, tmp_path / "r")
    assert "## Trace: where the runtimes split" in md.read_text() and "`bn`" in md.read_text()
    assert report["summary"]["exit_status"] == 1


def test_an_int64_difference_outside_audited_nodes_is_unexplained(tmp_path):
    """OpenVINO's CPU plugin computes int64 in int32: an Add of large values differs in a
    node ortops does not audit, so the difference stays unexplained."""
    pytest.importorskip("openvino")
    graph = helper.make_graph([helper.make_node("Add", ["x", "big"], ["y"], name="add")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.INT64, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
                              [helper.make_tensor("big", TensorProto.INT64, [], [2**40])])
    path = tmp_path / "add.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), path)
    report = compare(path, inputs={"x": np.arange(4, dtype=np.int64)}, runtimes=["onnxruntime", "openvino"])
    row = _rows(report, "openvino")["y"]
    if row["verdict"] == "match":
        pytest.skip("this OpenVINO computes int64 exactly")
    assert row["verdict"] == "unexplained" and "no audited node" in row["explanation"]
    assert row["comparison"]["mismatches"] == 4 and report["summary"]["exit_status"] == 1


def test_duplicate_scatter_indices_explain_a_float_sum_difference(tmp_path):
    """ScatterElements add with duplicate targets: each runtime's float32 accumulation order is its own."""
    graph = helper.make_graph([helper.make_node("ScatterElements", ["d", "i", "u"], ["o"], axis=0, reduction="add",
                                                name="scatter")], "g",
                              [helper.make_tensor_value_info("d", TensorProto.FLOAT, [3]),
                               helper.make_tensor_value_info("i", TensorProto.INT64, [6]),
                               helper.make_tensor_value_info("u", TensorProto.FLOAT, [6])],
                              [helper.make_tensor_value_info("o", TensorProto.FLOAT, None)])
    path = tmp_path / "scatter.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8), path)
    feed = {"d": np.zeros(3, np.float32), "i": np.array([0, 0, 0, 1, 2, 2]),
            "u": np.array([1e8, 1.0, -1e8, 5.0, 0.1, 0.2], np.float32)}
    report = compare(path, inputs=feed, atol=0, rtol=0)
    for node in report["nodes"]:
        assert node["status"] in ("agree", "explained"), node
        if node["status"] == "explained":
            assert node["topic"] == "float-accumulation" and "duplicate scatter indices" in node["detail"]


def test_external_data_stays_in_its_files(tmp_path):
    path = models.batch_norm_with_momentum(tmp_path / "bn.onnx")
    model = onnx.load(path)
    raw = [onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(t), t.name) for t in model.graph.initializer]
    del model.graph.initializer[:]
    model.graph.initializer.extend(raw)  # raw_data: what onnx moves to external files
    folder = tmp_path / "external"
    folder.mkdir()
    onnx.save(model, folder / "bn.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=64)  # k stays inline: ORT reads it at load
    assert (folder / "weights.bin").stat().st_size > 0
    loaded = onnx.load(folder / "bn.onnx", load_external_data=False)
    assert any(t.data_location == onnx.TensorProto.EXTERNAL for t in loaded.graph.initializer)
    report = compare(folder / "bn.onnx", seed=2, runtimes=["onnxruntime", "reference"])
    assert report["model"]["external_data"] == ["weights.bin"]
    assert [r["status"] for r in report["runtimes"]] == ["ok", "ok"]
    plain = compare(path, seed=2, runtimes=["onnxruntime"])
    assert plain["runtimes"][0]["status"] == "ok"


def test_external_data_in_a_read_only_folder(tmp_path, monkeypatch):
    """Where the model's folder cannot take compare's copy of the model (read-only), the data files
    go next to it in a temporary folder, and every runtime still reads them (before, hard links
    there made onnx's loader refuse the original file: the reference runtime failed)."""
    import pathlib
    import shutil

    model = onnx.load(models.batch_norm_with_momentum(tmp_path / "bn.onnx"))
    raw = [onnx.numpy_helper.from_array(onnx.numpy_helper.to_array(t), t.name) for t in model.graph.initializer]
    del model.graph.initializer[:]
    model.graph.initializer.extend(raw)
    folder = tmp_path / "external"
    folder.mkdir()
    onnx.save(model, folder / "bn.onnx", save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=64)
    write_bytes = pathlib.Path.write_bytes

    def refuse_in_folder(self, data):  # this test runs as any user, root included: chmod would not refuse
        if self.parent == folder:
            raise PermissionError(13, "Permission denied", str(self))
        return write_bytes(self, data)

    monkeypatch.setattr(pathlib.Path, "write_bytes", refuse_in_folder)
    copied = []
    copyfile = shutil.copyfile
    monkeypatch.setattr(shutil, "copyfile", lambda src, dst: copied.append(src) or copyfile(src, dst))
    report = compare(folder / "bn.onnx", seed=2, runtimes=["onnxruntime", "reference"])
    assert [r["status"] for r in report["runtimes"]] == ["ok", "ok"], report["runtimes"]
    assert copied == [folder / "weights.bin"]  # once for the whole run, not once per runtime
    assert (folder / "weights.bin").stat().st_nlink == 1
    assert sorted(p.name for p in folder.iterdir()) == ["bn.onnx", "weights.bin"]


def test_openvino_integer_mean_and_nan_are_explained(tmp_path):
    pytest.importorskip("openvino")
    from ortops import builder

    mean = tmp_path / "mean.onnx"
    onnx.save(builder.scatter_elements_update_model(TensorProto.INT32, 1, reduction="mean"), mean)
    report = compare(mean, inputs={"data": np.array([0, 5, -7, 2], np.int32), "indices": np.array([0, 0, 2, 2, 1]),
                                   "updates": np.array([-3, -4, 3, -2, 9], np.int32), "axis": np.array([0])},
                     runtimes=["onnxruntime", "openvino"])
    (node,) = report["nodes"]
    if node["status"] != "agree":  # OpenVINO 2026.4 truncates -7, -3 -> ... toward zero; the spec floors
        assert node["status"] == "explained" and node["topic"] == "integer-mean-rounding", node
    graph = helper.make_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, name="t")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 7])],
                              [helper.make_tensor_value_info("v", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("i", TensorProto.INT64, None)],
                              [helper.make_tensor("k", TensorProto.INT64, [1], [4])])
    nan = tmp_path / "nan.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), nan)
    x = np.array([[1, np.nan, 3, -np.inf, np.inf, np.nan, 2]] * 3, np.float32)
    report = compare(nan, inputs={"x": x}, runtimes=["onnxruntime", "openvino"])
    (node,) = report["nodes"]
    if node["status"] != "agree":
        assert node["status"] == "explained" and node["topic"] == "nan", node
        assert {o["verdict"] for o in report["outputs"]} <= {"match", "explained"}


def test_k_outside_the_axis_explains_a_runtime_that_refuses_it(tmp_path):
    graph = helper.make_graph([helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-1, name="too_many")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("v", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    path = tmp_path / "k.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8), path)
    ok = compare(path, inputs={"x": np.ones((2, 3), np.float32), "k": np.array([2])},
                 runtimes=["onnxruntime", "reference"])
    assert [n["status"] for n in ok["nodes"]] == ["agree"]
    report = compare(path, inputs={"x": np.ones((2, 3), np.float32), "k": np.array([4])},
                     runtimes=["onnxruntime", "reference"])
    ort = report["runtimes"][0]
    if ort["status"] == "ok":
        pytest.skip("this ORT accepts k above the axis size")
    assert ort["verdict"] == "explained" and ort["topic"] == "k-range" and ort["node"] == "too_many", ort
    assert "k=4 is outside [1, 3]" in ort["explanation"]
    assert ort["causal"]["status"] == "passed" and ort["causal"]["cut"] == ["too_many"], ort["causal"]


def test_an_if_whose_condition_a_runtime_cannot_compute_stays(tmp_path):
    """A guarded model (``ortops.lower``) fed k = 2**32 + 2: in ORT its check fails and the PyOp
    branch raises OpError. A condition taken from another runtime (OpenVINO narrows int64 to
    int32, so k passes there as 2) would lift the composed branch, and ORT would then run a
    model without the check and answer. Every runtime runs the user's model instead."""
    pytest.importorskip("openvino")
    import ortops
    from ortops import builder

    model, _ = ortops.lower(builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value",
                                                index_element_type="i64"))
    path = tmp_path / "guarded.onnx"
    onnx.save(model, path)
    feed = {"data": np.arange(15, dtype=np.float32).reshape(3, 5), "k": np.array([2 ** 32 + 2])}
    with pytest.raises(ortops.OpError, match=r"k=4294967298 is outside \[1, 5\]"):  # ORT on the user's model
        ortops.InferenceSession(model, path="pyop").run(None, feed)
    report = compare(path, inputs=feed, runtimes=["onnxruntime", "openvino"])
    ort = report["runtimes"][0]
    assert ort["status"] == "failed" and "k=4294967298 is outside [1, 5]" in ort["detail"], ort
    assert report["lifted"] == [] and report["unobserved"], report["lifted"]
    for unobserved in report["unobserved"]:
        # OpenVINO's own outcome (it narrows k, observed) may join ORT's in the reason
        assert "could not be computed for these inputs (" in unobserved["reason"], unobserved
        assert f"onnxruntime failed: {ort['detail']}" in unobserved["reason"], unobserved


def test_an_if_is_lifted_only_where_every_runtime_takes_the_same_branch(tmp_path):
    """compare lifts an If's branch into the model every runtime runs: only where every runtime
    computes the same condition. OpenVINO narrows int64 to int32, so sel = 2**32 makes
    Greater(sel, 0) true in ORT and (observed) false there: each runtime must run its own branch."""
    ov = pytest.importorskip("openvino")
    import onnxruntime as ort

    def branch(name, largest):
        node = helper.make_node("TopK", ["x", "k"], [f"{name}_v", f"{name}_i"], axis=1, largest=largest, name=name)
        return helper.make_graph([node], name, [], [helper.make_tensor_value_info(f"{name}_v", TensorProto.FLOAT, None),
                                                    helper.make_tensor_value_info(f"{name}_i", TensorProto.INT64, None)])

    value = helper.make_tensor_value_info
    condition = helper.make_node("Greater", ["sel", "zero"], ["cond"])
    choose = helper.make_node("If", ["cond"], ["v", "i"], name="if", then_branch=branch("top", 1),
                              else_branch=branch("bottom", 0))
    graph = helper.make_graph([condition, choose], "g", [value("sel", TensorProto.INT64, []),
                                                         value("x", TensorProto.FLOAT, [2, 4])],
                              [value("v", TensorProto.FLOAT, None), value("i", TensorProto.INT64, None)],
                              initializer=[onnx.numpy_helper.from_array(np.array(0, np.int64), "zero"),
                                           onnx.numpy_helper.from_array(np.array([2], np.int64), "k")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    path = tmp_path / "if.onnx"
    onnx.save(model, path)
    just_condition = onnx.ModelProto()
    just_condition.CopyFrom(model)
    del just_condition.graph.node[1:], just_condition.graph.input[1:], just_condition.graph.output[:]
    just_condition.graph.output.append(value("cond", TensorProto.BOOL, []))
    x = np.array([[3, 1, 2, 0], [5, -1, 4, 0]], np.float32)
    for sel in (1, 2 ** 32):
        feed = {"sel": np.array(sel, np.int64), "x": x}
        in_ort = bool(ort.InferenceSession(just_condition.SerializeToString()).run(None, {"sel": feed["sel"]})[0])
        compiled = ov.Core().compile_model(ov.Core().read_model(just_condition.SerializeToString(), b""), "CPU")
        in_openvino = bool(np.asarray(compiled([feed["sel"]])[0]))
        report = compare(path, inputs=feed, runtimes=["onnxruntime", "openvino"])
        if in_ort == in_openvino:
            assert report["lifted"] == [{"node": "if", "branch": "then_branch" if in_ort else "else_branch"}]
        else:  # each runtime ran its own branch of the user's model: their answers differ
            assert report["lifted"] == [], report["lifted"]
            assert any("the runtimes disagree on 'cond'" in u["reason"] for u in report["unobserved"])
            assert report["summary"]["unexplained"] > 0
