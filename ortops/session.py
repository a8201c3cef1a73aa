"""Running models that use ortops' ops: :class:`InferenceSession`, :func:`session_options`
(the raw path) and :func:`prepare_model` (the load-time checks and rewrites both use)."""

from __future__ import annotations

import contextlib
import ctypes
import os
from typing import Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper
from onnx.external_data_helper import ExternalDataInfo

from . import bridge, dtypes, runtime
from .builder.schemas import SCHEMA_VERSION, register_schemas
from .errors import OpError
from .graph import (DEFAULT_DOMAINS, Names, check_node, check_nodes, external_tensors, graphs, inline_functions,
                    load_model, model_graphs)
from .lowering import ERRORS_TRANSLATED, lower, runtime_facts
from .ops.compose import PARALLEL
from .ops import DOMAINS
from .ops.spec import OpSpec
from .value_info import CARRIED_ELEM_TYPES, ValueInfo, check_axes, check_input_types

__all__ = ["InferenceSession", "session_options", "prepare_model", "PATHS"]

#: The values of ``InferenceSession(..., path=...)``.
PATHS = ("auto", "pyop", "lowered")

_CONFIG_KEY = "ortops.custom_ops_registered"
_DISABLED_OPTIMIZERS_KEY = "optimization.disable_specified_optimizers"
_options_lock = runtime.Lock()
# The default-domain opset the Casts prepare_model adds need, by the type cast from: Cast takes
# bfloat16 from Cast-13 and an integer ``to`` from Cast-6. ORT checks the Casts against the
# model's opset import.
_CAST_OPSET = {TensorProto.FLOAT16: 6, TensorProto.BFLOAT16: 13, **{t.onnx: 6 for t in dtypes.INTEGER_TYPES}}
#: The domains whose ops ONNX Runtime has built in (no custom-op library needed).
_ORT_DOMAINS = ("", "ai.onnx", "ai.onnx.ml", "com.microsoft", "com.microsoft.nchwc", "ai.onnx.preview.training")


def _widenings(op: OpSpec, found: list[int]) -> tuple[list[tuple[int, int]], list[str]]:
    """``(input index, ONNX type)`` of each input that the private registrations take only in
    a wider type (:attr:`ortops.ops.spec.TypeParam.private_types`: int8 ... uint32 to int64),
    and the roles of such inputs whose type is unknown (a subgraph's undeclared type)."""
    widen, unknown = [], []
    for i, (role, param, elem_type) in enumerate(zip(op.inputs, op.input_types, found)):
        table = op.type_param(param)
        if table.private_types is None:
            continue
        if elem_type == 0:
            unknown.append(role)
            continue
        name = dtypes.onnx_name(elem_type)
        if name not in table.types:  # unchecked (another input's type is unknown): ORT refuses it at load
            continue
        wide = op.private_type(role, name)
        if wide != name:
            widen.append((i, dtypes.from_name(wide).onnx))
    return widen, unknown


def _rewrite(node: onnx.NodeProto, op: OpSpec, attrs: dict, types: dict[str, int], names: Names,
             subgraph: bool, casts: list[tuple[onnx.NodeProto, str, int, int]],
             unwidened: list[tuple[onnx.NodeProto, list[str], str]]) -> list[onnx.NodeProto]:
    """The bridge node for ``node``, the Casts carrying float16/bfloat16 around it and those
    widening narrow integer inputs in front of it (each such Cast is appended to ``casts`` as
    ``(node, role, from type, to type)``).

    The node goes to the private op type its variant and carrier choose, or keeps its public one
    where an input to widen has an unknown type (:func:`prepare_model` says when: public
    registrations take :data:`ortops.ops.spec.RAW_INDEX_TYPES`). Such a node, those roles and the
    types taken are appended to ``unwidened``, for :class:`InferenceSession` to explain ORT's
    refusal of another type.
    """
    found = check_input_types(node, op, types, subgraph)
    variant = op.variant(attrs)
    carried = found[0] in CARRIED_ELEM_TYPES
    widen, unknown = _widenings(op, found)
    public = bool(unknown) and variant == op.variant(op.defaults()) and not (carried and op.carrier.rounds)
    if unknown:
        unwidened.append((node, unknown, "int32, int64 or uint64" if public else "int64 or uint64"))
    bridge_op = op.op_type + (variant.suffix if variant else "")
    if carried and op.carrier.rounds:
        bridge_op = f"{bridge_op}_{dtypes.onnx_name(found[0])}"  # rounds the float64 result once, for the Cast back
    fixed = {name for name, _ in variant.attrs} if variant else set()
    bridge_attrs = {k: v for k, v in attrs.items() if k not in fixed}
    inputs, outputs, before, after = list(node.input), list(node.output), [], []
    prefix = f"{node.name or node.output[0]}/ortops_cast"

    def cast_input(i: int, to: int) -> None:
        cast_name = names.fresh(f"{prefix}_in{i}")
        before.append(helper.make_node("Cast", [inputs[i]], [cast_name], to=to, name=cast_name))
        inputs[i] = cast_name
        casts.append((node, op.inputs[i], found[i], to))

    if carried:
        for i in op.carrier.inputs:
            cast_input(i, dtypes.from_name(op.carrier.via).onnx)
        for i, param in enumerate(op.output_types):
            if param != op.input_types[0]:
                continue
            cast_out = names.fresh(f"{prefix}_out{i}")
            after.append(helper.make_node("Cast", [cast_out], [outputs[i]], to=found[0],
                                          name=names.fresh(cast_out + "_cast")))
            outputs[i] = cast_out
    if public:
        rewritten = helper.make_node(op.op_type, inputs, outputs, name=node.name or None, domain=op.domain, **attrs)
        return [*before, rewritten, *after]
    for i, to in widen:
        cast_input(i, to)
    rewritten = helper.make_node(bridge_op, inputs, outputs, name=node.name or None, domain=bridge.BRIDGE_DOMAIN,
                                 **bridge_attrs, **{bridge.NODE_NAME_ATTR: node.name})
    return [*before, rewritten, *after]


