"""The named example models kept in ``models/``, rebuilt by ``scripts/build_models.py``.

Each entry is data: a file name, what it shows, and how to build it. A test rebuilds them all
and checks that ``models/`` is byte-for-byte current.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from typing import Callable, NamedTuple

import onnx
from onnx import TensorProto

from ..ops.arg_max.builder import arg_max_model, arg_max_side_by_side
from ..ops.scatter_elements_update.builder import (
    scatter_elements_update_model,
    scatter_elements_update_side_by_side,
    scatter_mean_composition,
)
from ..ops.top_k.builder import TOP_K_VERSIONS, top_k_model, top_k_side_by_side

__all__ = ["Example", "EXAMPLES", "build_all", "manifest"]


class Example(NamedTuple):
    file: str
    description: str
    build: Callable[[], onnx.ModelProto]


EXAMPLES: list[Example] = [
    Example("top_k_openvino.onnx", "ortops.openvino::TopK alone: float32 [N, M], axis -1, max, sort=value, stable, i64",
            lambda: top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1,
                                       index_element_type="i64")),
    Example("top_k_openvino_min_index.onnx", "the TopK-11 spec example's node: mode=min, sort=index, stable, i32",
            lambda: top_k_model(TensorProto.FLOAT, 1, axis=0, mode="min", sort="index", stable=1)),
    *[
        Example(f"top_k_side_by_side_onnx{v}.onnx",
                f"one float32 input [N, M] feeding ortops TopK and standard TopK-{v}, k=5 along axis 1",
                (lambda v=v: top_k_side_by_side(v, TensorProto.FLOAT, 2, k=5, axis=1, mode="max",
                                                       sort="value", stable=1, index_element_type="i64")))
        for v in TOP_K_VERSIONS
    ],
    Example("scatter_elements_update_mean.onnx",
            "ortops.openvino::ScatterElementsUpdate, float32 [N, M], reduction=mean, use_init_val=0 (torch's "
            "scatter_reduce mean with include_self=False)",
            lambda: scatter_elements_update_model(TensorProto.FLOAT, 2, reduction="mean", use_init_val=0)),
    Example("scatter_elements_update_side_by_side_onnx18.onnx",
            "one set of inputs feeding ortops ScatterElementsUpdate sum and ScatterElements-18 add, axis 0",
            lambda: scatter_elements_update_side_by_side(18, TensorProto.FLOAT, 2, axis=0, reduction="sum")),
    Example("scatter_mean_composition_onnx18.onnx",
            "the standard-op composition an ONNX exporter must emit for an integer mean (floor), axis 0",
            lambda: scatter_mean_composition(TensorProto.INT32, 2, axis=0, reduction="mean", use_init_val=1)),
    Example("arg_max_ncnn.onnx", "ortops.ncnn::ArgMax on float32 [N, C, H, W], out_max_val=1, topk=5",
            lambda: arg_max_model(4, out_max_val=1, topk=5)),
    Example("arg_max_side_by_side_onnx.onnx",
            "one input feeding ortops ncnn ArgMax topk=1 and Reshape(-1) + ArgMax(select_last_index=1)",
            lambda: arg_max_side_by_side(2, out_max_val=0, topk=1)),
]


def build_all() -> dict[str, bytes]:
    """Every example's file name and serialized bytes, plus ``manifest.json``."""
    files = {e.file: e.build().SerializeToString() for e in EXAMPLES}
    files["manifest.json"] = manifest(files).encode()
    return files


def manifest(files: dict[str, bytes]) -> str:
    entries = []
    for e in EXAMPLES:
        model = onnx.load_from_string(files[e.file])
        entries.append({
            "file": e.file,
            "description": e.description,
            "ir_version": model.ir_version,
            "opset_import": {o.domain or "ai.onnx": o.version for o in model.opset_import},
            "inputs": [i.name for i in model.graph.input],
            "outputs": [o.name for o in model.graph.output],
            "sha256": hashlib.sha256(files[e.file]).hexdigest(),
        })
    return json.dumps({"generator": "scripts/build_models.py", "models": entries}, indent=1) + "\n"


def write_all(directory: pathlib.Path) -> list[pathlib.Path]:
    """Write every example and the manifest into ``directory``; remove stale ``.onnx`` files."""
    directory.mkdir(parents=True, exist_ok=True)
    files = build_all()
    for stale in set(p.name for p in directory.glob("*.onnx")) - set(files):
        (directory / stale).unlink()
    for name, data in files.items():
        (directory / name).write_bytes(data)
    return [directory / name for name in files]
