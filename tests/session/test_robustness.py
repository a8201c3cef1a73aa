"""Robustness of ortops.InferenceSession: threads, shared state, hostile models, hostile inputs.

Every good call must give exactly what ``ortops.reference`` gives; every bad call must raise
its own :class:`ortops.OpError`, naming its own bad value. Errors never cross calls, threads
or sessions, and a session stays usable after any error.
"""

from __future__ import annotations

import ctypes
import subprocess
import sys
import textwrap
import threading

import numpy as np
import onnxruntime as ort
import pytest
import onnx
from onnx import TensorProto, helper, numpy_helper

import ortops
from ortops import bridge, builder, reference
from ortops.ops import NCNN_DOMAIN, OPENVINO_DOMAIN

from helpers import (BF, BOOL, D, F, H, HOSTILE_INPUTS, I32, I64, THREADS, arg_max_model, assert_same,
                     assert_zero_signs, expect_error, hammer, matches, nearest_value,
                     reference_outputs, scatter_model, session, tolerance, top_k_model)
from helpers import cast_around
from helpers import model as _model

# ---------------------------------------------------------------------------------------------
# 1. Concurrency and state


def test_top_k_from_8_threads_good_and_bad_calls_keep_their_own_results_and_errors():
    s = session(top_k_model(mode="max", sort="value"))

    def work(t, c):
        seed = t * 1000 + c
        rng = np.random.default_rng(seed)
        rows, cols = int(rng.integers(1, 6)), int(rng.integers(2, 60))
        data = rng.integers(-4, 4, (rows, cols)).astype(np.float32)  # many ties
        data[rng.random(data.shape) < 0.05] = np.nan
        if c % 3 == 1:  # k too large, unique to this call
            k = cols + 1 + seed
            return expect_error(lambda: s.run(None, {"data": data, "k": np.array([k])}),
                                f"k={k} is outside [1, {cols}]", f"shape ({rows}, {cols})")
        if c % 3 == 2:  # negative k, unique to this call
            k = -1 - seed
            return expect_error(lambda: s.run(None, {"data": data, "k": np.array([k])}), f"k={k} ")
        k = int(rng.integers(1, cols + 1))
        got = s.run(None, {"data": data, "k": np.array([k])})
        return matches(got, reference.top_k(data, k, axis=-1, mode="max", sort="value", stable=1))

    assert hammer(work) == []


def test_scatter_from_8_threads_good_and_bad_calls():
    s = session(scatter_model(D, reduction="sum"))

    def work(t, c):
        seed = t * 1000 + c
        rng = np.random.default_rng(seed)
        rows, cols = int(rng.integers(1, 8)), int(rng.integers(1, 8))
        data = rng.normal(size=(rows, cols))
        n = int(rng.integers(1, 12))
        indices = rng.integers(-rows, rows, (n, cols))
        updates = rng.normal(size=(n, cols))
        feed = {"data": data, "indices": indices, "updates": updates, "axis": np.array(0)}
        if c % 2:
            bad = rows + seed  # an index out of range, unique to this call
            indices[rng.integers(n), rng.integers(cols)] = bad
            return expect_error(lambda: s.run(None, feed), f"index {bad} is outside [{-rows}, {rows - 1}]")
        want = reference.scatter_elements_update(data, indices, updates, 0, reduction="sum")
        return matches(s.run(None, feed), [want], *tolerance(np.float64))

    assert hammer(work) == []


def test_arg_max_from_8_threads_good_and_bad_calls():
    s = session(arg_max_model(out_max_val=1, topk=3))

    def work(t, c):
        seed = t * 1000 + c
        rng = np.random.default_rng(seed)
        if c % 3 == 1:  # empty: the shape is unique to this call
            data = np.zeros((seed + 1, 0), np.float32)
            return expect_error(lambda: s.run(None, {"data": data}), f"is empty (shape ({seed + 1}, 0))")
        if c % 3 == 2:
            data = np.zeros((2, 1), np.float32) + seed
            return expect_error(lambda: s.run(None, {"data": data}), "topk=3 is outside [1, 2]")
        data = rng.integers(0, 5, (int(rng.integers(1, 5)), int(rng.integers(3, 40)))).astype(np.float32)
        return matches(s.run(None, {"data": data}), [reference.arg_max(data, out_max_val=1, topk=3)])

    assert hammer(work) == []


