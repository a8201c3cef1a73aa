"""The NonMaxSuppression audit: IoU by the spec, the judgement of two selections with hand-written
expectations, and real ORT and OpenVINO runs of hand-built NMS models through ``ortops compare``."""

from __future__ import annotations

import json

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from ortops import cli
from ortops.compare import nms
from ortops.compare.audit import registry
from ortops.verdicts import Capture

# Boxes as [y1, x1, y2, x2]: 0 and 1 overlap with IoU 4 / 4.4 = 0.909; 3 overlaps 0 with IoU 2 / 6 = 1/3
# and 1 with IoU 2.4 / 6 = 0.4; 2 is far from all.
BOXES = np.array([[0, 0, 2, 2], [0, 0, 2, 2.2], [10, 10, 12, 12], [0, 1, 2, 3]], np.float32)
SCORES = np.array([0.9, 0.9, 0.5, 0.3], np.float32)


def test_iou_follows_the_spec_in_both_box_formats():
    a = np.array([[0, 0, 2, 2]], np.float32)
    assert nms.iou(a, np.array([[1, 1, 3, 3]], np.float32))[0, 0] == pytest.approx(1 / 7)
    assert nms.iou(a, np.array([[3, 3, 1, 1]], np.float32))[0, 0] == pytest.approx(1 / 7)  # any diagonal pair
    centers = np.array([[1, 1, 2, 2], [2, 2, 2, 2]], np.float32)  # [x_center, y_center, width, height]
    assert nms.iou(centers[:1], centers[1:], center_point_box=1)[0, 0] == pytest.approx(1 / 7)
    assert nms.iou(a, np.array([[0, 0, 0, 5]], np.float32))[0, 0] == 0  # zero area overlaps nothing
    assert nms.iou(BOXES, BOXES)[0, 3] == pytest.approx(1 / 3) and nms.iou(BOXES, BOXES)[1, 3] == pytest.approx(0.4)


def _settings(max_out=10, iou=0.5, score=None, center=0):
    return nms.NmsSettings(max_out, iou, score, center)


@pytest.mark.parametrize(("selected", "problems", "ties", "near"), [
    ([0, 2, 3], 0, 1, 0),      # ORT's answer: 1 suppressed by the equal-scored 0
    ([1, 2, 3], 0, 1, 0),      # the other order of the equal scores: 0 suppressed by 1
    ([0, 1, 2, 3], 1, 1, 0),   # 1 kept though its IoU with 0 is 0.909
    ([0, 2], 1, 0, 0),         # 3 left out, overlapping nothing kept above 0.5
    ([2, 0, 3], 1, 0, 0),      # 0.9 listed after 0.5
    ([0, 7], 1, 0, 0),         # no box 7
])
def test_validate(selected, problems, ties, near):
    v = nms.validate(selected, BOXES, SCORES, _settings(), atol=1e-5, rtol=1e-5)
    assert (len(v.problems), len(v.ties) >= ties, len(v.near)) == (problems, True, near), v


def test_validate_near_ties_at_either_threshold():
    # iou_threshold just above 1/3: 3 must be kept; leaving it out is valid only within tolerance.
    v = nms.validate([0, 2], BOXES, SCORES, _settings(iou=1 / 3 + 1e-7), atol=1e-5, rtol=0)
    assert not v.problems and "IoU 0.3333333" in v.near[0]
    assert nms.validate([0, 2], BOXES, SCORES, _settings(iou=1 / 3 + 1e-7), atol=0, rtol=0).problems
    # score_threshold just below 0.3: 3 is a candidate by 1e-7.
    v = nms.validate([0, 2], BOXES, SCORES, _settings(score=0.3 - 1e-7), atol=1e-5, rtol=0)
    assert not v.problems and "score_threshold" in v.near[0]
    # max_output_boxes_per_class=1: either of the two equal 0.9 boxes is the one.
    assert nms.validate([1], BOXES, SCORES, _settings(max_out=1)).problems == []
    assert nms.validate([2], BOXES, SCORES, _settings(max_out=1)).problems  # 0.5 before two 0.9s
    assert nms.validate([], BOXES, SCORES, _settings(max_out=0)).problems == []


def _node(center=0):
    return helper.make_node("NonMaxSuppression", ["boxes", "scores", "mo", "iou", "st"], ["sel"],
                            center_point_box=center)


