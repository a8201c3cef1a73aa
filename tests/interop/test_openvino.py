"""ortops.interop.openvino: one .onnx file with ortops' nodes runs in ONNX Runtime and in OpenVINO."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import onnx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

pytest.importorskip("openvino", reason="OpenVINO is not installed: pip install 'ortops[openvino]'")

import ortops  # noqa: E402
from strategies import top_k_attributes  # noqa: E402
from ortops import builder, reference  # noqa: E402
from ortops.ops.arg_max.builder import arg_max_model  # noqa: E402
from ortops.ops.scatter_elements_update.builder import scatter_elements_update_model  # noqa: E402
from ortops.interop import openvino as ov_interop  # noqa: E402

HYPOTHESIS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _elem(dtype) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def _top_k(data, k, **attrs):
    model = builder.top_k_model(_elem(data.dtype), data.ndim, **attrs)
    return ov_interop.run(model, {"data": data, "k": np.array([k])})


# --- the seed examples, in both runtimes from one file ------------------------------------------------


def test_top_k_seed_example_in_both_runtimes(tmp_path):
    path = tmp_path / "top_k.onnx"
    onnx.save(builder.top_k_model(TensorProto.FLOAT, 1, axis=0, mode="min", sort="index", stable=1), path)
    feed = {"data": np.array([5, 3, 1, 2, 5, 5], np.float32), "k": np.array([4])}
    values, indices = ov_interop.run(path, feed)
    assert values.tolist() == [5, 3, 1, 2] and indices.tolist() == [0, 1, 2, 3]
    ort_values, ort_indices = ortops.InferenceSession(str(path)).run(None, feed)
    np.testing.assert_array_equal(values, ort_values)
    np.testing.assert_array_equal(indices, ort_indices)


@pytest.mark.parametrize(("indices", "use_init_val", "expected"), [
    ([1, 0, 0, -2, -1, 2], 1, [52, 13, 104, 76]),  # example 1: negative indices, data included
    ([1, 0, 0, 2, 3, 2], 0, [50, 10, 100, 70]),  # example 2: data left out where updates land
])
def test_scatter_elements_update_seed_examples_in_both_runtimes(indices, use_init_val, expected):
    model = scatter_elements_update_model(TensorProto.FLOAT, 1, reduction="sum", use_init_val=use_init_val)
    feed = {"data": np.array([2, 3, 4, 6], np.float32), "indices": np.array(indices),
            "updates": np.array([10, 20, 30, 40, 70, 60], np.float32), "axis": np.array([0])}
    (output,) = ov_interop.run(model, feed)
    assert output.tolist() == expected
    np.testing.assert_array_equal(output, ortops.InferenceSession(model).run(None, feed)[0])


@pytest.mark.parametrize("topk", [1, 3, 6])
@pytest.mark.parametrize("out_max_val", [0, 1])
def test_ncnn_arg_max_puts_the_higher_index_first_among_ties(topk, out_max_val):
    data = np.array([[7, 2, 7], [7, 1, 2]], np.float32)  # 7 at flat 0, 2, 3; 2 at 1, 5
    (output,) = ov_interop.run(arg_max_model(2, out_max_val=out_max_val, topk=topk), {"data": data})
    order = [3, 2, 0, 5, 1, 4][:topk]
    expected = [[float(data.flat[i]) for i in order], order] if out_max_val else [order]
    assert output.dtype == np.float32 and output.tolist() == expected
    np.testing.assert_array_equal(output, reference.arg_max(data, out_max_val=out_max_val, topk=topk))
    ort_output = ortops.InferenceSession(arg_max_model(2, out_max_val=out_max_val, topk=topk)).run(None, {"data": data})
    np.testing.assert_array_equal(output, ort_output[0])


@pytest.mark.parametrize(("index_element_type", "dtype"), [("i32", np.int32), ("i64", np.int64)])
def test_index_element_type_chooses_the_indices_dtype(index_element_type, dtype):
    values, indices = _top_k(np.array([[1, 9, 4]], np.float32), 2, axis=1, mode="max", sort="value", stable=1,
                             index_element_type=index_element_type)
    assert indices.dtype == dtype and indices.tolist() == [[1, 2]] and values.tolist() == [[9, 4]]


def test_sort_none_with_stable_runs():
    """OpenVINO's core refuses stable=true with sort=none; the converter drops it (no effect there)."""
    values, indices = _top_k(np.array([3, 1, 3, 2], np.float32), 2, axis=0, mode="max", sort="none", stable=1)
    assert sorted(values.tolist()) == [3, 3] and sorted(indices.tolist()) == [0, 2]


