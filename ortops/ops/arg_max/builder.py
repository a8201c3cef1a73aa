"""Builders for ncnn ArgMax: the ortops node, its standard-op equivalents, side by side.

The standard ONNX compositions ncnn ArgMax maps to (all on the tensor flattened in C order):

* ``topk=1``: ``Reshape(data, [-1])`` -> ``ArgMax(axis=0, keepdims=1, select_last_index=1)``
  (ArgMax-12 or later): the last of the equal maxima, ncnn's tie rule.
* ``topk>1``: TopK-11 puts the LOWER index first among equal values; ncnn the HIGHER. The exact
  composition runs TopK-11 on the reversed flattened tensor (``Slice`` with step -1) and maps
  each index back, ``i -> n - 1 - i``: the lower reversed index is the higher original one.
* ``out_max_val=1``: values and indices, each ``Unsqueeze``\\ d to [1, topk], ``Concat``\\ ed
  to [2, topk]; indices are ``Cast`` to float32 (ncnn's output type).

The *naive* mapping (``exact_ties=False``) is TopK-11 straight on the flattened tensor; it
differs from ncnn only in which of equal values come first (and are kept at the boundary).
"""

from __future__ import annotations

import onnx
from onnx import TensorProto, helper

from .spec import ARG_MAX
from ...builder.common import custom_node, dims, make_model

__all__ = [
    "ARG_MAX_OPSET",
    "arg_max",
    "onnx_arg_max_equivalent",
    "arg_max_model",
    "onnx_arg_max_equivalent_model",
    "arg_max_side_by_side",
]

#: Default-domain opset of the equivalent models: ArgMax-13 (``select_last_index`` needs >= 12),
#: TopK-11, Slice-13, Unsqueeze-13 (axes as an input).
ARG_MAX_OPSET = 13
_INT64_MIN = -(2**63)


def arg_max(data: str, *, out_max_val: int = 0, topk: int = 1, output: str = "output",
            name: str = "") -> onnx.NodeProto:
    """``ortops.ncnn::ArgMax`` node (ncnn's ArgMax layer).

    Parameters
    ----------
    data : str
        Name of a float32 tensor of any shape.
    out_max_val : {0, 1}, default 0
        Also output the values (row 0 of a [2, topk] output).
    topk : int, default 1
        How many of the largest elements to return.
    output : str, default "output"
        Name of the float32 [1, topk] or [2, topk] output.
    name : str, default ""
        Node name (shown in errors).

    Raises
    ------
    OpError
        For an attribute outside its range (``out_max_val`` not 0/1, ``topk < 1``).

    Notes
    -----
    Source: ncnn ``src/layer/argmax.cpp``; semantics in :func:`ortops.reference.arg_max`.
    The output is [1, topk] flat indices as float32, or [2, topk] with the values in row 0;
    value descending, the higher flat index first among equal values, NaN above +inf.
    Deliberate divergences from ncnn: ``topk`` above the element count, an empty input and a
    selected index above 2**24 are errors; and only logical elements count. ncnn's
    ``Mat::total()`` is ``cstep * c``, where a 3-D (or 4-D) blob's channel step ``cstep`` is
    rounded up to 16 bytes: when ``w * h`` (times ``d``) is not a multiple of 4, ncnn also
    ranks the padding after each channel and its indices count it (element (c, y, x) is
    ``c * cstep + y * w + x``); ortops flattens the logical tensor in C order
    (``c * h * w + y * w + x``). Since ncnn release 20250916, 1-D and 2-D ``Mat`` objects are padded
    to a multiple of 4 elements too, so ncnn can rank padding there as well. Only inputs with
    no padding in any rank (element counts per channel a multiple of 4) agree by layout.
    """
    return custom_node(ARG_MAX, (data,), (output,), name, dict(out_max_val=out_max_val, topk=topk))