def _capture(base, other, iou=0.5, score=0.0, max_out=10, boxes=BOXES, scores=SCORES, atol=1e-5, rtol=1e-5):
    inputs = [boxes[None], scores[None, None], np.array([max_out], np.int64), np.array([iou], np.float32),
              np.array([score], np.float32)]
    base_rows, other_rows = (np.array([[0, 0, p] for p in picks], np.int64).reshape(-1, 3) for picks in (base, other))
    return Capture(_node(), inputs, [base_rows], [other_rows], "onnxruntime", "openvino", None, atol, rtol)


def test_classify_ties_near_ties_and_real_differences():
    ties = nms.classify(_capture([0, 2, 3], [1, 2, 3]))
    assert (ties.topic, ties.explained) == ("ties", True) and "equal-scored" in ties.detail
    near = nms.classify(_capture([0, 2, 3], [0, 2], iou=1 / 3 + 1e-7))
    assert (near.topic, near.explained) == ("near-ties", True) and "IoU 0.3333333" in near.detail
    wrong = nms.classify(_capture([0, 2, 3], [0, 1, 2, 3]))
    assert (wrong.topic, wrong.explained) == (None, False) and "openvino, batch 0, class 0: box 1" in wrong.detail
    missing = nms.classify(_capture([0, 2, 3], [0, 2], atol=0, rtol=0))
    assert not missing.explained and "box 3 (score 0.3) left out" in missing.detail


def test_rows_in_another_order_of_classes_are_not_called_ties():
    base = [np.array([[0, 0, 0], [0, 1, 2]], np.int64)]
    other = [np.array([[0, 1, 2], [0, 0, 0]], np.int64)]
    scores = np.stack([SCORES, SCORES])[None]
    capture = Capture(_node(), [BOXES[None], scores, np.array([1], np.int64), np.array([0.5], np.float32), None],
                      base, other, "onnxruntime", "openvino", None, 1e-5, 1e-5)
    finding = nms.classify(capture)
    assert not finding.explained and "another order of rows" in finding.detail


def test_nms_is_registered():
    assert registry()[("", "NonMaxSuppression")] is nms.AUDIT


def _nms_model(path, n, classes, center=0, max_out=5, iou=0.5, score=0.1) -> str:
    nodes = [helper.make_node("NonMaxSuppression", ["boxes", "scores", "mo", "iou", "st"], ["selected"],
                              center_point_box=center, name="nms")]
    graph = helper.make_graph(
        nodes, "nms", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, n, 4]),
                       helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, classes, n])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, ["k", 3])],
        [helper.make_tensor("mo", TensorProto.INT64, [1], [max_out]), helper.make_tensor("iou", TensorProto.FLOAT, [1], [iou]),
         helper.make_tensor("st", TensorProto.FLOAT, [1], [score])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8), str(path))
    return str(path)


def _tie_heavy_boxes(seed, n, classes, center):
    """Integer corners on a small grid and scores in quarters: many overlaps and equal scores."""
    rng = np.random.default_rng(seed)
    xy = rng.integers(0, 8, (1, n, 2)).astype(np.float32)
    wh = rng.integers(1, 4, (1, n, 2)).astype(np.float32)
    boxes = np.concatenate([xy + wh / 2, wh], -1) if center else np.concatenate([xy, xy + wh], -1)
    return boxes, (rng.integers(0, 4, (1, classes, n)) / 4).astype(np.float32)


@pytest.mark.parametrize(("center", "seeds"), [(0, (14, 25, 0)), (1, (14,))])
def test_real_runtimes_on_tie_heavy_nms(tmp_path, center, seeds):
    """ORT against OpenVINO on NMS with many equal scores, through ``ortops compare``: the node is
    audited and, wherever the two differ, judged: ``ties`` (with the equal scores as evidence) or
    unexplained (with the rule broken); the exit status follows."""
    pytest.importorskip("openvino")
    path = _nms_model(tmp_path / "nms.onnx", 64, 3, center=center)
    for seed in seeds:  # 14 and 25 split ORT 1.32 and OpenVINO 2026.4 on ties when written
        boxes, scores = _tie_heavy_boxes(seed, 64, 3, center)
        np.savez(tmp_path / "in.npz", boxes=boxes, scores=scores)
        out = tmp_path / f"r{seed}"
        status = cli.main(["compare", "--no-progress", path, "--inputs", str(tmp_path / "in.npz"),
                           "--runtimes", "onnxruntime", "openvino", "--out", str(out)])
        report = json.loads((out / "compare.json").read_text())
        assert report["audited"] == [{"node": "nms", "op": "NonMaxSuppression", "index": 0}]
        (node,) = report["nodes"]
        (row,) = report["outputs"]
        if row["comparison"]["status"] == "match":
            assert node["status"] == "agree" and status == 0
        elif node["status"] == "explained":
            assert node["topic"] == "ties" and "equal" in node["detail"] and status == 0
        else:
            assert node["status"] == "unexplained" and status == 1
            assert "no order of equal scores" in node["detail"] or "another order of rows" in node["detail"]


