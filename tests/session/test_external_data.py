"""Issue 12, item 8: a model over 2 GiB with external data runs through ortops.InferenceSession.

The model is written to a temporary folder without ever holding its weights in memory: the
data file is a sparse file of zeros (``truncate``) with a few known values written at known
offsets, and the initializer only points at it. The child loads it through InferenceSession
(a path), checks the answer, that the weights stayed external, and its peak memory. It takes
about 2 s (ORT maps the data file), so it is not marked slow.
"""

from __future__ import annotations

import json
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ortops

from child_process import run_child
from ortops import builder
from ortops.ops import OPENVINO_DOMAIN

WEIGHTS = 2**29 + 2**20  # float32 elements: 2 GiB + 4 MiB
KNOWN = {5: 7.0, 2**28: -3.5, WEIGHTS - 1: 11.0}  # element -> value written into the zeros


def _write_big_model(folder):
    """folder/big.onnx and folder/weights.bin (sparse); returns the model path."""
    data_path = folder / "weights.bin"
    with open(data_path, "wb") as f:
        f.truncate(WEIGHTS * 4)
        for index, value in KNOWN.items():
            f.seek(index * 4)
            f.write(np.float32(value).tobytes())
    weights = TensorProto(name="weights", data_type=TensorProto.FLOAT, dims=[WEIGHTS])
    weights.data_location = TensorProto.EXTERNAL
    for key, value in (("location", "weights.bin"), ("offset", "0"), ("length", str(WEIGHTS * 4))):
        weights.external_data.add(key=key, value=value)
    nodes = [
        helper.make_node("Gather", ["weights", "idx"], ["picked"], axis=0),
        helper.make_node("Add", ["data", "picked"], ["sum"]),
        helper.make_node("TopK", ["sum", "k"], ["values", "indices"], name="top_k", domain=OPENVINO_DOMAIN,
                         axis=-1, mode="max", sort="value", stable=1, index_element_type="i64"),
    ]
    graph = helper.make_graph(
        nodes, "big", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3]),
                       helper.make_tensor_value_info("idx", TensorProto.INT64, [3]),
                       helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, [1, None]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [1, None])],
        initializer=[weights])
    model = helper.make_model(graph, ir_version=builder.IR_VERSION,
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(OPENVINO_DOMAIN, 1)])
    path = folder / "big.onnx"
    path.write_bytes(model.SerializeToString())  # small: the weights are only referenced
    return path


@pytest.mark.slow
def test_a_model_over_2_gib_with_external_data_runs_through_inference_session(tmp_path):
    path = _write_big_model(tmp_path)
    assert path.stat().st_size < 10_000 and (tmp_path / "weights.bin").stat().st_size > 2**31
    child = run_child("""
import json, resource, time
import numpy as np, onnx, ortops
from onnx import TensorProto
start = time.monotonic()
session = ortops.InferenceSession(%r)
created = time.monotonic() - start
values, indices = session.run(None, {"data": np.array([[1, 2, 3]], np.float32),
                                     "idx": np.array([5, %d, %d]), "k": np.array([2])})
try:
    session.run(None, {"data": np.array([[1, 2, 3]], np.float32), "idx": np.array([0, 1, 2]), "k": np.array([4])})
except ortops.OpError as exc:
    error = str(exc)
weights = [t for t in session.model.graph.initializer if t.name == "weights"][0]
print(json.dumps({"values": values.tolist(), "indices": indices.tolist(), "error": error,
                  "external": weights.data_location == TensorProto.EXTERNAL and not weights.raw_data,
                  "model_bytes": session.model.ByteSize(), "created_s": created,
                  "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
""" % (str(path), 2**28, WEIGHTS - 1), timeout=300)
    assert child.status == 0, child.describe()
    got = json.loads(child.lines()[-1])
    summed = np.array([1 + KNOWN[5], 2 + KNOWN[2**28], 3 + KNOWN[WEIGHTS - 1]], np.float32)
    order = np.argsort(-summed, kind="stable")[:2]
    assert got["values"] == [summed[order].tolist()] and got["indices"] == [order.tolist()], got
    assert "TopK node 'top_k': k=4 is outside [1, 3]" in got["error"], got
    assert got["external"] and got["model_bytes"] < 10_000, got
    print("session creation", round(got["created_s"], 2), "s, peak RSS", round(got["peak_rss_mib"]), "MiB")


