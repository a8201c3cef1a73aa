"""The shape of one op's specification (:class:`OpSpec`), shared by every op folder.

Each folder ``ortops/ops/<op>/spec.py`` holds one :class:`OpSpec`: domain, inputs, outputs,
attributes with the spec's defaults, the one table of accepted types, how float16/bfloat16
are carried around the bridge, the bridge's registration variants and shape inference. The
folder's ``__init__.py`` adds where its reference, kernel, OpenVINO conversion and lowering
live. The shared layers (bridge, schemas, session, OpenVINO interop, lowering) loop over
:data:`ortops.ops.OPS` and read these fields; none of them tests an op's name.
"""

from __future__ import annotations

import functools
import numbers
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .. import dtypes
from ..errors import OpError

__all__ = [
    "AttrDef",
    "TypeParam",
    "RAW_INDEX_TYPES",
    "Carrier",
    "Variant",
    "Deferred",
    "OpSpec",
    "Divergence",
    "OPENVINO_OBSERVED",
    "NCNN_OBSERVED",
    "OPENVINO_DOMAIN",
    "NCNN_DOMAIN",
]

OPENVINO_DOMAIN = "ortops.openvino"
NCNN_DOMAIN = "ortops.ncnn"

_REQUIRED = object()


@dataclass(frozen=True)
class AttrDef:
    """One attribute: its spec name, ONNX kind (``"int"`` or ``"string"``), default and range.

    ``default`` is ``_REQUIRED`` for a required attribute. ``choices`` lists the valid values
    (strings or ints); ``minimum`` bounds an int attribute from below. ``axis_of`` names the
    input whose axis the attribute is: where that input's rank is known when a model is
    loaded, an axis outside ``[-rank, rank - 1]`` is refused then (OpError, kind ``"axis"``).
    """

    name: str
    kind: str
    default: Any = _REQUIRED
    choices: tuple | None = None
    minimum: int | None = None
    doc: str = ""
    axis_of: str | None = None

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    def valid_range(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        if self.minimum is not None:
            return f"an integer >= {self.minimum}"
        return "an integer" if self.kind == "int" else "a string"


#: The types the raw path (the public registrations) takes an index-like input in (TopK's k,
#: ScatterElementsUpdate's indices and axis: :attr:`TypeParam.raw_types`): ONNX's own (int32,
#: int64) and uint64. :func:`ortops.prepare_model` casts the other integer types exactly.
RAW_INDEX_TYPES = ("int32", "int64", "uint64")


@dataclass(frozen=True)
class TypeParam:
    """One type parameter of an op and the element types it accepts: the op's one table.

    ``types`` are ONNX names (``"float"``, ``"uint64"``, ``"float16"``; see
    :mod:`ortops.dtypes`). The bridge registers every type it can carry; float16/bfloat16
    are accepted only when the op has a :class:`Carrier`. ``doc`` completes "it must be ...".
    ``schema_types`` widens the ONNX schema on purpose (``None``: the same as ``types``), so that
    :func:`ortops.prepare_model`, not onnx's checker, refuses a type, naming the node.

    ``private_types`` narrows the private bridge registrations (domain ``ortops._bridge``, what
    :func:`ortops.prepare_model` rewrites nodes to) to these types (``None``: every type the
    bridge carries). ``prepare_model`` casts an input of another type of ``types`` to the first
    of them that holds all its values (``np.can_cast(..., "safe")``): the op sees the same
    numbers, and fewer registrations make every session faster to create (ORT spends about
    10 us per registration at each session creation). Only for a parameter no output uses.

    ``raw_types`` narrows the public registrations (the op's own domain: the raw path, a model
    run with :func:`ortops.session_options` as it is) likewise; there nothing casts, so ORT
    refuses a model with another type when the session is created (cleanly: no registration
    takes it). ``None``: every type the bridge carries.
    """

    name: str
    types: tuple[str, ...]
    doc: str
    schema_types: tuple[str, ...] | None = None
    private_types: tuple[str, ...] | None = None
    raw_types: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Carrier:
    """How float16/bfloat16 data crosses the PyOp bridge, which cannot see them (they abort
    the process there; docs/divergences.md).

    The inputs at ``inputs`` are cast to ``via`` before the op, and the outputs of the data's
    type parameter are cast back after it. With ``rounds``, a private registration per carried
    type rounds the float64 result once to that type's precision, so that the Cast back is exact.
    """

    via: str
    inputs: tuple[int, ...]
    rounds: bool = False


@dataclass(frozen=True)
class Variant:
    """A private bridge registration chosen by attribute values (an attribute cannot choose an
    output type in the bridge): op type ``op_type + suffix``, the attributes ``attrs`` implied
    (not passed), the type parameters restricted by ``types``."""

    suffix: str
    attrs: tuple[tuple[str, Any], ...]
    types: tuple[tuple[str, tuple[str, ...]], ...]


class Deferred:
    """A callable that ``load()`` returns on first use (:meth:`resolve`): ``load`` is a small
    function in the op's ``__init__.py`` that imports the layer (a plain relative import), so
    that importing the op list imports nothing heavy."""

    def __init__(self, load: Callable[[], Callable]):
        self.resolve = functools.cache(load)

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)


