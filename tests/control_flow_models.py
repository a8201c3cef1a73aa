"""Models with ortops nodes inside control flow and model-local functions, written with
onnx.helper: ``If`` branches, ``Loop`` and ``Scan`` bodies (nested too) and functions. The
reliability and fuzz tests build them in the parent process and run them in a child."""

from __future__ import annotations

from onnx import TensorProto, helper

from ortops import builder
from ortops.ops import OPENVINO_DOMAIN

F, I32, I64, BOOL = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64, TensorProto.BOOL
OPSET = 18


def _opsets(*extra):
    return [helper.make_opsetid("", OPSET), helper.make_opsetid(OPENVINO_DOMAIN, 1), *extra]


def _model(nodes, inputs, outputs, *, functions=(), extra_opsets=()):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info(*i) for i in inputs],
                              [helper.make_tensor_value_info(*o) for o in outputs])
    return helper.make_model(graph, ir_version=builder.IR_VERSION, opset_imports=_opsets(*extra_opsets),
                             functions=list(functions))


def top_k_node(data, k, outputs, name="top_k", **attrs):
    attrs = {"axis": -1, "mode": "max", "sort": "value", "stable": 1, "index_element_type": "i32", **attrs}
    return helper.make_node("TopK", [data, k], list(outputs), name=name, domain=OPENVINO_DOMAIN, **attrs)


def scan_top_k(*, reduce: bool = False, builtin: bool = False, data_type=F, **attrs):
    """``Scan`` over rows: data [N, 1, W] and k [N, 1] scanned on axis 0; the body runs TopK on
    a [1, W] slice. ``reduce``: the body's outputs are the sums of the values and indices
    (a per-iteration k is then valid); else the TopK outputs are the scan outputs themselves.
    ``builtin``: ONNX's own TopK in the same place, for comparison."""
    index_type = I64 if builtin or attrs.get("index_element_type") == "i64" else I32
    if builtin:
        node = helper.make_node("TopK", ["x", "k"], ["v", "i"], name="top_k", axis=-1, largest=1, sorted=1)
    else:
        node = top_k_node("x", "k", ["v", "i"], **attrs)
    nodes, outs = [node], [("v", data_type, [1, None]), ("i", index_type, [1, None])]
    if reduce:
        nodes += [helper.make_node("Cast", ["v"], ["vf"], to=F),
                  helper.make_node("ReduceSum", ["vf"], ["vs"], keepdims=0),
                  helper.make_node("Cast", ["i"], ["i64"], to=I64),
                  helper.make_node("ReduceSum", ["i64"], ["is"], keepdims=0)]
        outs = [("vs", F, []), ("is", I64, [])]
    body = helper.make_graph(nodes, "body", [helper.make_tensor_value_info("x", data_type, [1, None]),
                                             helper.make_tensor_value_info("k", I64, [1])],
                             [helper.make_tensor_value_info(*o) for o in outs])
    scan = helper.make_node("Scan", ["data", "ks"], ["values", "indices"], num_scan_inputs=2, body=body, name="scan")
    return _model([scan], [("data", data_type, [None, 1, None]), ("ks", I64, [None, 1])],
                  [("values", outs[0][1], None), ("indices", outs[1][1], None)])


def scan_scatter(*, reduction="sum", use_init_val=1):
    """``Scan`` over rows of ScatterElementsUpdate: data [N, W], indices and updates [N, U],
    axis 0 of each row; the scan output is the updated row."""
    body_nodes = [helper.make_node("ScatterElementsUpdate", ["d", "i", "u", "axis"], ["o"], name="scatter",
                                   domain=OPENVINO_DOMAIN, reduction=reduction, use_init_val=use_init_val)]
    body = helper.make_graph(body_nodes, "body", [helper.make_tensor_value_info("d", F, [None]),
                                                  helper.make_tensor_value_info("i", I64, [None]),
                                                  helper.make_tensor_value_info("u", F, [None])],
                             [helper.make_tensor_value_info("o", F, [None])])
    axis = helper.make_node("Constant", [], ["axis"], value=helper.make_tensor("axis_value", I64, [], [0]))
    scan = helper.make_node("Scan", ["data", "indices", "updates"], ["output"], num_scan_inputs=3, body=body,
                            name="scan")
    return _model([axis, scan], [("data", F, [None, None]), ("indices", I64, [None, None]),
                                 ("updates", F, [None, None])], [("output", F, None)])