def onnx_arg_max_equivalent(data: str, *, out_max_val: int = 0, topk: int = 1, exact_ties: bool = True,
                            output: str = "onnx_output", prefix: str = "onnx_arg_max"
                            ) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    """Standard ONNX nodes computing ncnn ArgMax of ``data``: ``(nodes, initializers)``.

    Needs default-domain opset >= 12 (>= 13 for ``Unsqueeze`` with an axes input; use
    :data:`ARG_MAX_OPSET`). Intermediate names and node names start with ``prefix``.

    Parameters
    ----------
    data : str
        Name of a float32 tensor of any shape with at least ``topk`` elements.
    out_max_val, topk : int
        As for :func:`arg_max`.
    exact_ties : bool, default True
        True: ncnn's tie rule exactly (ArgMax with ``select_last_index=1`` for ``topk=1``;
        TopK-11 on the reversed tensor otherwise). False: the naive mapping, TopK-11 on the
        flattened tensor, which puts the lower index first among equal values.
    output : str
        Name of the float32 [1, topk] or [2, topk] result.
    prefix : str
        Prefix of every intermediate and node name.

    Notes
    -----
    NaN: ORT's ArgMax and TopK do not order NaN like ortops does (NaN above +inf); the
    conformance suite shows the difference as explained.
    """
    if out_max_val not in (0, 1) or topk < 1:
        raise ValueError(f"need out_max_val in (0, 1) and topk >= 1; got out_max_val={out_max_val}, topk={topk}")
    p, nodes, inits = prefix, [], []

    def const(name: str, value: int) -> None:
        inits.append(helper.make_tensor(f"{p}/{name}", TensorProto.INT64, [1], [value]))

    def add(op_type: str, inputs, outputs, name: str, **attrs) -> None:
        nodes.append(helper.make_node(op_type, inputs, outputs, name=f"{p}/{name}", **attrs))

    const("flat_shape", -1)
    const("axis0", 0)
    flat = f"{p}/flat"
    add("Reshape", [data, f"{p}/flat_shape"], [flat], "reshape")
    if topk == 1 and exact_ties:
        add("ArgMax", [flat], [f"{p}/indices"], "arg_max", axis=0, keepdims=1, select_last_index=1)
        if out_max_val:
            add("Gather", [flat, f"{p}/indices"], [f"{p}/values"], "gather", axis=0)
    else:
        const("k", topk)
        if exact_ties:
            for name, value in (("start", -1), ("end", _INT64_MIN), ("step", -1), ("one", 1)):
                const(name, value)
            add("Slice", [flat, f"{p}/start", f"{p}/end", f"{p}/axis0", f"{p}/step"], [f"{p}/reversed"], "reverse")
        top_indices = f"{p}/reversed_indices" if exact_ties else f"{p}/indices"
        add("TopK", [f"{p}/reversed" if exact_ties else flat, f"{p}/k"], [f"{p}/values", top_indices], "top_k",
            axis=0, largest=1, sorted=1)
        if exact_ties:  # index i of the reversed tensor is n - 1 - i of the original
            add("Shape", [flat], [f"{p}/size"], "shape")
            add("Sub", [f"{p}/size", f"{p}/one"], [f"{p}/last"], "last")
            add("Sub", [f"{p}/last", top_indices], [f"{p}/indices"], "unreverse")
    add("Cast", [f"{p}/indices"], [f"{p}/float_indices"], "cast", to=TensorProto.FLOAT)
    rows = [f"{p}/values", f"{p}/float_indices"] if out_max_val else [f"{p}/float_indices"]
    for row in rows:
        nodes.append(helper.make_node("Unsqueeze", [row, f"{p}/axis0"], [f"{row}_row"], name=f"{row}_unsqueeze"))
    if out_max_val:
        add("Concat", [f"{r}_row" for r in rows], [output], "concat", axis=0)
    else:
        add("Identity", [f"{rows[0]}_row"], [output], "output")
    return nodes, inits


def _input(rank: int):
    return ("data", TensorProto.FLOAT, dims(rank))


def _output(name: str, out_max_val: int, topk: int):
    return (name, TensorProto.FLOAT, [2 if out_max_val else 1, topk])


def arg_max_model(rank: int, *, out_max_val: int = 0, topk: int = 1) -> onnx.ModelProto:
    """Model ``data -> output`` with one ``ortops.ncnn::ArgMax`` node.

    ``data`` is float32 of rank ``rank`` (symbolic dims); ``output`` float32 [1 or 2, topk].
    """
    node = arg_max("data", out_max_val=out_max_val, topk=topk, name="arg_max")
    return make_model([node], [_input(rank)], [_output("output", out_max_val, topk)], onnx_opset=ARG_MAX_OPSET)


def onnx_arg_max_equivalent_model(rank: int, *, out_max_val: int = 0, topk: int = 1,
                                  exact_ties: bool = True) -> onnx.ModelProto:
    """Model ``data -> output`` computing ncnn ArgMax with standard ONNX ops only (opset 13).

    ``data`` is float32 of rank ``rank``. See :func:`onnx_arg_max_equivalent` for the
    composition and ``exact_ties``.
    """
    nodes, inits = onnx_arg_max_equivalent("data", out_max_val=out_max_val, topk=topk, exact_ties=exact_ties,
                                           output="output")
    return make_model(nodes, [_input(rank)], [_output("output", out_max_val, topk)],
                      onnx_opset=ARG_MAX_OPSET, initializers=inits)


def arg_max_side_by_side(rank: int, *, out_max_val: int = 0, topk: int = 1,
                         exact_ties: bool = True) -> onnx.ModelProto:
    """One input ``data`` feeding the ortops ArgMax and its standard-op equivalent.

    ``data`` is float32 of rank ``rank``. Outputs: ``output`` (ortops) and ``onnx_output``
    (the composition of :func:`onnx_arg_max_equivalent`, exact unless ``exact_ties=False``),
    both float32 [1 or 2, topk].
    """
    custom = arg_max("data", out_max_val=out_max_val, topk=topk, name="ortops_arg_max")
    nodes, inits = onnx_arg_max_equivalent("data", out_max_val=out_max_val, topk=topk, exact_ties=exact_ties,
                                           output="onnx_output")
    return make_model([custom, *nodes], [_input(rank)],
                      [_output("output", out_max_val, topk), _output("onnx_output", out_max_val, topk)],
                      onnx_opset=ARG_MAX_OPSET, initializers=inits)
