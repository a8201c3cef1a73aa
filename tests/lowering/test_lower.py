"""ortops.lower: the report, the opset rules, subgraphs, and standalone models in plain ONNX
Runtime (a child process that never imports onnxruntime_extensions) and in OpenVINO (no
frontend extension)."""

from __future__ import annotations

import importlib

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import ortops
from ortops import builder, reference
from ortops.builder.common import set_static_shapes
from ortops.ops import DOMAINS
from ortops.graph import graphs

from child_process import run_child
from conftest import assert_identical

lower_module = importlib.import_module("ortops.lowering")


def _top_k_model():
    return builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="index")


def _scatter_model(reduction="min", onnx_opset=11, extra_node=False):
    model = builder.scatter_elements_update_model(TensorProto.FLOAT, 1, reduction=reduction)
    model.graph.initializer.append(numpy_helper.from_array(np.array([0], np.int64), "axis"))
    inputs = [i for i in model.graph.input if i.name != "axis"]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    if extra_node:
        model.graph.node.append(helper.make_node("Identity", ["output"], ["copy"], name="copy"))
        model.graph.output.append(helper.make_tensor_value_info("copy", TensorProto.FLOAT, None))
    return model


def _ours(model) -> list[str]:
    from ortops.graph import graphs

    return [n.name for g in graphs(model.graph) for n in g.node if n.domain in DOMAINS]


def test_report_names_lowered_and_kept_nodes():
    lowered, report = ortops.lower(_top_k_model())
    assert [(n.name, n.op, n.mode) for n in report.lowered] == [("top_k", "ortops.openvino::TopK", "guarded")]
    assert report.kept == () and not report.standalone
    assert _ours(lowered) == ["top_k"]  # the PyOp, inside the If's fallback branch
    lowered, report = ortops.lower(_top_k_model(), fallback="none")
    assert report.standalone and _ours(lowered) == []
    assert "lowered (standalone): ortops.openvino::TopK node 'top_k'" in str(report)


def test_the_input_model_is_not_modified():
    model = _top_k_model()
    before = model.SerializeToString()
    ortops.lower(model, fallback="none")
    assert model.SerializeToString() == before


def test_bad_fallback_is_refused():
    with pytest.raises(ValueError, match="fallback"):
        ortops.lower(_top_k_model(), fallback="numpy")


def test_opset_is_raised_when_the_model_has_no_other_standard_nodes():
    lowered, report = ortops.lower(_scatter_model("min"))
    assert report.lowered and report.opset == lower_module.LOWERED_OPSET
    onnx.checker.check_model(lowered)


def test_a_model_with_its_own_old_opset_nodes_keeps_its_opset_and_the_node():
    model = _scatter_model("min", extra_node=True)
    lowered, report = ortops.lower(model)
    assert not report.lowered and "opset >= 18" in report.kept[0].reason
    assert [o.version for o in lowered.opset_import if o.domain == ""] == [11]


def test_nodes_in_subgraphs_are_lowered():
    inner = builder.top_k("data", "k", axis=0, mode="min", sort="value", name="inner_top_k")
    inner.output[:] = ["v", "i"]
    branch = helper.make_graph([inner], "then", [], [helper.make_tensor_value_info("v", TensorProto.FLOAT, None),
                                                    helper.make_tensor_value_info("i", TensorProto.INT32, None)])
    other = helper.make_graph(
        [helper.make_node("Identity", ["data"], ["v2"]), helper.make_node("Cast", ["data"], ["i2"], to=6)], "else", [],
        [helper.make_tensor_value_info("v2", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("i2", TensorProto.INT32, None)])
    node = helper.make_node("If", ["c"], ["values", "indices"], then_branch=branch, else_branch=other, name="if")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                            helper.make_tensor_value_info("data", TensorProto.FLOAT, [5]),
                                            helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
                              [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("indices", TensorProto.INT32, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                    helper.make_opsetid("ortops.openvino", 1)], ir_version=9)
    lowered, report = ortops.lower(model, fallback="none")
    assert [n.name for n in report.lowered] == ["inner_top_k"] and _ours(lowered) == []
    import onnxruntime as ort

    data = np.array([3, -0.0, 0.0, 1, -0.0], np.float32)
    got = ort.InferenceSession(lowered.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"c": np.array(True), "data": data, "k": np.array([3])})
    want = reference.top_k(data, 3, axis=0, mode="min", sort="value")
    assert_identical(got[0], want.values)
    assert_identical(got[1], want.indices)