def test_k_as_a_scalar_and_axis_as_a_scalar():
    model = builder.top_k_model(TensorProto.INT8, 2, axis=-1, mode="min", sort="value", stable=1,
                                k_type=TensorProto.UINT8, k_shape=())
    values, indices = ov_interop.run(model, {"data": np.array([[4, -2, 7]], np.int8), "k": np.array(2, np.uint8)})
    assert values.tolist() == [[-2, 4]] and indices.tolist() == [[1, 0]]
    model = scatter_elements_update_model(TensorProto.INT32, 2, reduction="max", axis_shape=())
    feed = {"data": np.zeros((2, 3), np.int32), "indices": np.array([[2, 2]]),
            "updates": np.array([[5, 9]], np.int32), "axis": np.array(1)}
    assert ov_interop.run(model, feed)[0].tolist() == [[0, 0, 9], [0, 0, 0]]


# --- the API --------------------------------------------------------------------------------------------


def test_model_as_proto_bytes_and_path_give_one_answer(tmp_path):
    model = builder.top_k_model(TensorProto.FLOAT, 1, axis=0, mode="max", sort="value", stable=1)
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    feed = {"data": np.array([1, 3, 2], np.float32), "k": np.array([2])}
    answers = [ov_interop.run(m, feed) for m in (model, model.SerializeToString(), path, str(path))]
    for values, indices in answers:
        assert values.tolist() == [3, 2] and indices.tolist() == [1, 2]


def test_compiled_models_are_cached_by_content():
    model = builder.top_k_model(TensorProto.FLOAT, 1, axis=0, mode="max", sort="value", stable=1)
    copy = onnx.ModelProto()
    copy.CopyFrom(model)
    assert ov_interop.compile_model(model) is ov_interop.compile_model(copy)
    other = builder.top_k_model(TensorProto.FLOAT, 1, axis=0, mode="min", sort="value", stable=1)
    assert ov_interop.compile_model(other) is not ov_interop.compile_model(model)


def test_core_reads_models_and_an_openvino_model_compiles():
    import openvino

    core = ov_interop.core()
    assert isinstance(core, openvino.Core)
    model = arg_max_model(1, topk=2)
    ov_model = core.read_model(model.SerializeToString())
    assert [o.get_any_name() for o in ov_model.outputs] == ["output"]
    (output,) = ov_interop.run(ov_interop.read_model(model), {"data": np.array([1, 5, 5], np.float32)})
    assert output.tolist() == [[2, 1]]


def _raw_model(node: onnx.NodeProto, inputs, outputs) -> onnx.ModelProto:
    """A model without ortops' checks, to carry what the builders refuse."""
    graph = helper.make_graph([node], "bad", inputs, outputs)
    opsets = [helper.make_opsetid("", 13), helper.make_opsetid(node.domain, 1)]
    return helper.make_model(graph, opset_imports=opsets, ir_version=builder.IR_VERSION)


