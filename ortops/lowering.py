"""Lowering: ortops nodes replaced by exact compositions of standard ONNX ops.

:func:`lower` walks every graph of a model (subgraphs too) and hands each ortops node to its
op's lowering module (``OpSpec.lowering``, e.g. ``ortops/ops/top_k/lowering.py``). This module
knows no op: it builds the routing around what the op module composes.

What an op's lowering module provides (``site`` is a :class:`Site`, ``b`` a :class:`Builder`):

``prepare(site) -> int``
    The default-domain opset the composition needs; raises :class:`NotLowerable` with the
    reason when the node has no exact composition (a dtype without an ORT kernel, an input
    that must be constant and is not, ...).
``checks(b, site) -> list[(ok, reason)]``
    Boolean scalars that are true exactly when the op would accept its input (k in range,
    indices in range, ...). A failing check is an error: the PyOp raises ``OpError``
    (guarded) or a node named after the reason fails in ORT (standalone).
``hazards(b, site) -> list[ok]``
    Cheap boolean scalars under which :func:`fast` is exact (e.g. no NaN); empty when it
    always is. ``site.assume`` holds the runtime facts the caller vouches for (see below).
``runtime_facts() -> set[str]`` (optional)
    The facts about the ONNX Runtime of this process that the op's hazards may rely on,
    probed at run time (e.g. ``"topk_nan_order"``: ORT's TopK already orders NaN as ortops
    does, as ORT 1.32 does and 1.31 does not). :class:`ortops.InferenceSession` passes
    them as ``assume``; a model written to a file assumes nothing.
``site.assume`` may also hold :data:`ERRORS_TRANSLATED`, which is no fact about the runtime
    but a promise of the caller: a guarded lowering may then leave a check to a standard node
    that fails (e.g. ORT's TopK on a bad k) instead of routing the input to the PyOp
    (:class:`ortops.InferenceSession` promises it: it re-runs a failed call on the PyOp path
    and raises that path's :class:`OpError`). It saves the ``If`` around small inputs.
``fast(b, site) -> list[str]`` and ``exact(b, site) -> list[str]``
    The outputs, composed of standard ops: ``fast`` is exact when every check and hazard
    holds, ``exact`` whenever every check holds (standalone mode only; it may be slower).

The routing, per node::

    guarded    (fallback="pyop"): If(checks and hazards, fast, the original PyOp node)
    standalone (fallback="none"): If(checks, If(hazards, fast, exact), fail(reason))
"""

from __future__ import annotations

import contextlib
import copy
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, NamedTuple, Protocol, Sequence, runtime_checkable

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from . import dtypes, runtime
from . import standard as standard_ops
from .builder.schemas import register_schemas
from .graph import (DEFAULT_DOMAINS, check_node, graphs, inline_functions, load_model, model_graphs, subgraphs,
                    used_names)
from .ops import DOMAINS, OPS
from .ops.compose import ERRORS_TRANSLATED, NotLowerable
from .ops.spec import OpSpec
from .value_info import ValueInfo, check_axes, check_input_types

__all__ = ["lower", "runtime_facts", "ERRORS_TRANSLATED", "Lowered", "LoweringReport", "LoweredNode", "KeptNode", "NotLowerable", "Site", "Builder",
           "FALLBACKS"]

#: The values of ``lower(..., fallback=...)``.
FALLBACKS = ("pyop", "none")
#: The default-domain opset a lowered model is raised to when nothing else uses that domain.
LOWERED_OPSET = 18
#: The ``doc_string`` of the PyOp fallback inside a guarded lowering's If.
FALLBACK_MARK = "ortops.lower: the PyOp fallback of a guarded lowering"
_MIN_IR_VERSION = 8  # opset 18


@dataclass(frozen=True)
class LoweredNode:
    """One node replaced by its composition: its name, ``domain::op_type`` and mode
    (``"guarded"``: the PyOp stays as the fallback; ``"standalone"``: no ortops node left)."""

    name: str
    op: str
    mode: str