def prepare_model(model) -> onnx.ModelProto:
    """Check every ortops node of ``model`` and rewrite it for the PyOp bridge.

    Every graph is covered: the main graph, the bodies of ``If``/``Loop``/``Scan`` at any depth,
    and model-local functions, which are inlined first when one of them holds an ortops node
    (a function's attributes and input types are its caller's; onnx's inliner names an
    inlined node ``<node>__<n>``). What it does, node by node (``ortops.openvino`` and
    ``ortops.ncnn`` domains):

    * validates the attributes (types, required ones, allowed values) and input types, so a
      bad model fails here, naming the node, rather than at run time;
    * writes every attribute out explicitly (the bridge fails session creation on an absent
      one) and moves the node to the private domain ``ortops._bridge``, where TopK's
      ``index_element_type`` picks the registration with int32 or int64 indices and the
      node's name travels along for error messages;
    * carries float16 and bfloat16 around the bridge, which cannot see them (docs/divergences.md: they
      abort the process): ``Cast`` to float32 before TopK and back after (exact: every such
      value is a float32 value, and indices come from the original order); ``Cast`` to
      float64 around ScatterElementsUpdate (accumulation in float64, one rounding back: the
      private ``ScatterElementsUpdate_float16``/``_bfloat16`` round the result to the type's
      precision, so the ``Cast`` back is exact). Cast takes bfloat16 from opset 13: a model
      importing an older default-domain opset gets opset 13 if no other node uses that
      domain, and is refused otherwise;
    * casts TopK's ``k`` and ScatterElementsUpdate's ``indices`` and ``axis`` of type int8,
      int16, int32, uint8, uint16 or uint32 to int64 (exact: the op sees the same values, and
      an error quotes the original one); int64 and uint64 stay as they are (int64 would wrap
      a uint64 index above 2**63 to a negative, valid index). The private op types are
      registered for int64 and uint64 there only: fewer registrations, faster session
      creation. In a subgraph where such an input's type neither is declared nor can be
      inferred, the node keeps its public op type, which takes int32, int64 and uint64 there
      (its errors then do not name the node); where that cannot carry it (TopK with
      ``index_element_type="i64"``, ScatterElementsUpdate on float16/bfloat16 data) it stays
      private (int64 or uint64); ORT refuses the model at load for another type: declare it;
    * puts an ``Identity`` between a bridge node and the outputs of its graph (main graph,
      branch or body) that it produces, so that a pre-allocated output of another shape (a
      reused ``IOBinding``, a ``Scan`` output slot) is ORT's clean error and not an abort in
      the bridge; ORT's ``EliminateIdentity`` optimizer would remove it, and
      :func:`session_options` disables it.

    Names of the nodes and values it adds (``<output>/ortops_bridge_output``,
    ``<node>/ortops_cast_in0``, ...) get a numeric suffix when the model already uses them.

    Parameters
    ----------
    model : onnx.ModelProto, bytes, str or os.PathLike
        The model; it is not modified.

    Returns
    -------
    onnx.ModelProto
        A copy for ``onnxruntime.InferenceSession`` with :func:`session_options`.

    Raises
    ------
    OpError
        For a bad or repeated attribute, a missing input, an input type the op does not take
        (ncnn ArgMax on anything but float32), an unknown op in an ortops domain, or an input
        to cast (float16/bfloat16 data, a narrow integer k, indices or axis) in a model whose
        default-domain opset is too old for the Cast and is used by other nodes.
    """
    return _prepare(load_model(model))


