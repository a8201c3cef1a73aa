"""Run a model in plain ONNX Runtime or plain OpenVINO, in a child process (``ortops.processes``
pickles these functions by name). This module imports neither ortops nor anything that does:
what a user of a standalone model has."""

from __future__ import annotations

_compiled: dict = {}


def _runner(runtime: str, model: bytes):
    key = (runtime, model)
    if key not in _compiled:
        if runtime == "onnxruntime":
            import onnxruntime as ort

            session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
            names = [i.name for i in session.get_inputs()]
            _compiled[key] = lambda feeds: session.run(None, dict(zip(names, feeds)))
        else:
            import openvino as ov

            core = ov.Core()
            compiled = core.compile_model(core.read_model(model, b""), "CPU")
            _compiled[key] = lambda feeds: [v.copy() for v in compiled(feeds).values()]
    return _compiled[key]


def run(runtime: str, model: bytes, feeds: list) -> list:
    """The outputs of ``model`` (serialized) for each list of input arrays in ``feeds``, or the
    runtime's error message as a string, in ``runtime`` ("onnxruntime" or "openvino")."""
    run_one = _runner(runtime, model)
    results = []
    for inputs in feeds:
        try:
            results.append(run_one(inputs))
        except Exception as exc:  # noqa: BLE001 - the runtime's error is the answer
            results.append(f"{type(exc).__name__}: {exc}")
    return results