@dataclass(frozen=True)
class KeptNode:
    """One ortops node left as a PyOp, and why it has no exact composition."""

    name: str
    op: str
    reason: str


@dataclass(frozen=True)
class LoweringReport:
    """What :func:`lower` did: the nodes lowered and the nodes kept as PyOps (with reasons).

    ``standalone`` is true when no graph of the model holds an ortops node any more (``left``
    names those that do, the PyOp fallbacks of a guarded lowering included).
    """

    fallback: str
    opset: int | None
    lowered: tuple[LoweredNode, ...] = ()
    kept: tuple[KeptNode, ...] = ()
    left: tuple[str, ...] = ()
    #: With ``standard=True``: the standard TopK/ArgMax/ArgMin nodes rewritten (mode
    #: ``"standard"``), and those left as they were, with the reason.
    rewritten: tuple[LoweredNode, ...] = ()
    unchanged: tuple[KeptNode, ...] = ()
    #: With ``standard=True``: the default-domain opset the model was converted from (onnx's
    #: version converter, to :data:`ortops.standard.OPSET`), or None.
    converted_from: int | None = None

    @property
    def standalone(self) -> bool:
        return not self.kept and not self.left and self.fallback == "none"

    def lines(self) -> list[str]:
        """One line per node, for people."""
        out = [f"lowered ({node.mode}): {node.op} node {node.name!r}" for node in self.lowered]
        out += [f"kept as PyOp: {node.op} node {node.name!r}: {node.reason}" for node in self.kept]
        out += [f"rewritten (standard): {node.op} node {node.name!r}" for node in self.rewritten]
        out += [f"left as it was: {node.op} node {node.name!r}: {node.reason}" for node in self.unchanged]
        if self.converted_from is not None:
            out.append(f"converted from default-domain opset {self.converted_from} to {self.opset} (onnx's "
                       "version converter) for the standard rewrites")
        return out or ["no ortops node in the model"]

    def __str__(self) -> str:
        return "\n".join(self.lines())


class Lowered(NamedTuple):
    """The result of :func:`lower`: the lowered model and its :class:`LoweringReport`."""

    model: onnx.ModelProto
    report: LoweringReport


@dataclass
class Site:
    """What an op's lowering sees of one node.

    ``elem_types``, ``ranks`` and ``shapes`` are the inferred ONNX element type, rank and shape
    of each input (types and ranks are known; a shape may be None, a dimension that is not a
    number is None); ``out_types`` and ``out_ranks`` those of each output (a rank may be None);
    ``constants`` the value of each input that is a constant (else None).
    """

    node: onnx.NodeProto
    op: OpSpec
    attrs: dict
    elem_types: list[int]
    ranks: list[int | None]
    shapes: list[tuple | None]
    out_types: list[int]
    out_ranks: list[int | None]
    constants: list[np.ndarray | None]
    opset: int = 0
    assume: frozenset = frozenset()


