"""The node audit: where two runtimes split inside the model, and why.

Audited nodes: every ortops node and every main-graph node whose ``(domain, op_type)`` has an
:class:`~ortops.verdicts.Audit` (each op judge's ``AUDITS``, collected by :func:`registry`, and
standard ``NonMaxSuppression``: :mod:`.nms`). With their tensors exposed, each node is, for each
other runtime against the baseline, ``agree``, ``upstream`` (its inputs already differ),
``explained`` (same inputs, different outputs, and the audit shows a known topic in the data),
``unexplained`` or ``missing``. :func:`explain_output` follows an output difference upstream: the
first audited node on its path that differs decides. The statuses: docs/compare.md.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
import onnx

from .. import divergences
from ..arrays import same
from ..graph import DEFAULT_DOMAINS, graphs, subgraphs
from ..interop.openvino import WORK_TYPES
from ..ops import DOMAINS
from ..ops.tooling import TOOLING
from ..verdicts import Audit, Capture, Finding
from . import nms
from .groups import group_nodes
from .model import AuditedNode, node_label, op_name
from .outputs import compare_arrays

__all__ = [
    "Graph",
    "NodeResult",
    "OpAudits",
    "audit_nodes",
    "audited_nodes",
    "explain_failure",
    "explain_output",
    "is_audited",
    "reason_for",
    "registry",
    "tensor_values",
]


@runtime_checkable
class OpAudits(Protocol):
    """An op folder's audits: ``(domain, op_type)`` (``""`` for standard ONNX ops) -> how that
    op type is audited, for the op's own node and the standard nodes of its family."""

    AUDITS: Mapping[tuple[str, str], Audit]


def _no_audit(capture: Capture) -> Finding:
    return Finding(None, False, f"{capture.node.domain}::{capture.node.op_type} has no audit in ortops")


@functools.lru_cache(maxsize=1)
def registry() -> dict[tuple[str, str], Audit]:
    """``(domain, op_type)`` -> :class:`Audit`, from the judge (``judge.py``) of every op of
    :data:`ortops.ops.tooling.TOOLING` (ortops nodes without one are still audited: :func:`is_audited`)."""
    audits = {key: audit for tool in TOOLING for key, audit in tool.judge.AUDITS.items()}  # judges: OpAudits
    audits[("", "NonMaxSuppression")] = nms.AUDIT  # no op folder: the audit lives in compare/nms.py
    return audits


def _key(node) -> tuple[str, str]:
    return ("" if node.domain in DEFAULT_DOMAINS else node.domain, node.op_type)


def is_audited(node: onnx.NodeProto) -> bool:
    """Whether ``node`` (of any graph) is of an audited op type and its audit applies to it."""
    audit = registry().get(_key(node))
    if audit is None:
        return node.domain in DOMAINS  # an ortops node without an audit of its own: audited all the same
    return audit.applies is None or audit.applies(node)


def audited_nodes(model: onnx.ModelProto) -> list[AuditedNode]:
    """The main graph's nodes that are audited, in graph (topological) order."""
    return [AuditedNode.of(index, node) for index, node in enumerate(model.graph.node) if is_audited(node)]


def _reads(node: onnx.NodeProto) -> list[str]:
    """The tensors ``node`` reads: its inputs, and what its subgraphs (If, Loop, Scan bodies) read."""
    inside = (name for _, body in subgraphs(node) for g in graphs(body) for inner in g.node for name in inner.input)
    return [*node.input, *inside]


class Graph:
    """Who produces which tensor in the main graph, and the ancestors of tensors and nodes: a node
    depends on what it reads, its subgraphs (If, Loop, Scan bodies) included."""

    def __init__(self, model: onnx.ModelProto):
        self.nodes = list(model.graph.node)
        self.producer = {name: i for i, node in enumerate(self.nodes) for name in node.output if name}
        self.node_ancestors = functools.cache(self._node_ancestors)

    def _node_ancestors(self, index: int) -> frozenset[int]:
        """Indices of the nodes ``index`` depends on, itself included (``node_ancestors``: cached)."""
        seen, stack = {index}, [index]
        while stack:
            for name in _reads(self.nodes[stack.pop()]):
                parent = self.producer.get(name)
                if parent is not None and parent not in seen:
                    seen.add(parent)
                    stack.append(parent)
        return frozenset(seen)

    def tensor_ancestors(self, name: str) -> frozenset[int]:
        producer = self.producer.get(name)
        return frozenset() if producer is None else self.node_ancestors(producer)


