"""The causal check: does the node an output difference is blamed on really cause it?

The graph is cut at every audited node that differs on the output's path (:func:`cut_model`:
their outputs become graph inputs); the baseline runs the rest on the other runtime's values of
those tensors, and the output must then match the other runtime's (``passed``). Otherwise the
check names the first node after the cut whose inputs agree and whose output does not (the
trace). An ``upstream`` node is cut too, recomputed by the baseline and audited again on the cut
run's inputs. A runtime that failed at an audited node is checked with the node alone
(:func:`node_model`): it must fail there too (:func:`check_failure`). Every run is one child
process of :mod:`.runtimes`. How to read it: docs/compare.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import onnx
from onnx import helper

from . import audit
from . import model as model_mod
from .groups import count
from .outputs import compare_arrays
from .runtimes import Runner

__all__ = ["RECOMPUTED", "Causal", "check_failure", "check_outputs", "cut_model", "node_model"]

#: Suffix of the name under which the cut model recomputes a cut node's output.
RECOMPUTED = "::ortops-recomputed"


class Causal(NamedTuple):
    """The causal check of one output (or one failed runtime).

    ``status``: ``passed`` (the cut nodes explain it), ``failed`` (a difference remains),
    ``not-run`` (the check could not run: ``detail`` says why). ``cut``: the names of the nodes
    the graph was cut at; ``runtime``: the runtime that ran the cut model; ``comparison``: the
    recomputed output against the other runtime's (``compare.json`` schema of
    ``outputs[].comparison``); ``trace``: where the remaining difference first appears
    (``node``, ``op``, ``detail``), or None.
    """

    status: str
    cut: tuple[str, ...]
    runtime: str
    detail: str
    comparison: dict | None = None
    trace: dict | None = None

    def as_dict(self) -> dict:
        return {**self._asdict(), "cut": list(self.cut)}


def _typed(name: str, value: np.ndarray, shaped: bool = True) -> onnx.ValueInfoProto:
    value = np.asarray(value)
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(value.dtype),
                                         list(value.shape) if shaped else None)


def cut_model(model: onnx.ModelProto, cut: Mapping[str, np.ndarray], outputs: Sequence[str],
              recompute: Sequence[int] = ()) -> onnx.ModelProto:
    """A copy of ``model`` whose tensors ``cut`` (name -> the value fed for it) are graph inputs.

    The nodes that produced them write ``name + RECOMPUTED`` instead; those of ``recompute``
    (node indices) keep running and expose it as an output, the others go. The graph outputs
    are ``outputs`` (tensor names, typed where known), and only the nodes they need are kept.
    """
    cut_model_ = onnx.ModelProto()
    cut_model_.CopyFrom(model)
    graph = cut_model_.graph
    kept_outputs = {o.name: o for o in graph.output}
    recomputed = [n + RECOMPUTED for index in recompute for n in model.graph.node[index].output if n in cut]
    for node in graph.node:
        for i, name in enumerate(node.output):
            if name in cut:
                node.output[i] = name + RECOMPUTED
    ancestry = audit.Graph(cut_model_)
    needed = set().union(*(ancestry.tensor_ancestors(name) for name in [*outputs, *recomputed]))
    nodes = [n for i, n in enumerate(graph.node) if i in needed]
    del graph.node[:]
    graph.node.extend(nodes)
    graph.input.extend(_typed(name, value) for name, value in cut.items())
    del graph.output[:]
    graph.output.extend(kept_outputs.get(name) or helper.make_empty_tensor_value_info(name) for name in outputs)
    graph.output.extend(_typed(name, cut[name[:-len(RECOMPUTED)]], shaped=False) for name in recomputed)
    return cut_model_


def node_model(model: onnx.ModelProto, index: int, inputs: Mapping[str, np.ndarray]) -> onnx.ModelProto:
    """Node ``index`` of ``model`` alone: ``inputs`` (its input tensors that are not initializers,
    name -> value) become graph inputs, its initializers stay, its outputs are the graph outputs."""
    node = model.graph.node[index]
    initializers = [t for t in model.graph.initializer if t.name in node.input and t.name not in inputs]
    graph = helper.make_graph([node], "ortops_compare_node", [_typed(n, v) for n, v in inputs.items()],
                              [helper.make_empty_tensor_value_info(n) for n in node.output if n], initializers)
    alone = helper.make_model(graph, opset_imports=list(model.opset_import), ir_version=model.ir_version)
    alone.functions.extend(model.functions)
    return alone


def check_outputs(model: onnx.ModelProto, feed: Mapping[str, np.ndarray], results: Mapping[str, Mapping],
                  baseline: str, rows: Sequence[dict], node_results: Sequence[audit.NodeResult], *, atol: float,
                  rtol: float, runner: Runner, base_dir: str | None = None) -> dict[tuple[str, str], Causal]:
    """The causal check of every explained output row (``output``, ``runtime``, ``node``), one cut
    run per runtime and set of cut nodes. Returns (output, runtime) -> :class:`Causal`."""
    checks = _Checks(model, audit.Graph(model), feed, results, baseline, atol, rtol, runner, base_dir)
    groups: dict[tuple[str, tuple[audit.NodeResult, ...]], list[str]] = {}
    for row in rows:  # the graph is cut at the audited nodes on the output's path that differ, in graph order
        ancestors = checks.graph.tensor_ancestors(row["output"])
        cut = tuple(r for r in node_results if r.runtime == row["runtime"] and r.node.index in ancestors
                    and r.status in ("explained", "upstream"))
        groups.setdefault((row["runtime"], cut), []).append(row["output"])
    return {(name, runtime): check for (runtime, cut), names in groups.items()
            for name, check in checks.group(runtime, cut, names).items()}


class _Checks(NamedTuple):
    """What the causal checks of one comparison share: the model, the feed, each runtime's results."""

    model: onnx.ModelProto
    graph: audit.Graph
    feed: Mapping[str, np.ndarray]
    results: Mapping[str, Mapping]
    baseline: str
    atol: float
    rtol: float
    runner: Runner
    base_dir: str | None

    def group(self, runtime: str, cut_results: Sequence[audit.NodeResult], names: Sequence[str]) -> dict[str, Causal]:
        """The outputs ``names`` of ``runtime``, whose difference the nodes ``cut_results`` are blamed for."""
        labels = tuple(r.node.name for r in cut_results)
        baseline, other, base = self.baseline, self.results[runtime], self.results[self.baseline]
        # The other runtime's values, in the baseline's dtypes where they differ (OpenVINO may return int32 for int64).
        cut = {n: np.asarray(other[n]).astype(base[n].dtype if n in base else np.asarray(other[n]).dtype, copy=False)
               for r in cut_results for n in r.node.outputs if n}
        upstream = [r for r in cut_results if r.status == "upstream"]
        initializers = {t.name for t in self.model.graph.initializer}
        exposed = [n for r in upstream for n in r.node.inputs
                   if n and n not in self.feed and n not in cut and n not in initializers]
        sub = cut_model(self.model, cut, list(dict.fromkeys([*names, *exposed])),
                        recompute=[r.node.index for r in upstream])
        result = self.runner.run(baseline, sub, {**self.feed, **cut})
        if result.status != "ok":
            return {name: Causal("not-run", labels, baseline, f"the cut model did not run in {baseline}: "
                                 f"{result.status}: {result.detail}") for name in names}
        recomputed = dict(result.outputs)
        # The baseline's values in the cut run, a recomputed node's own output under its name: its
        # audit again. Only its own: a node after it read the cut value, not that recomputation.
        own = {n[:-len(RECOMPUTED)]: v for n, v in recomputed.items() if n.endswith(RECOMPUTED)}
        rejudged = []
        for r in upstream:
            values = {**cut, **recomputed, **{n: own[n] for n in r.node.outputs if n in own}}
            rejudged += audit.audit_nodes(self.model, [r.node], self.feed, {baseline: values, runtime: other},
                                          baseline, atol=self.atol, rtol=self.rtol, base_dir=self.base_dir)
        for node in rejudged:
            if node.status not in ("agree", "explained"):
                why = "its inputs still differ" if node.status == "upstream" else f"{node.status}: {node.detail}"
                trace = {"node": node.node.name, "op": model_mod.op_name(node.node), "detail": node.detail}
                return {name: Causal("failed", labels, baseline, f"fed {runtime}'s values of the cut nodes, "
                                     f"{model_mod.node_label(node.node)} still differs ({why})", None, trace)
                        for name in names}
        out = {}
        for name in names:
            got = recomputed.get(name)
            comparison = None if got is None else compare_arrays(other[name], got, atol=self.atol, rtol=self.rtol)
            if comparison is None:
                out[name] = Causal("not-run", labels, baseline, f"the cut model returned no {name!r}")
            elif comparison.status == "match":
                out[name] = Causal("passed", labels, baseline,
                                   f"{baseline} fed {runtime}'s values of {count(len(labels), 'cut node')} gives "
                                   f"{runtime}'s {name!r} within tolerance", comparison.as_dict())
            else:
                trace = self.trace(runtime, [r.node.index for r in cut_results], name, cut)
                where = (f"; the remaining difference first appears at {trace['node']} ({trace['op']}): "
                         f"{trace['detail']}" if trace else "")
                out[name] = Causal("failed", labels, baseline,
                                   f"{baseline} fed {runtime}'s values of the cut nodes still differs from {runtime}: "
                                   f"{comparison.detail}{where}", comparison.as_dict(), trace)
        return out

    def trace(self, runtime: str, indices: Sequence[int], output: str, cut: Mapping[str, np.ndarray]) -> dict | None:
        """The first node after the cut whose inputs agree in the cut run and the other runtime and
        whose output does not: both run again with every tensor between the cut and ``output`` exposed
        (the other runtime on the whole model, unless its results already hold them)."""
        model, graph = self.model, self.graph
        between = [i for i in sorted(graph.tensor_ancestors(output))
                   if any(c in graph.node_ancestors(i) for c in indices) and i not in indices]
        # Their outputs, and the inputs they read from outside the cut's descendants (another branch).
        nodes = [model.graph.node[i] for i in between]
        tensors = list(dict.fromkeys(n for node in nodes for n in (*node.input, *node.output)
                                     if n in graph.producer and n not in cut))
        other = self.results[runtime]
        if any(n not in other for n in tensors):
            rerun = self.runner.run(runtime, model_mod.expose(model, tensors), self.feed)
            if rerun.status != "ok":
                return None
            other = {**rerun.outputs, **other}
        rerun = self.runner.run(self.baseline, cut_model(model, cut, tensors), {**self.feed, **cut})
        if rerun.status != "ok":
            return None
        split = audit.origins(model, self.feed, {self.baseline: {**rerun.outputs, **cut}, runtime: other},
                              self.baseline, atol=self.atol, rtol=self.rtol, base_dir=self.base_dir, only=set(between))
        return {"node": split[0].name, "op": split[0].op, "detail": split[0].detail} if split else None