@dataclass
class Builder:
    """Appends standard nodes to one graph (or If branch), naming them under ``prefix``."""

    prefix: str
    opset: int
    nodes: list = field(default_factory=list)
    counter: list = field(default_factory=lambda: [0])
    memos: dict = field(default_factory=dict)
    guarded: bool = True

    def memo(self, key, make: Callable[[], str]) -> str:
        """``make()`` once per ``key`` in this graph and the branches built after it (they see
        its values)."""
        if key not in self.memos:
            self.memos[key] = make()
        return self.memos[key]

    def fresh(self, hint: str) -> str:
        self.counter[0] += 1
        return f"{self.prefix}/{hint}_{self.counter[0]}"

    def add(self, op_type: str, inputs: Sequence[str], outputs: int = 1, *, name: str | None = None, **attrs):
        """Add ``op_type(inputs)``; the name of its output (a list with ``outputs > 1``)."""
        names = [self.fresh(op_type) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op_type, list(inputs), names, name=name or names[0], **attrs))
        return names[0] if outputs == 1 else names

    def const(self, value, dtype=None) -> str:
        """A ``Constant`` holding ``value`` (NumPy array or scalar; ``dtype`` for Python numbers)."""
        array = np.asarray(value, dtype=dtype)
        return self.add("Constant", [], value=numpy_helper.from_array(array, self.fresh("value")))

    def branch(self) -> "Builder":
        return Builder(self.prefix, self.opset, [], self.counter, dict(self.memos), self.guarded)

    def all_of(self, conditions: Sequence[str]) -> str:
        """A boolean scalar: every one of ``conditions``."""
        result = conditions[0]
        for condition in conditions[1:]:
            result = self.add("And", [result, condition])
        return result

    def reduce(self, op_type: str, x: str) -> str:
        """``op_type`` (ReduceSum, ReduceMax, ...) over every axis, as a scalar (any opset)."""
        return self.add(op_type, [x], keepdims=0)

    def first(self, x: str) -> str:
        """The first element of int64 ``x`` (any shape) as a scalar, 0 when ``x`` is empty; read
        without a reduction: OpenVINO 2026.4.1 computes arithmetic that follows an integer
        reduction in float32."""
        padded = self.add("Concat", [self.add("Reshape", [x, self.const(np.array([-1], np.int64))]),
                                     self.const(np.zeros(1, np.int64))], axis=0)
        head = self.add("Slice", [padded, *(self.const(np.array([v], np.int64)) for v in (0, 1))])
        return self.add("Reshape", [head, self.const(np.array([], np.int64))])

    def exceeds(self, a: str, b: str) -> str:
        """``a > b`` for int64 ``a`` and ``b``, as ``a - b > 0``: exact where a runtime compares
        integers as float32 (OpenVINO 2026.4.1: ``2**24 + 1 > 2**24`` is false there) but
        subtracts them exactly."""
        return self.add("Greater", [self.add("Sub", [a, b]), self.const(np.int64(0))])

    def reversed(self, x: str, axis: int) -> str:
        """``x`` reversed along ``axis`` (a ``Slice`` with step -1)."""
        return self.add("Slice", [x, *(self.const(np.array([v], np.int64)) for v in (-1, -(2 ** 63), axis, -1))])

    def cast(self, x: str, to: int) -> str:
        return self.add("Cast", [x], to=to)

    def check(self, ok: str, value: str, label: str, elem: int, rank: int) -> str:
        """``value`` (ONNX type ``elem``, rank ``rank``) once ``ok`` holds; otherwise ORT fails in
        a node named ``label`` (:func:`_failures`; the error branch's output is never returned)."""
        def fail(sub: Builder) -> list[str]:
            failed = sub.cast(_failures(sub, [(ok, label)]), elem)
            return [sub.add("Reshape", [failed, sub.const(np.ones(rank or 0, np.int64))])]

        return self.if_(ok, lambda sub: [value], fail, [elem], [rank])[0]

    def if_(self, condition: str, then: Callable[["Builder"], list[str]], otherwise: Callable[["Builder"], list[str]],
            out_types: Sequence[int], out_ranks: Sequence[int | None], name: str | None = None) -> list[str]:
        """``If(condition)`` with branches built by ``then(b)`` and ``otherwise(b)``; the outputs
        have the ONNX types ``out_types`` and ranks ``out_ranks`` (OpenVINO needs the ranks)."""
        branches = []
        for build in (then, otherwise):
            sub = self.branch()
            results = build(sub)
            produced = {o for n in sub.nodes for o in n.output}
            outputs = []
            for value, elem, rank in zip(results, out_types, out_ranks, strict=True):
                if value not in produced:  # a branch output must be produced inside the branch
                    value = sub.add("Identity", [value])
                outputs.append(helper.make_tensor_value_info(value, elem, None if rank is None else [None] * rank))
            branches.append(helper.make_graph(sub.nodes, self.fresh("branch"), [], outputs))
        outputs = self.add("If", [condition], len(out_types), name=name, then_branch=branches[0],
                           else_branch=branches[1])
        return outputs if len(out_types) > 1 else [outputs]