STANDALONE_CHILD = """
import sys
import numpy as np
import onnxruntime as ort
session = ort.InferenceSession(sys.argv[1], providers=["CPUExecutionProvider"])
data = np.array([[1, np.nan, 0.0, -0.0, 3, 3, -np.inf, np.inf]], np.float32)
values, indices = session.run(None, {"data": data, "k": np.array([5])})
print(values.tolist(), indices.tolist(), np.signbit(values).tolist())
assert "onnxruntime_extensions" not in sys.modules and "ortops" not in sys.modules
try:
    session.run(None, {"data": data, "k": np.array([0])})
except Exception as exc:
    print("ERROR", exc)
"""


def test_standalone_model_runs_in_plain_onnxruntime_without_the_extensions_library(tmp_path):
    path = tmp_path / "standalone.onnx"
    onnx.save(ortops.lower(_top_k_model(), fallback="none").model, path)
    child = run_child(f"import sys; sys.argv[1:] = [{str(path)!r}]\n" + STANDALONE_CHILD, cwd=str(tmp_path))
    assert child.status == 0, child.describe()
    data = np.array([[1, np.nan, 0.0, -0.0, 3, 3, -np.inf, np.inf]], np.float32)
    want = reference.top_k(data, 5, axis=-1, mode="max", sort="index")
    first = child.lines()[0]
    assert first.startswith(str(want.values.tolist()).replace("nan", "nan")[:2])
    assert str(want.indices.tolist()) in first
    assert "ERROR" in child.stdout and "rejects its input: k must be" in child.stdout


def test_standalone_model_runs_in_openvino_without_the_frontend_extension(tmp_path):
    ov = pytest.importorskip("openvino")
    path = tmp_path / "standalone.onnx"
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="min", sort="value")
    onnx.save(ortops.lower(model, fallback="none").model, path)
    core = ov.Core()
    compiled = core.compile_model(core.read_model(str(path)), "CPU")
    # No ties: OpenVINO's ONNX TopK does not keep the lower index first among equal values
    # (seen with 2026.4.1: [4, 1, 3, 1, 2, 0.5] k=3 gave indices [5, 3, 1]), so a standalone
    # model is exact there only on tie-free data (docs/lowering.md, Standalone models in OpenVINO).
    data = np.array([[4, 1, 3, 1.5, 2, 0.5]], np.float32)
    result = compiled({"data": data, "k": np.array([3], np.int64)})
    want = reference.top_k(data, 3, axis=1, mode="min", sort="value")
    outputs = list(result.values())
    np.testing.assert_array_equal(outputs[0], want.values)
    np.testing.assert_array_equal(outputs[1], want.indices)


def test_session_paths_agree_and_show_what_was_lowered():
    model = _top_k_model()
    data = np.array([[2, 2, 1, -0.0, 0.0, 7]], np.float32)
    results = {}
    for path in ("pyop", "lowered", "auto"):
        session = ortops.InferenceSession(model, path=path)
        assert session.lowered_nodes == (() if path == "pyop" else ("top_k",))
        results[path] = session.run(None, {"data": data, "k": np.array([4])})
    for path in ("lowered", "auto"):
        for got, want in zip(results[path], results["pyop"]):
            assert_identical(got, want)
    with pytest.raises(ValueError, match="path"):
        ortops.InferenceSession(model, path="fast")


def test_auto_path_keeps_arg_max_as_pyop():
    session = ortops.InferenceSession(builder.arg_max_model(2, topk=2))
    assert session.lowered_nodes == ()
    assert session.lowering.kept[0].reason == ("path='auto' keeps ArgMax as a PyOp: it measured faster than its "
                                               "lowered composition (path='lowered' lowers it)")


def _bfloat16_model(op: str):
    """float32 in, Cast to bfloat16 around the ortops node (NumPy has no bfloat16), float32 out."""
    cast_in = [helper.make_node("Cast", ["x"], ["xb"], to=TensorProto.BFLOAT16)]
    if op == "TopK":
        node = builder.top_k("xb", "k", axis=-1, mode="max", sort="index", name="node")
        node.output[:] = ["vb", "i"]
        inputs = [helper.make_tensor_value_info("k", TensorProto.INT64, [1])]
        outputs = [helper.make_tensor_value_info("i", TensorProto.INT32, None)]
        initializers = []
    else:
        node = builder.scatter_elements_update("xb", "ind", "ub", "axis", reduction=op, name="node")
        node.output[:] = ["vb"]
        cast_in.append(helper.make_node("Cast", ["u"], ["ub"], to=TensorProto.BFLOAT16))
        inputs = [helper.make_tensor_value_info("ind", TensorProto.INT64, [2, 6]),
                  helper.make_tensor_value_info("u", TensorProto.FLOAT, [2, 6])]
        outputs = []
        initializers = [numpy_helper.from_array(np.array([1], np.int64), "axis")]
    graph = helper.make_graph([*cast_in, node, helper.make_node("Cast", ["vb"], ["v"], to=TensorProto.FLOAT)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6]), *inputs],
                              [helper.make_tensor_value_info("v", TensorProto.FLOAT, None), *outputs],
                              initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18),
                                                   helper.make_opsetid("ortops.openvino", 1)], ir_version=9)


