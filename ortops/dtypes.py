"""The one table that maps NumPy dtypes, ONNX element types and the PyOp bridge's codes.

The bridge codes are looked up lazily (``bridge_code``) so that importing this module never
imports onnxruntime-extensions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from onnx import TensorProto

__all__ = [
    "ElementType",
    "ELEMENT_TYPES",
    "INTEGER_TYPES",
    "WIDE_INTEGER_TYPES",
    "NUMERIC_TYPES",
    "from_numpy",
    "from_onnx",
    "from_name",
    "bridge_code",
    "CARRIED_TYPES",
    "names",
    "onnx_name",
    "wrap",
]


class ElementType(NamedTuple):
    """One row of the table.

    name : the ONNX spelling in ``tensor(name)``, e.g. ``"float"``, ``"uint64"``.
    numpy : the NumPy dtype, or None where NumPy has none (bfloat16).
    onnx : the ``onnx.TensorProto`` enum value.
    bridge : the attribute name of ``PyCustomOpDef`` (``dt_float``), or None where the
        bridge cannot carry the type at all (float16 and bfloat16 abort the process there).
    """

    name: str
    numpy: np.dtype | None
    onnx: int
    bridge: str | None


ELEMENT_TYPES: tuple[ElementType, ...] = (
    ElementType("float", np.dtype(np.float32), TensorProto.FLOAT, "dt_float"),
    ElementType("double", np.dtype(np.float64), TensorProto.DOUBLE, "dt_double"),
    ElementType("int8", np.dtype(np.int8), TensorProto.INT8, "dt_int8"),
    ElementType("int16", np.dtype(np.int16), TensorProto.INT16, "dt_int16"),
    ElementType("int32", np.dtype(np.int32), TensorProto.INT32, "dt_int32"),
    ElementType("int64", np.dtype(np.int64), TensorProto.INT64, "dt_int64"),
    ElementType("uint8", np.dtype(np.uint8), TensorProto.UINT8, "dt_uint8"),
    ElementType("uint16", np.dtype(np.uint16), TensorProto.UINT16, "dt_uint16"),
    ElementType("uint32", np.dtype(np.uint32), TensorProto.UINT32, "dt_uint32"),
    ElementType("uint64", np.dtype(np.uint64), TensorProto.UINT64, "dt_uint64"),
    ElementType("bool", np.dtype(np.bool_), TensorProto.BOOL, "dt_bool"),
    # Types the PyOp bridge must never see (onnxruntime-extensions: std::terminate, exit 134; docs/divergences.md).
    ElementType("float16", np.dtype(np.float16), TensorProto.FLOAT16, None),
    ElementType("bfloat16", None, TensorProto.BFLOAT16, None),
)

_BY_NAME = {t.name: t for t in ELEMENT_TYPES}
_BY_ONNX = {t.onnx: t for t in ELEMENT_TYPES}
_BY_NUMPY = {t.numpy: t for t in ELEMENT_TYPES if t.numpy is not None}

INTEGER_TYPES: tuple[ElementType, ...] = tuple(
    _BY_NAME[n] for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
)
#: Integer types that together hold every integer type exactly (see :func:`holds`): int64 holds
#: int8 to int32 and uint8 to uint32; uint64 only itself (int64 would wrap values above 2**63).
WIDE_INTEGER_TYPES: tuple[ElementType, ...] = (_BY_NAME["int64"], _BY_NAME["uint64"])
#: The numeric types the bridge can carry: float32, float64 and every integer type.
NUMERIC_TYPES: tuple[ElementType, ...] = (_BY_NAME["float"], _BY_NAME["double"], *INTEGER_TYPES)
#: The types an op takes only around the bridge (cast to a carrier type; see ``ortops.ops.spec.Carrier``).
CARRIED_TYPES: tuple[ElementType, ...] = tuple(t for t in ELEMENT_TYPES if t.bridge is None)


def names(types) -> tuple[str, ...]:
    """The ONNX names of a sequence of rows, e.g. for an op's type table."""
    return tuple(t.name for t in types)


def onnx_name(elem_type: int) -> str:
    """The ONNX name of an element type (``"float"``), also for types ortops has no row for
    (``"string"``), and ``"unknown"`` for 0."""
    if elem_type in _BY_ONNX:
        return _BY_ONNX[elem_type].name
    return TensorProto.DataType.Name(elem_type).lower() if elem_type else "unknown"


def wrap(value: int, dtype) -> int:
    """The integer ``value`` wrapped around into ``dtype``'s range, as C++ arithmetic in that
    type does (two's complement for signed types)."""
    info = np.iinfo(dtype)
    span = int(info.max) - int(info.min) + 1
    return (int(value) - int(info.min)) % span + int(info.min)


def from_name(name: str) -> ElementType:
    """Look up a row by its ONNX name (``"float"``, ``"uint64"``); KeyError if unknown."""
    return _BY_NAME[name]


def from_onnx(elem_type: int) -> ElementType:
    """Look up a row by ``onnx.TensorProto`` enum value; KeyError if ortops has no row for it."""
    return _BY_ONNX[elem_type]


def from_numpy(dtype) -> ElementType:
    """Look up a row by NumPy dtype; KeyError if ortops has no row for it."""
    return _BY_NUMPY[np.dtype(dtype)]


def bridge_code(t: ElementType) -> int:
    """The ``PyCustomOpDef.dt_*`` code for ``t``; ValueError for types the bridge can't carry."""
    if t.bridge is None:
        raise ValueError(f"the PyOp bridge cannot carry tensor({t.name})")
    from onnxruntime_extensions import PyCustomOpDef

    return getattr(PyCustomOpDef, t.bridge)