@runtime_checkable
class Lowering(Protocol):
    """An op's exact composition of standard ONNX ops (``ortops/ops/<op>/lowering.py``, reached
    through :attr:`OpSpec.lowering`). Optional: ``runtime_facts()``, the facts it probes, and
    ``CONSTANT_INPUTS``, the inputs it needs constant."""

    def prepare(self, site: Site) -> int:
        """The default-domain opset it needs; raises NotLowerable for a node it cannot lower."""

    def checks(self, b: Builder, site: Site) -> list[tuple[str, str]]:
        """(boolean tensor, reason) per check of the node's inputs."""

    def hazards(self, b: Builder, site: Site) -> list[str]:
        """Boolean tensors, all true when :meth:`fast` is exact."""

    def fast(self, b: Builder, site: Site) -> list[str]: ...

    def exact(self, b: Builder, site: Site) -> list[str]: ...


def _module(op: OpSpec) -> Lowering | None:
    return op.lowering() if op.lowering else None


def lower(model, *, fallback: str = "pyop", ops: Callable[[onnx.NodeProto], bool] | None = None,
          assume: frozenset = frozenset(), standard: bool = False, info: ValueInfo | None = None) -> Lowered:
    """Replace every ortops node that has an exact standard-ONNX composition by it.

    Parameters
    ----------
    model : onnx.ModelProto, bytes, str or os.PathLike
        The model; it is not modified.
    fallback : {"pyop", "none"}, default "pyop"
        ``"pyop"`` (guarded): each lowered node becomes ``If(guard, composition, PyOp)``; the
        cheap guard routes the inputs the composition cannot take exactly (NaN where it
        matters, k out of range, indices out of range, ...) to the original node, so that
        results stay exact and bad input raises :class:`OpError` naming the node (run the
        model with :class:`ortops.InferenceSession`). ``"none"`` (standalone): no ortops node
        is left; NaN and the other hard inputs are composed of standard ops too, and bad
        input makes ORT fail in a node named after the node and the reason.
    ops : callable, optional
        ``ops(node) -> bool | str`` chooses the ortops nodes to lower (default: all): True
        lowers the node; False keeps it as a PyOp with the reason ``"not chosen"``, and a
        string keeps it with that string as the reason. Only with ``fallback="pyop"``.
    assume : set of str, optional
        Facts about the runtime the model will run on (:func:`runtime_facts`) that let a
        composition skip a hazard check, or choose a faster layout
        (:data:`ortops.ops.compose.PARALLEL`: ORT runs it on two threads or more); only for a
        model run in this process.
    standard : bool, default False
        Also rewrite the standard ONNX ``TopK`` (opsets 1, 10, 11, 24), ``ArgMax`` and
        ``ArgMin`` nodes, in every graph, into compositions that give the ONNX spec's answer
        in any runtime, whatever order its TopK gives equal values (:mod:`ortops.standard`):
        TopK puts the lower index first among equal values (``sorted=0`` too), ArgMax/ArgMin
        take the first index of the best value, or the last with ``select_last_index=1``.
        NaN (ONNX is silent) ranks above every number, +inf included, all NaNs equal: ArgMax
        picks a NaN, ArgMin only in an all-NaN slice. An empty axis and, for TopK, a k outside
        [0, dim] fail in a node named after the reason, as a standalone check does. A node
        with no such composition (uint64 data, an opset below 11) is left as it was; the
        report's ``unchanged`` says why. A model importing a default-domain opset below 11
        (TopK-1, TopK-10) is first converted to opset 11 by ``onnx.version_converter``
        (``report.converted_from``); where that fails, its nodes are left as they were.
    info : ortops.value_info.ValueInfo, optional
        What onnx's shape inference knows of ``model`` (an ``onnx.ModelProto``), when the
        caller has it already: it is not inferred again (unless ``standard`` converts the model).

    Returns
    -------
    Lowered
        ``(model, report)``: a new ``onnx.ModelProto`` and a :class:`LoweringReport` listing
        the nodes lowered and those kept as PyOps, each with the reason (with ``standard``:
        the standard nodes rewritten and those left as they were, with the reason).

    Raises
    ------
    ValueError
        For another ``fallback``; with ``fallback="none"``, when some node has no exact
        composition (the message lists them and why).
    OpError
        For an invalid ortops node (as :func:`ortops.prepare_model`).

    Notes
    -----
    A composition needs default-domain opset 11 to 18 (ScatterElements' reductions need 16
    and 18). A model whose own nodes use the default domain keeps its opset, and a node
    whose composition needs a newer one is kept as a PyOp; otherwise the import is raised
    to 18. Compositions are inlined (not model-local functions: a function cannot import
    another default opset than its model). Model-local functions that hold a node to lower
    (an ortops node, or with ``standard`` a standard TopK, ArgMax or ArgMin) are inlined first
    (:func:`ortops.graph.inline_functions`), as :func:`ortops.prepare_model` does.
    """
    if fallback not in FALLBACKS:
        raise ValueError(f"fallback={fallback!r} must be one of {FALLBACKS}")
    if ops is not None and fallback != "pyop":
        raise ValueError("ops= chooses nodes only with fallback='pyop'")
    loaded = load_model(model)
    register_schemas()
    model = inline_functions(loaded, lambda n: n.domain in DOMAINS or (
        standard and n.domain in DEFAULT_DOMAINS and n.op_type in standard_ops.OP_TYPES))
    converted = None
    if standard:
        model, converted = standard_ops.raised(model, _default_opset(model))
    current = _default_opset(model)
    others = any(f.domain in DEFAULT_DOMAINS for f in model.functions) or any(
        n.domain in DEFAULT_DOMAINS for g in model_graphs(model) for n in g.node)  # nodes of its own in that domain
    target = current if others else max(current or 0, LOWERED_OPSET)
    if info is None or model is not loaded:  # converted, or inlined functions that bring values of their own
        info = ValueInfo(model)
    taken = used_names(model)  # a graph input may start with a node's prefix too
    lowered, kept, rewritten, unchanged = [], [], [], []
    replaced_inputs: set[str] = set()  # inputs of the nodes lowered: initializers may lose their last use
    # Innermost graphs first: replacing a graph's nodes copies them, subgraphs included.
    for graph in reversed(list(graphs(model.graph))):
        nodes = []
        for node in [copy.deepcopy(n) for n in graph.node]:
            if standard and node.domain in DEFAULT_DOMAINS and node.op_type in standard_ops.OP_TYPES:
                label, mode, done, skipped = node.op_type, "standard", rewritten, unchanged
                build = partial(_lower_node, node, None, standard_ops.attributes(node), info, target, "none",
                                _prefix(node, taken), module=standard_ops.module(node.op_type))
            else:
                checked = check_node(node)
                if checked is not None and node.doc_string == FALLBACK_MARK and fallback == "pyop":
                    nodes.append(node)  # the PyOp fallback of an earlier guarded lowering (standalone: lowered too)
                    continue
                chosen = True if checked is None or ops is None else ops(node)
                if checked is None or chosen is not True:
                    if checked is not None:
                        kept.append(KeptNode(node.name, checked[0].qualified_name, chosen or "not chosen"))
                    nodes.append(node)
                    continue
                op, attrs = checked
                # Input types as prepare_model checks them (OpError): a composition would cast them.
                check_input_types(node, op, info.elem_types(), subgraph=graph is not model.graph)
                check_axes(node, op, attrs, info)
                mode = "guarded" if fallback == "pyop" else "standalone"
                label, done, skipped = op.qualified_name, lowered, kept
                build = partial(_lower_node, node, op, attrs, info, target, fallback, _prefix(node, taken), assume)
            try:
                replacement = build()
            except (NotLowerable, standard_ops.NotRewritable) as exc:
                skipped.append(KeptNode(node.name, label, str(exc)))
                nodes.append(node)
                continue
            nodes.extend(_placed(model, graph, replacement))
            replaced_inputs.update(node.input)  # and the composition's constants: the builder may leave one unread
            replaced_inputs.update(n.output[0] for n in replacement if n.op_type == "Constant")
            done.append(LoweredNode(node.name, label, mode))
        del graph.node[:]
        graph.node.extend(nodes)
    if fallback == "none" and kept:
        listed = "; ".join(f"{k.op} node {k.name!r}: {k.reason}" for k in kept)
        raise ValueError(f"the model cannot be made standalone: {len(kept)} node(s) have no exact standard-ONNX "
                         f"composition: {listed}")
    left = tuple(n.name for g in model_graphs(model) for n in g.node if n.domain in DOMAINS)
    if fallback == "none" and left:
        raise ValueError(f"the model cannot be made standalone: ortops nodes are left in it: {', '.join(left)}")
    if lowered or rewritten:
        _drop_unused_initializers(model, replaced_inputs)
    ir_version = model.ir_version
    if lowered:
        _set_opset(model, target, drop=() if left else DOMAINS)
    if lowered or rewritten:  # e.g. IR 3 (opset 7 converted to 11): constants as initializers need IR 4
        with contextlib.suppress(ValueError):  # an opset newer than this onnx knows: left as it is
            model.ir_version = max(model.ir_version, helper.find_min_ir_version_for(
                [o for o in model.opset_import if o.domain in DEFAULT_DOMAINS]))
    if ir_version < 4 <= model.ir_version:  # IR 3's initializers are inputs and constants: constants stay
        initialized = {t.name for t in model.graph.initializer}
        inputs = [i for i in model.graph.input if i.name not in initialized]
        del model.graph.input[:]
        model.graph.input.extend(inputs)
    return Lowered(model, LoweringReport(fallback, target if lowered else current, tuple(lowered), tuple(kept), left,
                                         tuple(rewritten), tuple(unchanged), converted))


