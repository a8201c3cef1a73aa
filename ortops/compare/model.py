"""The model ``ortops compare`` runs: loaded once, with the audited nodes' tensors exposed.

:func:`load` reads the file without its external data (a model over 2 GiB stays a file);
:func:`audit_model` adds the inputs and outputs of every audited node as graph outputs, the
way Polygraphy marks outputs, and :func:`save` writes it next to links to the original's
external data files, so every runtime reads the weights from where they are.
"""

from __future__ import annotations

import os
import pathlib
import shutil
from collections.abc import Sequence
from typing import NamedTuple

import onnx
from onnx import helper

from ..graph import external_tensors

__all__ = ["AuditedNode", "ModelError", "audit_model", "external_files", "load", "node_label", "save"]


class ModelError(ValueError):
    """The file is not an ONNX model ortops compare can read."""


class AuditedNode(NamedTuple):
    """One node of the main graph whose tensors are captured: its position and tensor names."""

    index: int
    name: str
    domain: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


def node_label(node) -> str:
    """``name (domain::op_type)`` for a report."""
    kind = f"{node.domain}::{node.op_type}" if node.domain not in ("", "ai.onnx") else node.op_type
    return f"{node.name} ({kind})" if node.name else kind


def load(path) -> onnx.ModelProto:
    """The model at ``path`` without external data loaded; ModelError for anything else."""
    path = pathlib.Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: no such file")
    try:
        model = onnx.load(os.fspath(path), load_external_data=False)
    except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError and friends: the file is not a model
        raise ModelError(f"{path} is not an ONNX model ({type(exc).__name__}: {exc})".strip()) from None
    if not model.graph.node and not model.graph.output:
        raise ModelError(f"{path} is not an ONNX model (no graph)")
    return model


def external_files(model: onnx.ModelProto) -> list[str]:
    """The relative locations of the external data files the model's tensors use (every graph's
    initializers and tensor attributes: :func:`ortops.graph.external_tensors`)."""
    files = []
    for tensor in external_tensors(model):
        location = next((e.value for e in tensor.external_data if e.key == "location"), None)
        if location and location not in files:
            files.append(location)
    return files


def audit_model(model: onnx.ModelProto, nodes: Sequence[AuditedNode]) -> tuple[onnx.ModelProto, list[str]]:
    """A copy of ``model`` whose graph also outputs every tensor of ``nodes`` computed in the graph.

    Returns the model and the names of the tensors added. Initializers and graph inputs are not
    added (their values are known). Types come from ONNX shape inference where it knows them.
    """
    audited = onnx.ModelProto()
    audited.CopyFrom(model)
    graph = audited.graph
    known = {o.name for o in graph.output} | {i.name for i in graph.input} | {t.name for t in graph.initializer}
    wanted = []
    for node in nodes:
        for name in (*node.inputs, *node.outputs):
            if name and name not in known and name not in wanted:
                wanted.append(name)
    types = _inferred_types(model)
    for name in wanted:
        info = types.get(name)
        if info is not None and info.type.HasField("tensor_type") and info.type.tensor_type.elem_type:
            out = onnx.ValueInfoProto()
            out.name = name
            out.type.tensor_type.elem_type = info.type.tensor_type.elem_type
            graph.output.append(out)
        else:
            graph.output.append(helper.make_empty_tensor_value_info(name))
    return audited, wanted


def _inferred_types(model: onnx.ModelProto) -> dict[str, onnx.ValueInfoProto]:
    from ..builder.schemas import register_schemas

    register_schemas()
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
    except Exception:  # noqa: BLE001 - inference is a convenience: untyped outputs still work
        return {}
    return {v.name: v for v in (*inferred.graph.value_info, *inferred.graph.output)}


def save(model: onnx.ModelProto, source: pathlib.Path, directory: pathlib.Path, tag: str) -> pathlib.Path:
    """Write ``model`` where its runtimes can read it; returns the path (the caller removes it).

    Without external data: ``directory/tag.onnx``. With external data, whose locations are relative
    to ``source``'s folder: a hidden file in that folder (every runtime then finds the data where it
    is, and onnx accepts it), else, if the folder is read-only, ``directory/tag/model.onnx`` next to
    links to the data files (ONNX Runtime and OpenVINO follow them; onnx's loader refuses hard links,
    so the reference runtime is told the original folder).
    """
    files = external_files(model)
    data = model.SerializeToString()
    if files:
        path = source.parent / f".{source.stem}.ortops-compare-{os.getpid()}-{tag}.onnx"
        try:
            path.write_bytes(data)
            return path
        except OSError:
            pass
    folder = directory / tag
    folder.mkdir(parents=True, exist_ok=True)
    for location in files:
        original = (source.parent / location).resolve()
        target = folder / location
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            continue
        try:
            os.link(original, target)
        except OSError:
            try:
                target.symlink_to(original)
            except OSError:
                shutil.copyfile(original, target)
    path = folder / "model.onnx"
    path.write_bytes(data)
    return path
