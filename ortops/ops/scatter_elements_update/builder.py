"""Builders for ScatterElementsUpdate: the ortops node, standard ScatterElements-11/13/16/18,
side by side, and the standard-op composition an exporter would emit where no reduction maps.

How OpenVINO ScatterElementsUpdate-12 maps onto standard ONNX
-------------------------------------------------------------
* ``use_init_val=1`` with ``none``, ``sum``, ``prod``, ``min``, ``max``: one ScatterElements node
  with ``reduction`` ``none``, ``add``, ``mul``, ``min``, ``max`` (:data:`ONNX_REDUCTION`).
  ScatterElements-11/13 know ``none`` only, ScatterElements-16 adds ``add``/``mul`` and
  ScatterElements-18 ``min``/``max`` (:data:`SCATTER_ELEMENTS_REDUCTIONS`). ``reduction="none"``
  ignores ``use_init_val``. With several updates for one target, ``none`` is undefined in both
  specs (ortops: the last in row-major order of ``indices`` wins).
* ``mean`` (any ``use_init_val``) and ``use_init_val=0`` have no ONNX attribute: an exporter has
  to emit a composition of standard ops, :func:`scatter_mean_composition`.
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import TensorProto, helper

from .reference import reduction_identity
from ...checks import normalize_axis
from .spec import SCATTER_ELEMENTS_UPDATE
from ...builder.common import custom_node, dims, make_model

__all__ = [
    "SCATTER_ELEMENTS_VERSIONS",
    "SCATTER_ELEMENTS_REDUCTIONS",
    "ONNX_REDUCTION",
    "COMPOSITION_OPSET",
    "scatter_elements_update",
    "onnx_scatter_elements",
    "scatter_elements_update_model",
    "onnx_scatter_elements_model",
    "scatter_elements_update_side_by_side",
    "scatter_mean_composition",
]

#: The standard ScatterElements versions and the default-domain opset each is built at.
SCATTER_ELEMENTS_VERSIONS = {11: 11, 13: 13, 16: 16, 18: 18}
#: The ``reduction`` values each standard version accepts.
SCATTER_ELEMENTS_REDUCTIONS = {
    11: ("none",),
    13: ("none",),
    16: ("none", "add", "mul"),
    18: ("none", "add", "mul", "min", "max"),
}
#: ortops (OpenVINO) reduction -> standard ScatterElements reduction, valid with use_init_val=1.
ONNX_REDUCTION = {"none": "none", "sum": "add", "prod": "mul", "min": "min", "max": "max"}
#: Default-domain opset of :func:`scatter_mean_composition` (ScatterElements-18 for min/max).
COMPOSITION_OPSET = 18

def _inputs(data_type: int, rank: int, indices_type: int) -> list:
    """The graph inputs ``data``, ``indices`` and ``updates`` (indices and updates share one symbolic shape)."""
    return [("data", data_type, dims(rank)), ("indices", indices_type, dims(rank, "n")),
            ("updates", data_type, dims(rank, "n"))]


def scatter_elements_update(data: str, indices: str, updates: str, axis: str, *, reduction: str = "none",
                            use_init_val: int = 1, output: str = "output", name: str = "") -> onnx.NodeProto:
    """``ortops.openvino::ScatterElementsUpdate`` node (OpenVINO ScatterElementsUpdate-12).

    Signature: ``ortops.openvino@1::ScatterElementsUpdate(data: T, indices: T_IND, updates: T,
    axis: T_AXIS) -> output: T``; T is float32, float64, float16, bfloat16, an integer type or
    bool; T_IND and T_AXIS any integer type. Both attributes are written out explicitly (the
    bridge needs every attribute present on the node).

    Parameters
    ----------
    data, indices, updates, axis : str
        Tensor names. ``axis`` holds one integer, shape () or (1,).
    reduction : {"none", "sum", "prod", "min", "max", "mean"}, default "none"
    use_init_val : {0, 1}, default 1
    output, name : str
        Output tensor name and node name.

    Raises
    ------
    OpError
        For an attribute value outside its range.
    """
    attrs = dict(reduction=reduction, use_init_val=use_init_val)
    return custom_node(SCATTER_ELEMENTS_UPDATE, (data, indices, updates, axis), (output,), name, attrs)


def onnx_scatter_elements(version: int, data: str, indices: str, updates: str, *, axis: int = 0,
                          reduction: str = "none", output: str = "output", name: str = "") -> onnx.NodeProto:
    """Standard ``ai.onnx@version::ScatterElements`` node, version 11, 13, 16 or 18.

    Signature: ``ScatterElements(data: T, indices: Tind, updates: T) -> output: T``; Tind is
    int32 or int64; T any tensor type.

    Parameters
    ----------
    version : {11, 13, 16, 18}
    data, indices, updates : str
        Tensor names.
    axis : int, default 0
        The scatter axis, in [-r, r-1].
    reduction : str, default "none"
        ``"none"`` for every version; ``"add"``, ``"mul"`` from version 16; ``"min"``, ``"max"``
        from version 18. Versions 11 and 13 get no ``reduction`` attribute at all.
    output, name : str
        Output tensor name and node name.

    Raises
    ------
    ValueError
        For an unknown version, or a reduction the version does not have.
    """
    if version not in SCATTER_ELEMENTS_VERSIONS:
        raise ValueError(f"ScatterElements version {version} is not one of {list(SCATTER_ELEMENTS_VERSIONS)}")
    allowed = SCATTER_ELEMENTS_REDUCTIONS[version]
    if reduction not in allowed:
        raise ValueError(f"ScatterElements-{version} has no reduction={reduction!r}; it allows {list(allowed)}")
    attrs = {"axis": axis}
    if version >= 16:
        attrs["reduction"] = reduction
    return helper.make_node("ScatterElements", [data, indices, updates], [output], name=name or None, **attrs)


def scatter_elements_update_model(data_type: int, rank: int, *, reduction: str = "none", use_init_val: int = 1,
                                  indices_type: int = TensorProto.INT64, axis_type: int = TensorProto.INT64,
                                  axis_shape=(1,)) -> onnx.ModelProto:
    """Model ``(data, indices, updates, axis) -> output`` with one ortops ScatterElementsUpdate node.

    Parameters
    ----------
    data_type : int
        ``onnx.TensorProto`` element type of ``data``, ``updates`` and ``output``.
    rank : int
        Rank of ``data``, ``indices`` and ``updates`` (dimensions are symbolic).
    reduction, use_init_val
        The node's attributes (see :func:`scatter_elements_update`).
    indices_type, axis_type : int, default INT64
        Element types of ``indices`` and ``axis`` (any integer type).
    axis_shape : (1,) or (), default (1,)
        Shape of the ``axis`` input.
    """
    node = scatter_elements_update("data", "indices", "updates", "axis", reduction=reduction,
                                   use_init_val=use_init_val, name="scatter_elements_update")
    return make_model([node], [*_inputs(data_type, rank, indices_type), ("axis", axis_type, list(axis_shape))],
                      [("output", data_type, dims(rank))])


def onnx_scatter_elements_model(version: int, data_type: int, rank: int, *, axis: int = 0, reduction: str = "none",
                                indices_type: int = TensorProto.INT64) -> onnx.ModelProto:
    """Model ``(data, indices, updates) -> output`` with one standard ScatterElements-``version`` node.

    ``indices_type`` is INT32 or INT64 (the standard op's Tind). Built at opset ``version``.
    OpError for an ``axis`` outside [-rank, rank-1].
    """
    normalize_axis("ScatterElements", axis, rank)
    node = onnx_scatter_elements(version, "data", "indices", "updates", axis=axis, reduction=reduction,
                                 name=f"onnx_scatter_elements_{version}")
    return make_model([node], _inputs(data_type, rank, indices_type), [("output", data_type, dims(rank))],
                      onnx_opset=SCATTER_ELEMENTS_VERSIONS[version])


def scatter_elements_update_side_by_side(version: int, data_type: int, rank: int, *, axis: int,
                                         reduction: str = "none", use_init_val: int = 1,
                                         indices_type: int = TensorProto.INT64) -> onnx.ModelProto:
    """One set of inputs ``(data, indices, updates)`` feeding the ortops node and ScatterElements-``version``.

    The ortops node gets ``axis`` from an int64 initializer of shape [1]; the standard node as
    its attribute. Outputs: ``output`` (ortops) and ``onnx_output`` (standard). ``indices_type``
    may be any integer type: the ortops node takes it as it is, and where it is not INT32 or
    INT64 (the standard op's Tind) the standard node gets it through ``Cast`` to INT64.

    The mapping (use_init_val=1, or reduction none): none/sum/prod/min/max ->
    none/add/mul/min/max (:data:`ONNX_REDUCTION`).

    Raises
    ------
    ValueError
        When the reduction does not map (``mean``, or ``use_init_val=0`` with anything but
        ``none``: use :func:`scatter_mean_composition`), or the version lacks the mapped reduction.
    OpError
        For an ``axis`` outside [-rank, rank-1].
    """
    normalize_axis("ScatterElements", axis, rank)
    if reduction not in ONNX_REDUCTION or (use_init_val == 0 and reduction != "none"):
        raise ValueError(
            f"reduction={reduction!r} with use_init_val={use_init_val} has no standard ScatterElements "
            "equivalent; use scatter_mean_composition"
        )
    axis_init = helper.make_tensor("axis", TensorProto.INT64, [1], [axis])
    nodes = [scatter_elements_update("data", "indices", "updates", "axis", reduction=reduction,
                                     use_init_val=use_init_val, name="ortops_scatter_elements_update")]
    standard_indices = "indices"
    if indices_type not in (TensorProto.INT32, TensorProto.INT64):
        standard_indices = "indices_int64"
        nodes.append(helper.make_node("Cast", ["indices"], [standard_indices], to=TensorProto.INT64,
                                      name="indices_int64"))
    nodes.append(onnx_scatter_elements(version, "data", standard_indices, "updates", axis=axis,
                                       reduction=ONNX_REDUCTION[reduction], output="onnx_output",
                                       name=f"onnx_scatter_elements_{version}"))
    return make_model(nodes, _inputs(data_type, rank, indices_type),
                      [("output", data_type, dims(rank)), ("onnx_output", data_type, dims(rank))],
                      onnx_opset=SCATTER_ELEMENTS_VERSIONS[version], initializers=[axis_init])


def _constant_value(elem_type: int, value) -> onnx.TensorProto:
    """A one-element tensor for ``ConstantOfShape``'s ``value`` attribute."""
    np_type = helper.tensor_dtype_to_np_dtype(elem_type)
    return onnx.numpy_helper.from_array(np.array([value], dtype=np_type), name="value")


def _identity(reduction: str, elem_type: int):
    """Where a touched target starts when ``use_init_val=0``: the reduction's identity (bfloat16's is float32's)."""
    return reduction_identity(reduction, helper.tensor_dtype_to_np_dtype(
        TensorProto.FLOAT if elem_type == TensorProto.BFLOAT16 else elem_type))


def scatter_mean_composition(data_type: int, rank: int, *, axis: int, reduction: str = "mean",
                             use_init_val: int = 1, rounding: str = "floor",
                             indices_type: int = TensorProto.INT64) -> onnx.ModelProto:
    """Model ``(data, indices, updates) -> output``: the standard-op composition an ONNX exporter
    would have to emit for ScatterElementsUpdate-12 where no ScatterElements reduction maps.

    That is ``reduction="mean"`` (either ``use_init_val``), and ``use_init_val=0`` with
    ``sum``, ``prod``, ``min`` or ``max``. Built at opset :data:`COMPOSITION_OPSET` (18) from
    ScatterElements-18, Shape, ConstantOfShape, Cast, Mod, Sub, Div and Identity.

    Parameters
    ----------
    data_type : int
        ``onnx.TensorProto`` element type of ``data``, ``updates`` and ``output``.
    rank : int
        Rank of ``data``, ``indices`` and ``updates``.
    axis : int
        The scatter axis (an attribute of the standard nodes).
    reduction : {"mean", "sum", "prod", "min", "max"}, default "mean"
    use_init_val : {0, 1}, default 1
    rounding : {"floor", "trunc"}, default "floor"
        Integer mean only. ``"floor"`` rounds toward negative infinity, as the OpenVINO spec
        says, built explicitly: ``(S - Mod(S, C)) / C`` (ONNX ``Mod`` with ``fmod=0`` takes the
        sign of the divisor, so ``S - Mod(S, C)`` is the multiple of ``C`` at or below ``S``
        and the truncating ``Div`` is exact). ``"trunc"`` is a plain ``Div``, which truncates
        toward zero for integers: what a naive exporter emits; it differs from the spec
        exactly where a sum is negative and not a multiple of its count.
    indices_type : int, default INT64
        INT32 or INT64.

    Returns
    -------
    onnx.ModelProto

    Raises
    ------
    ValueError
        For ``reduction="none"``, for ``use_init_val=1`` with anything but ``mean`` (those map
        onto one ScatterElements node: :func:`scatter_elements_update_side_by_side`), for
        ``mean`` on bool, or an unknown ``rounding``.
    OpError
        For an ``axis`` outside [-rank, rank-1].

    Notes
    -----
    This is the composition an exporter would emit; its result is an oracle for ortops, not a
    statement that it is exact everywhere:

    * **mean**: ``S = ScatterElements(add)(data, indices, updates)`` and
      ``C = ScatterElements(add)(ones, indices, ones)`` (int64 counts; data counts once), then
      ``S / C``. With ``use_init_val=0`` the touched targets of both are first reset to 0 by
      ``ScatterElements(none)`` (see below), so they hold only the updates and their count,
      while an untouched element stays ``data / 1``; no ``Where`` is needed (ORT 1.31 has no
      int16, uint16 or uint64 ``Where``). Floats divide in the element type, so float32
      accumulates in float32 (ortops: in float64, rounded once at the end). Integers go
      through int64 (``Cast`` of data and updates; uint64 stays uint64, where floor is
      truncation), then the division described under ``rounding``, then ``Cast`` back. Exact
      while every sum fits the work type: int64 sums that overflow, and uint64 sums above
      2**64 - 1, wrap (ortops: exact in every case).
    * **use_init_val=0 with sum, prod, min, max**: the touched targets are first reset to the
      reduction's identity (0, 1, the type's maximum/+inf, minimum/-inf; for bool, False for
      OR and True for AND) by ``ScatterElements(none)`` with a tensor of identities - several
      updates of one target all write the same value there, so ``none``'s undefined order
      does not matter - and then ``ScatterElements(reduction)`` combines the updates.
    """
    if reduction == "none":
        raise ValueError("reduction='none' maps onto ScatterElements reduction='none'; "
                         "use scatter_elements_update_side_by_side")
    if reduction not in ("mean", "sum", "prod", "min", "max"):
        raise ValueError(f"reduction={reduction!r} must be one of 'mean', 'sum', 'prod', 'min', 'max'")
    if use_init_val and reduction != "mean":
        raise ValueError(f"reduction={reduction!r} with use_init_val=1 maps onto ScatterElements-18 "
                         f"reduction={ONNX_REDUCTION[reduction]!r}; use scatter_elements_update_side_by_side")
    if reduction == "mean" and data_type == TensorProto.BOOL:
        raise ValueError("reduction='mean' is not defined for bool data (OpenVINO ScatterElementsUpdate-12)")
    if rounding not in ("floor", "trunc"):
        raise ValueError(f"rounding={rounding!r} must be 'floor' or 'trunc'")
    normalize_axis("ScatterElements", axis, rank)
    nodes: list[onnx.NodeProto] = []

    def add(op_type: str, inputs, output: str, **attrs) -> str:
        nodes.append(helper.make_node(op_type, list(inputs), [output], name=output, **attrs))
        return output

    def scatter(init: str, src: str, onnx_reduction: str, output: str) -> str:
        nodes.append(onnx_scatter_elements(18, init, "indices", src, axis=axis, reduction=onnx_reduction,
                                           output=output, name=output))
        return output

    data_shape = add("Shape", ["data"], "data_shape")
    updates_shape = add("Shape", ["updates"], "updates_shape")
    if reduction != "mean":
        identity = _constant_value(data_type, _identity(reduction, data_type))
        identities = add("ConstantOfShape", [updates_shape], "identities", value=identity)
        reset = scatter("data", identities, "none", "reset")
        scatter(reset, "updates", ONNX_REDUCTION[reduction], "output")
    else:
        work_type = data_type
        if helper.tensor_dtype_to_np_dtype(data_type).kind in "iu" and data_type != TensorProto.UINT64:
            work_type = TensorProto.INT64
        data_w, updates_w = "data", "updates"
        if work_type != data_type:
            data_w = add("Cast", ["data"], "data_int64", to=work_type)
            updates_w = add("Cast", ["updates"], "updates_int64", to=work_type)
        ones = add("ConstantOfShape", [updates_shape], "ones", value=_constant_value(TensorProto.INT64, 1))
        count_init = add("ConstantOfShape", [data_shape], "count_init", value=_constant_value(TensorProto.INT64, 1))
        sum_init = data_w
        if not use_init_val:  # touched targets start from 0 (sum) and 0 (count); the others keep data, 1
            zeros = add("ConstantOfShape", [updates_shape], "zeros", value=_constant_value(work_type, 0))
            zero_counts = add("ConstantOfShape", [updates_shape], "zero_counts",
                              value=_constant_value(TensorProto.INT64, 0))
            sum_init = scatter(data_w, zeros, "none", "sum_init")
            count_init = scatter(count_init, zero_counts, "none", "count_init_reset")
        sums = scatter(sum_init, updates_w, "add", "sums")
        counts = scatter(count_init, ones, "add", "counts")
        divisor = counts if work_type == TensorProto.INT64 else add("Cast", [counts], "divisor", to=work_type)
        if work_type == TensorProto.INT64 and rounding == "floor":
            remainder = add("Mod", [sums, divisor], "remainder", fmod=0)  # sign of the divisor (> 0)
            floor_multiple = add("Sub", [sums, remainder], "floor_multiple")
            mean = add("Div", [floor_multiple, divisor], "mean_work")  # exact: nothing left to round
        else:
            mean = add("Div", [sums, divisor], "mean_work")
        if work_type != data_type:
            add("Cast", [mean], "output", to=data_type)
        else:
            add("Identity", [mean], "output")
    return make_model(nodes, _inputs(data_type, rank, indices_type), [("output", data_type, dims(rank))],
                      onnx_opset=COMPOSITION_OPSET)