@pytest.mark.parametrize("op", ["TopK", "none", "min", "max"])
def test_bfloat16_lowered_paths_equal_the_pyop(op):
    import onnxruntime as ort

    rng = np.random.default_rng(0)
    special = np.array([0.0, -0.0, 1.5, np.nan, 3.0, -np.inf], np.float32)
    model = _bfloat16_model(op)
    for _ in range(5):
        feed = {"x": rng.choice(special, size=(2, 6))}
        feed.update({"k": np.array([4])} if op == "TopK" else
                    {"ind": rng.integers(-6, 6, (2, 6)), "u": rng.choice(special, size=(2, 6))})
        want = ortops.InferenceSession(model, path="pyop").run(None, feed)
        standalone = ortops.lower(model, fallback="none").model
        for got in (ort.InferenceSession(standalone.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feed),
                    ortops.InferenceSession(model, path="lowered").run(None, feed)):
            for g, w in zip(got, want):
                assert_identical(g, w)


def test_lowering_a_guarded_model_again_leaves_its_fallbacks_alone():
    once, _ = ortops.lower(_top_k_model())
    twice, report = ortops.lower(once)
    assert report.lowered == () and report.kept == ()
    assert twice.SerializeToString() == once.SerializeToString()
    session = ortops.InferenceSession(once)  # path="auto" on a lowered model
    assert session.lowered_nodes == ()
    data = np.array([[3, 1, 2, 0.0, -0.0]], np.float32)
    want = reference.top_k(data, 3, axis=-1, mode="max", sort="index")
    got = session.run(None, {"data": data, "k": np.array([3])})
    assert_identical(got[0], want.values)
    assert_identical(got[1], want.indices)
    with pytest.raises(ortops.OpError) as info:
        session.run(None, {"data": data, "k": np.array([9])})
    assert info.value.node_name == "top_k"  # the fallback went through the bridge's named twin


def _session_ops(session) -> set[str]:
    from ortops.graph import graphs

    return {n.op_type for g in graphs(session.model.graph) for n in g.node}


def test_session_leaves_the_k_check_to_topk_and_still_raises_op_error():
    """With a dynamic k, InferenceSession's lowering has no If and no PyOp when this ORT's TopK
    rejects bad k itself (a probed fact): a failed call is re-run on the PyOp path for its
    OpError. Without the fact the guard is an If around the PyOp."""
    facts = lower_module.runtime_facts()
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="index", index_element_type="i64")
    session = ortops.InferenceSession(model)
    data = np.array([[3, 1, 3, 2, -0.0, 0.0]], np.float32)
    if {"topk_rejects_bad_k", "topk_nan_order"} <= facts:  # observed: ORT 1.32 has both, 1.31 the first
        assert "If" not in _session_ops(session) and not any(o.startswith("TopK_i") for o in _session_ops(session))
    for k in (0, 7, -1, -2 ** 63, 2 ** 32 + 2, 2 ** 32, -(2 ** 32) + 2):  # ORT 1.32's TopK reads k's low 32 bits
        with pytest.raises(ortops.OpError, match=f"k={k} is outside") as info:
            session.run(None, {"data": data, "k": np.array([k])})
        assert info.value.node_name == "top_k" and info.value.kind == "k_range", info.value
        got = session.run(None, {"data": data, "k": np.array([4])})  # still works
        want = reference.top_k(data, 4, axis=1, mode="max", sort="index", index_element_type="i64")
        assert_identical(got[0], want.values) and assert_identical(got[1], want.indices)
    without = lower_module.lower(model, assume=facts - {"topk_rejects_bad_k"} | {lower_module.ERRORS_TRANSLATED})
    assert "If" in {n.op_type for n in without.model.graph.node}