def test_sessions_with_different_models_do_not_interfere():
    # a and c share one bridge registration (TopK_i32 on float) with different attributes.
    a = session(top_k_model(F, mode="max", sort="value"))
    b = session(top_k_model(I64, index_type=I64, axis=0, mode="min", sort="index", index_element_type="i64"))
    c = session(top_k_model(F, mode="min", sort="none", stable=0))
    d = session(scatter_model(I32, reduction="mean", use_init_val=0))
    e = session(arg_max_model(out_max_val=1, topk=2))

    def work(t, call):
        rng = np.random.default_rng(t * 1000 + call)
        which = (t + call) % 5
        if which in (0, 2):
            x = rng.integers(-3, 3, (3, 9)).astype(np.float32)
            k = int(rng.integers(1, 10))
            s, attrs = (a, dict(mode="max", sort="value")) if which == 0 else (c, dict(mode="min", sort="none"))
            return matches(s.run(None, {"data": x, "k": np.array([k])}),
                           reference.top_k(x, k, axis=-1, stable=1, **attrs))
        if which == 1:
            x = rng.integers(-2**63, 2**63 - 1, (7, 2), dtype=np.int64, endpoint=True)
            k = int(rng.integers(1, 8))
            return matches(b.run(None, {"data": x, "k": np.array(k)}),
                           reference.top_k(x, k, axis=0, mode="min", sort="index", index_element_type="i64"))
        if which == 3:
            x = rng.integers(-2**31, 2**31 - 1, (4, 3), dtype=np.int32, endpoint=True)
            idx = rng.integers(-3, 3, (4, 6))
            upd = rng.integers(-2**31, 2**31 - 1, (4, 6), dtype=np.int32, endpoint=True)
            got = d.run(None, {"data": x, "indices": idx, "updates": upd, "axis": np.array([-1])})
            want = reference.scatter_elements_update(x, idx, upd, -1, reduction="mean", use_init_val=0)
            return matches(got, [want])
        x = rng.normal(size=(2, 3, 4)).astype(np.float32)
        return matches(e.run(None, {"data": x}), [reference.arg_max(x, out_max_val=1, topk=2)])

    assert hammer(work) == []


def test_sessions_made_at_once_from_one_options_object():
    """Two threads making sessions from one new SessionOptions both loaded the extensions
    library into it: "Conflicting with a registered kernel", and for every later session too."""
    model = scatter_model(D, reduction="sum")
    for _ in range(10):
        options, start, errors = ort.SessionOptions(), threading.Barrier(2), []
        options.log_severity_level = 3

        def make(options=options, start=start, errors=errors):
            start.wait()
            try:
                ortops.InferenceSession(model, options, path="pyop")
            except Exception as exc:  # noqa: BLE001 - collected, asserted below
                errors.append(exc)

        threads = [threading.Thread(target=make) for _ in range(2)]
        [t.start() for t in threads]
        [t.join() for t in threads]
        assert errors == []
    ortops.InferenceSession(model, options, path="pyop")