_coords = st.integers(0, 12).map(float)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(_coords, _coords, st.integers(1, 5).map(float), st.integers(1, 5).map(float)),
                min_size=2, max_size=12),
       st.sampled_from([0.0, 0.3, 0.5, 0.7]), st.integers(1, 6), st.randoms(use_true_random=False))
def test_onnx_reference_selections_are_valid_and_a_dropped_box_is_not(rects, iou_threshold, max_out, rnd):
    """onnx's reference NonMaxSuppression, an implementation independent of ortops, gives a
    selection the audit accepts without ties (distinct scores); dropping its last kept box, while
    the limit is not reached, breaks the rule."""
    from onnx.reference import ReferenceEvaluator

    n = len(rects)
    boxes = np.array([[y, x, y + h, x + w] for y, x, h, w in rects], np.float32)
    scores = np.array(rnd.sample(range(1, 1000), n), np.float32) / 1000  # distinct
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "mo", "iou"], ["sel"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, n, 4]),
                                            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, n])],
                              [helper.make_tensor_value_info("sel", TensorProto.INT64, ["k", 3])],
                              [helper.make_tensor("mo", TensorProto.INT64, [1], [max_out]),
                               helper.make_tensor("iou", TensorProto.FLOAT, [1], [iou_threshold])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8)
    (selected,) = ReferenceEvaluator(model).run(None, {"boxes": boxes[None], "scores": scores[None, None]})
    picks = [int(r[2]) for r in selected]
    s = nms.NmsSettings(max_out, float(np.float32(iou_threshold)), None, 0)
    v = nms.validate(picks, boxes, scores, s)
    assert (v.problems, v.ties, v.near) == ([], [], []), (picks, v)
    if len(picks) < max_out:
        assert nms.validate(picks[:-1], boxes, scores, s).problems


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-50, 50, width=32), min_size=8, max_size=8))
def test_iou_is_symmetric_bounded_and_the_same_in_both_box_formats(values):
    a = np.array(values[:4], np.float32)[None]
    b = np.array(values[4:], np.float32)[None]
    ab, ba = nms.iou(a, b)[0, 0], nms.iou(b, a)[0, 0]
    assert ab == ba and 0 <= ab <= 1
    c = nms.corners(np.concatenate([a, b]))  # [y_min, x_min, y_max, x_max]
    centers = np.stack([(c[:, 1] + c[:, 3]) / 2, (c[:, 0] + c[:, 2]) / 2, c[:, 3] - c[:, 1], c[:, 2] - c[:, 0]], -1)
    assert nms.iou(centers[:1], centers[1:], center_point_box=1)[0, 0] == pytest.approx(ab, abs=1e-9)


def test_a_constant_input_is_the_model_s_value_in_every_runtime(tmp_path):
    """SSDlite's NMS reads max_output_boxes_per_class = 2**63 - 1 from a Constant node; exposed as
    an output, OpenVINO reports it as 2**31 - 1. The node's inputs are the same in both runtimes
    by construction, so the node is judged on its outputs (here equal), not called ``upstream``."""
    pytest.importorskip("openvino")
    nodes = [helper.make_node("Constant", [], ["mo"], name="max_out",
                              value=helper.make_tensor("v", TensorProto.INT64, [1], [2 ** 63 - 1])),
             helper.make_node("NonMaxSuppression", ["boxes", "scores", "mo", "iou", "st"], ["selected"], name="nms")]
    graph = helper.make_graph(
        nodes, "nms", [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [1, 4, 4]),
                       helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 1, 4])],
        [helper.make_tensor_value_info("selected", TensorProto.INT64, ["k", 3])],
        [helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.5]), helper.make_tensor("st", TensorProto.FLOAT, [1], [0.0])])
    path = tmp_path / "nms.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8), str(path))
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 1.1], [2, 2, 3, 3], [5, 5, 6, 6]]], np.float32)
    np.savez(tmp_path / "in.npz", boxes=boxes, scores=np.array([[[0.9, 0.8, 0.7, 0.6]]], np.float32))
    assert cli.main(["compare", "--no-progress", str(path), "--inputs", str(tmp_path / "in.npz"),
                     "--runtimes", "onnxruntime", "openvino", "--out", str(tmp_path / "r")]) == 0
    report = json.loads((tmp_path / "r" / "compare.json").read_text())
    assert [(n["node"], n["status"]) for n in report["nodes"]] == [("nms", "agree")]
