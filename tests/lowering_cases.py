"""Sessions of lowered models for the lowering tests: guarded (ortops.InferenceSession with
path="lowered") and standalone (plain onnxruntime, no extensions library), cached per model."""

from __future__ import annotations

import numpy as np
import onnx

import ortops
from ortops.ops import DOMAINS

__all__ = ["session", "run", "MODES"]

#: The lowering modes: ``"pyop"``, the session's own lowering (``InferenceSession(path="lowered")``,
#: which may leave a check to a standard node and re-run a failed call on the PyOp path);
#: ``"guarded"``, ``lower(model)`` as written to a file (an ``If`` around the PyOp fallback),
#: run by ``InferenceSession(path="pyop")``; ``"none"``, the standalone model in plain ORT.
MODES = ("pyop", "guarded", "none")
_CACHE: dict = {}


def session(key, make_model, mode: str):
    """A cached session of ``make_model()`` lowered with ``fallback=mode``."""
    if (key, mode) not in _CACHE:
        import onnxruntime as ort

        model = make_model()
        if mode == "none":
            lowered, report = ortops.lower(model, fallback="none")
            assert report.standalone and report.lowered, report
            assert not any(n.domain in DOMAINS for g in _graphs(lowered.graph) for n in g.node)
            onnx.checker.check_model(lowered)
            _CACHE[key, mode] = ort.InferenceSession(lowered.SerializeToString(), providers=["CPUExecutionProvider"])
        elif mode == "guarded":
            lowered, report = ortops.lower(model)
            assert report.lowered, report
            _CACHE[key, mode] = ortops.InferenceSession(lowered, path="pyop")
        else:
            sess = ortops.InferenceSession(model, path="lowered")
            assert sess.lowered_nodes, sess.lowering
            _CACHE[key, mode] = sess
    return _CACHE[key, mode]


def run(sess, feed: dict) -> list[np.ndarray]:
    return sess.run(None, feed)


def _graphs(graph):
    from ortops.graph import graphs

    return graphs(graph)