def test_the_pyop_re_run_session_is_made_once_with_the_sessions_settings(tmp_path, monkeypatch):
    """A call that fails on a lowered node is re-run on the PyOp path, in a session made once
    for all threads, with the caller's thread counts, spinning and external data folder (it
    was made with none of them: ORT's default threads, and no weights for a model given as
    bytes, hence ORT's error instead of the OpError)."""
    node = builder.top_k("shifted", "k", axis=-1, mode="max", sort="value", stable=1, name="top_k")
    graph = helper.make_graph(
        [helper.make_node("Add", ["data", "bias"], ["shifted"]), node], "g",
        [helper.make_tensor_value_info("data", F, [4, 30]), helper.make_tensor_value_info("k", I64, [1])],
        [helper.make_tensor_value_info("values", F, None), helper.make_tensor_value_info("indices", I32, None)],
        [numpy_helper.from_array(np.zeros((4, 30), np.float32), "bias")])
    model = helper.make_model(graph, ir_version=builder.IR_VERSION, opset_imports=[
        helper.make_opsetid("", 18), helper.make_opsetid(OPENVINO_DOMAIN, builder.SCHEMA_VERSION)])
    onnx.save(model, tmp_path / "m.onnx", save_as_external_data=True, location="m.bin", size_threshold=0)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.model_external_initializers_file_folder_path", str(tmp_path))
    s = ortops.InferenceSession((tmp_path / "m.onnx").read_bytes(), options)
    assert s.lowered_nodes == ("top_k",)
    made = []
    init = ortops.InferenceSession.__init__
    monkeypatch.setattr(ortops.InferenceSession, "__init__", lambda self, *a, **k: made.append(k) or init(self, *a, **k))
    data = np.arange(120, dtype=np.float32).reshape(4, 30)
    assert hammer(lambda t, c: expect_error(lambda: s.run(None, {"data": data, "k": np.array([40])}),
                                            "TopK node 'top_k': k=40 is outside [1, 30]"), 3) == []
    assert [k["path"] for k in made] == ["pyop"]
    inherited = s._pyop._recipe[0]
    assert (inherited.intra_op_num_threads, inherited.inter_op_num_threads) == (1, 1)
    assert inherited.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_raw_path_errors_on_other_threads_never_reach_a_captured_call(caplog):
    """Threads 0-3 make bad calls on a raw session (errors are logged); threads 4-7 make good
    calls on an ortops.InferenceSession, which must never raise."""
    model = builder.top_k_model(F, 2, axis=-1, mode="max", sort="value")
    raw = ort.InferenceSession(model.SerializeToString(), ortops.session_options())
    captured = session(model)
    x = np.arange(12, dtype=np.float32).reshape(3, 4)

    def work(t, c):
        if t < THREADS // 2:
            values, indices = raw.run(None, {"data": x, "k": np.array([9])})
            return None if values.shape == (0,) and indices.shape == (0,) else "raw bad call gave a result"
        values, indices = captured.run(None, {"data": x, "k": np.array([2])})
        return None if values.tolist() == [[3, 2], [7, 6], [11, 10]] else f"wrong {values}"

    with caplog.at_level("CRITICAL", logger="ortops"):
        assert hammer(work, 60) == []