def if_top_k(*, data_type=F, then_attrs=None, else_attrs=None):
    """``If`` with TopK in both branches (mode max in then, min in else); the branch outputs
    are the If's outputs, the graph's outputs."""
    index_type = I64 if (then_attrs or {}).get("index_element_type") == "i64" else I32

    def branch(name, attrs):
        prefix = name[0]
        node = top_k_node("data", "k", [f"{prefix}v", f"{prefix}i"], name=f"{name}_top_k", **attrs)
        return helper.make_graph([node], name, [], [helper.make_tensor_value_info(f"{prefix}v", data_type, None),
                                                    helper.make_tensor_value_info(f"{prefix}i", index_type, None)])

    node = helper.make_node("If", ["cond"], ["values", "indices"], name="if",
                            then_branch=branch("then", {"mode": "max", **(then_attrs or {})}),
                            else_branch=branch("else", {"mode": "min", **(else_attrs or {})}))
    return _model([node], [("cond", BOOL, []), ("data", data_type, [None, None]), ("k", I64, [1])],
                  [("values", data_type, None), ("indices", index_type, None)])


def function_top_k(*, mode="max", mode_from_caller=None, calls=1, data_type=F, **attrs):
    """TopK inside a model-local function ``local.top_k_fn(data, k) -> (values, indices)``.
    ``mode_from_caller``: the node's mode refers to the function's attribute ``mode``, which
    the call site sets to this value. ``calls=2`` calls it twice (outputs values2, indices2)."""
    index_type = I64 if attrs.get("index_element_type") == "i64" else I32
    node = top_k_node("d", "kk", ["fv", "fi"], name="fn_top_k", **{**attrs, "mode": mode})
    attributes = []
    if mode_from_caller is not None:
        for i, attr in enumerate(node.attribute):
            if attr.name == "mode":
                ref = helper.make_attribute_ref("mode", attr.type)
                del node.attribute[i]
                node.attribute.append(ref)
                break
        attributes = ["mode"]
    function = helper.make_function("local", "top_k_fn", ["d", "kk"], ["fv", "fi"], [node], _opsets(),
                                    attributes=attributes)
    call_attrs = {"mode": mode_from_caller} if mode_from_caller is not None else {}
    nodes, outputs = [], []
    for c in range(calls):
        suffix = "" if c == 0 else str(c + 1)
        nodes.append(helper.make_node("top_k_fn", ["data", "k"], [f"values{suffix}", f"indices{suffix}"],
                                      domain="local", name=f"call{suffix}", **call_attrs))
        outputs += [(f"values{suffix}", data_type, None), (f"indices{suffix}", index_type, None)]
    return _model(nodes, [("data", data_type, [None, None]), ("k", I64, [1])], outputs, functions=[function],
                  extra_opsets=[helper.make_opsetid("local", 1)])


def loop_top_k(*, nested_if: bool = False, data_type=F, **attrs):
    """``Loop`` M times; iteration t runs TopK on data with k = ks[t] and its scan outputs
    are the TopK outputs. ``nested_if``: the TopK sits in an If branch inside the body (the
    else branch runs it with mode min)."""
    index_type = I64 if attrs.get("index_element_type") == "i64" else I32
    gather = helper.make_node("Gather", ["ks", "t"], ["kt"], axis=0)
    if nested_if:
        def branch(name, mode):
            prefix = name[0]
            return helper.make_graph([top_k_node("data", "kt", [f"{prefix}v", f"{prefix}i"], name=f"{name}_top_k",
                                                 **{**attrs, "mode": mode})], name, [],
                                     [helper.make_tensor_value_info(f"{prefix}v", data_type, None),
                                      helper.make_tensor_value_info(f"{prefix}i", index_type, None)])

        parity = [helper.make_node("Constant", [], ["two"], value=helper.make_tensor("two_value", I64, [], [2])),
                  helper.make_node("Mod", ["t", "two"], ["r"]),
                  helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("zero_value", I64, [], [0])),
                  helper.make_node("Equal", ["r", "zero"], ["even"])]
        inner = helper.make_node("If", ["even"], ["v", "i"], then_branch=branch("then", "max"),
                                 else_branch=branch("else", "min"), name="inner_if")
        body_nodes = [gather, *parity, inner]
    else:
        body_nodes = [gather, top_k_node("data", "kt", ["v", "i"], **attrs)]
    body_nodes.append(helper.make_node("Identity", ["cond"], ["cond_out"]))
    body = helper.make_graph(body_nodes, "body", [helper.make_tensor_value_info("t", I64, []),
                                                  helper.make_tensor_value_info("cond", BOOL, [])],
                             [helper.make_tensor_value_info("cond_out", BOOL, []),
                              helper.make_tensor_value_info("v", data_type, None),
                              helper.make_tensor_value_info("i", index_type, None)])
    loop = helper.make_node("Loop", ["M", ""], ["values", "indices"], body=body, name="loop")
    return _model([loop], [("M", I64, []), ("data", data_type, [None, None]), ("ks", I64, [None, 1])],
                  [("values", data_type, None), ("indices", index_type, None)])