class NodeResult(NamedTuple):
    """One audited node against the baseline in one other runtime."""

    node: AuditedNode
    runtime: str
    status: str  # agree, upstream, explained, unexplained, missing
    topic: str | None
    detail: str
    reason: str

    def as_dict(self) -> dict:
        return {"node": self.node.name, "op": op_name(self.node), "index": self.node.index, "runtime": self.runtime,
                "status": self.status, "topic": self.topic, "detail": self.detail, "reason": self.reason}


def reason_for(topic: str | None, runtime: str, op_type: str | None) -> str:
    """The divergence table's reason for ``topic`` in ``runtime`` (else what the topic is)."""
    if topic is None:
        return ""
    known = divergences.topic(topic).what if topic in {t.key for t in divergences.TOPICS} else ""
    return divergences.reason(topic, runtime, op_type, known)


def _narrowing(inputs: Sequence, runtimes: Sequence[str]) -> Finding | None:
    """A type the OpenVINO CPU plugin computes narrower (divergence table rows for ``openvino``)."""
    if "openvino" not in runtimes:
        return None
    info32 = np.iinfo(np.int32)
    for value in (np.asarray(v) for v in inputs if v is not None):
        work, topic = WORK_TYPES.get(value.dtype, (None, None))
        if work is not None and work.kind == "f":
            return Finding(topic, True, "float64 data, computed in float32 by OpenVINO's CPU plugin")
        if work is not None and value.size and (int(value.max()) > info32.max or int(value.min()) < info32.min):
            return Finding(topic, True, f"{value.dtype} values beyond int32, computed in int32 by OpenVINO's CPU plugin")
    return None


def tensor_values(model: onnx.ModelProto, feed: Mapping[str, np.ndarray],
                  base_dir: str | None) -> Callable[[Mapping[str, np.ndarray], str], np.ndarray | None]:
    """``value(outputs, name)``: a runtime's value of a tensor. A constant of the model (an
    initializer or a ``Constant`` node's value: the same in every runtime by construction, whatever
    a runtime reports when it is exposed; OpenVINO reports an int64 constant of 2**63 - 1 as
    2**31 - 1), a graph input, or the runtime's captured output ``outputs[name]``; None if none."""
    constants = {t.name: t for t in model.graph.initializer}
    constants.update({n.output[0]: n.attribute[0].t for n in model.graph.node if n.op_type == "Constant"
                      and n.domain in DEFAULT_DOMAINS and n.attribute and n.attribute[0].name == "value"})
    constant = functools.cache(lambda name: onnx.numpy_helper.to_array(constants[name], base_dir or ""))

    def value(outputs: Mapping[str, np.ndarray], name: str) -> np.ndarray | None:
        if name in constants:
            return constant(name)
        found = feed.get(name, outputs.get(name)) if name else None
        return None if found is None else np.asarray(found)

    return value


