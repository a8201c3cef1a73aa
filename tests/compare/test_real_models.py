"""ortops compare end to end on real input: the PP-OCRv4 recogniser (``ocr`` extra) with top-k,
argmax and ortops nodes appended by ``ortops.builder.append_nodes``, and a builder model with
standard and ortops TopK side by side. docs/compare.md shows both runs."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from ortops import builder, cli

TEXT = "TopK 2026 ONNX"


@pytest.fixture(scope="module")
def ocr_run(tmp_path_factory):
    pytest.importorskip("rapidocr_onnxruntime", reason="needs the ocr extra: pip install 'ortops[ocr]'")
    from ortops import ocr

    folder = tmp_path_factory.mktemp("ocr")
    model = ocr.load_model()
    probs = model.graph.output[0].name
    extended = builder.append_nodes(model, [
        builder.onnx_top_k(11, probs, "k", axis=-1, outputs=("top5_values", "top5_classes"), name="top5"),
        helper.make_node("ArgMax", [probs], ["best_class"], axis=-1, keepdims=0, name="best"),
        builder.top_k(probs, "k", axis=-1, mode="max", sort="value", stable=1, index_element_type="i64",
                      outputs=("ov_values", "ov_classes"), name="openvino_top5"),
    ], initializers={"k": np.array([5], np.int64)})
    onnx.save(extended, folder / "rec_top5.onnx")
    np.savez(folder / "line.npz", x=ocr.preprocess(ocr.render_text(TEXT)))
    runtimes = ["onnxruntime", "reference"]
    try:
        import openvino  # noqa: F401

        runtimes.insert(1, "openvino")
    except ImportError:
        pass
    status = cli.main(["compare", "--no-progress", str(folder / "rec_top5.onnx"), "--inputs", str(folder / "line.npz"),
                       "--runtimes", *runtimes, "--out", str(folder / "report")])
    report = json.loads((folder / "report" / "compare.json").read_text())
    return status, report, ocr, extended


def test_the_recogniser_is_compared_and_its_appended_nodes_audited(ocr_run):
    status, report, _, _ = ocr_run
    assert status == report["summary"]["exit_status"] in (0, 1)
    assert {a["node"] for a in report["audited"]} == {"top5", "best", "openvino_top5"}
    assert {o["output"] for o in report["outputs"]} >= {"top5_classes", "best_class", "ov_classes"}
    ran = report["summary"]["runtimes_ran"]
    assert ran[0] == "onnxruntime" and len(ran) >= 2
    for node in report["nodes"]:
        assert node["status"] in ("agree", "explained", "unexplained", "upstream"), node
    # Every output verdict is consistent with its comparison and with the exit status.
    for row in report["outputs"]:
        assert (row["verdict"] == "match") == (row["comparison"]["status"] == "match"), row
    if status == 0:
        assert {o["verdict"] for o in report["outputs"]} <= {"match", "explained"}


def test_openvino_runs_at_f32_and_the_precision_is_recorded(ocr_run):
    _, report, _, _ = ocr_run
    row = next((r for r in report["runtimes"] if r["name"] == "openvino"), None)
    if row is None:
        pytest.skip("openvino is not installed")
    assert row["settings"] == {"precision": "f32"} and report["settings"]["openvino_precision"] == "f32"


def test_the_appended_argmax_reads_the_rendered_line(ocr_run, tmp_path):
    """The appended nodes compute on real data: ORT's argmax path decodes the rendered text."""
    _, _, ocr, extended = ocr_run
    if not ocr.font_description().startswith("DejaVu Sans Book"):
        pytest.skip("the decoding was measured with DejaVu Sans")
    import onnxruntime as ort

    import ortops

    session = ortops.InferenceSession(extended)
    names = [o.name for o in extended.graph.output]
    outputs = dict(zip(names, session.run(None, {"x": ocr.preprocess(ocr.render_text(TEXT))})))
    chars = ocr.characters(extended)
    assert ocr.ctc_greedy_decode(outputs["best_class"][0], chars).text == TEXT
    assert np.array_equal(outputs["top5_classes"][..., 0], outputs["best_class"])
    assert ort  # plain ORT is what the compare run used for the standard nodes


def test_a_builder_model_with_standard_and_ortops_top_k(tmp_path):
    model = builder.top_k_side_by_side(11, TensorProto.FLOAT, 2, k=5, axis=-1, mode="max", sort="index")
    onnx.save(model, tmp_path / "side_by_side.onnx")
    status = cli.main(["compare", "--no-progress", str(tmp_path / "side_by_side.onnx"), "--dim", "d0=64",
                       "--dim", "d1=16", "--ties", "--out", str(tmp_path / "r")])
    report = json.loads((tmp_path / "r" / "compare.json").read_text())
    assert status == report["summary"]["exit_status"]
    assert {a["node"] for a in report["audited"]} == {"ortops_top_k", "onnx_top_k_11"}
    for row in report["outputs"]:
        if row["verdict"] == "explained":
            assert row["node"] in ("ortops_top_k", "onnx_top_k_11")
        if row["output"].startswith("onnx_") and row["runtime"] == "reference":
            assert row["verdict"] == "match", row  # the reference's standard TopK is not the custom one
    ours = [n for n in report["nodes"] if n["node"] == "ortops_top_k" and n["runtime"] == "reference"]
    assert [n["status"] for n in ours] == ["agree"]
