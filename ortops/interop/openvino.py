"""One .onnx file, two runtimes: ortops' nodes in OpenVINO.

Conversion extensions for OpenVINO's ONNX frontend (``ConversionExtension``, one per op of
``ortops.ops.OPS``) map each ortops node onto native OpenVINO operations when the model is read:
TopK onto ``opset11.topk``, ScatterElementsUpdate onto ``opset12.scatter_elements_update``,
ncnn ArgMax onto an exact composition (the conversions, and OpenVINO's measured divergences:
docs/api.md). What OpenVINO answers is OpenVINO's answer: it computes int64, uint32 and uint64
in int32 and float64 in float32, and writes out of bounds for a ScatterElementsUpdate index
below -d, so check inputs with ortops first.

Usage::

    from ortops.interop import openvino as ov_interop

    outputs = ov_interop.run("model.onnx", {"data": x, "k": np.array([5])})
    compiled = ov_interop.compile_model(model_proto)   # cached by the model's bytes
    core = ov_interop.core()                           # an openvino.Core that reads our nodes

Importing this module does not import OpenVINO; the first call that needs it does, and
raises ModuleNotFoundError naming the extra (``pip install 'ortops[openvino]'``) when it is
missing.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import sys
import threading
from functools import partial
from typing import Any, Mapping, Sequence

import numpy as np
import onnx

from .. import runtime
from ..errors import OpError
from ..graph import check_node, graphs, load_model
from ..ops import DOMAINS, OPS, find_op
from ..ops.spec import OpSpec

__all__ = [
    "INSTALL_HINT",
    "DEFAULT_CONFIG",
    "PRECISIONS",
    "precision_config",
    "require_openvino",
    "WORK_TYPES",
    "to_work",
    "attributes",
    "extensions",
    "add_extensions",
    "core",
    "check_model",
    "read_model",
    "compile_model",
    "run",
    "output_names",
    "clear_cache",
    "roomy_signal_stack",
]

#: What to do when OpenVINO is missing.
INSTALL_HINT = "pip install 'ortops[openvino]'"
#: Compiled models kept, least recently used dropped first (each holds CPU plugin threads: docs/api.md).
_CACHE_SIZE = 32
_CORE_CACHE = "openvino.core"
_core_pid: int | None = None  # the process that made a Core (OpenVINO does not survive fork)
_COMPILED_CACHE = "openvino.compiled"
#: The OpenVINO properties :func:`compile_model` and :func:`run` use unless given others: float32
#: inference (the CPU plugin otherwise picks bfloat16 on CPUs that have it). ``config={}``: the
#: plugin's own choice.
DEFAULT_CONFIG: Mapping[str, str] = {"INFERENCE_PRECISION_HINT": "f32"}
#: The precisions ``ortops compare`` and the Polygraphy plugin offer: values of
#: ``INFERENCE_PRECISION_HINT``, or ``"default"`` for the device plugin's own choice.
PRECISIONS = ("f32", "bf16", "f16", "default")


def precision_config(precision: str) -> dict[str, str]:
    """The OpenVINO properties for one of :data:`PRECISIONS` (``{}`` for ``"default"``)."""
    return {} if precision == "default" else {"INFERENCE_PRECISION_HINT": precision}


def require_openvino():
    """The ``openvino`` module.

    Raises
    ------
    ModuleNotFoundError
        When OpenVINO is not installed; the message names the ``openvino`` extra.
    """
    try:
        import openvino
    except ImportError as exc:
        raise ModuleNotFoundError(
            f"running ortops models in OpenVINO needs the openvino package: {INSTALL_HINT} ({exc})",
            name="openvino",
        ) from exc
    return openvino


# --- converters: one NodeContext -> the outputs of native OpenVINO operations ------------------


def attributes(ctx, opdef: OpSpec) -> dict[str, Any]:
    """The node's attributes, validated and with the spec's defaults (OpError if invalid; OpenVINO
    adds the node's name to its message)."""
    raw = {a.name: ctx.get_attribute(a.name) for a in opdef.attrs if ctx.has_attribute(a.name)}
    return opdef.parse_attributes(raw)


def extensions() -> list:
    """New ``openvino.frontend.onnx.ConversionExtension`` objects, one per ortops op.

    Raises
    ------
    ModuleNotFoundError
        When OpenVINO is not installed.
    """
    require_openvino()
    from openvino.frontend.onnx import ConversionExtension

    return [ConversionExtension(op.op_type, op.domain, partial(_convert, op, op.openvino.resolve())) for op in OPS]


def _convert(op: OpSpec, convert, ctx) -> list:
    return convert(ctx, attributes(ctx, op))


def add_extensions(ov_core) -> Any:
    """Add ortops' conversion extensions to an existing ``openvino.Core``; returns it.

    Call before ``read_model``. Adding them twice to one Core is harmless but pointless.
    """
    for extension in extensions():
        ov_core.add_extension(extension)
    return ov_core


def core():
    """A new ``openvino.Core`` that can ``read_model`` ONNX files with ortops' nodes.

    Note that ``Core.read_model`` does not run :func:`check_model`: an invalid ortops node
    then fails inside OpenVINO with a RuntimeError that names the node and carries our
    message. :func:`read_model` checks first and raises :class:`ortops.OpError`.

    Raises
    ------
    ModuleNotFoundError
        When OpenVINO is not installed.
    RuntimeError
        In a child forked (``os.fork``, multiprocessing's "fork") from a process that had made
        a Core: OpenVINO's CPU plugin does not survive ``fork`` (its TBB thread pool is gone in
        the child, and compiling a model there can hang); start such a child with "spawn" or
        "forkserver".
    """
    global _core_pid
    if _core_pid not in (None, os.getpid()):
        raise RuntimeError(
            f"ortops.interop.openvino: OpenVINO cannot run in this process, forked from process {_core_pid} "
            "that used it: OpenVINO's CPU plugin does not survive fork (its TBB thread pool is gone here, and "
            "compiling a model can hang). Start the child with multiprocessing's 'spawn' or 'forkserver'.")
    openvino = require_openvino()
    made = add_extensions(openvino.Core())
    _core_pid = os.getpid()
    return made


def _shared_core():
    """The process's one Core with the extensions (a fresh one in a forked child)."""
    return runtime.cached(_CORE_CACHE, "core", core)


# --- reading and checking models ----------------------------------------------------------------


def check_model(model: onnx.ModelProto) -> None:
    """Check that every ortops node of ``model`` has a conversion to OpenVINO.

    Validates each node in ortops' domains (including subgraphs) with the same check as
    :func:`ortops.prepare_model` (:func:`ortops.graph.check_node`): a known op, the right
    number of inputs and outputs, attributes of the right ONNX type with allowed values,
    none repeated.

    Raises
    ------
    OpError
        Naming the node, for an op without a conversion or a bad attribute.
    """
    supported = ", ".join(op.qualified_name for op in OPS)
    for graph in graphs(model.graph):
        for node in graph.node:
            if node.domain in DOMAINS and find_op(node.domain, node.op_type) is None:
                raise OpError(node.op_type, f"{node.domain}::{node.op_type} has no OpenVINO conversion; "
                              f"supported: {supported}", node.name, kind="model")
            check_node(node)


def read_model(model, *, ov_core=None):
    """An ``openvino.Model`` for an ONNX model with ortops' nodes.

    Parameters
    ----------
    model : onnx.ModelProto, bytes, str or os.PathLike
        The ONNX model (the same file ortops runs in ONNX Runtime).
    ov_core : openvino.Core, optional
        A Core that already has the extensions (:func:`core`, :func:`add_extensions`);
        a shared one by default.

    Returns
    -------
    openvino.Model

    Raises
    ------
    OpError
        For an ortops node without a conversion or with a bad attribute (names the node).
    ModuleNotFoundError
        When OpenVINO is not installed.
    """
    check_model(load_model(model, copy=False, load_external_data=False))
    return (ov_core or _shared_core()).read_model(_source(model))


def _source(model) -> bytes | str:
    """What OpenVINO's read_model takes for an ONNX model: its bytes, or its path (a path keeps
    external data resolvable)."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    return model.SerializeToString() if isinstance(model, onnx.ModelProto) else bytes(model)


def _cache_key(model) -> tuple | None:
    if isinstance(model, (str, os.PathLike)):
        stat = os.stat(os.path.realpath(model))
        return ("path", os.path.realpath(model), stat.st_mtime_ns, stat.st_size)
    if isinstance(model, (onnx.ModelProto, bytes, bytearray)):
        return ("bytes", hashlib.sha256(_source(model)).digest())
    return None  # an openvino.Model: compiled every time


class _SignalStack(ctypes.Structure):  # stack_t
    _fields_ = [("ss_sp", ctypes.c_void_p), ("ss_flags", ctypes.c_int), ("ss_size", ctypes.c_size_t)]


#: The least alternate signal stack a thread keeps after OpenVINO compiled a model on it.
SIGNAL_STACK_BYTES = 1 << 16
_signal_stacks = threading.local()


def roomy_signal_stack() -> None:
    """Give the calling thread an alternate signal stack of :data:`SIGNAL_STACK_BYTES` where a
    smaller one is installed (Linux; elsewhere nothing).

    OpenVINO 2026.4's CPU plugin installs an 11,568-byte alternate signal stack on the thread
    that compiles a model. Python's signal handler runs there, and the dynamic linker's lazy
    binding inside it (which saves the CPU's extended state) overflows it: a Ctrl-C then
    crashed the process with a segmentation fault. Called after every compilation ortops makes;
    the new stack lives as long as the thread.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    current = _SignalStack()
    if libc.sigaltstack(None, ctypes.byref(current)) != 0 or current.ss_flags or \
            current.ss_size >= SIGNAL_STACK_BYTES:
        return  # none (SS_DISABLE), in use (SS_ONSTACK), or large enough
    _signal_stacks.buffer = ctypes.create_string_buffer(SIGNAL_STACK_BYTES)
    libc.sigaltstack(ctypes.byref(_SignalStack(ctypes.addressof(_signal_stacks.buffer), 0, SIGNAL_STACK_BYTES)),
                     None)


def compile_model(model, device: str = "CPU", config: Mapping[str, Any] | None = None):
    """An ``openvino.CompiledModel`` for ``model`` on ``device``, cached.

    Parameters
    ----------
    model : onnx.ModelProto, bytes, str, os.PathLike or openvino.Model
        ONNX models are read with :func:`read_model`. The cache (the 32 most recent) is keyed
        by the model's bytes (a path: by its real path, modification time and size), device
        and config; an ``openvino.Model`` is compiled anew on every call.
    device : str, default "CPU"
    config : mapping, optional
        OpenVINO properties for ``compile_model``; None: :data:`DEFAULT_CONFIG` (float32
        inference), ``{}``: the plugin's defaults (bfloat16 on CPUs that have it).

    Raises
    ------
    OpError, ModuleNotFoundError
        As :func:`read_model`.
    """
    config = dict(DEFAULT_CONFIG if config is None else config)
    key = _cache_key(model)
    if key is None:
        compiled = _shared_core().compile_model(model, device, config)
    else:
        key = (*key, device, tuple(sorted((str(k), str(v)) for k, v in config.items())))
        compiled = runtime.cached(_COMPILED_CACHE, key, lambda: _shared_core().compile_model(read_model(model), device,
                                                                                               config), limit=_CACHE_SIZE)
    roomy_signal_stack()
    return compiled


def run(model, feed: Mapping[str, np.ndarray], *, device: str = "CPU",
        config: Mapping[str, Any] | None = None) -> list[np.ndarray]:
    """Run ``model`` in OpenVINO on ``feed`` and return its outputs in the model's order.

    Parameters
    ----------
    model : onnx.ModelProto, bytes, str, os.PathLike or openvino.Model
        As for :func:`compile_model` (compiled models are cached).
    feed : dict of str to numpy.ndarray
        Input name -> array.
    device : str, default "CPU"
    config : mapping, optional
        OpenVINO properties; None: :data:`DEFAULT_CONFIG` (``INFERENCE_PRECISION_HINT=f32``),
        ``{}``: the plugin's defaults.

    Returns
    -------
    list of numpy.ndarray
        Fresh arrays (not views of OpenVINO's buffers). Each call uses its own infer request,
        so concurrent calls are safe.

    Notes
    -----
    The CPU plugin computes float64 in float32 (docs/divergences.md); outputs keep the declared type.
    """
    compiled = compile_model(model, device, config)
    request = compiled.create_infer_request()
    request.infer({name: np.asarray(value) for name, value in feed.items()})
    return [np.array(request.get_output_tensor(i).data, copy=True) for i in range(len(compiled.outputs))]


def clear_cache() -> None:
    """Forget the compiled models and the shared Core."""
    runtime.clear(_COMPILED_CACHE)
    runtime.clear(_CORE_CACHE)


def output_names(model) -> Sequence[str]:
    """Names of the outputs of ``model`` as OpenVINO sees them (same order as :func:`run`)."""
    return [o.get_any_name() for o in compile_model(model).outputs]


#: The types OpenVINO's CPU plugin computes in a narrower type: data type -> (the type it computes
#: in, the divergence topic that says so).
WORK_TYPES = {np.dtype(np.float64): (np.dtype(np.float32), "float64-precision"),
              np.dtype(np.uint64): (np.dtype(np.int32), "uint64"),
              np.dtype(np.int64): (np.dtype(np.int32), "int32-narrowing"),
              np.dtype(np.uint32): (np.dtype(np.int32), "int32-narrowing")}


def to_work(array: np.ndarray, work) -> np.ndarray:
    """``array`` converted to ``work`` as OpenVINO's CPU plugin converts its inputs: integers
    wrap to their low bits; float64 -> float32 saturates (+-inf and values beyond float32's
    range become +-3.4028235e38; measured), NaN stays NaN."""
    work = np.dtype(work)
    with np.errstate(all="ignore"):
        if array.dtype.kind == "f" and work.kind == "f" and work.itemsize < array.dtype.itemsize:
            big = np.finfo(work).max
            return np.where(np.isnan(array), array, np.clip(array, -big, big)).astype(work)
        return array.astype(work)