@pytest.mark.parametrize("bind", ["numpy", "ortvalue", "pointer"])
def test_session_iobinding_with_a_bad_k_raises_op_error(bind):
    """A bad k that fails a lowered node is re-run on the PyOp path from the binding's inputs,
    however they were bound in CPU memory: OpError, not ORT's error."""
    import onnxruntime as ort

    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value", index_element_type="i64")
    session = ortops.InferenceSession(model)
    binding = session.io_binding()
    feed = {"data": np.array([[3, 1, 2]], np.float32), "k": np.array([7], np.int64)}
    for name, array in feed.items():
        if bind == "numpy":
            binding.bind_cpu_input(name, array)
        elif bind == "ortvalue":
            binding.bind_ortvalue_input(name, ort.OrtValue.ortvalue_from_numpy(array))
        else:
            binding.bind_input(name, "cpu", 0, array.dtype, list(array.shape), array.ctypes.data)
    for name in ("values", "indices"):
        binding.bind_output(name)
    with pytest.raises(ortops.OpError, match=r"k=7 is outside \[1, 3\]") as info:
        session.run_with_iobinding(binding)
    assert info.value.kind == "k_range"
    feed["k"][0] = 2  # the same buffers, a good k: the binding still runs
    session.run_with_iobinding(binding)
    assert binding.copy_outputs_to_cpu()[0].tolist() == [[3, 2]]


def test_lower_refuses_an_input_type_the_op_does_not_take():
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value")
    for info in model.graph.input:
        if info.name == "k":
            info.type.tensor_type.elem_type = TensorProto.FLOAT
    for fallback in ("pyop", "none"):
        with pytest.raises(ortops.OpError, match="input 'k' has type float"):
            ortops.lower(model, fallback=fallback)


def test_a_session_with_every_node_lowered_loads_no_extensions_library():
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value")
    lowered = ortops.InferenceSession(model, path="lowered")
    pyop = ortops.InferenceSession(model, path="pyop")
    key = "ortops.custom_ops_registered"
    assert pyop.get_session_options().get_session_config_entry(key) == "1"
    if lowered.lowering.kept or "If" in _session_ops(lowered):
        pytest.skip("this ORT needs the PyOp fallback for TopK (a runtime fact not observed)")
    with pytest.raises(RuntimeError):  # ORT raises for an absent key
        lowered.get_session_options().get_session_config_entry(key)
    data = np.array([[1, 3, 2]], np.float32)
    for got, want in zip(lowered.run(None, {"data": data, "k": np.array([2])}),
                         pyop.run(None, {"data": data, "k": np.array([2])})):
        assert_identical(got, want)


@pytest.mark.parametrize("fallback", ["none", "pyop"])
def test_initializers_only_the_lowered_node_read_are_removed(fallback):
    """The standalone lowering reads a constant axis at lowering time: no node reads the 'axis'
    initializer any more, and it goes (ORT warned "Removing initializer 'axis'" on every
    session). The guarded model's PyOp fallback still reads it: it stays."""
    lowered, _ = ortops.lower(_scatter_model(reduction="none", extra_node=True), fallback=fallback)
    names = {t.name for t in lowered.graph.initializer}
    read = {name for g in graphs(lowered.graph) for n in g.node for name in n.input}
    assert ("axis" in names) == (fallback == "pyop") == ("axis" in read)
    assert names <= read | {o.name for o in lowered.graph.output}


def test_a_graph_input_with_an_initializer_is_a_default_not_a_constant():
    """An initializer that is also a graph input is a default a feed replaces: no lowering may
    build on its value (every lowered path returned all 10 elements for a fed k of 3)."""
    data = np.array([[5, 3, 1, 2, 5, 5, 0, 7, 7, 4]], np.float32)
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="index", stable=1)
    set_static_shapes(model, data=(1, 10))  # with k a constant too, sort=index would return the data itself
    model.graph.initializer.append(numpy_helper.from_array(np.array([10], np.int64), "k"))
    standalone, _ = ortops.lower(model, fallback="none")
    plain = ort.InferenceSession(standalone.SerializeToString(), providers=["CPUExecutionProvider"])
    sessions = [plain, *(ortops.InferenceSession(model, path=p) for p in ("auto", "lowered", "pyop"))]
    for session in sessions:
        for feed, k in (({"data": data, "k": np.array([3])}, 3), ({"data": data}, 10)):
            for got, want in zip(session.run(None, feed), reference.top_k(data, k, axis=1, mode="max", sort="index")):
                assert_identical(got, want)
    scatter = builder.scatter_elements_update_model(TensorProto.FLOAT, 2, reduction="none")
    scatter.graph.initializer.append(numpy_helper.from_array(np.array([0], np.int64), "axis"))  # fed 1
    with pytest.raises(ValueError, match="the axis input is not a constant"):
        ortops.lower(scatter, fallback="none")
    x, indices, updates = np.zeros((3, 3), np.float32), np.array([[2, 1, 0]]), np.array([[1, 2, 3]], np.float32)
    want = reference.scatter_elements_update(x, indices, updates, 1, reduction="none")
    for path in ("auto", "lowered", "pyop"):
        got, = ortops.InferenceSession(scatter, path=path).run(
            None, {"data": x, "indices": indices, "updates": updates, "axis": np.array([1])})
        assert_identical(got, want)


