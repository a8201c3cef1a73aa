"""The raw path (``ortops.session_options()`` + a plain ``onnxruntime.InferenceSession``) under
hostile models and inputs: it never aborts, and every output is either correct or empty
(shape (0,)) with the error logged on the ``ortops`` logger - never plausible wrong numbers.

The cases run in a child process (this file run as a script), so that an abort cannot take
pytest down: the test asserts the child's exit status. The hostile inputs are those of
``tests/test_robustness.py``, run on the model as written (public op types, errors without
node names) and after :func:`ortops.prepare_model` (private op types, errors name the node).
"""

from __future__ import annotations

import functools
import logging
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


def test_raw_path_survives_hostile_models_and_inputs():
    done = subprocess.run([sys.executable, __file__], capture_output=True, text=True, timeout=300)
    report = done.stdout[-6000:] + done.stderr[-4000:]
    assert done.returncode == 0, f"child exit status {done.returncode}\n{report}"
    assert "cases checked" in done.stdout, report


@pytest.mark.xfail(strict=True, reason=(
    "onnxruntime-extensions 0.15.2 turns string attributes into Python str in C++, before any "
    "ortops code runs: a non-UTF-8 value raises UnicodeDecodeError there, which aborts the process "
    "(exit 134). ortops.prepare_model refuses such a model (OpError at load; see "
    "test_robustness 'TopK non-UTF-8 mode'). Strict: the day this passes, drop the xfail."))
def test_raw_path_survives_a_non_utf8_string_attribute():
    code = textwrap.dedent("""
        import sys, numpy as np, onnxruntime as ort
        sys.path.insert(0, %r)
        import ortops, test_robustness as rb
        model = rb.top_k_model(mode=b"\\xff")
        session = ort.InferenceSession(model.SerializeToString(), ortops.session_options())
        values, _ = session.run(None, {"data": np.ones((1, 3), np.float32), "k": np.array([1])})
        assert values.shape == (0,)
    """ % HERE)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[-2000:]}"


@pytest.mark.xfail(strict=True, reason=(
    "A graph output written by a PyOp into a pre-allocated IOBinding output of another shape (a "
    "new k, or an error's empty output) makes ORT throw inside the bridge's C++: abort (exit 134). "
    "ortops.InferenceSession puts an Identity in between (test_robustness); the raw path cannot."))