def test_register_from_many_threads_in_a_fresh_process():
    """In a fresh interpreter (nothing registered yet) 8 threads race to register, make session
    options and sessions; every registration happens once and every session works."""
    code = textwrap.dedent(f"""
        import threading, numpy as np, onnxruntime as ort
        from onnx import TensorProto
        import ortops
        from ortops import bridge, builder
        assert not bridge._registered and not bridge._kernels
        model = builder.top_k_model(TensorProto.FLOAT, 1, axis=0, mode="max", sort="value")
        start, results = threading.Barrier({THREADS}), []
        def worker(t):
            start.wait()
            if t % 3 == 0:
                ortops.register()
            s = (ortops.InferenceSession(model) if t % 2 else
                 ort.InferenceSession(model.SerializeToString(), ortops.session_options()))
            results.append(s.run(None, {{"data": np.array([1, 3, 2], np.float32), "k": np.array([2])}})[1].tolist())
        threads = [threading.Thread(target=worker, args=(t,)) for t in range({THREADS})]
        [t.start() for t in threads]; [t.join() for t in threads]
        assert results == [[1, 2]] * {THREADS}, results
        expected = sum(len(op.signatures) for op in bridge.bridge_ops())
        assert len(bridge._kernels) == expected, (len(bridge._kernels), expected)
        ortops.register(); ortops.register()
        assert len(bridge._kernels) == expected
        try:
            ortops.InferenceSession(model).run(None, {{"data": np.ones(2, np.float32), "k": np.array([3])}})
        except ortops.OpError as exc:
            assert "k=3 is outside [1, 2]" in str(exc)
        else:
            raise AssertionError("no OpError")
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr[-3000:]


def test_session_stays_usable_after_every_kind_of_error():
    s = session(top_k_model(mode="min", sort="index"))
    good = {"data": np.array([[5, 3, 1, 2, 5, 5]], np.float32), "k": np.array([4])}
    bad_feeds = [
        ({"data": good["data"], "k": np.array([7])}, ortops.OpError),
        ({"data": good["data"], "k": np.array([1, 2])}, ortops.OpError),
        ({"data": np.zeros((1, 0), np.float32), "k": np.array([1])}, ortops.OpError),
        ({"data": good["data"].astype(np.float64), "k": np.array([1])}, Exception),  # ORT: wrong type
        ({"data": good["data"]}, Exception),  # ORT: missing input
        ({"data": np.zeros((2, 2, 2), np.float32), "k": np.array([1])}, None),  # rank 3 is fine (no shape)
    ]
    for _ in range(3):
        for feed, error in bad_feeds:
            if error is None:
                s.run(None, feed)
            else:
                with pytest.raises(error):
                    s.run(None, feed)
            assert getattr(bridge._local, "stack", []) == []  # no capture left behind
            values, indices = s.run(None, good)
            assert values.tolist() == [[5, 3, 1, 2]] and indices.tolist() == [[0, 1, 2, 3]]


def test_every_run_method_reports_op_errors():
    """run_with_ort_values and run_with_iobinding raise OpError like run; run_async calls the
    op on ORT's threads, where no capture is active: empty outputs and a logged error."""
    s = session(top_k_model())
    x, bad_k = np.ones((2, 3), np.float32), np.array([9])
    with pytest.raises(ortops.OpError, match=r"k=9 is outside \[1, 3\]"):
        s.run_with_ort_values(None, {"data": ort.OrtValue.ortvalue_from_numpy(x),
                                     "k": ort.OrtValue.ortvalue_from_numpy(bad_k)})
    binding = s.io_binding()
    binding.bind_cpu_input("data", x)
    binding.bind_cpu_input("k", bad_k)
    binding.bind_output("values")
    binding.bind_output("indices")
    with pytest.raises(ortops.OpError, match=r"k=9 is outside \[1, 3\]"):
        s.run_with_iobinding(binding)
    binding.clear_binding_outputs()  # the error run left empty outputs bound
    binding.bind_output("values")
    binding.bind_output("indices")
    binding.bind_cpu_input("k", np.array([2]))
    s.run_with_iobinding(binding)
    assert binding.copy_outputs_to_cpu()[0].tolist() == [[1, 1], [1, 1]]

    done, result = threading.Event(), {}

    def callback(outputs, _, error):
        result.update(outputs=outputs, error=error)
        done.set()

    s.run_async(None, {"data": x, "k": bad_k}, callback, None)
    assert done.wait(30)
    assert [o.shape for o in result["outputs"]] == [(0,), (0,)]


def test_reusing_an_iobinding_with_another_output_shape_does_not_abort():
    """ORT keeps the outputs of a run bound; the next run with another k (or an error's empty
    output) meets a pre-allocated output of another shape. Inside the bridge's C++ that throws
    and aborts the process; ortops.InferenceSession copies such outputs through an Identity,
    so it is ORT's clean error instead. In a child process, so an abort cannot hit pytest."""
    code = textwrap.dedent("""
        import numpy as np, ortops
        from onnx import TensorProto
        from ortops import builder
        s = ortops.InferenceSession(builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value"))
        binding = s.io_binding()
        binding.bind_cpu_input("data", np.arange(6, dtype=np.float32).reshape(2, 3))
        binding.bind_output("values")
        binding.bind_output("indices")
        outcomes = []
        for k in (1, 2, 9, 1):
            binding.bind_cpu_input("k", np.array([k]))
            try:
                s.run_with_iobinding(binding)
                outcomes.append(binding.copy_outputs_to_cpu()[0].tolist())
            except ortops.OpError as exc:
                outcomes.append("OpError")
            except Exception as exc:
                outcomes.append(type(exc).__name__)
        print(outcomes)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[-2000:]}"
    # k=2 meets the bound (2, 1) output: ORT's error; k=9 is our OpError; k=1 fits again.
    assert done.stdout.strip() == "[[[2.0], [5.0]], 'RuntimeError', 'OpError', [[2.0], [5.0]]]", done.stdout


def test_the_first_failing_node_is_reported_when_errors_cascade():
    """TopK 'first' fails; its empty output makes TopK 'second' fail too: 'first' is raised."""
    first = builder.top_k("data", "k", axis=-1, mode="max", sort="value", outputs=("v1", "i1"), name="first")
    second = builder.top_k("v1", "k2", axis=0, mode="max", sort="value", outputs=("values", "indices"), name="second")
    model = builder.make_model(
        [first, second], [("data", F, ["n", "m"]), ("k", I64, [1]), ("k2", I64, [1])],
        [("values", F, [None, None]), ("indices", I32, [None, None])])
    s = session(model)
    with pytest.raises(ortops.OpError, match=r"TopK node 'first': k=9 is outside \[1, 3\]"):
        s.run(None, {"data": np.ones((2, 3), np.float32), "k": np.array([9]), "k2": np.array([1])})
    values, _ = s.run(None, {"data": np.arange(6, dtype=np.float32).reshape(2, 3), "k": np.array([2]),
                             "k2": np.array([1])})
    assert values.tolist() == [[5, 4]]


# ---------------------------------------------------------------------------------------------
# 2. Hostile models: refused at session creation, naming the node (tests/session/test_prepare.py has
#    mode="largest", sort="asc", reduction="avg", index_element_type="i16", topk=0, a missing
#    axis, a STRING axis, an unknown TopK attribute, float k and float16 ArgMax).

TOPK_IN = [("data", F, [3, 4]), ("k", I64, [1])]
TOPK_OUT = [("values", F, None), ("indices", I32, None)]
TOPK_ATTRS = dict(axis=1, mode="max", sort="value")
SCATTER_IN = [("data", F, [4]), ("indices", I64, [2]), ("updates", F, [2]), ("axis", I64, [])]
SCATTER_OUT = [("output", F, None)]
ARGMAX_IN = [("data", F, [5])]


def _with(inputs, position, tensor):
    inputs = list(inputs)
    inputs[position] = tensor
    return inputs


HOSTILE_MODELS = {
    "TopK missing mode": ("TopK", TOPK_IN, TOPK_OUT, dict(axis=1, sort="value"), "required attribute 'mode'"),
    "TopK missing sort": ("TopK", TOPK_IN, TOPK_OUT, dict(axis=1, mode="max"), "required attribute 'sort'"),
    "TopK FLOAT axis": ("TopK", TOPK_IN, TOPK_OUT, dict(TOPK_ATTRS, axis=1.0), "'axis' has ONNX type FLOAT"),
    "TopK INTS axis": ("TopK", TOPK_IN, TOPK_OUT, dict(TOPK_ATTRS, axis=[1]), "'axis' has ONNX type INTS"),
    "TopK TENSOR axis": ("TopK", TOPK_IN, TOPK_OUT, dict(TOPK_ATTRS, axis=helper.make_tensor("t", I64, [], [1])),
                         "'axis' has ONNX type TENSOR"),
    "TopK FLOAT stable": ("TopK", TOPK_IN, TOPK_OUT, dict(TOPK_ATTRS, stable=1.0), "'stable' has ONNX type FLOAT"),
    "TopK INT mode": ("TopK", TOPK_IN, TOPK_OUT, dict(TOPK_ATTRS, mode=1), "'mode' has ONNX type INT"),
    "TopK STRINGS sort": ("TopK", TOPK_IN, TOPK_OUT, dict(TOPK_ATTRS, sort=["value"]), "'sort' has ONNX type STRINGS"),
    "TopK non-UTF-8 mode": ("TopK", TOPK_IN, TOPK_OUT, dict(TOPK_ATTRS, mode=b"\xff"), "attribute mode="),
    "TopK negative stable": ("TopK", TOPK_IN, TOPK_OUT, dict(TOPK_ATTRS, stable=-1), "stable=-1"),
    "TopK unknown FLOAT attr": ("TopK", TOPK_IN, TOPK_OUT, dict(TOPK_ATTRS, alpha=0.5),
                                "unknown attribute(s) ['alpha']"),
    "TopK one input": ("TopK", TOPK_IN[:1], TOPK_OUT, TOPK_ATTRS, "has inputs ['data']"),
    "TopK three inputs": ("TopK", [*TOPK_IN, ("z", I64, [1])], TOPK_OUT, TOPK_ATTRS, "has inputs ['data', 'k', 'z']"),
    "TopK one output": ("TopK", TOPK_IN, TOPK_OUT[:1], TOPK_ATTRS, "has outputs ['values']"),
    "TopK bool k": ("TopK", _with(TOPK_IN, 1, ("k", BOOL, [1])), TOPK_OUT, TOPK_ATTRS, "input 'k' has type bool"),
    "TopK double k": ("TopK", _with(TOPK_IN, 1, ("k", D, [1])), TOPK_OUT, TOPK_ATTRS, "input 'k' has type double"),
    "TopK bool data": ("TopK", _with(TOPK_IN, 0, ("data", BOOL, [3, 4])), TOPK_OUT, TOPK_ATTRS,
                       "input 'data' has type bool"),
    "TopK string data": ("TopK", _with(TOPK_IN, 0, ("data", TensorProto.STRING, [3, 4])), TOPK_OUT, TOPK_ATTRS,
                         "input 'data' has type string"),
    "Scatter INT reduction": ("ScatterElementsUpdate", SCATTER_IN, SCATTER_OUT, dict(reduction=1),
                              "'reduction' has ONNX type INT"),
    "Scatter STRING use_init_val": ("ScatterElementsUpdate", SCATTER_IN, SCATTER_OUT, dict(use_init_val="1"),
                                    "'use_init_val' has ONNX type STRING"),
    "Scatter unknown axis attr": ("ScatterElementsUpdate", SCATTER_IN, SCATTER_OUT, dict(axis=0),
                                  "unknown attribute(s) ['axis']"),
    "Scatter bool indices": ("ScatterElementsUpdate", _with(SCATTER_IN, 1, ("indices", BOOL, [2])), SCATTER_OUT, {},
                             "input 'indices' has type bool"),
    "Scatter float indices": ("ScatterElementsUpdate", _with(SCATTER_IN, 1, ("indices", F, [2])), SCATTER_OUT, {},
                              "input 'indices' has type float"),
    "Scatter float axis": ("ScatterElementsUpdate", _with(SCATTER_IN, 3, ("axis", F, [])), SCATTER_OUT, {},
                           "input 'axis' has type float"),
    "Scatter updates of another type": ("ScatterElementsUpdate", _with(SCATTER_IN, 2, ("updates", D, [2])),
                                        SCATTER_OUT, {}, "input 'updates' has type double; it must match"),
    "Scatter three inputs": ("ScatterElementsUpdate", SCATTER_IN[:3], SCATTER_OUT, {}, "needs exactly"),
    "Scatter complex data": ("ScatterElementsUpdate",
                             [("data", TensorProto.COMPLEX64, [4]), SCATTER_IN[1],
                              ("updates", TensorProto.COMPLEX64, [2]), SCATTER_IN[3]],
                             SCATTER_OUT, {}, "input 'data' has type complex64"),
    "ArgMax FLOAT topk": ("ArgMax", ARGMAX_IN, SCATTER_OUT, dict(topk=1.0), "'topk' has ONNX type FLOAT"),
    "ArgMax INTS topk": ("ArgMax", ARGMAX_IN, SCATTER_OUT, dict(topk=[1]), "'topk' has ONNX type INTS"),
    "ArgMax negative topk": ("ArgMax", ARGMAX_IN, SCATTER_OUT, dict(topk=-5), "topk=-5 must be an integer >= 1"),
    "ArgMax out_max_val=-1": ("ArgMax", ARGMAX_IN, SCATTER_OUT, dict(out_max_val=-1), "out_max_val=-1 is invalid"),
    "ArgMax unknown attr": ("ArgMax", ARGMAX_IN, SCATTER_OUT, dict(axis=0), "unknown attribute(s) ['axis']"),
    "ArgMax bfloat16": ("ArgMax", [("data", BF, [5])], SCATTER_OUT, {}, "has type bfloat16; it must be float"),
    "ArgMax double": ("ArgMax", [("data", D, [5])], SCATTER_OUT, {}, "has type double; it must be float"),
    "ArgMax int32": ("ArgMax", [("data", I32, [5])], SCATTER_OUT, {}, "has type int32; it must be float"),
    "ArgMax two inputs": ("ArgMax", [*ARGMAX_IN, ("x", F, [5])], SCATTER_OUT, {}, "has inputs ['data', 'x']"),
}


@pytest.mark.parametrize("case", list(HOSTILE_MODELS))
def test_hostile_model_fails_at_session_creation_naming_the_node(case):
    op_type, inputs, outputs, attrs, message = HOSTILE_MODELS[case]
    domain = NCNN_DOMAIN if op_type == "ArgMax" else OPENVINO_DOMAIN
    model = _model(op_type, domain, inputs, outputs, attrs, name="hostile")
    with pytest.raises(ortops.OpError) as info:
        session(model)
    assert f"{op_type} node 'hostile'" in str(info.value) and message in str(info.value), str(info.value)


def test_an_empty_optional_input_or_output_name_is_refused():
    model = _model("TopK", OPENVINO_DOMAIN, TOPK_IN, TOPK_OUT, TOPK_ATTRS, name="hostile")
    model.graph.node[0].input[1] = ""
    with pytest.raises(ortops.OpError, match=r"TopK node 'hostile': has inputs \['data', ''\]"):
        session(model)
    model = _model("TopK", OPENVINO_DOMAIN, TOPK_IN, TOPK_OUT[:1], TOPK_ATTRS, name="hostile")
    model.graph.node[0].output.append("")  # an omitted output (ORT refused the bridge's graph)
    for make in (session, ortops.lower, lambda m: ortops.lower(m, fallback="none")):
        with pytest.raises(ortops.OpError, match=r"TopK node 'hostile': has outputs \['values', ''\]"):
            make(model)


def test_a_node_without_a_name_still_fails_cleanly():
    model = _model("TopK", OPENVINO_DOMAIN, TOPK_IN, TOPK_OUT, dict(TOPK_ATTRS, mode="up"), name="")
    model.graph.node[0].ClearField("name")
    with pytest.raises(ortops.OpError, match=r"^TopK: attribute mode='up' is invalid"):
        session(model)


# bfloat16: fed as float32 and cast inside the graph (numpy cannot carry bfloat16 to ORT).

BF16_EXACT = np.array([1, np.nan, 3, -np.inf, np.inf, np.nan, 2, -0.0, 0.0, 3, 3.3895313892515355e38,
                       -3.3895313892515355e38, 2.0**-133, -(2.0**-126), 1.0078125, 1.0078125, 7], np.float32)


@pytest.mark.parametrize("mode, sort", [("max", "value"), ("min", "index"), ("min", "none")])
def test_bfloat16_top_k_is_exact_through_the_casts(mode, sort):
    model = cast_around(top_k_model(BF, mode=mode, sort=sort), ["data"], ["values"], BF)
    data = np.stack([BF16_EXACT, BF16_EXACT[::-1]])
    s = session(model)
    for k in (1, 5, data.shape[1]):
        got = s.run(None, {"data": data, "k": np.array([k])})
        assert_same(got[0], reference.top_k(data, k, axis=-1, mode=mode, sort=sort, stable=1).values)
        assert_same(got[1], reference.top_k(data, k, axis=-1, mode=mode, sort=sort, stable=1).indices)
        assert_zero_signs(got[0], reference.top_k(data, k, axis=-1, mode=mode, sort=sort, stable=1).values)


def test_bfloat16_top_k_of_an_opset_11_model_from_the_builder():
    """The builder's bfloat16 model imports opset 11, where Cast cannot take bfloat16: the
    load-time rewrite raises the import (nothing else uses the default domain)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    model = builder.top_k_model(BF, 2, axis=1, mode="max", sort="value", stable=1)
    s = session(model)
    bits = BF16_EXACT.astype(ml_dtypes.bfloat16).view(np.uint16).reshape(1, -1)
    data = ort.OrtValue.ortvalue_from_numpy_with_onnx_type(bits, BF)
    k = ort.OrtValue.ortvalue_from_numpy(np.array([10]))
    values, indices = s.run_with_ort_values(None, {"data": data, "k": k})
    want = reference.top_k(BF16_EXACT.reshape(1, -1), 10, axis=1, mode="max", sort="value", stable=1)
    assert_same(indices.numpy(), want.indices)
    n = int(np.prod(values.shape()))
    raw = np.frombuffer((ctypes.c_uint16 * n).from_address(values.data_ptr()), np.uint16).copy()
    assert_same(raw.view(ml_dtypes.bfloat16).astype(np.float32).reshape(values.shape()), want.values)
    with pytest.raises(ortops.OpError, match=r"TopK node 'top_k': k=18 is outside \[1, 17\]"):
        s.run_with_ort_values(None, {"data": data, "k": ort.OrtValue.ortvalue_from_numpy(np.array([18]))})


def test_bfloat16_in_an_old_opset_model_with_other_standard_nodes_is_refused_naming_the_node():
    model = _model("TopK", OPENVINO_DOMAIN, [("data", BF, [3]), ("k", I64, [1])],
                   [("values", BF, None), ("indices", I32, None), ("k_out", I64, None)],
                   dict(axis=0, mode="max", sort="value"), name="old", opset=11,
                   extra_nodes=[helper.make_node("Identity", ["k"], ["k_out"])])
    with pytest.raises(ortops.OpError, match="TopK node 'old': .*opset >= 13.*imports opset 11"):
        ortops.prepare_model(model)


@pytest.mark.parametrize("carried", [BF, H])
@pytest.mark.parametrize("reduction", ["sum", "mean", "prod", "max", "none"])
def test_half_precision_scatter_is_the_float64_result_rounded_once(carried, reduction):
    """data/updates that are exact in the carried type; ortops computes in float64 and rounds
    once to the carried type. The expected values are the nearest values of the type, found in a
    table of all of them (no double rounding, no copy of the code under test)."""
    model = cast_around(scatter_model(carried, reduction=reduction), ["data", "updates"], ["output"], carried)
    s = session(model)
    name = "bfloat16" if carried == BF else "float16"
    rng = np.random.default_rng(5)
    data = nearest_value(rng.normal(size=(4, 5)) * 4, name).astype(np.float32)
    indices = rng.integers(-4, 4, (9, 5))
    updates = nearest_value(rng.normal(size=(9, 5)), name).astype(np.float32)
    exact = reference.scatter_elements_update(data.astype(np.float64), indices, updates.astype(np.float64), 0,
                                              reduction=reduction)
    want = nearest_value(exact, name).astype(np.float32)
    got = s.run(None, {"data": data, "indices": indices, "updates": updates, "axis": np.array(0)})[0]
    assert_same(got, want)


@pytest.mark.parametrize("carried, tiny", [(BF, 2.0**-30), (H, 2.0**-24)])
def test_half_precision_scatter_sum_is_not_double_rounded(carried, tiny):
    """1 + ulp/2 + tiny lies above the midpoint between 1 and 1 + ulp, so it rounds up. Rounded
    through float32 first, it lands exactly on the midpoint and rounds (to even) down to 1."""
    half_ulp = 2.0**-8 if carried == BF else 2.0**-11
    model = cast_around(scatter_model(carried, reduction="sum"), ["data", "updates"], ["output"], carried)
    got = session(model).run(None, {"data": np.array([1.0], np.float32), "indices": np.array([0, 0]),
                                    "updates": np.array([half_ulp, tiny], np.float32), "axis": np.array(0)})[0]
    assert got.tolist() == [1 + 2 * half_ulp]


@pytest.mark.parametrize("carried", ["float16", "bfloat16"])
def test_round_to_precision_gives_the_nearest_value_ties_to_even(carried):
    """bridge.round_to_precision against a search of every finite value of the type."""
    if carried == "float16":
        grid = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float64)
    else:
        grid = (np.arange(2**16, dtype=np.uint32) << 16).view(np.float32)
    grid = np.unique(grid[np.isfinite(grid)].astype(np.float64))  # ascending; -0.0 and 0.0 merge
    rng = np.random.default_rng(3)
    picks = rng.integers(0, grid.size - 1, 4000)
    lo, hi = grid[picks], grid[picks + 1]
    x = np.concatenate([
        (lo + hi) / 2,  # exact midpoints: ties
        lo + (hi - lo) * rng.random(picks.size),  # anywhere between neighbours
        np.nextafter((lo + hi) / 2, np.inf), np.nextafter((lo + hi) / 2, -np.inf),  # just off a tie
        [grid[-1] * (1 + 2.0**-30), -grid[-1] * 1.5, 1e300, -1e-300, 0.0, -0.0, np.inf, -np.inf, np.nan],
    ])
    got = bridge.round_to_precision(x, carried)
    # What the Cast back makes of it: exact for values of the type; past the largest, +-inf.
    with np.errstate(over="ignore"):
        cast_back = got.astype(np.float32)  # ORT's Cast: float64 -> float32 -> the carried type
        cast_back = (cast_back.astype(np.float16) if carried == "float16" else cast_back).astype(np.float64)
    assert_same(cast_back, nearest_value(x, carried))
    assert np.array_equal(np.signbit(got[x == 0]), np.signbit(x[x == 0]))


@pytest.mark.parametrize("case", list(HOSTILE_INPUTS))
def test_hostile_input_gives_the_spec_answer_or_its_own_error(case):
    op_type, model, feed, attrs, error = HOSTILE_INPUTS[case]
    s = session(model)
    if error is not None:
        with pytest.raises(ortops.OpError) as info:
            s.run(None, feed)
        assert error in str(info.value) and f"{op_type} node '" in str(info.value), str(info.value)
        with pytest.raises(ortops.OpError):  # the reference agrees it is an error
            reference_outputs(op_type, feed, attrs)
        return
    want = reference_outputs(op_type, feed, attrs)
    got = s.run(None, feed)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_same(g, w)
        if g.dtype.kind == "f":
            assert_zero_signs(g, w)


def test_arg_max_refuses_an_index_float32_cannot_hold():
    """The maximum at flat index 2**24 + 1 would be rounded to 2**24 in float32 output."""
    data = np.zeros(2**24 + 2, np.float32)
    data[2**24 + 1] = 1.0
    s = session(arg_max_model(topk=1))
    with pytest.raises(ortops.OpError, match=r"ArgMax node 'arg_max': .*16777217"):
        s.run(None, {"data": data})
    data[2**24 + 1] = 0.0
    data[2**24] = 1.0  # 2**24 itself is exact
    assert s.run(None, {"data": data})[0].tolist() == [[2.0**24]]