def audit_nodes(model: onnx.ModelProto, nodes: Sequence[AuditedNode], feed, results: Mapping[str, Mapping],
                baseline: str, *, atol: float, rtol: float, base_dir: str | None = None) -> list[NodeResult]:
    """Audit every node in every runtime of ``results`` (name -> outputs) other than ``baseline``."""
    value = tensor_values(model, feed, base_dir)
    audits = registry()
    out = []
    base = results[baseline]
    for other_name, other in results.items():
        if other_name == baseline:
            continue
        for node in nodes:
            proto = model.graph.node[node.index]
            base_in, other_in = ([value(outputs, n) for n in node.inputs] for outputs in (base, other))
            base_out, other_out = ([value(outputs, n) for n in node.outputs] for outputs in (base, other))
            if any(n and (b is None or o is None) for n, b, o in zip(node.outputs, base_out, other_out)) or any(
                    (b is None) != (o is None) for b, o in zip(base_in, other_in)):
                out.append(NodeResult(node, other_name, "missing", None,
                                      "a runtime did not return this node's tensors", ""))
                continue
            differing_in = [n for n, b, o in zip(node.inputs, base_in, other_in)
                            if b is not None and compare_arrays(o, b, atol=atol, rtol=rtol).status != "match"]
            differing_out = [n for n, b, o in zip(node.outputs, base_out, other_out)
                             if n and compare_arrays(o, b, atol=atol, rtol=rtol).status != "match"]
            if differing_in:
                out.append(NodeResult(node, other_name, "upstream", None,
                                      f"its input(s) {differing_in} already differ", ""))
                continue
            if not differing_out:
                out.append(NodeResult(node, other_name, "agree", None, "", ""))
                continue
            identical = all(b is None or (b.dtype == o.dtype and same(b, o)) for b, o in zip(base_in, other_in))
            capture = Capture(proto, base_in, base_out, other_out, baseline, other_name,
                              None if identical else other_in, atol, rtol)
            audit = audits.get(_key(proto), Audit(_no_audit))
            try:
                finding = audit.classify(capture)
            except Exception as exc:  # noqa: BLE001 - an audit that cannot judge leaves the difference unexplained
                finding = Finding(None, False, f"the audit could not judge this node ({type(exc).__name__}: {exc})")
            if not finding.explained:
                narrowing = _narrowing(base_in, (baseline, other_name))
                if narrowing is not None:
                    finding = narrowing._replace(detail=f"{narrowing.detail} ({finding.detail})")
            # The table's op rows are about ortops' ops: a standard node of the same name gets the
            # rows for every op, else what the topic is.
            reason = reason_for(finding.topic, other_name if baseline != "openvino" else baseline,
                                node.op_type if node.domain in DOMAINS else None)
            out.append(NodeResult(node, other_name, "explained" if finding.explained else "unexplained",
                                  finding.topic, f"outputs {differing_out} differ: {finding.detail}", reason))
    return out


def explain_output(graph: Graph, output: str, runtime: str, node_results: Sequence[NodeResult]) -> tuple[str, str, str | None]:
    """(verdict, explanation, node name) for a difference of graph output ``output`` in ``runtime``.

    The first audited node upstream of the output (in graph order) that differs decides: explained
    when it is explained and every later difference on the path descends from an explained node.
    Several explained nodes are named by op (:mod:`ortops.compare.groups`), the first with its evidence.
    """
    by_index = {r.node.index: r for r in node_results if r.runtime == runtime}
    path = sorted(i for i in graph.tensor_ancestors(output) if i in by_index)
    differing = [by_index[i] for i in path if by_index[i].status != "agree"]
    if not differing:
        return ("unexplained", "no audited node upstream differs: the difference arises in other nodes "
                               "(arithmetic, or semantics ortops does not audit)", None)
    first = differing[0]
    label = node_label(first.node)
    if first.status == "upstream":
        return ("unexplained", f"the inputs of {label} already differ: the difference arises before any "
                               "audited node", first.node.name)
    if first.status != "explained":
        return "unexplained", f"{label} differs: {first.detail}", first.node.name
    origins = [first]
    for result in differing[1:]:
        if result.status == "explained":
            origins.append(result)
            continue
        descends = any(o.node.index in graph.node_ancestors(result.node.index) for o in origins)
        if result.status == "upstream" and descends:
            continue
        return ("unexplained", f"{node_label(result.node)} differs too ({result.status}): {result.detail}",
                result.node.name)
    if len(origins) > 1:
        label = "; ".join(g.text() for g in group_nodes(o.as_dict() for o in origins)) + f"; first, {label}"
    return "explained", f"follows from {label}: {first.detail}", first.node.name


#: Element types a runtime may lack a kernel for -> the topic of the divergence table.
_TYPE_TOPICS = {np.dtype(np.uint64): "uint64", np.dtype(np.float16): "float16-bfloat16"}