def _prepare(model: onnx.ModelProto, unwidened: list[tuple[onnx.NodeProto, list[str], str]] | None = None,
             info: ValueInfo | None = None) -> onnx.ModelProto:
    """:func:`prepare_model` on a loaded model (modified in place and returned). ``unwidened``
    collects the private nodes with an input of unknown type they take as int64/uint64 only.
    ``info``: the :class:`ValueInfo` of the model ``model`` was lowered from (a lowering keeps
    the names and types of an ortops node's inputs), else inferred here."""
    register_schemas()
    inlined = inline_functions(model)
    if info is None or inlined is not model:  # inlined functions bring values of their own
        info = ValueInfo(inlined)
    model = inlined
    types = info.elem_types()
    names = Names(model)
    others = any(n.domain in DEFAULT_DOMAINS for g in graphs(model.graph) for n in g.node)
    casts: list[tuple[onnx.NodeProto, str, int, int]] = []  # the inputs cast for the bridge
    unwidened = [] if unwidened is None else unwidened
    copied = 0
    # graphs() descends into a graph's nodes after the loop body has replaced them: the
    # subgraphs it visits next are those of the rewritten nodes.
    for graph in graphs(model.graph):
        subgraph = graph is not model.graph
        nodes: list[onnx.NodeProto] = []
        for node in graph.node:
            checked = check_node(node)
            if checked is None:
                nodes.append(node)
                continue
            check_axes(node, *checked, info)
            nodes.extend(_rewrite(node, *checked, types, names, subgraph, casts, unwidened))
        copied += _copy_bridge_outputs(graph, nodes, names)
        del graph.node[:]
        graph.node.extend(nodes)
    check_nodes(model)  # what is left in model-local functions (their ortops nodes were inlined)
    _ensure_cast_opset(model, casts, others)
    if copied and not any(o.domain in DEFAULT_DOMAINS for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("", max(_CAST_OPSET.values())))  # Identity for the copies
    if not any(o.domain == bridge.BRIDGE_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(bridge.BRIDGE_DOMAIN, SCHEMA_VERSION))
    return model


def _copy_bridge_outputs(graph: onnx.GraphProto, nodes: list[onnx.NodeProto], names: Names) -> int:
    """Put an ``Identity`` between each bridge node and the outputs of ``graph`` it produces
    (appended to ``nodes``, the graph's new node list); returns how many it added.

    A graph output may come pre-allocated (``IOBinding``, a ``Scan`` slot allocated with the
    first iteration's shape, an ``If``/``Loop`` or function output inside a pre-allocated one);
    a PyOp output of another shape (another k, an error's empty output) aborts the process
    inside the bridge, behind an Identity it is ORT's clean error (:func:`prepare_model`).
    """
    outputs = {o.name for o in graph.output}
    copies = []
    for node in nodes:
        if node.domain != bridge.BRIDGE_DOMAIN and node.domain not in DOMAINS:  # a PyOp: private, or public (_rewrite)
            continue
        for i, name in enumerate(node.output):
            if name in outputs:
                node.output[i] = names.fresh(f"{name}/ortops_bridge_output")
                copies.append(helper.make_node("Identity", [node.output[i]], [name],
                                               name=names.fresh(f"{name}/ortops_copy")))
    nodes.extend(copies)
    return len(copies)


def _ensure_cast_opset(model: onnx.ModelProto, casts: list[tuple[onnx.NodeProto, str, int, int]],
                       others: bool) -> None:
    """Make the default-domain opset import new enough for the Casts :func:`_rewrite` added
    (``casts``: ``(node, role, from type, to type)``).

    A model of opset < 13 can hold bfloat16 only in our ops' inputs, and ORT rejects Cast-9 on
    bfloat16; Cast takes an integer ``to`` from opset 6. The import is raised only when nothing
    else in the model uses the default domain (raising it could silently change other ops'
    semantics, e.g. Softmax at 13); otherwise the model is refused, naming the node. ``others``:
    the model had default-domain nodes of its own.
    """
    if not casts:
        return
    node, role, elem_type, to = max(casts, key=lambda c: _CAST_OPSET[c[2]])
    needed = _CAST_OPSET[elem_type]
    imports = [o for o in model.opset_import if o.domain in DEFAULT_DOMAINS]
    version = max((o.version for o in imports), default=None)
    if version is not None and version >= needed:
        return
    if others or model.functions:
        raise OpError(
            node.op_type,
            f"input {role!r} has type {dtypes.onnx_name(elem_type)}, which ortops casts to {dtypes.onnx_name(to)} "
            f"for the bridge; Cast needs default-domain opset >= {needed} for it, and the model imports opset {version}",
            node.name, kind="model",
        )
    for o in imports:
        model.opset_import.remove(o)
    model.opset_import.append(helper.make_opsetid("", max(_CAST_OPSET.values())))  # enough for every Cast


