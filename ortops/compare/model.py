"""The model ``ortops compare`` runs: loaded once without its external data (:func:`load`), with the
audited nodes' tensors exposed as graph outputs (:func:`expose`), written where every runtime
finds the weights (:func:`save`). :func:`lift_branches` inlines the branch an ``If`` takes for the
run's inputs, so the audited nodes inside become main-graph nodes; what stays out of reach is
listed as :class:`Unobserved`, with the reason.
"""

from __future__ import annotations

import itertools
import os
import pathlib
import shutil
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np
import onnx
from onnx import helper

from ..graph import DEFAULT_DOMAINS, Names, external_tensors, subgraphs

__all__ = ["AuditedNode", "Lifted", "ModelError", "Unobserved", "expose", "external_files", "lift_branches", "load",
           "node_label", "op_name", "save"]


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

    @classmethod
    def of(cls, index: int, node: onnx.NodeProto) -> AuditedNode:
        """Node ``index`` of the main graph (an unnamed node is ``#index``)."""
        return cls(index, node.name or f"#{index}", node.domain, node.op_type, tuple(node.input), tuple(node.output))


def op_name(node) -> str:
    """``domain::op_type``, or ``op_type`` for the default domain."""
    return f"{node.domain}::{node.op_type}" if node.domain not in DEFAULT_DOMAINS else node.op_type


def node_label(node) -> str:
    """``name (domain::op_type)`` for a report."""
    return f"{node.name} ({op_name(node)})" if node.name else op_name(node)


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
    from onnx.external_data_helper import ExternalDataInfo

    for tensor in external_tensors(model):  # checked now: a runtime would fail on it, the audit raise
        data = ExternalDataInfo(tensor)
        file, end = path.parent / data.location, (data.offset or 0) + (data.length or 0)
        if not file.is_file() or file.stat().st_size < end:
            raise ModelError(f"{path}: the external data of tensor {tensor.name!r} ({data.location}, {end} bytes) "
                             "is missing or shorter")
    return model


def external_files(model: onnx.ModelProto) -> list[str]:
    """The relative locations of the external data files the model's tensors use (every graph's
    initializers and tensor attributes: :func:`ortops.graph.external_tensors`)."""
    locations = (next((e.value for e in t.external_data if e.key == "location"), "") for t in external_tensors(model))
    return list(dict.fromkeys(filter(None, locations)))


def expose(model: onnx.ModelProto, names: Sequence[str]) -> onnx.ModelProto:
    """A copy of ``model`` whose graph also outputs the tensors ``names`` computed in the graph.

    Graph inputs, initializers and outputs are not added again (their values are known). Types
    come from ONNX shape inference where it knows them.
    """
    from ..builder.schemas import register_schemas

    exposed = onnx.ModelProto()
    exposed.CopyFrom(model)
    graph = exposed.graph
    known = {o.name for o in graph.output} | {i.name for i in graph.input} | {t.name for t in graph.initializer}
    register_schemas()
    try:
        inferred = onnx.shape_inference.infer_shapes(model)
        types = {v.name: v.type.tensor_type.elem_type for v in (*inferred.graph.value_info, *inferred.graph.output)}
    except Exception:  # noqa: BLE001 - inference is a convenience: untyped outputs still work
        types = {}
    for name in dict.fromkeys(n for n in names if n and n not in known):
        graph.output.append(helper.make_tensor_value_info(name, types[name], None) if types.get(name)
                            else helper.make_empty_tensor_value_info(name))
    return exposed


def save(model: onnx.ModelProto, source: pathlib.Path, directory: pathlib.Path) -> pathlib.Path:
    """Write ``model`` where its runtimes can read it; returns the path (the caller removes it).

    Without external data: ``directory/ortops-compare-N.onnx``, N new for each call. With external
    data, whose locations are relative to ``source``'s folder: a hidden file of that kind in that
    folder (every runtime then finds the data where it is), else, if the folder is read-only, in
    ``directory`` next to copies of the data files, made once per ``directory``. Not links: ONNX Runtime and OpenVINO
    refuse a symbolic one, and a hard one makes onnx's loader refuse the original file too (the
    reference runtime reads it).
    """
    files = external_files(model)
    data = model.SerializeToString()
    name = f"ortops-compare-{os.getpid()}-{next(_saved)}.onnx"  # one per model: several may be in use
    if files:
        path = source.parent / f".{source.stem}.{name}"
        try:
            path.write_bytes(data)
            return path
        except OSError:
            pass
    for location in files:
        original = (source.parent / location).resolve()
        target = directory / location
        if not target.exists():  # copied for an earlier model of the same source
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(original, target)
    path = directory / name
    path.write_bytes(data)
    return path


_saved = itertools.count()


class Unobserved(NamedTuple):
    """An audited node inside a subgraph whose values the report cannot show: ``where`` (the path
    of enclosing nodes and graph attributes, e.g. ``If_4414.else_branch``) and ``reason``."""

    node: str
    op: str
    where: str
    reason: str


class Lifted(NamedTuple):
    """The model with taken ``If`` branches inlined: ``inlined`` lists ``(If name, branch)``."""

    model: onnx.ModelProto
    inlined: list[tuple[str, str]]
    unobserved: list[Unobserved]


#: (model, condition tensor names) -> (name -> value, a message when the run failed).
Probe = Callable[[onnx.ModelProto, Sequence[str]], tuple[Mapping[str, np.ndarray], str]]
_BRANCHES = ("then_branch", "else_branch")
_MAX_DEPTH = 8