def explain_failure(model: onnx.ModelProto, nodes: Sequence[AuditedNode], feed, results: Mapping[str, Mapping],
                    base_dir: str | None = None, detail: str = "") -> tuple[Finding, AuditedNode] | None:
    """Why a runtime failed or crashed, at an audited node: a precheck finding (k outside its
    range, an out-of-range index) on the tensors any runtime that ran computed, or a kernel the
    runtime lacks (its message ``detail`` says NOT_IMPLEMENTED and names the node) for a type of
    :data:`_TYPE_TOPICS`."""
    value = tensor_values(model, feed, base_dir)
    audits = registry()
    if "NOT_IMPLEMENTED" in detail:
        for node in nodes:
            name, op_type = model.graph.node[node.index].name, model.graph.node[node.index].op_type
            if f"'{name}'" not in detail and (not name or f" {name} " not in detail) or \
                    not name and f"{op_type}(" not in detail:  # an unnamed node: ORT says "name ''"
                continue
            for outputs in (*results.values(), {}):
                dtypes = {np.asarray(v).dtype for v in (value(outputs, n) for n in node.inputs) if v is not None}
                topic = next((_TYPE_TOPICS[d] for d in dtypes if d in _TYPE_TOPICS), None)
                if topic is not None:
                    return Finding(topic, True, f"the runtime has no kernel for this node's {topic} data"), node
    for node in nodes:
        proto = model.graph.node[node.index]
        audit = audits.get(_key(proto))
        if audit is None or audit.precheck is None:
            continue
        for outputs in (*results.values(), {}):
            inputs = [value(outputs, n) for n in node.inputs]
            if all(v is not None for n, v in zip(node.inputs, inputs) if n):
                finding = audit.precheck(proto, inputs)
                if finding is not None:
                    return finding, node
                break
    return None


class Origin(NamedTuple):
    """A node where two runtimes split: its inputs agree within tolerance, an output does not."""

    index: int
    name: str
    op: str
    runtime: str
    detail: str


def origins(model: onnx.ModelProto, feed, results: Mapping[str, Mapping], baseline: str, *, atol: float,
            rtol: float, base_dir: str | None = None, only: Sequence[int] | None = None) -> list[Origin]:
    """With every tensor exposed (``--trace``): each node of the main graph (or of the indices
    ``only``), in graph order, whose inputs agree in both runtimes and one of whose outputs does
    not. Nodes whose tensors a runtime did not return are skipped."""
    value = tensor_values(model, feed, base_dir)
    found = []
    base = results[baseline]
    for runtime, other in results.items():
        if runtime == baseline:
            continue
        for index, node in enumerate(model.graph.node):
            if only is not None and index not in only:
                continue
            pairs_in = [(n, value(base, n), value(other, n)) for n in node.input if n]
            pairs_out = [(n, value(base, n), value(other, n)) for n in node.output if n]
            if any(b is None or o is None for _, b, o in (*pairs_in, *pairs_out)) or any(
                    compare_arrays(o, b, atol=atol, rtol=rtol).status != "match" for _, b, o in pairs_in):
                continue
            comparisons = ((n, compare_arrays(o, b, atol=atol, rtol=rtol)) for n, b, o in pairs_out)
            name, comparison = next(((n, c) for n, c in comparisons if c.status != "match"), (None, None))
            if comparison is not None:
                found.append(Origin(index, node.name or f"#{index}", op_name(node), runtime,
                                    f"output {name!r}: {comparison.detail}; max abs {comparison.max_abs}"))
    return found


def origin_note(graph: Graph, output: str, runtime: str, found: Sequence[Origin]) -> str:
    """`` first split: node (op)`` for the first traced origin upstream of ``output``, or ``""``."""
    ancestors = graph.tensor_ancestors(output)
    first = next((o for o in found if o.runtime == runtime and o.index in ancestors), None)
    return "" if first is None else f"; the first node where the runtimes split is {first.name} ({first.op}): {first.detail}"