def session_options(sess_options=None):
    """``onnxruntime.SessionOptions`` with ortops' ops registered: the raw path.

    Registers the ops with the bridge (idempotent), loads the extensions library into the
    options (once per options object), and sets sequential execution.

    Parameters
    ----------
    sess_options : onnxruntime.SessionOptions, optional
        Options to extend in place; a new object when omitted.

    Returns
    -------
    onnxruntime.SessionOptions

    Notes
    -----
    On the raw path an op error cannot be raised through ORT (docs/divergences.md: any exception in a
    PyOp aborts the process). Instead the op returns **empty outputs** (shape ``(0,)``, the
    declared dtype), and the error, naming the op, node (after :func:`prepare_model`), value
    and valid range, is logged on the ``ortops`` logger at ERROR level. A downstream node
    usually fails on the empty tensor; a graph output simply comes back empty. No output is
    ever a plausible wrong answer. Models straight from :mod:`ortops.builder` run as they
    are with ``index_element_type="i32"``; pass a model through :func:`prepare_model` for
    ``"i64"`` indices, float16/bfloat16 and node names in errors.

    ORT's ``EliminateIdentity`` optimizer is disabled for sessions of these options (session
    config ``optimization.disable_specified_optimizers``, added to what it lists): it would
    remove the ``Identity`` copies that :func:`prepare_model` puts between an op and the
    outputs of its graph, which turn a pre-allocated output of another shape (a reused
    ``IOBinding``, a ``Scan`` output slot) into ORT's clean error instead of an abort. Other
    ``Identity`` nodes are then kept too (ORT runs them without a copy where it can).

    Options that already loaded the onnxruntime-extensions library (the user's own
    ``register_custom_ops_library(onnxruntime_extensions.get_library_path())``) are used as
    they are: loading it twice fails session creation ("Conflicting with a registered
    kernel"). ``SessionOptions`` does not tell which libraries it holds, so a probe session
    of one of the library's own ops is created with the options (about 1 ms when the
    library is absent; profiling, ``optimized_model_filepath`` and logging are switched off
    for the probe and restored). The library takes the PyOps registered when it is loaded:
    options that loaded it before :func:`ortops.register` raise ``ValueError``.

    Called on the main thread, it also wraps the Python handlers of SIGINT (and SIGTERM,
    ... when set) so that an interrupt during an op is delivered again once ``run`` returns
    instead of aborting the process (:mod:`ortops.runtime`, Signals).
    """
    import onnxruntime as ort

    bridge.register()
    options = sess_options if sess_options is not None else ort.SessionOptions()
    with _options_lock:  # one options object from several threads: the library is loaded once
        if _config_entry(options, _CONFIG_KEY) != "1":
            if sess_options is None or not _holds_extensions_library(options):
                options.register_custom_ops_library(bridge.library_path())
            options.add_session_config_entry(_CONFIG_KEY, "1")
            # EliminateIdentity joins the optimizers the options disable (a ";"-separated list; see Notes).
            disabled = [n for n in (_config_entry(options, _DISABLED_OPTIMIZERS_KEY) or "").split(";") if n]
            if "EliminateIdentity" not in disabled:
                options.add_session_config_entry(_DISABLED_OPTIMIZERS_KEY, ";".join([*disabled, "EliminateIdentity"]))
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    runtime.guard_signals()
    return options


def _holds_extensions_library(options) -> bool:
    """Whether ``options`` already loaded the onnxruntime-extensions library.

    Probes: a session of one of the library's own ops (``ai.onnx.contrib::StringUpper``),
    then one of ortops' ops. The library takes the PyOps registered when it is loaded, so
    options that loaded it before :func:`ortops.register` lack ortops' ops, and loading it
    again would conflict: that is refused with a ``ValueError`` saying what to do.
    """
    probe = onnx.parser.parse_model('<ir_version: 8, opset_import: ["" : 13, "ai.onnx.contrib" : 1]>\n'
                                    "ortops_probe (string[1] x) => (string[1] y) { y = ai.onnx.contrib.StringUpper(x) }")
    if not _creates_session(probe.SerializeToString(), options):
        return False
    if not _creates_session(bridge.probe_model(), options):
        raise ValueError("these session options loaded the onnxruntime-extensions library before ortops registered "
                         "its ops, and loading it twice makes session creation fail; call ortops.register() before "
                         "register_custom_ops_library(), or pass options without the library")
    return True


def _creates_session(model: bytes, options) -> bool:
    import onnxruntime as ort

    saved = (options.log_severity_level, options.enable_profiling, options.optimized_model_filepath)
    options.log_severity_level, options.enable_profiling, options.optimized_model_filepath = 4, False, ""
    try:
        ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        return True
    except Exception:  # noqa: BLE001 - "not a registered function/op"
        return False
    finally:
        options.log_severity_level, options.enable_profiling, options.optimized_model_filepath = saved


def _config_entry(options, key: str) -> str | None:
    try:
        return options.get_session_config_entry(key)
    except RuntimeError:  # ORT raises for an absent key
        return None


#: The session's log severity when the options leave it unset: errors only. A failed op's empty
#: outputs differ from the declared shapes, and ORT warns about that (``VerifyOutputSizes``)
#: next to every OpError.
_QUIET = 3
_EXTERNAL_DATA_FOLDER_KEY = "session.model_external_initializers_file_folder_path"
#: The config entries of a session's options that the PyOp re-run's session takes too.
_INHERITED = (_EXTERNAL_DATA_FOLDER_KEY, "session.intra_op.allow_spinning", "session.inter_op.allow_spinning")


