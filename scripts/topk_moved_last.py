"""Measure when moving a leading strided axis last pays for ORT's TopK (docs/performance.md, "A
leading strided axis: moved last").

For each cell (n elements as ``[n / inner, inner]``, k), ORT's TopK-11 on axis 0 against the
same with two ``Transpose`` nodes around a TopK on the last axis, float32 standard normal data,
interleaved round by round, spinning off; prints the median ratio transposed / in place. The
outputs are checked equal first.

Usage: ``python scripts/topk_moved_last.py [--threads 0]`` (0: ORT's default, one per core)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper


def _model(k: int, moved: bool) -> bytes:
    def value(name, elem):
        return helper.make_tensor_value_info(name, elem, [None, None])

    k_node = helper.make_node("Constant", [], ["K"], value=helper.make_tensor("k", TensorProto.INT64, [1], [k]))
    if moved:
        nodes = [helper.make_node("Transpose", ["X"], ["XT"], perm=[1, 0]),
                 helper.make_node("TopK", ["XT", "K"], ["VT", "IT"], axis=1),
                 helper.make_node("Transpose", ["VT"], ["V"], perm=[1, 0]),
                 helper.make_node("Transpose", ["IT"], ["I"], perm=[1, 0])]
    else:
        nodes = [helper.make_node("TopK", ["X", "K"], ["V", "I"], axis=0)]
    graph = helper.make_graph([k_node, *nodes], "top_k", [value("X", TensorProto.FLOAT)],
                              [value("V", TensorProto.FLOAT), value("I", TensorProto.INT64)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], ir_version=8).SerializeToString()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: ORT's default)")
    args = parser.parse_args()
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    rng = np.random.default_rng(0)
    for n in (65536, 131072, 262144, 524288, 1048576):
        for inner in (2, 64, 512):
            ratios = []
            for k in (1, 10, 100):
                x = rng.standard_normal((n // inner, inner)).astype(np.float32)
                in_place, moved = (ort.InferenceSession(_model(k, m), options, providers=["CPUExecutionProvider"])
                                   for m in (False, True))
                assert all(np.array_equal(a, b) for a, b in zip(in_place.run(None, {"X": x}), moved.run(None, {"X": x})))
                times: dict[bool, list[float]] = {False: [], True: []}
                for _ in range(max(10, 2_000_000 // n)):
                    for m, session in ((False, in_place), (True, moved)):
                        start = time.perf_counter()
                        session.run(None, {"X": x})
                        times[m].append(time.perf_counter() - start)
                ratios.append(f"k={k}: {np.median(times[True]) / np.median(times[False]):.2f}x")
            print(f"n={n:9,} inner={inner:4}  " + "  ".join(ratios), flush=True)


if __name__ == "__main__":
    main()
