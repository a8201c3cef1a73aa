"""Real-model cases: the PP-OCRv4 recogniser (``ocr`` extra) with ortops' nodes inside its graph.

For each rendered line of text, the recogniser's own graph is extended with ortops nodes fed
by its softmax output [1, T, 6625], next to the built-in nodes they map to, and run as one
model through :class:`ortops.InferenceSession`. The per-step candidates are then judged like
any other case, with the in-graph built-in outputs as an extra oracle, and the decoded text
is shown in the report.
"""

from __future__ import annotations

import functools
import importlib.util

import numpy as np
import onnx
from onnx import helper

from . import builder

__all__ = ["available", "TEXTS", "TOP_K", "IN_GRAPH", "ocr_run", "line_name"]

#: Lines that the recogniser decodes exactly at 320x48 (checked by tests/test_ocr.py).
TEXTS = ("TopK 2026 ONNX", "OpenVINO TopK-11", "ONNX Runtime 1.31", "ScatterElementsUpdate")
TOP_K = 5


def line_name(n: int) -> str:
    """The stem of the case names of the ``n``-th line of :data:`TEXTS` (``ocr_line1``...):
    names never come from the rendered text, which a reader would take for an op name."""
    return f"ocr_line{n + 1}"

#: The attributes of the ortops TopK node inside the OCR graph.
IN_GRAPH = dict(axis=-1, mode="max", sort="value", stable=1, index_element_type="i64")


def available() -> bool:
    """Whether the ``ocr`` extra (rapidocr-onnxruntime and Pillow) is installed."""
    return all(importlib.util.find_spec(m) is not None for m in ("rapidocr_onnxruntime", "PIL"))


@functools.lru_cache(maxsize=1)
def _extended_model() -> onnx.ModelProto:
    from . import ocr

    model = ocr.load_model()
    probs = model.graph.output[0].name
    return builder.append_nodes(model, [
        builder.top_k(probs, "ortops_k", **IN_GRAPH, outputs=("ortops_values", "ortops_indices"),
                      name="ortops_top_k"),
        helper.make_node("TopK", [probs, "ortops_k"], ["onnx_values", "onnx_indices"], axis=-1, largest=1,
                         sorted=1, name="onnx_top_k_11"),
    ], initializers={"ortops_k": np.array([TOP_K], np.int64)})


@functools.lru_cache(maxsize=None)
def ocr_run(text: str) -> dict[str, object]:
    """Render ``text``, run the extended recogniser once, and decode the ortops top-1 path."""
    from . import ocr

    model = _extended_model()
    session = _session()
    image = ocr.render_text(text)
    names = [o.name for o in model.graph.output]
    outputs = dict(zip(names, session.run(None, {model.graph.input[0].name: ocr.preprocess(image)})))
    chars = ocr.characters(model)
    decoded = ocr.ctc_greedy_decode(outputs["ortops_indices"][0, :, 0], chars)
    return {
        "probs": outputs[names[0]],
        "ortops": (outputs["ortops_values"], outputs["ortops_indices"]),
        "onnx": (outputs["onnx_values"], outputs["onnx_indices"]),
        "decoded": decoded,
        "font": ocr.font_description(),
    }


@functools.lru_cache(maxsize=1)
def _session():
    from .session import InferenceSession

    return InferenceSession(_extended_model())