def _load(model) -> tuple[onnx.ModelProto, str | None]:
    """The loaded model (a copy), and the folder its external data lives in (None without any).

    A model given as a path is loaded without its external data: the weights stay in their
    files (a model over 2 GiB cannot be one protobuf), ORT reads them from the folder of the
    model file at session creation.
    """
    if not isinstance(model, (str, os.PathLike)):
        return load_model(model), None
    path = os.path.abspath(os.fspath(model))
    loaded = load_model(path, load_external_data=False)
    return loaded, os.path.dirname(path) if any(external_tensors(loaded)) else None


def _identities(files) -> dict[str, tuple | None]:
    """Each of ``files`` with its inode, size and modification time (None: missing)."""
    return {f: _identity(f) for f in files}


def _identity(path: str) -> tuple | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_ino, stat.st_size, stat.st_mtime_ns


def _changed(identities: dict[str, tuple | None]) -> str | None:
    """The first file of ``identities`` (:func:`_identities`) changed, moved or removed since."""
    return next((f for f, seen in identities.items() if _identity(f) != seen), None)


def _parallel(options) -> bool:
    """Whether ORT runs a session with ``options`` on two intra-op threads or more: their thread
    count, or ORT's default (0: one per core) on a machine with more than one (logical) core."""
    threads = options.intra_op_num_threads if options is not None else 0
    return threads > 1 or (threads == 0 and runtime.usable_cpus() > 1)


def _lower_for_session(model: onnx.ModelProto, path: str, info: ValueInfo | None, parallel: bool):
    """``(model, report)``: ``model`` with the nodes ``path`` chooses lowered (guarded), and
    the :class:`ortops.LoweringReport` (None for ``path="pyop"``); ``info``: the model's
    :class:`ValueInfo` (None only for ``path="pyop"``); ``parallel``: the session runs on two
    threads or more (:data:`ortops.ops.compose.PARALLEL`)."""
    if path not in PATHS:
        raise ValueError(f"path={path!r} must be one of {PATHS}")
    if path == "pyop":
        return model, None
    chosen = None
    if path == "auto":
        def chosen(node: onnx.NodeProto) -> bool | str:
            op, attrs = check_node(node)
            where = op.session_path
            if callable(where):
                where = where(attrs, [info.shape(x) for x in node.input], [info.elem_type(x) for x in node.input])
            return where == "lowered" or (
                f"path='auto' keeps {op.op_type} as a PyOp: it measured faster than its lowered composition "
                "(path='lowered' lowers it)")
    # The session re-runs a failed call on the PyOp path (InferenceSession._translated).
    facts = runtime_facts() | {ERRORS_TRANSLATED} | ({PARALLEL} if parallel else set())
    return lower(model, fallback="pyop", ops=chosen, assume=facts, info=info)