def _placed(model: onnx.ModelProto, graph: onnx.GraphProto, replacement: list) -> list:
    """The nodes of a composition to put in ``graph``; in the main graph its constants become
    initializers (fewer nodes for a session to load)."""
    if graph is not model.graph:
        return replacement
    for constant in (n for n in replacement if n.op_type == "Constant"):  # a Builder's: its value, named as its output
        tensor = graph.initializer.add()
        tensor.CopyFrom(constant.attribute[0].t)
        tensor.name = constant.output[0]
    return [n for n in replacement if n.op_type != "Constant"]


def _drop_unused_initializers(model: onnx.ModelProto, names: set[str]) -> None:
    """Remove the initializers among ``names`` that no node of any graph reads any more and
    that are no graph input or output (ORT warns "Removing initializer" for each one left unused)."""
    used = {name for g in graphs(model.graph) for n in g.node for name in n.input}
    used |= {v.name for g in graphs(model.graph) for v in (*g.input, *g.output)}
    for graph in graphs(model.graph):
        unused = [t for t in graph.initializer if t.name in names and t.name not in used]
        for tensor in unused:
            graph.initializer.remove(tensor)


def _lower_node(node, op: OpSpec | None, attrs: dict, info: ValueInfo, opset: int | None, fallback: str,
                prefix: str, assume: frozenset = frozenset(), module: Lowering | None = None) -> list:
    """The nodes replacing ``node``: an ortops node (``op``) through its op's lowering module,
    or a standard node (``op`` None) through ``module`` (:mod:`ortops.standard`)."""
    module = module or (_module(op) if op is not None else None)
    if module is None:
        raise NotLowerable("the op has no lowering")
    site = Site(node, op, attrs, [info.elem_type(n) for n in node.input], [info.rank(n) for n in node.input],
                [info.shape(n) for n in node.input],
                [info.elem_type(n) for n in node.output], [info.rank(n) for n in node.output],
                [info.constant(n) for n in node.input])
    if any(t == 0 for t in site.elem_types) or any(t == 0 for t in site.out_types):
        raise NotLowerable("the element types of its inputs or outputs cannot be inferred")
    if any(r is None for r in site.ranks):
        raise NotLowerable("the rank of an input cannot be inferred")
    needed = module.prepare(site)
    if opset is None or opset < needed:
        raise NotLowerable(f"the composition needs default-domain opset >= {needed}; the model imports {opset} "
                           "and has nodes of its own in that domain")
    site.opset, site.assume = opset, frozenset(assume)
    b = Builder(prefix, opset, guarded=fallback == "pyop")
    checks = module.checks(b, site)
    hazards = module.hazards(b, site)
    out_types = site.out_types
    conditions = [ok for ok, _ in checks] + ([] if fallback == "none" else list(hazards))
    if fallback == "pyop":
        def pyop(sub: Builder) -> list[str]:
            outputs = [sub.fresh("pyop_out") for _ in node.output]
            fallback_node = copy.deepcopy(node)
            del fallback_node.output[:]
            fallback_node.output.extend(outputs)
            fallback_node.doc_string = FALLBACK_MARK  # lowering the model again leaves it alone
            sub.nodes.append(fallback_node)
            # An Identity between a PyOp and a branch output: a pre-allocated output of another
            # shape would abort the process inside the bridge, behind it ORT fails cleanly.
            return [sub.add("Identity", [o]) for o in outputs]

        results = b.if_(b.all_of(conditions), lambda sub: module.fast(sub, site), pyop, out_types, site.out_ranks,
                        name=node.name or None) if conditions else module.fast(b, site)
    else:
        # No If around the checks (each If's subgraphs cost session creation): the data input
        # goes through a Reshape to its own shape plus the checks' sum, 0 unless one fails
        # (ORT then runs every check first). OpenVINO removes such a Reshape, checks and all,
        # so the sum is also added to each integer input the composition reads (indices, a
        # dynamic k) and to one output: no kernel sees a bad index, and no output is returned.
        # Check nodes are named after their node: an unnamed one by its first output (unique).
        label = f"{node.op_type} node {node.name or node.output[0]!r} rejects its input: "
        gated, total = site, None
        if checks:
            total = _failures(b, [(ok, label + reason) for ok, reason in checks])
            gated = copy.copy(site)
            gated.node = copy.deepcopy(node)
            data_shape = b.add("Add", [b.add("Shape", [node.input[0]]), total])
            gated.node.input[0] = b.add("Reshape", [node.input[0], data_shape])
            for i, name in enumerate(node.input[1:], start=1):
                if site.elem_types[i] in _INTEGER_TYPES and site.constants[i] is None:
                    gated.node.input[i] = _add_zero(b, name, site.elem_types[i], total)
        if hazards:
            results = b.if_(b.all_of(list(hazards)), lambda s: module.fast(s, gated), lambda s: module.exact(s, gated),
                            out_types, site.out_ranks, name=node.name or None)
        else:
            results = module.fast(b, gated)
        if total is not None:  # the output that is cheapest to gate: int64/int32 (Add at every opset), else a float
            i = next((i for i, t in enumerate(out_types) if t in (TensorProto.INT64, TensorProto.INT32)),
                     next((i for i, t in enumerate(out_types) if t in _INTEGER_TYPES | set(_SUBTRACTABLE)), None))
            if i is not None:
                results = [*results[:i], _add_zero(b, results[i], out_types[i], total), *results[i + 1:]]
    # The outputs take the node's output names.
    _rename(b.nodes, dict(zip(results, node.output)))
    return b.nodes


