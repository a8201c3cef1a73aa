"""Standard ONNX ``TopK``, ``ArgMax`` and ``ArgMin`` as tie-independent compositions
(``ortops.lower(model, standard=True)``, ``ortops lower --standard``).

The ONNX spec fixes the answer among equal values (TopK: the lower index first; ArgMax/ArgMin:
the first index, or the last with ``select_last_index=1``), but runtimes differ: OpenVINO's
ONNX frontend reads TopK as its own TopK with ``stable=false``. Each node is rewritten into
:func:`ortops.portable.best`, which relies on no runtime's order of equal values, so the model
gives the spec's answer in any runtime. ONNX says nothing of NaN; the rule here is ORT 1.32's
TopK's and NumPy's sort's: NaN ranks above every number (+inf included), all NaNs equal. So
ArgMax picks the first (or last) NaN of a slice, as ``numpy.argmax`` does, and ArgMin picks a
NaN only in an all-NaN slice (``numpy.argmin`` picks the first NaN; ORT 1.32's own ArgMax and
ArgMin skip NaN unless it comes first).

Each op is an object with the methods of :class:`ortops.lowering.Lowering`; the composition is
routed as a standalone lowering (checks fail in a node named after the reason, in ORT and
OpenVINO): TopK's k in [0, dim] and a non-empty axis, ArgMax/ArgMin's non-empty axis.
``sorted=0`` gives the same order as ``sorted=1`` (the spec leaves it open).
"""

from __future__ import annotations

import numpy as np
from onnx import TensorProto

from .portable import PORTABLE, best, dim, wide_int, with_axes

__all__ = ["OP_TYPES", "OPSET", "NotRewritable", "module", "attributes", "raised"]

#: The standard op types ``standard=True`` rewrites.
OP_TYPES = ("TopK", "ArgMax", "ArgMin")
#: The default-domain opset the compositions need (CumSum, ScatterElements, TopK with k an input).
OPSET = 11
_DEFAULTS = {"TopK": {"axis": -1, "largest": 1, "sorted": 1},
             "ArgMax": {"axis": 0, "keepdims": 1, "select_last_index": 0},
             "ArgMin": {"axis": 0, "keepdims": 1, "select_last_index": 0}}
_FLOATS = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64}


class NotRewritable(Exception):
    """The node is left as it was; the message says why."""


def attributes(node) -> dict:
    """The node's attributes with the spec's defaults."""
    from onnx import helper

    attrs = dict(_DEFAULTS[node.op_type])
    attrs.update({a.name: helper.get_attribute_value(a) for a in node.attribute})
    return attrs


def raised(model, opset: int | None):
    """``(model, None)``, or, when ``model`` holds a standard node to rewrite and imports a
    default-domain opset below :data:`OPSET`, ``(the model converted to OPSET by
    onnx.version_converter, the opset it had)``; unchanged when the conversion fails (its nodes
    are then left as they were, with the reason)."""
    from onnx import version_converter

    from .graph import DEFAULT_DOMAINS, graphs

    if opset is None or opset >= OPSET or not any(
            n.op_type in OP_TYPES and n.domain in DEFAULT_DOMAINS for g in graphs(model.graph) for n in g.node):
        return model, None
    try:
        return version_converter.convert_version(model, OPSET), opset
    except Exception:  # noqa: BLE001 - onnx's converter raises several types; the nodes then stay
        return model, None


def module(op_type: str):
    """The rewrite of ``op_type`` (one of :data:`OP_TYPES`)."""
    return _TopK() if op_type == "TopK" else _Arg(op_type == "ArgMax")


def _key(b, site) -> tuple[str, int]:
    """The data in a type every runtime compares and sorts (exact), and that type."""
    data, elem = site.node.input[0], site.elem_types[0]
    widened = PORTABLE.get(elem, elem)
    if widened == elem:
        return data, elem
    return b.memo(("cast", data, widened), lambda: b.cast(data, widened)), widened


class _Rewrite:
    """What the rewrites share: the same preparation, no hazard, one composition for both paths."""

    def prepare(self, site) -> int:
        if site.elem_types[0] in (TensorProto.UINT64, TensorProto.BOOL, TensorProto.STRING):
            raise NotRewritable(f"{TensorProto.DataType.Name(site.elem_types[0]).lower()} data: no exact "
                                "composition (no runtime sorts or compares it in a wider type)")
        rank, axis = site.ranks[0], site.attrs["axis"]
        if not -rank <= axis < rank:
            raise NotRewritable(f"axis={axis} is outside [-{rank}, {rank - 1}]")
        return OPSET

    def hazards(self, b, site) -> list[str]:
        return []

    def fast(self, b, site) -> list[str]:
        return self.exact(b, site)