def test_an_axis_outside_the_rank_fails_at_creation_and_lowering():
    """The rank is known from the model: a bad axis is an OpError when the session is created
    (as a bad mode is), not at run, and lower() refuses the node the same way."""
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=0, mode="max", sort="value")
    next(a for a in model.graph.node[0].attribute if a.name == "axis").i = 5  # the builder refuses axis=5
    for path in ("auto", "pyop", "lowered"):
        with pytest.raises(ortops.OpError, match=r"TopK node 'top_k': axis=5 is outside \[-2, 1\] for rank 2"):
            ortops.InferenceSession(model, path=path)
    with pytest.raises(ortops.OpError, match="axis=5"):
        ortops.lower(model, fallback="none")
    ortops.InferenceSession(builder.top_k_model(TensorProto.FLOAT, 2, axis=-2, mode="max", sort="value"))


def test_a_guarded_model_lowered_again_standalone_is_standalone():
    """lower(lower(m), fallback="none"): the PyOp fallbacks inside the guarded Ifs are lowered
    too, so the model runs in plain onnxruntime and gives the same answers."""
    import onnxruntime as ort

    guarded, _ = ortops.lower(_top_k_model())
    standalone, report = ortops.lower(guarded, fallback="none")
    assert report.standalone and report.left == () and _ours(standalone) == []
    assert not any(o.domain in DOMAINS for o in standalone.opset_import)
    data = np.array([[3, 1, 3, 2], [np.nan, 0, -0.0, 0.0]], np.float32)
    plain = ort.InferenceSession(standalone.SerializeToString(), providers=["CPUExecutionProvider"])
    got = plain.run(None, {"data": data, "k": np.array([3])})
    want = reference.top_k(data, np.array([3]), axis=-1, mode="max", sort="index")
    for g, w in zip(got, want):
        assert_identical(g, w)


def test_a_guarded_model_whose_fallback_cannot_be_lowered_is_refused():
    model = builder.top_k_model(TensorProto.UINT64, 1, axis=0, mode="max", sort="value")  # no exact composition
    guarded, report = ortops.lower(model)
    assert report.kept and not report.standalone
    with pytest.raises(ValueError, match="cannot be made standalone.*top_k"):
        ortops.lower(guarded, fallback="none")


@pytest.mark.parametrize("standard", [False, True])
def test_nodes_in_model_local_functions_are_lowered(standard):
    """A model-local function's ortops node (or, with standard=True, its standard TopK) is
    lowered at its call sites, as prepare_model inlines it: the standalone model holds no
    ortops node anywhere, runs in plain onnxruntime and gives the reference's answer. Before,
    lower() never looked into functions and called such a model standalone."""
    import onnxruntime as ort

    from control_flow_models import function_top_k

    model = function_top_k(calls=2, mode_from_caller="min", sort="value", stable=1, index_element_type="i64")
    if standard:
        function = model.functions[0]
        function.node[0].CopyFrom(helper.make_node("TopK", ["d", "kk"], ["fv", "fi"], axis=1, largest=0, sorted=1))
        function.opset_import.append(helper.make_opsetid("", 18))
    lowered, report = ortops.lower(model, fallback="none", standard=standard)
    assert report.standalone and len(report.rewritten if standard else report.lowered) == 2, report
    assert not any(n.domain in DOMAINS for g in ortops.graph.model_graphs(lowered) for n in g.node)
    assert not any(n.op_type == "TopK" for f in lowered.functions for n in f.node)  # inlined, then rewritten
    data = np.array([[3, 1, 3, 2, 1]], np.float32)
    got = ort.InferenceSession(lowered.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"data": data, "k": np.array([3])})
    want = reference.top_k(data, 3, axis=1, mode="min", sort="value", stable=1, index_element_type="i64")  # ONNX's too
    for values, indices in (got[:2], got[2:]):
        assert_identical(values, want.values) and assert_identical(indices, want.indices)