def _inside(node, is_audited: Callable, where: str) -> list[tuple[onnx.NodeProto, str]]:
    """The audited nodes inside ``node``'s graph attributes, at any depth, with their paths."""
    found = []
    for attr, graph in subgraphs(node):
        path = f"{where}{node.name or node.op_type}.{attr}"
        for inner in graph.node:
            if is_audited(inner):
                found.append((inner, path))
            found += _inside(inner, is_audited, path + "/")
    return found


def _names(graph, skip: int | None = None) -> set[str]:
    """Every tensor name defined in ``graph`` and its subgraphs, but for node ``skip``'s."""
    names = {v.name for v in (*graph.input, *graph.initializer)}
    for index, node in enumerate(graph.node):
        if index == skip:
            continue
        names.update(node.output)
        for _, sub in subgraphs(node):
            names |= _names(sub)
    return names


def _inline(model: onnx.ModelProto, index: int, branch: str) -> onnx.ModelProto:
    """A copy of ``model`` whose node ``index`` (an If) is replaced by the nodes of ``branch``,
    then Identity nodes from the branch's outputs to the If's."""
    out = onnx.ModelProto()
    out.CopyFrom(model)
    node = out.graph.node[index]
    body = next(a.g for a in node.attribute if a.name == branch)
    nodes = list(out.graph.node)
    tail = [helper.make_node("Identity", [b.name], [o], name=f"{node.name or 'If'}.{branch}.{o}")
            for b, o in zip(body.output, node.output) if o]
    taken, names = {n.name for n in nodes if n is not node}, Names(out)
    for lifted in (*body.node, *tail):  # node names must stay unique in the graph (ORT refuses twins)
        if lifted.name in taken and lifted.name:  # named after where it came from, e.g. "choose.then_branch/pick"
            lifted.name = names.fresh(f"{node.name or 'If'}.{branch}/{lifted.name}")
        taken.add(lifted.name)
    del out.graph.node[:]
    out.graph.node.extend([*nodes[:index], *body.node, *tail, *nodes[index + 1:]])
    out.graph.initializer.extend(body.initializer)
    out.graph.value_info.extend(body.value_info)
    return out


def _key(node, index: int) -> str:
    return node.name or f"{node.op_type}->{node.output[0] if node.output else index}"


def lift_branches(model: onnx.ModelProto, is_audited: Callable[[onnx.NodeProto], bool], probe: Probe,
                  known: Mapping[str, np.ndarray] | None = None) -> Lifted:
    """Inline the taken branch of every main-graph ``If`` that holds audited nodes.

    ``is_audited(node)`` says which nodes matter; ``probe(model, names)`` runs ``model`` with the
    tensors ``names`` exposed and returns their values (and a message when it failed); ``known``
    holds values already known (the feed). Conditions that are initializers are read from the
    model. Nested ``If`` nodes are lifted in turn (up to 8 levels). Every audited node left inside a
    subgraph is returned as :class:`Unobserved`, with the reason.
    """
    known = dict(known or {})
    inlined: list[tuple[str, str]] = []
    unobserved: list[Unobserved] = []
    skipped: set[str] = set()  # If nodes left as they are, their audited nodes already listed
    for _ in range(_MAX_DEPTH):
        constants = {t.name: t for t in model.graph.initializer}
        ifs = [(i, n, inside) for i, n in enumerate(model.graph.node)
               if n.op_type == "If" and n.domain in DEFAULT_DOMAINS and _key(n, i) not in skipped
               and (inside := _inside(n, is_audited, ""))]
        wanted = [n.input[0] for _, n, _ in ifs if n.input[0] not in known and n.input[0] not in constants]
        values, message = probe(model, wanted) if wanted else ({}, "")
        known.update({k: v for k, v in values.items() if k in wanted})
        level: list[tuple[str, str]] = []
        for index, node, inside in reversed(ifs):  # from the end, so earlier indices stay valid
            cond, label = node.input[0], node.name or f"If #{index}"
            value = (np.asarray(known[cond]) if cond in known else
                     onnx.numpy_helper.to_array(constants[cond]) if cond in constants else None)
            if value is None or value.size != 1:
                reason = (f"the condition {cond!r} of {label} could not be computed for these inputs"
                          + (f" ({message})" if message else ""))
                unobserved += _unobserved(inside, reason)
                skipped.add(_key(node, index))
                continue
            condition = bool(value.reshape(-1)[0])
            taken, other = _BRANCHES if condition else _BRANCHES[::-1]
            body = next(a.g for a in node.attribute if a.name == taken)
            inner = {n for b in body.node for n in b.output} | {t.name for t in body.initializer}
            clash = inner & _names(model.graph, skip=index)
            not_taken = [(n, w) for n, w in inside if w.startswith(f"{node.name or 'If'}.{other}")]
            unobserved += _unobserved(not_taken, f"in the branch of {label} not taken for these inputs "
                                                 f"(condition {condition})")
            if clash:
                reason = f"the {taken} of {label} reuses names of the main graph ({sorted(clash)[:3]}): not inlined"
                unobserved += _unobserved([found for found in inside if found not in not_taken], reason)
                skipped.add(_key(node, index))
                continue
            model = _inline(model, index, taken)
            level.insert(0, (label, taken))
        inlined += level
        if not level:
            break
    for index, node in enumerate(model.graph.node):
        if _key(node, index) not in skipped:
            reason = (f"inside a {node.op_type} body: runtimes return a loop's final values and scan outputs, "
                      "not the tensors of each iteration" if node.op_type in ("Loop", "Scan") else
                      f"inside a subgraph of {node.op_type}, which ortops does not lift")
            unobserved += _unobserved(_inside(node, is_audited, ""), reason)
    return Lifted(model, inlined, unobserved)


def _unobserved(found: Sequence[tuple[onnx.NodeProto, str]], reason: str) -> list[Unobserved]:
    return [Unobserved(node.name, op_name(node), where, reason) for node, where in found]