def _bad_top_k(**attrs) -> onnx.ModelProto:
    node = helper.make_node("TopK", ["data", "k"], ["values", "indices"], name="my_top_k", domain="ortops.openvino",
                            **attrs)
    return _raw_model(node, [helper.make_tensor_value_info("data", TensorProto.FLOAT, [3]),
                             helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
                      [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
                       helper.make_tensor_value_info("indices", TensorProto.INT32, None)])


def test_a_bad_attribute_value_is_an_op_error_naming_the_node():
    model = _bad_top_k(axis=0, mode="median", sort="value")
    with pytest.raises(ortops.OpError, match=r"TopK node 'my_top_k'.*mode='median'.*'max', 'min'"):
        ov_interop.read_model(model)


def test_a_missing_required_attribute_is_an_op_error():
    with pytest.raises(ortops.OpError, match=r"'my_top_k'.*required attribute 'sort'"):
        ov_interop.read_model(_bad_top_k(axis=0, mode="max"))


def test_core_without_the_check_names_the_node_in_openvinos_error():
    model = _bad_top_k(axis=0, mode="max", sort="sideways")
    with pytest.raises(RuntimeError, match=r"(?s)my_top_k.*sort='sideways'"):
        ov_interop.core().read_model(model.SerializeToString())


def test_an_unknown_op_in_our_domain_names_the_node():
    node = helper.make_node("Sort", ["x"], ["y"], name="sorter", domain="ortops.openvino")
    model = _raw_model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    with pytest.raises(ortops.OpError, match=r"Sort node 'sorter'.*no OpenVINO conversion.*ortops.openvino::TopK"):
        ov_interop.read_model(model)


def test_arg_max_on_int32_is_refused():
    node = helper.make_node("ArgMax", ["x"], ["y"], name="am", domain="ortops.ncnn", out_max_val=0, topk=1)
    model = _raw_model(node, [helper.make_tensor_value_info("x", TensorProto.INT32, [3])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    with pytest.raises(RuntimeError, match=r"(?s)Node\(ArgMax\): am>.*float32 only"):
        ov_interop.read_model(model)


# --- differential tests against the reference ------------------------------------------------------------

# Inputs on which OpenVINO's CPU plugin and ortops must agree exactly: values that survive the
# plugin's int32/float32 arithmetic (docs/divergences.md; see ortops.conformance.openvino_oracle for the rest).
_TOP_K_DTYPES = [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                 np.uint64]


@st.composite
def top_k_inputs(draw):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    dtype = draw(st.sampled_from(_TOP_K_DTYPES))
    levels = draw(st.sampled_from([2, 4, 100]))  # 2 and 4: tie-heavy
    seed = draw(st.integers(0, 2**32 - 1))
    data = np.random.default_rng(seed).integers(0, levels, size=shape).astype(dtype)
    k = draw(st.integers(1, shape[axis]))
    return data, k, dict(axis=axis, **draw(top_k_attributes()))


@HYPOTHESIS
@given(top_k_inputs())
def test_top_k_matches_the_reference(case):
    data, k, attrs = case
    values, indices = _top_k(data, k, **attrs)
    want_values, want_indices = reference.top_k(data, np.array([k]), **attrs)
    axis = attrs["axis"] % data.ndim
    assert values.dtype == data.dtype and indices.dtype == want_indices.dtype
    # the values OpenVINO picks are always ortops' (as multisets per slice), and indices point at them
    np.testing.assert_array_equal(np.sort(values, axis=axis), np.sort(want_values, axis=axis))
    np.testing.assert_array_equal(np.take_along_axis(data, indices.astype(np.int64), axis=axis), values)
    if attrs["sort"] == "value" and attrs["stable"]:  # the one fully defined order: exact
        np.testing.assert_array_equal(indices, want_indices)
    if attrs["sort"] == "index":
        assert np.all(np.diff(indices, axis=axis) > 0)


_SCATTER_DTYPES = [np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                   np.uint64, np.bool_]


@st.composite
def scatter_inputs(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    axis = draw(st.integers(-rank, rank - 1))
    n = [draw(st.integers(1, d)) for d in shape]
    n[axis] = draw(st.integers(1, 2 * shape[axis] + 1))  # more updates than targets: duplicates
    dtype = draw(st.sampled_from(_SCATTER_DTYPES))
    reductions = ["none", "sum", "prod", "min", "max"] + ([] if dtype == np.bool_ else ["mean"])
    reduction = draw(st.sampled_from(reductions))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    low = 0 if np.dtype(dtype).kind in "ub" or reduction == "mean" else -3  # mean: non-negative (no rounding gap)
    data = rng.integers(low, 4, size=shape).astype(dtype)
    updates = rng.integers(low, 4, size=n).astype(dtype)
    indices = rng.integers(-shape[axis], shape[axis], size=n)
    if reduction == "none":  # the spec leaves duplicate targets undefined: keep them unique
        indices = _unique_along(rng, shape[axis], n, axis)
        updates = updates[tuple(slice(0, s) for s in indices.shape)]
    return data, indices, updates, axis, dict(reduction=reduction, use_init_val=draw(st.sampled_from([0, 1])))


def _unique_along(rng, dim, n, axis):
    """Indices of shape ``n`` (the axis dimension cut to ``dim``), distinct along ``axis``."""
    axis = axis % len(n)
    other = [s for i, s in enumerate(n) if i != axis]
    length = min(n[axis], dim)
    lines = [rng.permutation(dim)[:length] for _ in range(int(np.prod(other, dtype=np.int64)))]
    return np.moveaxis(np.array(lines).reshape(*other, length), -1, axis)


@HYPOTHESIS
@given(scatter_inputs())
def test_scatter_elements_update_matches_the_reference(case):
    data, indices, updates, axis, attrs = case
    model = scatter_elements_update_model(_elem(data.dtype), data.ndim, **attrs)
    feed = {"data": data, "indices": indices, "updates": updates, "axis": np.array([axis])}
    (output,) = ov_interop.run(model, feed)
    want = reference.scatter_elements_update(data, indices, updates, np.array([axis]), **attrs)
    assert output.dtype == data.dtype
    if data.dtype.kind == "f":
        np.testing.assert_allclose(output, want, rtol=1e-6)
    else:
        np.testing.assert_array_equal(output, want)


@HYPOTHESIS
@given(st.lists(st.integers(1, 4), min_size=1, max_size=4), st.sampled_from([2, 3, 1000]), st.integers(0, 2**32 - 1),
       st.sampled_from([0, 1]), st.data())
def test_arg_max_matches_the_reference(shape, levels, seed, out_max_val, draw):
    data = np.random.default_rng(seed).integers(-levels, levels, size=shape).astype(np.float32)
    topk = draw.draw(st.integers(1, data.size))
    (output,) = ov_interop.run(arg_max_model(data.ndim, out_max_val=out_max_val, topk=topk), {"data": data})
    np.testing.assert_array_equal(output, reference.arg_max(data, out_max_val=out_max_val, topk=topk))


# --- importing and the missing extra ---------------------------------------------------------------------


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def test_importing_ortops_and_its_openvino_modules_does_not_import_openvino():
    done = _python("""
        import sys
        import ortops, ortops.interop, ortops.interop.openvino, ortops.conformance.openvino_oracle
        assert "openvino" not in sys.modules, sorted(m for m in sys.modules if m.startswith("openvino"))
        print("ok")
    """)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr


def test_without_openvino_the_error_names_the_extra():
    done = _python("""
        import sys
        sys.modules["openvino"] = None  # as if it were not installed
        from ortops.interop import openvino as ov_interop
        from ortops.conformance.cases import Case
        from ortops.conformance.openvino_oracle import judge_openvino, topic_of
        import numpy as np
        check, = judge_openvino(Case("c", "ArgMax", "generated", {"data": np.ones(3, np.float32)}, {}))
        assert check.status == "skipped" and topic_of(check) == "openvino-missing", check
        try:
            ov_interop.core()
        except ModuleNotFoundError as exc:
            print(exc)
    """)
    assert done.returncode == 0, done.stderr
    assert "pip install 'ortops[openvino]'" in done.stdout


def test_a_thread_that_compiled_keeps_a_signal_stack_python_fits_in():
    """OpenVINO's CPU plugin leaves an 11,568-byte alternate signal stack on the compiling
    thread; Python's signal handler overflowed it (Ctrl-C during `ortops bench` segfaulted)."""
    if not sys.platform.startswith("linux"):
        pytest.skip("sigaltstack as Linux has it")
    code = textwrap.dedent("""
        import ctypes
        from onnx import TensorProto
        from ortops import builder
        from ortops.interop import openvino as ov_interop

        class Stack(ctypes.Structure):
            _fields_ = [("sp", ctypes.c_void_p), ("flags", ctypes.c_int), ("size", ctypes.c_size_t)]

        ov_interop.compile_model(builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value"))
        stack = Stack()
        ctypes.CDLL(None).sigaltstack(None, ctypes.byref(stack))
        print(stack.flags, stack.size)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    flags, size = map(int, done.stdout.split())
    assert flags == 2 or size >= 1 << 16, (flags, size)  # none (SS_DISABLE), or one of 64 KiB at least