def test_a_session_from_a_relative_path_keeps_its_op_error_after_chdir(tmp_path, monkeypatch):
    """The PyOp path's session, made on the first failing call, is read from the path made
    absolute when the session was created (it was read relative to the new directory)."""
    folder = tmp_path / "models"
    folder.mkdir()
    onnx.save(builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value"), folder / "m.onnx")
    monkeypatch.chdir(folder)
    session = ortops.InferenceSession("m.onnx", path="lowered")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ortops.OpError, match=r"k=9 is outside \[1, 3\]"):
        session.run(None, {"data": np.zeros((2, 3), np.float32), "k": np.array([9])})


def test_names_the_lowering_adds_never_take_a_graph_inputs():
    """A graph input named like a value the lowering adds ('t/lowered/Constant_2') was fed over
    the composition's own constant: the lowered paths returned the top 7 for k = 3."""
    extra = "t/lowered/Constant_2"
    nodes = [builder.top_k("data", "k", axis=-1, mode="max", sort="value", stable=1, index_element_type="i64",
                           name="t"),
             helper.make_node("Identity", [extra], ["extra_out"], name="id")]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("data", TensorProto.FLOAT, [4, 8]),
                     helper.make_tensor_value_info(extra, TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, [4, 3]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [4, 3]),
         helper.make_tensor_value_info("extra_out", TensorProto.INT64, [1])],
        [numpy_helper.from_array(np.array([3], np.int64), "k")])
    model = helper.make_model(graph, ir_version=builder.IR_VERSION, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid("ortops.openvino", builder.SCHEMA_VERSION)])
    data = np.random.default_rng(0).permutation(32).astype(np.float32).reshape(4, 8)
    feed = {"data": data, extra: np.array([7], np.int64)}
    want = reference.top_k(data, 3, axis=-1, mode="max", sort="value", index_element_type="i64")
    standalone = ortops.lower(model, fallback="none").model
    onnx.checker.check_model(standalone, full_check=True)
    plain = ort.InferenceSession(standalone.SerializeToString(), providers=["CPUExecutionProvider"])
    for session in (plain, *(ortops.InferenceSession(model, path=p) for p in ("auto", "lowered"))):
        values, indices, extra_out = session.run(None, feed)
        assert_identical(values, want[0])
        assert_identical(indices, want[1])
        assert extra_out.tolist() == [7]


def test_an_ir_3_model_rewritten_with_standard_runs():
    """An opset-7 model (IR 3) converted to opset 11 for the standard rewrites kept IR 3, where
    an initializer must also be a graph input: ORT refused the composition's constants."""
    model = builder.onnx_top_k_model(1, TensorProto.FLOAT, 2, k=2)
    del model.opset_import[:]
    model.opset_import.append(helper.make_opsetid("", 7))
    model.ir_version = 3
    lowered, report = ortops.lower(model, fallback="none", standard=True)
    assert report.rewritten and lowered.ir_version >= 4
    onnx.checker.check_model(lowered, full_check=True)
    data = np.array([[1, 3, 2, 3]], np.float32)
    values, indices = ort.InferenceSession(lowered.SerializeToString(), providers=["CPUExecutionProvider"]).run(
        None, {"X": data})
    assert values.tolist() == [[3, 3]] and indices.tolist() == [[1, 3]]


def test_no_initializer_of_a_composition_is_left_unread():
    """ORT warned "Removing initializer ... It is not used by any node" for a constant the
    standard TopK's composition made and did not read, beside an ortops TopK."""
    model = builder.top_k_side_by_side(11, TensorProto.FLOAT, 2, k=3, axis=-1, mode="max", sort="value", stable=1)
    lowered, _ = ortops.lower(model, fallback="none", standard=True)
    read = {name for g in graphs(lowered.graph) for n in g.node for name in n.input}
    assert {t.name for t in lowered.graph.initializer} <= read


def test_an_opset_newer_than_onnx_knows_is_lowered_as_before():
    """Raising the IR version for the opset raised ValueError for a default-domain opset this
    onnx does not know."""
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value")
    model.opset_import.append(helper.make_opsetid("", onnx.defs.onnx_opset_version() + 5))
    lowered, report = ortops.lower(model, fallback="none")
    assert report.lowered and lowered.ir_version == model.ir_version
