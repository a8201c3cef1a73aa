"""The PyOp bridge: every registration with onnxruntime-extensions and the bridge's hook.

Its global state is the registrations and the hook (the rest of ortops' process-wide state
lives in :mod:`ortops.runtime`). Nothing registers on import; call
:func:`register` (``ortops.InferenceSession`` and the CLI do) and calling it twice, or from
two threads at once, is safe.

How an op call travels
----------------------
ORT calls the extensions library, which calls the one Python *hook* installed with
``PyCustomOpDef.install_hooker``. The default hook lets exceptions escape (docs/divergences.md: that
aborts the process) and converts outputs with ``tolist()``. Ours, :func:`_hook`:

1. finds the kernel registered under the call's id and parses its attributes (cached);
2. runs it inside ``try``: *no exception ever leaves the hook*;
3. checks each output has the registration's declared dtype and makes it C-contiguous;
4. on any error returns **empty outputs** (shape ``(0,)``, declared dtype) and hands the
   error to the calling thread: if that thread is inside :func:`capture_errors`
   (``ortops.InferenceSession.run`` is), the error is appended to its list and re-raised
   there as :class:`ortops.OpError`; otherwise it is logged on the ``ortops`` logger.

Errors are per call and per thread: ORT runs a kernel on the thread that called ``run``
when the session is sequential, which ``ortops`` session options enforce.

Registrations
-------------
Each op is registered once per combination of input types, with declared output types:

* ``ortops.openvino::TopK`` (T, K) -> (T, int32): the public name, for the raw path.
  It can only honour ``index_element_type="i32"`` because an attribute cannot choose an
  output type in the bridge (docs/divergences.md). Without :func:`ortops.prepare_model`, ORT
  refuses a model that declares an ``"i64"`` node's indices as int64 when the session is
  created; where their type is not declared, each run gives empty outputs and a logged error
  (docs/reliability.md).
* ``ortops.openvino::ScatterElementsUpdate`` (T, T_IND, T, T_AXIS) -> T.
* ``ortops.ncnn::ArgMax`` (float) -> float.
* Private twins in domain ``ortops._bridge`` that :func:`ortops.prepare_model` rewrites nodes
  to: ``TopK_i32``, ``TopK_i64``, ``ScatterElementsUpdate`` and ``ArgMax``, each with an extra
  string attribute ``node_name`` so that errors can name the node; and
  ``ScatterElementsUpdate_float16``/``_bfloat16`` for float16/bfloat16 data carried as float64:
  they round the float64 result once to the carried type's precision, so that the ``Cast``
  back is exact (ORT casts float64 to float16/bfloat16 through float32: two roundings).
  The twins take TopK's ``k`` and ScatterElementsUpdate's ``indices`` and ``axis`` as int64
  or uint64 only (``TypeParam.private_types``): ``prepare_model`` casts int8, int16, int32,
  uint8, uint16 and uint32 to int64 in front of them (exact, so values and error messages
  stay those of the original). uint64 stays uint64: int64 would wrap an index above 2**63 to
  a negative, valid one. This keeps the twins at about a tenth of the public registrations;
  ORT spends about 10 us per registration at every session creation.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from . import dtypes, runtime
from .errors import OpError, truncated
from .ops import OPS
from .ops.spec import OpSpec

__all__ = ["register", "library_path", "capture_errors", "BRIDGE_DOMAIN", "BridgeOp", "bridge_ops"]

logger = logging.getLogger("ortops")

#: Domain of the private op types that :func:`ortops.prepare_model` rewrites nodes to.
BRIDGE_DOMAIN = "ortops._bridge"
#: The extra attribute of the private op types, holding the original node's name.
NODE_NAME_ATTR = "node_name"


@dataclass(frozen=True)
class BridgeOp:
    """One registration family: an op type and the input/output types it is registered for."""

    opdef: OpSpec
    domain: str
    op_type: str
    signatures: tuple[tuple[tuple[dtypes.ElementType, ...], tuple[dtypes.ElementType, ...]], ...]
    fixed_attrs: tuple[tuple[str, str], ...] = ()  # attributes implied by the op type
    carries_node_name: bool = False
    rounds_to: str | None = None  # float16/bfloat16: float64 outputs are rounded to its precision
    requires: tuple[tuple[str, Any], ...] = ()  # attribute values the declared output types can carry

    @property
    def qualified_name(self) -> str:
        return f"{self.domain}::{self.op_type}"


def _signatures(op: OpSpec, narrowed_by: str, restrict: Sequence[tuple[str, tuple[str, ...]]] = ()):
    """Every (input types, output types) the bridge can carry for ``op``: the product of its
    type parameters' carriable types (in the order the inputs first use them), each output
    typed by its input's parameter or by a parameter restricted to one type. ``narrowed_by``:
    the :class:`~ortops.ops.spec.TypeParam` field narrowing these registrations (``"raw_types"``
    or ``"private_types"``); ``restrict`` (a variant's types) narrows further."""
    restricted = {t.name: getattr(t, narrowed_by) for t in op.type_params if getattr(t, narrowed_by) is not None}
    restricted.update(restrict)
    table = {t.name: [dtypes.from_name(n) for n in restricted.get(t.name, t.types)] for t in op.type_params}
    params = list(dict.fromkeys(op.input_types))
    choices = [[t for t in table[p] if t.bridge is not None] for p in params]
    signatures = []
    for combo in itertools.product(*choices):
        chosen = dict(zip(params, combo))
        outputs = []
        for p in op.output_types:
            if p not in chosen and len(table[p]) != 1:
                raise ValueError(f"{op.op_type}: output type {p} is fixed neither by the inputs nor by a variant")
            outputs.append(chosen.get(p) or table[p][0])
        signatures.append((tuple(chosen[p] for p in op.input_types), tuple(outputs)))
    return tuple(signatures)


#: (significand bits, frexp exponent of the smallest normal) of the types carried as float64.
_PRECISION = {"float16": (11, -13), "bfloat16": (8, -125)}


def round_to_precision(x: np.ndarray, carried: str) -> np.ndarray:
    """float64 ``x`` rounded once, half to even, to the values of ``carried`` (float16 or
    bfloat16), subnormals included. Beyond the largest finite value the result is a power of
    two that a later cast turns into +-inf (+-inf itself next to the float64 maximum); NaN,
    +-inf and signed zeros pass unchanged."""
    bits, min_exp = _PRECISION[carried]
    _, exp = np.frexp(x)
    exp = np.maximum(exp, min_exp)  # below the normal range the spacing stays fixed
    # Rounding up next to the float64 maximum gives 2**1024: +-inf, as the cast would; not a
    # RuntimeWarning (with warnings as errors, that would turn a valid input into an error).
    with np.errstate(over="ignore"):
        return np.ldexp(np.round(np.ldexp(x, bits - exp)), exp - bits)


def bridge_ops() -> tuple[BridgeOp, ...]:
    """Every registration family ortops makes, public and private, from :data:`ortops.ops.OPS`.

    Per op: the public ``domain::op_type`` for the raw path (typed by the variant that the
    attributes' defaults choose), with every type of the op's type table; in
    :data:`BRIDGE_DOMAIN` one twin per variant (or one twin), carrying the node's name; and
    with a rounding :class:`~ortops.ops.spec.Carrier`, one twin per carried type, computed in
    the carrier type and rounded to the carried one. The twins take the type parameters with
    :attr:`~ortops.ops.spec.TypeParam.private_types` as those types only (TopK's ``k``,
    ScatterElementsUpdate's ``indices`` and ``axis``: int64 and uint64; :func:`ortops.prepare_model`
    casts the narrower integer types to int64).
    """
    public, private, carried = [], [], []
    for op in OPS:
        default = op.variant(op.defaults())
        if any(t.name in op.output_types and (t.raw_types, t.private_types) != (None, None) for t in op.type_params):
            raise ValueError(f"{op.op_type}: raw_types or private_types narrow a type parameter that an output uses")
        public.append(BridgeOp(op, op.domain, op.op_type,
                               _signatures(op, "raw_types", default.types if default else ()),
                               requires=default.attrs if default else ()))
        for variant in op.variants or (None,):
            private.append(BridgeOp(op, BRIDGE_DOMAIN, op.op_type + (variant.suffix if variant else ""),
                                    _signatures(op, "private_types", variant.types if variant else ()),
                                    variant.attrs if variant else (), True))
        if op.carrier is not None and op.carrier.rounds:
            via = ((op.input_types[0], (op.carrier.via,)),)
            carried += [BridgeOp(op, BRIDGE_DOMAIN, f"{op.op_type}_{name}", _signatures(op, "private_types", via), (),
                                 True, name) for name in _PRECISION]
    return (*public, *private, *carried)


class _Kernel:
    """What the hook calls for one registration: attribute parsing, the compute, dtype checks."""

    def __init__(self, op: BridgeOp, compute: Callable, output_dtypes: Sequence[np.dtype]):
        self.op = op
        self.compute = compute
        self.output_dtypes = tuple(output_dtypes)
        self._parsed = functools.lru_cache(maxsize=256)(self._parse)

    def empty_outputs(self) -> tuple[np.ndarray, ...]:
        return tuple(np.empty((0,), dtype=d) for d in self.output_dtypes)

    def _parse(self, items: tuple) -> tuple[dict, str | None]:
        """The parsed attributes and the node's name from the bridge's raw ``(name, value)`` items."""
        raw = dict(items)
        node_name = raw.pop(NODE_NAME_ATTR, None) if self.op.carries_node_name else None
        for name, value in self.op.fixed_attrs:
            if raw.get(name, value) != value:
                raise OpError(self.op.opdef.op_type, f"internal op {self.op.op_type} got {name}={raw[name]!r}",
                              kind="attribute")
            raw[name] = value
        attrs = self.op.opdef.parse_attributes(raw, node_name)
        for name, value in self.op.requires:
            if attrs[name] != value:
                raise OpError(
                    self.op.opdef.op_type,
                    f"{name}={attrs[name]!r} cannot be carried by the raw path: an attribute cannot choose "
                    "an output type in the PyOp bridge; pass the model through ortops.prepare_model, or use "
                    "ortops.InferenceSession",
                    node_name, kind="attribute",
                )
        return attrs, node_name

    def __call__(self, feed: Sequence[np.ndarray], raw_attrs: dict) -> tuple[np.ndarray, ...]:
        attrs, node_name = self._parsed(tuple(sorted(raw_attrs.items())))
        try:
            outputs = self.compute(*feed, **attrs)
        except OpError as exc:
            raise exc.with_node(node_name) from None
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        if self.op.rounds_to is not None:
            outputs = tuple(round_to_precision(out, self.op.rounds_to) if isinstance(out, np.ndarray)
                            and out.dtype == np.float64 else out for out in outputs)
        checked = []
        for i, (out, dtype) in enumerate(zip(outputs, self.output_dtypes, strict=True)):
            if not isinstance(out, np.ndarray) or out.dtype != dtype:
                got = out.dtype if isinstance(out, np.ndarray) else type(out).__name__
                raise TypeError(f"ortops bug: {self.op.qualified_name} output {i} is {got}, declared {dtype}")
            checked.append(np.ascontiguousarray(out))
        return tuple(checked)


_lock = runtime.Lock()  # released in a forked child
_kernels: dict[int, _Kernel] = {}
_registered = False
#: Functions making more PyOp registrations (e.g. the benchmark's identity op) that
#: :func:`register` calls in its one batch (see :func:`also_register`).
_also: list[Callable[[], None]] = []
_fallback_hook: Callable | None = None


class _Local(threading.local):
    """Per thread: the active captures (innermost last), and an interrupt that waits for them."""

    def __init__(self):
        self.stack: list[_Errors] = []
        self.interrupt: BaseException | None = None


_local = _Local()


class _Errors(list):
    """The list a capture yields; ``first_only``: the run is lost at its first error."""

    first_only = False


@contextmanager
def capture_errors(*, first_only: bool = False) -> Iterator[list[OpError]]:
    """Collect the op errors raised on this thread while the block runs.

    Yields the list that the hook appends :class:`OpError` objects to. While no capture is
    active on a thread, errors from that thread's op calls are logged instead. An interrupt
    that reached an op inside the block (Ctrl-C's ``KeyboardInterrupt``, a ``SystemExit`` from
    a signal handler) is raised again when the block ends.

    Parameters
    ----------
    first_only : bool, default False
        Keep the first error only: once one is in the list, every later op call inside the
        block returns empty outputs at once, without running its kernel (the run is lost
        anyway; a ``Loop`` of a million iterations with a bad k then runs one failing kernel,
        not a million, and holds one error). :class:`ortops.InferenceSession` uses it.
    """
    errors = _Errors()
    errors.first_only = first_only
    _local.stack.append(errors)
    try:
        yield errors
    finally:
        _local.stack.pop()
        _raise_pending_interrupt()


def _raise_pending_interrupt() -> None:
    interrupt, _local.interrupt = _local.interrupt, None
    if interrupt is None:
        return
    try:
        if isinstance(interrupt, runtime.Interrupt):
            runtime.deliver(interrupt.signum)  # the original handler: KeyboardInterrupt, SystemExit...
            # Its handler returned: the op it stopped gave empty outputs, which must not pass for a result.
            raise InterruptedError(f"signal {interrupt.signum} stopped an op; its handler returned without "
                                   "raising, so the run has no outputs")
        raise interrupt
    finally:
        del interrupt  # no reference cycle through this frame


def _lost() -> bool:
    stack = _local.stack
    return bool(stack) and stack[-1].first_only and len(stack[-1]) > 0


def _report(error: OpError) -> None:
    if _local.stack:
        _local.stack[-1].append(error)
    else:
        logger.error("%s (the op returned empty outputs)", error)


def _interrupted(exc: BaseException) -> None:
    """An interrupt reached an op: keep it for the capture, or have it delivered again."""
    if _local.stack:
        if _local.interrupt is None:
            _local.interrupt = exc
        return
    signum = exc.signum if isinstance(exc, runtime.Interrupt) else None
    if signum is None and isinstance(exc, KeyboardInterrupt):
        import signal

        signum = signal.SIGINT
    if signum is not None:
        logger.error("signal %s stopped an op, which returned empty outputs; the signal is delivered again", signum)
        runtime.redeliver(signum)
    else:
        logger.error("%s raised inside an op cannot be re-raised on the raw path (the op returned empty outputs)",
                     type(exc).__name__)


def _detached(exc: BaseException) -> BaseException:
    """``exc`` without its traceback, context and cause: the frames they reach hold the
    call's input arrays, which a kept error would otherwise keep alive (and, through the
    frame of the hook, in a reference cycle only the garbage collector frees)."""
    exc.__traceback__ = None
    exc.__context__ = None
    exc.__cause__ = None
    return exc


def _pack(k_id: int, outputs: Sequence[np.ndarray]) -> tuple:
    packed: list = [k_id]
    for out in outputs:
        packed += [out.shape, out]
    return tuple(packed)


@runtime.bridge_code
def _hook(k_id, feed, attributes):
    """The bridge's entry point. Never raises.

    An ``Exception`` becomes an :class:`OpError` (reported, see :func:`capture_errors`); any
    other ``BaseException`` (an interrupt) is kept and re-delivered once control is back in
    Python (:func:`_interrupted`). Either way the op returns empty outputs; while a kept
    interrupt waits for the run to end, or once a ``first_only`` capture holds its error,
    every later op call of the run returns empty outputs at once.
    """
    kernel = _kernels.get(k_id)
    if kernel is None:
        return _foreign_call(k_id, feed, attributes)
    if _local.interrupt is not None or _lost():
        # An interrupt waits for this run to end, or the run is lost at its first error: a
        # later op call of the same run (the next iteration of a Loop or Scan body, the next
        # node) does not run its kernel.
        return _pack(k_id, kernel.empty_outputs())
    try:
        runtime.kernel_started()
        try:
            return _pack(k_id, kernel(feed, attributes))
        finally:
            runtime.kernel_finished()
    except OpError as exc:
        _report(_detached(exc))
    except Exception as exc:  # noqa: BLE001 - nothing may reach the bridge (it aborts)
        _report(OpError(kernel.op.opdef.op_type, f"internal error {type(exc).__name__}: {exc}", kind="internal"))
    except BaseException as exc:  # noqa: BLE001 - an interrupt: delivered again later, never lost
        _interrupted(_detached(exc))
    return _pack(k_id, kernel.empty_outputs())


@runtime.bridge_code
def _foreign_call(k_id, feed, attributes):
    """A PyOp registered by someone else: run the library's own hook, but never let it raise."""
    try:
        return _fallback_hook(k_id, feed, attributes)
    except BaseException as exc:  # noqa: BLE001
        from onnxruntime_extensions import _ocos

        if isinstance(exc, Exception):
            logger.error("PyOp id %s raised %s: %s (returned empty outputs)", k_id, type(exc).__name__,
                         truncated(str(exc)))
        else:
            _interrupted(_detached(exc))
        opdef = _ocos.Opdef._odlist.get(k_id)
        types = opdef._nativedef.output_types if opdef is not None else []
        by_code = {dtypes.bridge_code(t): t.numpy for t in dtypes.ELEMENT_TYPES if t.bridge}
        return _pack(k_id, [np.empty((0,), by_code.get(c, np.float32)) for c in types])


def register() -> None:
    """Register ortops' ops with the PyOp bridge and install the safe hook.

    Idempotent and thread-safe. Must run before a session that uses the ops is created;
    :class:`ortops.InferenceSession` and :func:`ortops.session_options` call it.

    Every registration is made in this one call, never some now and more later: with
    onnxruntime-extensions 0.15.2, a PyOp registered after the library was loaded into a
    session makes that session crash (segmentation fault) on its next run. So sessions
    cannot register only the families their model uses, although loading the library costs
    about 10 us per registration at each session creation (docs/divergences.md).
    """
    global _registered, _fallback_hook
    if _registered:
        return
    with _lock:
        if _registered:
            return
        from onnxruntime_extensions import PyCustomOpDef, _ocos, onnx_op

        for op in bridge_ops():
            kinds = {"int": PyCustomOpDef.dt_int64, "string": PyCustomOpDef.dt_string}
            attrs = {a.name: kinds[a.kind] for a in op.opdef.attrs if a.name not in dict(op.fixed_attrs)}
            if op.carries_node_name:
                attrs[NODE_NAME_ATTR] = PyCustomOpDef.dt_string
            for inputs, outputs in op.signatures:
                kernel = _Kernel(op, op.opdef.kernel.resolve(), [t.numpy for t in outputs])
                opdef = onnx_op(
                    op_type=op.qualified_name,
                    inputs=[dtypes.bridge_code(t) for t in inputs],
                    outputs=[dtypes.bridge_code(t) for t in outputs],
                    attrs=attrs,
                )(kernel)
                _kernels[id(opdef)] = kernel
        for function in _also:
            function()
        if _fallback_hook is None:
            _fallback_hook = _ocos._on_pyop_invocation
            PyCustomOpDef.install_hooker(_hook)
        _registered = True


def also_register(function: Callable[[], None]) -> bool:
    """Have :func:`register` call ``function`` (which makes ``onnx_op`` registrations of its
    own) in the same batch as ortops' registrations. Returns False, and does nothing, when
    :func:`register` already ran: a registration now could crash a session that exists."""
    with _lock:
        if _registered:
            return False
        _also.append(function)
        return True


def probe_model() -> bytes:
    """A one-node model of ortops' first registration, for session creation only (it is never
    run): creating a session of it tells whether session options hold ortops' ops."""
    from onnx import helper

    op = bridge_ops()[0]
    inputs, outputs = op.signatures[0]
    attrs = {a.name: 0 if a.kind == "int" else "" for a in op.opdef.attrs if a.name not in dict(op.fixed_attrs)}
    if op.carries_node_name:
        attrs[NODE_NAME_ATTR] = ""
    node = helper.make_node(op.op_type, [f"in{i}" for i in range(len(inputs))],
                            [f"out{i}" for i in range(len(outputs))], domain=op.domain, **attrs)
    graph = helper.make_graph(
        [node], "ortops_probe",
        [helper.make_tensor_value_info(f"in{i}", t.onnx, None) for i, t in enumerate(inputs)],
        [helper.make_tensor_value_info(f"out{i}", t.onnx, None) for i, t in enumerate(outputs)])
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid(op.domain, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=8).SerializeToString()


def library_path() -> str:
    """Path of the onnxruntime-extensions library that carries the PyOps."""
    from onnxruntime_extensions import get_library_path

    return get_library_path()
