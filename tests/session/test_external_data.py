"""Issue 12, item 8: a model over 2 GiB with external data runs through ortops.InferenceSession.

The model is written to a temporary folder without ever holding its weights in memory: the
data file is a sparse file of zeros (``truncate``) with a few known values written at known
offsets, and the initializer only points at it. The child loads it through InferenceSession
(a path), checks the answer, that the weights stayed external, and its peak memory. It takes
about 2 s (ORT maps the data file), so it is not marked slow.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from onnx import TensorProto, helper

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