def runtime_facts() -> frozenset:
    """The runtime facts every op's lowering module probes in this process (probed once:
    :func:`ortops.runtime.cached`, the process's one home of caches)."""
    return runtime.cached("lowering.facts", None, _probe_facts)


def _probe_facts() -> frozenset:
    probing = [m for m in map(_module, OPS) if m is not None and hasattr(m, "runtime_facts")]
    return frozenset(fact for module in probing for fact in module.runtime_facts())


def _rename(nodes, renames: dict[str, str]) -> None:
    """Rename values in ``nodes`` and the subgraphs they hold (outer-scope references too)."""
    for n in nodes:
        for field_ in (n.input, n.output):
            for i, name in enumerate(field_):
                if name in renames:
                    field_[i] = renames[name]
        for _, graph in subgraphs(n):
            _rename(graph.node, renames)
            for out in graph.output:
                if out.name in renames:
                    out.name = renames[out.name]


def _failures(b: Builder, checks) -> str:
    """For every ``(ok, label)``, a Concat named ``label`` of a ``[1, 1]`` and a ``[1, 1 + not
    ok]`` tensor along axis 0: it fails (the other axis does not match) unless ``ok``, in ONNX
    Runtime and in OpenVINO alike. (A Gather out of range or a Reshape to another element count
    fails in ORT, but OpenVINO 2026.4's CPU plugin returns zeros for the one and reinterprets
    the memory for the other.) The second tensor holds ``not ok`` itself, not a constant: a
    tensor of constant zeros let OpenVINO fold the sum below to 0 and drop the Concat, so that
    the check never ran. Returns their sum: an int64 zero when all hold, on which a later node
    depends, so that every check runs first."""
    zeros, ones, zero, one = (b.const(np.zeros((1, 1), np.int64)), b.const(np.ones(2, np.int64)),
                              b.const(np.zeros(1, np.int64)), b.const(np.ones(1, np.int64)))
    failures = []
    for ok, label in checks:
        bad = b.add("Reshape", [b.cast(b.add("Not", [ok]), TensorProto.INT64), one])  # [1]: 1 unless ok
        shape = b.add("Add", [ones, b.add("Concat", [zero, bad], axis=0)])  # [1, 1 + bad]
        wide = b.add("Expand", [bad, shape])  # [1, 1 + bad] of bad: 0 when ok
        failures.append(b.reduce("ReduceSum", b.add("Concat", [zeros, wide], axis=0, name=label)))
    total = failures[0]
    for failure in failures[1:]:
        total = b.add("Add", [total, failure])
    return total