class InferenceSession:
    """An ``onnxruntime.InferenceSession`` for models using ortops' ops, with real errors.

    Parameters
    ----------
    model : onnx.ModelProto, bytes, str or os.PathLike
        The model. It goes through :func:`prepare_model` first, so bad attributes and input
        types fail here with :class:`OpError` naming the node. A path is read without its
        external data: weights stay in their files and ORT reads them at session creation
        (models over 2 GiB work; the options keep ORT's
        ``session.model_external_initializers_file_folder_path`` entry pointing at the
        model's folder).
    sess_options : onnxruntime.SessionOptions, optional
        Extended by :func:`session_options` (execution becomes sequential: errors are
        matched to the thread that ran the call) when some node runs as a PyOp; when every
        ortops node is lowered and none is left as a PyOp, they are used as they are (no
        extensions library: the session is created as fast as a plain one, plus the
        lowering). When it leaves ``log_severity_level``
        unset, the session logs errors only: a failed op's empty outputs would make ORT warn
        about output shapes next to every :class:`OpError`. Set it (e.g. to 2) to see ORT's
        warnings.
    providers : sequence of str, optional
        Defaults to ``["CPUExecutionProvider"]``.
    path : {"auto", "pyop", "lowered"}, default "auto"
        How each ortops node runs. ``"lowered"``: as its exact composition of standard ONNX
        ops behind a guard that sends the inputs the composition cannot take exactly to the
        PyOp (:func:`ortops.lower` with ``fallback="pyop"``). ``"pyop"``: the PyOp.
        ``"auto"``: each op on the path measured faster (``OpSpec.session_path``; docs/lowering.md,
        which path a session takes: TopK lowered, ScatterElementsUpdate and ArgMax as PyOps). Results and
        errors are the same on every path.

    Attributes
    ----------
    lowering : ortops.LoweringReport or None
        Which nodes were lowered and which kept as PyOps (and why); None for ``path="pyop"``.
    lowered_nodes : tuple of str
        The names of the lowered nodes.

    Raises
    ------
    OpError
        From :func:`prepare_model`.
    ValueError
        For another ``path``.
    Exception
        onnxruntime's own errors at session creation pass through. When :func:`prepare_model`
        left a subgraph's node private with an input of unknown type that it takes as int64
        or uint64 only, the error gets a note (``add_note``) naming the node and the input.

    Notes
    -----
    ``run`` (and ``run_with_ort_values``, ``run_with_iobinding``) raises :class:`OpError`
    when an op rejects its input, with the op type, node name, bad value and valid range. The
    session stays usable afterwards, and errors are per call and per thread: concurrent
    ``run`` calls on one session never see each other's. Other attributes (``get_inputs``,
    ``get_outputs``, ...) are those of the wrapped session; ``run_async`` runs ops on ORT's
    threads, so its op errors are logged and give empty outputs, as on the raw path.

    A session with lowered nodes keeps a reference to ``model`` (not a copy): when a call fails
    on a lowered node it makes a PyOp-path session of it, once (with this session's providers,
    keyword arguments, thread counts, spinning, log level and external data folder), and re-runs
    the call there for the op's :class:`OpError` (see :data:`ortops.lowering.ERRORS_TRANSLATED`). Given a path, it
    reads the file again then; if that file or its external data changed since, ORT's error is
    raised as it is, with a note saying so. A process forked from the one that made the session
    makes its own ORT session on first use, reading the external data again: if a data file
    changed, was moved or removed since, ``run`` there raises ``RuntimeError`` naming it.
    """

    def __init__(self, model, sess_options=None, providers: Sequence[str] | None = None, *, path: str = "auto",
                 **kwargs):
        import onnxruntime as ort

        loaded, folder = _load(model)  # folder: where its external data lives, or None
        given = dict(kwargs)  # the caller's, for the PyOp re-run's session
        register_schemas()
        # onnx's shape inference, once: the lowering and prepare_model share it
        info = ValueInfo(loaded) if path != "pyop" else None
        lowered, self.lowering = _lower_for_session(loaded, path, info, _parallel(sess_options))
        unwidened: list[tuple[onnx.NodeProto, list[str], str]] = []
        # Every ortops node lowered: nothing for prepare_model to check or rewrite.
        ours = any(n.domain in DOMAINS for body in model_graphs(lowered) for n in body.node)
        self.model = _prepare(lowered, unwidened, info) if ours else lowered
        # For a call that fails on a lowered node: the PyOp path's session, made when needed
        # (from a path made absolute now: the working directory may change meanwhile).
        source = os.path.abspath(model) if isinstance(model, (str, os.PathLike)) else model
        self._source = source if self.lowered_nodes else None
        self._model_file = _identities([source] if self._source is not None and isinstance(source, str) else ())
        self._pyop, self._pyop_lock = None, runtime.Lock()
        # Nodes of domains ORT does not know itself (ortops' PyOps, others' custom ops) need the
        # extensions library and the bridge's error capture; without them, a plain session.
        known = {*_ORT_DOMAINS, *(f.domain for f in self.model.functions)}  # calls of local functions
        self._bridged = any(n.domain not in known for body in model_graphs(self.model) for n in body.node)
        if self._bridged:
            kwargs["disabled_optimizers"] = [*kwargs.get("disabled_optimizers", ()), "EliminateIdentity"]
            options = session_options(sess_options)
        else:  # every ortops node lowered, none kept as PyOp: a plain session, no extensions library
            options = sess_options if sess_options is not None else ort.SessionOptions()
        if folder is not None and _config_entry(options, _EXTERNAL_DATA_FOLDER_KEY) != folder:
            options.add_session_config_entry(_EXTERNAL_DATA_FOLDER_KEY, folder)  # ORT reads the weights there
        # Files read again: the weights by a forked child's ORT session, the model too by the PyOp
        # re-run (the weights' folder: the model file's, or the one the options name for bytes).
        folder = folder or _config_entry(options, _EXTERNAL_DATA_FOLDER_KEY)
        self._weights = _identities(dict.fromkeys(os.path.join(folder, ExternalDataInfo(t).location)
                                                  for t in external_tensors(loaded)) if folder else ())
        unset = options.log_severity_level < 0  # ORT's default logger: warnings included
        # The run options of a call without its own when ORT's log was left to ortops (errors
        # only): a check left to a standard node would log its failure before the OpError.
        self._quiet = None
        if unset and self._source is not None:
            self._quiet = ort.RunOptions()
            self._quiet.log_severity_level = 4
        # What a forked child needs to make its own ORT session (see ``_session``).
        self._recipe = (options, list(providers) if providers else ["CPUExecutionProvider"], kwargs, unset, given)
        try:
            self._ort, self._pid = self._create(), os.getpid()
        except Exception as exc:
            for node, roles, taken in unwidened:
                exc.add_note(f"ortops: the type of input(s) {roles} of {node.op_type} node {node.name!r} cannot be "
                             "inferred in its subgraph, and with its attributes and data type ortops takes them there "
                             f"as {taken} only: declare their type (value_info) or Cast them to int64")
            raise

    def _create(self):
        """The ORT session of :attr:`model`."""
        import onnxruntime as ort

        options, providers, kwargs, *_ = self._recipe
        with self._logging():
            return ort.InferenceSession(self.model.SerializeToString(), options, providers=providers, **kwargs)

    @contextlib.contextmanager
    def _logging(self):
        """While ORT makes the session: when the caller left ORT's log level unset, errors only
        (the options are handed back unchanged)."""
        options, *_, quiet, _ = self._recipe
        if quiet:
            options.log_severity_level = _QUIET
        try:
            yield
        finally:
            if quiet:
                options.log_severity_level = -1

    def set_providers(self, providers=None, provider_options=None) -> None:
        """``onnxruntime.InferenceSession.set_providers``: the ORT session is made again (logging
        as when it was first made), and so is the PyOp re-run's, with these providers."""
        with self._logging():
            self._session.set_providers(providers, provider_options)
        options, _, kwargs, quiet, given = self._recipe
        chosen = self._session.get_providers()  # what ORT took, with the options it took for each
        taken = [self._session.get_provider_options().get(name, {}) for name in chosen]
        kwargs, given = ({**k, "provider_options": taken} for k in (kwargs, given))
        with self._pyop_lock:
            self._recipe, self._pyop = (options, chosen, kwargs, quiet, given), None

    def _pyop_session(self) -> InferenceSession:
        """The PyOp path's session of the source, made once, when a call first needs it: with
        this session's providers and keyword arguments, and new options with the thread counts,
        log level and :data:`_INHERITED` entries of this session's (the caller's options are not
        given the extensions library)."""
        import onnxruntime as ort

        with self._pyop_lock:
            if self._pyop is None:
                options, providers, _, _, given = self._recipe
                inherited = ort.SessionOptions()
                for name in ("intra_op_num_threads", "inter_op_num_threads", "use_per_session_threads",
                             "log_severity_level"):
                    setattr(inherited, name, getattr(options, name))
                for key in _INHERITED:
                    if (value := _config_entry(options, key)) is not None:
                        inherited.add_session_config_entry(key, value)
                self._pyop = InferenceSession(self._source, inherited, providers, path="pyop", **given)
            return self._pyop

    @property
    def _session(self):
        """The wrapped ORT session. In a child forked from the process that made it, a new one,
        made on first use there: the parent's may hold a lock taken by a thread that was inside
        its ``run`` when the process forked, which no thread of the child would ever release.
        The parent's session stays referenced, never destroyed (``ortops.runtime``, Fork)."""
        if self._pid != os.getpid():
            runtime.abandon(self._ort)
            if changed := _changed(self._weights):
                raise RuntimeError(f"ortops: {changed} changed after this InferenceSession was made, in process "
                                   f"{self._pid}: this forked process would make its ORT session from the file as "
                                   "it is now; make the InferenceSession again here")
            self._ort, self._pid = self._create(), os.getpid()
        return self._ort

    @property
    def lowered_nodes(self) -> tuple[str, ...]:
        return tuple(n.name for n in self.lowering.lowered) if self.lowering is not None else ()

    def run(self, output_names, input_feed, run_options=None) -> list:
        """Run like ``onnxruntime.InferenceSession.run``; raise :class:`OpError` on an op error."""
        return self._translated("run", (output_names, input_feed), run_options)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None) -> list:
        """``run`` with ``onnxruntime.OrtValue`` inputs and outputs (e.g. bfloat16); OpError as ``run``."""
        return self._translated("run_with_ort_values", (output_names, input_dict_ort_values), run_options)

    def run_with_iobinding(self, iobinding, run_options=None) -> None:
        """``run`` with an ``onnxruntime.IOBinding``; OpError as ``run``. A binding from this
        session's :meth:`io_binding` remembers its inputs in CPU memory (NumPy arrays,
        OrtValues, CPU pointers), so that a call that fails on a lowered node can be re-run on
        the PyOp path (inputs bound on another device cannot be: then ORT's error, which names
        the failing node)."""
        return self._translated("run_with_iobinding", (iobinding,), run_options)

    def io_binding(self):
        """An ``onnxruntime.IOBinding`` of this session that remembers its inputs in CPU memory
        (see :meth:`run_with_iobinding`)."""
        return runtime.cached("session.binding_class", None, _binding_class)(self._session)

    def _translated(self, method: str, args: tuple, run_options):
        """``method`` of the wrapped session on ``(*args, run_options)`` (:meth:`_captured`). When
        ORT fails and some node was lowered, the lowering may have left a check to a standard
        node (:data:`ortops.lowering.ERRORS_TRANSLATED`): the call is then re-run on the PyOp
        path (an IOBinding's as ``run_with_ort_values`` of its remembered inputs), and its
        :class:`OpError`, if it raises one, is raised instead of ORT's error (with no context:
        like every OpError of a session, it holds no reference to the inputs); otherwise ORT's
        error is raised as it is."""
        run = getattr(self._session, method)
        if not self._bridged and self._source is None:
            return run(*args, run_options)  # no PyOp, nothing lowered: ORT's own call, nothing to capture
        if run_options is None and self._quiet is not None:
            run_options = self._quiet  # the failing check is expected: not on stderr too
        failure = None
        try:
            return self._captured(run, *args, run_options) if self._bridged else run(*args, run_options)
        except OpError:
            raise
        except Exception as exc:  # noqa: BLE001 - re-raised below unless the PyOp path names an OpError
            if not _from_ort(exc):  # e.g. a signal handler's: raised as it is, nothing re-run
                raise
            if method == "run_with_iobinding":  # re-run from the binding's remembered inputs
                feed = getattr(args[0], "replayable", lambda: None)()  # None: bound on another device
                method, args = "run_with_ort_values", (None, feed, None)
            else:
                feed, args = args[1], (*args, run_options)
            if self._source is None or feed is None:
                raise
            if self._pyop is None and (changed := _changed({**self._model_file, **self._weights})):
                exc.add_note(f"ortops: not re-run on the PyOp path for an OpError: {changed} changed after "
                             "the session was made")
                raise
            failure = exc.with_traceback(None)
        try:
            self._captured(getattr(self._pyop_session(), method), *args)
            error = None  # the PyOp path raises no OpError
        except OpError as exc:
            error = exc.with_traceback(None)
        except Exception:  # noqa: BLE001 - the PyOp path fails too: ORT's first error stands
            error = None
        args = feed = None
        try:
            # Raised outside the handler: the error keeps no context, no traceback into ORT's
            # call, hence no reference to the inputs.
            raise error if error is not None else failure
        finally:
            del error, failure

    @staticmethod
    def _captured(run, *args):
        """``run(*args)``; an op's error as OpError, an interrupt as itself (capture_errors).

        A raised error must not keep the inputs alive: this frame drops ``args`` first, and
        ORT's exception (the cause) loses its traceback, whose frames hold the feed. The
        locals that point at the error are deleted, so no reference cycle waits for the
        garbage collector.
        """
        failure = None
        with bridge.capture_errors(first_only=True) as errors:
            try:
                outputs = run(*args)
            except Exception as exc:  # noqa: BLE001 - re-raised below, after our own errors
                failure = exc.with_traceback(None) if errors else exc
            finally:
                args = None
        try:
            if errors:
                raise errors[0] from failure
            if failure is not None:
                raise failure
            return outputs
        finally:
            del errors, failure

    def __getattr__(self, name):
        if name.startswith("_"):  # not made yet (a failed __init__): no recursion through _session
            raise AttributeError(name)
        return getattr(self._session, name)