def _non_empty(b, site, axis: int) -> tuple[str, str]:
    """(true unless the axis is empty, the reason): the compositions need one element."""
    n = dim(b, site.node.input[0], axis)
    return b.add("Greater", [n, b.const(np.array([0], np.int64))]), f"axis {axis} must not be empty"


class _TopK(_Rewrite):
    """ONNX TopK (1, 10, 11, 24)."""

    def _axis(self, site) -> int:
        return site.attrs["axis"] % site.ranks[0]

    def _k(self, b, site) -> tuple[str, int | None]:
        """k as int64 ``[1]`` and its value when constant (TopK-1: the attribute ``k``)."""
        if len(site.node.input) < 2:
            value = int(site.attrs["k"])
            return b.const(np.array([value], np.int64)), value
        k, constant = site.node.input[1], site.constants[1]
        if constant is not None and constant.size == 1 and int(constant.reshape(-1)[0]) >= 1:
            value = int(constant.reshape(-1)[0])
            return b.const(np.array([value], np.int64)), value
        return b.memo(("k", k), lambda: b.add("Reshape", [k, b.const(np.array([1], np.int64))])), None

    def checks(self, b, site) -> list[tuple[str, str]]:
        axis = self._axis(site)
        n = dim(b, site.node.input[0], axis)
        result = [_non_empty(b, site, axis)]
        if len(site.node.input) < 2:
            k = b.const(np.array([int(site.attrs["k"])], np.int64))
            size_one = None
        else:
            k = site.node.input[1]
            size_one = b.add("Equal", [b.add("Size", [k]), b.const(np.int64(1))])
            k = b.first(k)
        in_range = b.add("Not", [b.add("Or", [b.add("Less", [k, b.const(np.int64(0))]), b.exceeds(k, n)])])
        result.append((b.all_of([c for c in (size_one, in_range) if c is not None]),
                       "k must be a single integer in [0, data.shape[axis]]"))
        return result

    def exact(self, b, site) -> list[str]:
        axis, attrs = self._axis(site), site.attrs
        key, elem = _key(b, site)
        k, static = self._k(b, site)
        one = b.const(np.array([1], np.int64))
        used = k if static is not None else b.add("Where", [b.add("Less", [k, one]), one, k])  # k=0: cut below
        _, indices = best(b, key, used, axis, attrs["largest"], nan=elem in _FLOATS, k_static=static,
                          dtype=_FLOATS.get(elem, np.float32), rank=site.ranks[0],
                          integer=wide_int(site.elem_types[0], elem))
        if static is None:
            indices = b.add("Slice", [indices, b.const(np.array([0], np.int64)), k,
                                      b.const(np.array([axis], np.int64))])
        return [b.add("GatherElements", [site.node.input[0], indices], axis=axis), indices]


class _Arg(_Rewrite):
    """ONNX ArgMax / ArgMin (1, 11, 12, 13): the first index of the best value, or the last
    with ``select_last_index=1``."""

    def __init__(self, largest: bool):
        self.largest = int(largest)

    def checks(self, b, site) -> list[tuple[str, str]]:
        return [_non_empty(b, site, site.attrs["axis"] % site.ranks[0])]

    def exact(self, b, site) -> list[str]:
        axis = site.attrs["axis"] % site.ranks[0]
        key, elem = _key(b, site)
        last = site.attrs["select_last_index"]
        if last:  # the last index first: the slice reversed, its first index mapped back
            key = b.reversed(key, axis)
        one = b.const(np.array([1], np.int64))
        _, index = best(b, key, one, axis, self.largest, nan=elem in _FLOATS, k_static=1,
                        dtype=_FLOATS.get(elem, np.float32), integer=wide_int(site.elem_types[0], elem))
        if last:
            index = b.add("Sub", [b.add("Sub", [dim(b, key, axis), one]), index])
        if not site.attrs["keepdims"]:
            index = with_axes(b, "Squeeze", index, [axis])
        return [index]