def _write_small_model(folder, weights: np.ndarray):
    """folder/small.onnx, whose 'weights' (float32 [1, 3]) are in folder/small.bin: data + weights,
    then an ortops TopK (lowered by the session, its check of k left to ORT's TopK)."""
    nodes = [helper.make_node("Add", ["data", "weights"], ["sum"]),
             helper.make_node("TopK", ["sum", "k"], ["values", "indices"], name="top_k", domain=OPENVINO_DOMAIN,
                              axis=-1, mode="max", sort="value", stable=1, index_element_type="i64")]
    graph = helper.make_graph(
        nodes, "small", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3]),
                         helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, [1, None]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [1, None])],
        initializer=[numpy_helper.from_array(weights.astype(np.float32), "weights")])
    model = helper.make_model(graph, ir_version=builder.IR_VERSION,
                              opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(OPENVINO_DOMAIN, 1)])
    onnx.save(model, folder / "small.onnx", save_as_external_data=True, location="small.bin", size_threshold=0)
    return folder / "small.onnx"


@pytest.mark.parametrize("given", ["path", "bytes"])
def test_a_forked_child_refuses_external_data_rewritten_since_the_session(tmp_path, given):
    """A forked child makes its own ORT session, which reads the weights file again: rewritten
    since, it would compute with other weights than its parent's session. The model may come
    as bytes, with the options naming the folder of its data."""
    path = _write_small_model(tmp_path, np.array([[0, 0, 10]]))
    make = {"path": "ortops.InferenceSession(MODEL)",
            "bytes": "ortops.InferenceSession(open(MODEL, 'rb').read(), options)"}[given]
    child = run_child("""
import multiprocessing, os, time
import numpy as np, onnxruntime as ort, ortops
options = ort.SessionOptions()
options.add_session_config_entry("session.model_external_initializers_file_folder_path", os.path.dirname(MODEL))
session = MAKE
feed = {"data": np.array([[1, 2, 3]], np.float32), "k": np.array([1])}
print("parent", session.run(None, feed)[1].tolist())
time.sleep(0.05)  # past the file system's time stamp resolution
np.array([[10, 0, 0]], np.float32).tofile(DATA)  # other weights where the model reads them

def child(queue):
    try:
        queue.put(("ran", session.run(None, feed)[1].tolist()))
    except RuntimeError as exc:
        queue.put(("refused", str(exc)))

context = multiprocessing.get_context("fork")
queue = context.Queue()
process = context.Process(target=child, args=(queue,))
process.start()
print(*queue.get(timeout=60))
process.join(60)
""".replace("MAKE", make).replace("MODEL", repr(str(path))).replace("DATA", repr(str(tmp_path / "small.bin"))),
        timeout=120)
    assert child.status == 0, child.describe()
    assert child.lines()[0] == "parent [[2]]", child.describe()
    assert child.lines()[1].startswith("refused ") and "small.bin changed" in child.lines()[1], child.describe()


def test_a_model_file_rewritten_since_the_session_is_not_re_run_for_an_op_error(tmp_path):
    """A call that fails on a lowered node is re-run on the PyOp path of the model read again
    from its path: rewritten since, that is another model, so ORT's error stands, with a note."""
    path = _write_small_model(tmp_path, np.array([[0, 0, 10]]))
    session = ortops.InferenceSession(path, path="lowered")
    assert session.lowered_nodes == ("top_k",)
    feed = {"data": np.array([[1, 2, 3]], np.float32), "k": np.array([4])}
    time.sleep(0.05)  # past the file system's time stamp resolution
    _write_small_model(tmp_path, np.array([[10, 0, 0]]))
    with pytest.raises(Exception) as caught:
        session.run(None, feed)
    assert not isinstance(caught.value, ortops.OpError)
    assert any("small.onnx changed after the session was made" in note for note in caught.value.__notes__)