def check_failure(model: onnx.ModelProto, feed: Mapping[str, np.ndarray], results: Mapping[str, Mapping],
                  runtime: str, node: model_mod.AuditedNode, *, runner: Runner,
                  base_dir: str | None = None) -> Causal:
    """Whether ``node`` alone fails (or crashes) in ``runtime`` too, on the inputs a runtime that
    ran computed for it (or the feed): ``passed`` when it does, ``failed`` when it runs."""
    label = (node.name,)
    value = audit.tensor_values(model, feed, base_dir)
    initializers = {t.name for t in model.graph.initializer}
    for outputs in (*results.values(), {}):
        inputs = {n: value(outputs, n) for n in node.inputs if n and n not in initializers}
        if all(v is not None for v in inputs.values()):
            break
    else:
        return Causal("not-run", label, runtime, "no runtime computed this node's inputs")
    alone = runner.run(runtime, node_model(model, node.index, inputs), inputs)
    if alone.status in ("failed", "crashed"):
        return Causal("passed", label, runtime, f"the node alone, on the same inputs, {alone.status} in "
                                                f"{runtime} too: {alone.detail[:300]}")
    if alone.status == "ok":
        return Causal("failed", label, runtime, f"the node alone, on the same inputs, runs in {runtime}: "
                                                "the failure comes from elsewhere in the model")
    return Causal("not-run", label, runtime, f"{alone.status}: {alone.detail[:300]}")