def test_raw_path_survives_reusing_an_iobinding_with_another_output_shape():
    code = textwrap.dedent("""
        import numpy as np, onnxruntime as ort, ortops
        from onnx import TensorProto
        from ortops import builder
        model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value")
        session = ort.InferenceSession(model.SerializeToString(), ortops.session_options())
        binding = session.io_binding()
        binding.bind_cpu_input("data", np.ones((2, 3), np.float32))
        binding.bind_output("values")
        binding.bind_output("indices")
        for k in (1, 2):
            binding.bind_cpu_input("k", np.array([k]))
            try:
                session.run_with_iobinding(binding)
            except Exception:
                pass
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[-2000:]}"


# ---------------------------------------------------------------------------------------------
# The child


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.ERROR)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _raw_session(model):
    return _raw_session_of(model.SerializeToString())


@functools.lru_cache(maxsize=None)
def _raw_session_of(serialized):
    import onnxruntime as ort

    import ortops

    options = ortops.session_options()
    options.log_severity_level = 3
    return ort.InferenceSession(serialized, options, providers=["CPUExecutionProvider"])


def _check_input_cases(records, failures):
    """Every hostile input of test_robustness, on the raw model and on the prepared one."""
    sys.path.insert(0, HERE)
    import test_robustness as robustness

    import ortops

    count = 0
    for name, (op_type, model, feed, attrs, error) in robustness.HOSTILE_INPUTS.items():
        for prepared in (False, True):
            label = f"{name} ({'prepared' if prepared else 'as written'})"
            print("case", label, flush=True)  # the last line printed names the culprit of an abort
            session = _raw_session(ortops.prepare_model(model) if prepared else model)
            del records.messages[:]
            got = session.run(None, feed)
            count += 1
            if error is not None:
                shapes = [g.shape for g in got]
                if any(s != (0,) for s in shapes):
                    failures.append(f"{label}: an error case gave outputs of shapes {shapes}")
                logged = [m for m in records.messages if error in m]
                if len(records.messages) != 1 or not logged:
                    failures.append(f"{label}: expected one logged error with {error!r}, got {records.messages}")
                elif prepared and f"{op_type} node '" not in logged[0]:
                    failures.append(f"{label}: the logged error does not name the node: {logged[0]}")
                continue
            if records.messages:
                failures.append(f"{label}: a good call logged {records.messages}")
            want = robustness._reference(op_type, feed, attrs)
            for g, w in zip(got, want, strict=True):
                try:
                    robustness.assert_same(g, w)
                except AssertionError as exc:
                    failures.append(f"{label}: wrong answer {g!r} vs {w!r}: {exc}")
    return count


def _check_model_cases(records, failures):
    """Hostile models on the raw path: refused by ORT at load (a clean exception), or run
    with empty outputs and a logged error."""
    from onnx import TensorProto
    from onnxruntime_extensions import PyCustomOpDef, onnx_op

    sys.path.insert(0, HERE)
    import test_robustness as robustness

    F, I64 = TensorProto.FLOAT, TensorProto.INT64
    x = {"data": np.array([[3, 1, 2]], np.float32), "k": np.array([2])}
    at_load = {  # ORT refuses these when the session is created
        "float16 data": (robustness.top_k_model(TensorProto.FLOAT16), None),
        "bfloat16 data": (robustness.top_k_model(TensorProto.BFLOAT16), None),
        "float16 scatter": (robustness.scatter_model(TensorProto.FLOAT16), None),
        "double ArgMax": (robustness._model("ArgMax", "ortops.ncnn", [("data", TensorProto.DOUBLE, None)],
                                            [("output", F, None)], dict(out_max_val=0, topk=1)), None),
        "STRING axis": (robustness.top_k_model(axis="1"), None),
        "FLOAT axis": (robustness.top_k_model(axis=1.0), None),
        "INT mode": (robustness.top_k_model(mode=1), None),
        "float k": (robustness.top_k_model(k_type=F), None),
        "int64 indices declared for the public op": (robustness.top_k_model(index_type=I64), None),
    }
    missing = robustness.top_k_model()
    del missing.graph.node[0].attribute[3]  # stable
    at_load["missing attribute"] = (missing, None)
    at_run = {  # loaded; every call gives empty outputs and a logged error
        "mode='largest'": (robustness.top_k_model(mode="largest"), x, "mode='largest' is invalid"),
        "stable=2": (robustness.top_k_model(stable=2), x, "stable=2"),
        "sort=''": (robustness.top_k_model(sort=""), x, "sort='' is invalid"),
        "reduction='avg'": (robustness.scatter_model(reduction="avg"),
                            {"data": np.zeros(3, np.float32), "indices": np.array([0]),
                             "updates": np.ones(1, np.float32), "axis": np.array(0)}, "reduction='avg'"),
        "topk=0": (robustness.arg_max_model(topk=0), {"data": np.ones(3, np.float32)}, "topk=0"),
        "index_element_type='i16'": (robustness.top_k_model(index_element_type="i16"), x, "'i16' is invalid"),
    }
    count = 0
    for name, (model, _) in at_load.items():
        print("model", name, flush=True)
        try:
            session = _raw_session(model)
        except Exception:  # noqa: BLE001 - ORT's clean refusal is the expected outcome
            count += 1
            continue
        failures.append(f"{name}: ORT loaded the model; expected a refusal at load")
    for name, (model, feed, needle) in at_run.items():
        print("model", name, flush=True)
        session = _raw_session(model)
        for _ in range(2):  # the attribute cache must not turn a second call into a result
            del records.messages[:]
            got = session.run(None, feed)
            count += 1
            if any(g.shape != (0,) for g in got) or not any(needle in m for m in records.messages):
                failures.append(f"{name}: got shapes {[g.shape for g in got]}, logs {records.messages}")

    # A PyOp registered by someone else that raises: the hook must not let it abort the process.
    @onnx_op(op_type="ortops_test::Boom", inputs=[PyCustomOpDef.dt_float], outputs=[PyCustomOpDef.dt_float])
    def boom(x):
        raise RuntimeError("boom")

    print("model foreign PyOp", flush=True)
    boom_model = robustness._model("Boom", "ortops_test", [("x", F, None)], [("y", F, None)], {})
    import ortops

    ortops.register()
    options = ortops.session_options()
    options.log_severity_level = 3
    import onnxruntime as ort

    session = ort.InferenceSession(boom_model.SerializeToString(), options)
    del records.messages[:]
    (y,) = session.run(None, {"x": np.ones(3, np.float32)})
    count += 1
    if y.shape != (0,) or not any("boom" in m for m in records.messages):
        failures.append(f"foreign PyOp: got shape {y.shape}, logs {records.messages}")
    return count


def main() -> int:
    records = _Records()
    logger = logging.getLogger("ortops")
    logger.addHandler(records)
    logger.propagate = False
    failures: list[str] = []
    count = _check_input_cases(records, failures) + _check_model_cases(records, failures)
    print(f"{count} cases checked, {len(failures)} failures", flush=True)
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