class Divergence(NamedTuple):
    """One known divergence: a runtime's behaviour on a topic, and why it is not a bug of ortops.

    ``op`` is an op type, or None for every op; ``runtime`` is ``"openvino"`` (the CPU plugin),
    ``"openvino-onnx"`` (OpenVINO running standard ONNX ops through its ONNX frontend),
    ``"onnxruntime"`` (its built-in ops), ``"onnx"`` (ONNX's own test vectors) or ``"ncnn"``;
    ``observed_with`` names the versions it was seen with. The table of every row is
    :data:`ortops.divergences.DIVERGENCES`.
    """

    topic: str
    op: str | None
    runtime: str
    reason: str
    observed_with: tuple[str, ...]


#: The versions most rows were observed with.
OPENVINO_OBSERVED = ("openvino 2026.4.1",)
NCNN_OBSERVED = ("ncnn 1.0.20261020",)


@dataclass(frozen=True)
class OpSpec:
    """One custom operator: everything op-specific that the shared layers need.

    Attributes
    ----------
    domain, op_type : str
        ``domain::op_type`` of the node, e.g. ``ortops.openvino::TopK``.
    inputs, outputs : tuple of str
        The spec's names, in order.
    attrs : tuple of AttrDef
        The attributes with the spec's defaults and valid values.
    spec : str
        The source specification, e.g. ``"OpenVINO TopK-11"``.
    input_types, output_types : tuple of str
        The type parameter (a :class:`TypeParam` name) of each input and output.
    type_params : tuple of TypeParam
        The one table of accepted types.
    carrier : Carrier or None
        How float16/bfloat16 are carried around the bridge; None: not accepted.
    variants : tuple of Variant
        The private bridge registrations chosen by attributes; empty: one registration.
    infer_shapes : callable or None
        ONNX type and shape inference, ``infer(ctx)``.
    reference, kernel : Deferred or None
        The NumPy reference and the fast kernel the bridge runs, both
        ``f(*inputs, **attributes)``.
    openvino : Deferred or None
        The OpenVINO ONNX-frontend converter, ``convert(node_context, attrs) -> outputs``; the
        attributes come parsed (:func:`ortops.interop.openvino.attributes`).
    lowering : callable or None
        Returns the op's lowering (:class:`ortops.lowering.Lowering`), imported on first call.

        These four are the layers a session or a runtime runs. ``ortops/ops/<op>/spec.py`` holds
        the spec without them (the layers import it); ``ortops/ops/<op>/__init__.py`` adds them,
        each imported on first use. The layers that prove an op (its conformance cases, its
        judge, its bench cases) are in :data:`ortops.ops.tooling.TOOLING`.
    divergences : tuple of Divergence
        The op's own known divergences (``ortops/ops/<op>/divergences.py``), collected by
        :data:`ortops.divergences.DIVERGENCES`.
    session_path : str or callable
        The path :class:`ortops.InferenceSession` takes for the op by default (``"lowered"`` or
        ``"pyop"``): the faster exact one, as measured (docs/performance.md); or
        ``session_path(attrs, shapes, elem_types) -> str`` choosing it per node from its
        attributes and each input's shape (None where unknown, a dimension None where not a
        number) and ONNX type (0 where unknown).
    """

    domain: str
    op_type: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[AttrDef, ...]
    spec: str
    input_types: tuple[str, ...] = ()
    output_types: tuple[str, ...] = ()
    type_params: tuple[TypeParam, ...] = ()
    carrier: Carrier | None = None
    variants: tuple[Variant, ...] = ()
    infer_shapes: Callable | None = field(default=None, compare=False)
    reference: Deferred | None = field(default=None, compare=False)
    kernel: Deferred | None = field(default=None, compare=False)
    openvino: Deferred | None = field(default=None, compare=False)
    lowering: Callable[[], Any] | None = field(default=None, compare=False)
    divergences: tuple[Divergence, ...] = field(default=(), compare=False)
    session_path: str | Callable[[dict, list, list], str] = "pyop"

    def type_param(self, name: str) -> TypeParam:
        """The :class:`TypeParam` called ``name``."""
        return next(t for t in self.type_params if t.name == name)

    def check_dtype(self, role: str, dtype, node_name: str | None = None) -> None:
        """OpError (kind ``"dtype"``) unless the input ``role`` may have NumPy ``dtype`` in the
        computation: a type of its :class:`TypeParam` that the bridge carries (float16/bfloat16
        are cast to the carrier type before the op runs)."""
        table = self.type_param(self.input_types[self.inputs.index(role)])
        accepted = [t for t in map(dtypes.from_name, table.types) if t.bridge is not None]
        if all(t.numpy != dtype for t in accepted):
            names = ", ".join(str(t.numpy) for t in accepted)
            raise OpError(self.op_type, f"input {role!r} has dtype {dtype}; it must be one of {names}", node_name,
                          kind="dtype")

    def private_type(self, role: str, type_name: str) -> str:
        """The type the private registrations take the input ``role`` of type ``type_name`` as:
        ``type_name`` itself, or the first of its parameter's ``private_types`` that holds all
        its values (:func:`ortops.prepare_model` casts the input to it).

        Raises
        ------
        ValueError
            When no private type holds ``type_name`` exactly (a spec error).
        """
        table = self.type_param(self.input_types[self.inputs.index(role)])
        if table.private_types is None or type_name in table.private_types:
            return type_name
        narrow = dtypes.from_name(type_name)
        wide = next((t for t in table.private_types if narrow.numpy.kind in "iu"
                     and np.can_cast(narrow.numpy, dtypes.from_name(t).numpy, "safe")), None)
        if wide is None:
            raise ValueError(f"{self.op_type}: no private type of {table.name} {table.private_types} holds {type_name}")
        return wide

    def run_reference(self, inputs: Mapping[str, np.ndarray], attrs: Mapping[str, Any]) -> tuple:
        """The reference's outputs for ``inputs`` (by the spec's names) as ortops computes them:
        float16 data in the :class:`Carrier`'s type, the outputs of the data's type cast back once.
        Raises OpError where the reference does."""
        args = [inputs[name] for name in self.inputs]
        carried = self.carrier is not None and args[0].dtype == np.float16
        if carried:
            via = dtypes.from_name(self.carrier.via).numpy
            args = [x.astype(via) if i in self.carrier.inputs else x for i, x in enumerate(args)]
        result = self.reference(*args, **attrs)
        result = result if isinstance(result, tuple) else (result,)
        if carried:
            result = tuple(out.astype(np.float16) if t == self.input_types[0] else out
                           for out, t in zip(result, self.output_types))
        return result

    def defaults(self) -> dict[str, Any]:
        """The attributes that have defaults, with them."""
        return {a.name: a.default for a in self.attrs if not a.required}

    def variant(self, attrs: Mapping[str, Any]) -> Variant | None:
        """The bridge variant that carries a node with the parsed ``attrs`` (None: no variants)."""
        return next((v for v in self.variants if all(attrs.get(n) == value for n, value in v.attrs)), None)

    @property
    def qualified_name(self) -> str:
        return f"{self.domain}::{self.op_type}"

    def parse_attributes(self, raw: Mapping[str, Any], node_name: str | None = None) -> dict:
        """Validate raw attribute values and fill in defaults.

        ``raw`` maps names to values as ONNX or the bridge hands them over: ints, strings or
        bytes; the bridge passes a missing attribute as ``""``. Unknown names are errors.

        Returns
        -------
        dict
            Every attribute of the op, by its spec name, with its typed value.

        Raises
        ------
        OpError
            For a missing required attribute, an unknown attribute, a value of the wrong type
            or outside its range.
        """
        def fail(detail: str):
            raise OpError(self.op_type, detail, node_name, kind="attribute")

        known = {a.name for a in self.attrs}
        if set(raw) - known:
            fail(f"unknown attribute(s) {sorted(set(raw) - known)}; valid attributes are {sorted(known)}")
        parsed = {}
        for attr in self.attrs:
            value = raw.get(attr.name, "")
            if isinstance(value, bytes):
                value = value.decode("utf-8", errors="replace")
            if isinstance(value, str) and value == "" and (attr.kind == "int" or attr.name not in raw):
                if attr.required:
                    fail(f"required attribute {attr.name!r} is missing; it must be {attr.valid_range()}")
                parsed[attr.name] = attr.default
                continue
            if attr.kind == "int":
                integer = isinstance(value, numbers.Integral) and not isinstance(value, bool)  # np.int64 too
                if not integer and not (isinstance(value, str) and re.fullmatch(r"-?[0-9]+", value)):
                    fail(f"attribute {attr.name}={value!r} is not an integer; it must be {attr.valid_range()}")
                # A digit string is measured before int(), which refuses one of over 4,300 digits.
                too_long = isinstance(value, str) and len(value.lstrip("-").lstrip("0")) > 19
                value = value if too_long else int(value)
                if too_long or not -2 ** 63 <= value < 2 ** 63:
                    shown = f"{value[:20]}... ({len(value)} characters)" if too_long else value
                    fail(f"attribute {attr.name}={shown} does not fit int64, ONNX's integer attribute; it must be "
                         f"{attr.valid_range()}")
            if attr.kind == "int" and attr.minimum is not None and value < attr.minimum:
                fail(f"attribute {attr.name}={value} must be {attr.valid_range()}")
            if attr.kind != "int" and not isinstance(value, str):
                fail(f"attribute {attr.name}={value!r} is not a string; it must be {attr.valid_range()}")
            if attr.choices is not None and value not in attr.choices:
                fail(f"attribute {attr.name}={value!r} is invalid; it must be {attr.valid_range()}")
            parsed[attr.name] = value
        return parsed