#: Element types to which adding an integer zero changes nothing (every value, bit for bit).
_INTEGER_TYPES = frozenset(t.onnx for t in dtypes.INTEGER_TYPES)
#: Float types from which subtracting +0.0 changes nothing (-0.0 - 0.0 is -0.0; NaN stays NaN).
_SUBTRACTABLE = (TensorProto.FLOAT, TensorProto.DOUBLE)


def _add_zero(b: Builder, value: str, elem_type: int, total: str) -> str:
    """``value`` plus ``total`` (the checks' sum: 0 unless a check fails, and then a Concat has
    failed) in ``value``'s type, so that ``value`` depends on every check in any runtime:
    ``Add`` for integers, ``Sub`` of +0.0 for floats (exact for -0.0 and NaN)."""
    return b.add("Sub" if elem_type in _SUBTRACTABLE else "Add", [value, b.cast(total, elem_type)])


def _prefix(node: onnx.NodeProto, taken: set[str]) -> str:
    """A prefix for the node's new values that no name in the model starts with."""
    base, n = f"{node.name or node.output[0]}/lowered", 1
    prefix = base
    while any(name.startswith(prefix + "/") for name in taken):
        n += 1
        prefix = f"{base}{n}"
    taken.add(prefix + "/")
    return prefix


def _default_opset(model: onnx.ModelProto) -> int | None:
    versions = [o.version for o in model.opset_import if o.domain in DEFAULT_DOMAINS]
    return max(versions) if versions else None


def _set_opset(model: onnx.ModelProto, version: int, drop: Sequence[str] = ()) -> None:
    """Import default-domain opset ``version`` (IR version 8 at least), and no longer the domains ``drop``."""
    keep = [o for o in model.opset_import if o.domain not in (*DEFAULT_DOMAINS, *drop)]
    del model.opset_import[:]
    model.opset_import.extend([helper.make_opsetid("", version), *keep])
    model.ir_version = max(model.ir_version, _MIN_IR_VERSION)