def _from_ort(exc: Exception) -> bool:
    """Whether ``exc`` is ONNX Runtime's own failure: an exception of its C++ bindings, or the
    ``RuntimeError`` its Python wrapper raises for ``run_with_iobinding``."""
    return type(exc).__module__.startswith("onnxruntime") or type(exc) is RuntimeError


def _binding_class():
    import onnxruntime as ort

    class Binding(ort.IOBinding):
        """An ``onnxruntime.IOBinding`` that remembers the inputs bound in CPU memory (NumPy
        arrays, OrtValues, pointers; by name), so that its call can be replayed on another session."""

        def __init__(self, session):
            super().__init__(session)
            self._replay: dict | None = {}

        def bind_cpu_input(self, name, arr_on_cpu):
            super().bind_cpu_input(name, arr_on_cpu)
            if self._replay is not None:
                self._replay[name] = ort.OrtValue.ortvalue_from_numpy(np.ascontiguousarray(arr_on_cpu))

        def bind_ortvalue_input(self, name, ortvalue):
            super().bind_ortvalue_input(name, ortvalue)
            if self._replay is not None:
                self._replay[name] = ortvalue

        def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
            super().bind_input(name, device_type, device_id, element_type, shape, buffer_ptr)
            if self._replay is None:
                return
            if device_type != "cpu":  # memory of another device: cannot be replayed here
                self._replay = None
                return
            # The caller's buffer, seen in place: ORT reads it there too, so it lives through the run.
            dtype = np.dtype(element_type)
            size = dtype.itemsize * int(np.prod(shape, dtype=np.int64))
            buffer = (ctypes.c_char * size).from_address(buffer_ptr)
            self._replay[name] = ort.OrtValue.ortvalue_from_numpy(np.frombuffer(buffer, dtype).reshape(shape))

        def clear_binding_inputs(self):
            super().clear_binding_inputs()
            self._replay = {}

        def replayable(self) -> dict | None:
            """The bound inputs as OrtValues by name, or None when some cannot be replayed."""
            return dict(self._replay) if self._replay is not None else None

    return Binding
