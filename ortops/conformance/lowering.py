"""Every execution path judged against the reference, bit for bit: each case also runs as the
guarded lowering (:data:`GUARDED`: ``ortops.lower(model)`` in ``ortops.InferenceSession``), the
session's own lowering (:data:`SESSION`: ``path="lowered"``) and the standalone lowering
(:data:`STANDALONE`: ``lower(model, fallback="none")`` in plain ORT); with ``--oracle openvino``
the standalone model also runs natively in OpenVINO (:data:`OPENVINO`). The verdicts:
docs/conformance.md. The case's model is its one node; the inputs the op's lowering needs
constant (its ``CONSTANT_INPUTS``) are initializers.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import onnx
from onnx import helper, numpy_helper

from ..arrays import bitwise_same, describe_difference, short
from .. import runtime
from ..errors import OpError
from ..ops import by_name
from ..ops.tooling import tooling
from .cases import Case, Check, expected_outputs
from ..sessions import session_options

__all__ = ["ORACLES", "GUARDED", "SESSION", "STANDALONE", "OPENVINO", "judge_paths", "judge_openvino"]

#: The oracle names of the three checks, in the order they are made.
GUARDED, SESSION, STANDALONE = "lowered (guarded)", "lowered (session)", "lowered (standalone)"
ORACLES = (GUARDED, SESSION, STANDALONE)
#: The oracle name of the standalone model run natively in OpenVINO (``--oracle openvino``).
OPENVINO = "lowered (standalone) in OpenVINO"
#: The topic that no longer explains a standalone model's result in OpenVINO.
TIES = "ties"


def _model(case: Case) -> onnx.ModelProto:
    from ..builder import IR_VERSION, register_schemas

    op = by_name(case.op)
    module = op.lowering()
    constant = set(getattr(module, "CONSTANT_INPUTS", ()))
    inputs, initializers = [], []
    for role in op.inputs:
        value = case.inputs[role]
        if role in constant:
            initializers.append(numpy_helper.from_array(value, role))
        else:
            inputs.append(helper.make_tensor_value_info(role, helper.np_dtype_to_tensor_dtype(value.dtype), list(value.shape)))
    node = helper.make_node(op.op_type, list(op.inputs), list(op.outputs), domain=op.domain, name=f"{case.op}_case",
                            **case.attrs)
    outputs = [helper.make_tensor_value_info(name, 0, None) for name in op.outputs]
    graph = helper.make_graph([node], "case", inputs, outputs, initializer=initializers)
    register_schemas()
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid(op.domain, 1)],
                              ir_version=IR_VERSION)
    inferred = onnx.shape_inference.infer_shapes(model)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    return model


#: The :func:`ortops.runtime.cached` cache of the lowered paths' sessions, and its bound.
CACHE, CACHE_SIZE = "conformance.lowered", 24


def _sessions(serialized: bytes):
    """(guarded, session-lowered, standalone session or why there is none), cached and bounded."""
    return runtime.cached(CACHE, serialized, lambda: _build(serialized), limit=CACHE_SIZE)


def _build(serialized: bytes):
    import onnxruntime as ort

    from ..lowering import lower
    from ..session import InferenceSession

    guarded = InferenceSession(lower(serialized).model, session_options(), path="pyop")
    session = InferenceSession(serialized, session_options(), path="lowered")
    try:
        standalone_model = lower(serialized, fallback="none").model
    except ValueError as exc:
        return guarded, session, str(exc)
    return guarded, session, ort.InferenceSession(standalone_model.SerializeToString(), session_options(),
                                                  providers=["CPUExecutionProvider"])


def _identical(got, want) -> str:
    """Empty when bit-identical (NaN where NaN, signs of zeros); else why not."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"dtype/shape {got.dtype}{got.shape} vs {want.dtype}{want.shape}"
    return "" if bitwise_same(got, want) else describe_difference("output", got, want, bitwise=True)


def _reference(case: Case):
    """The reference's outputs (a list) or its OpError."""
    want = expected_outputs(case)
    return want if isinstance(want, OpError) else list(want.values())


def judge_paths(case: Case) -> list[Check]:
    """The checks of the three lowered paths on ``case`` (see the module's notes)."""
    op = by_name(case.op)
    if not op.lowering:
        return []
    if case.details.get("dtype") == "bfloat16" or set(case.inputs) != set(op.inputs):
        return [Check(name, "skipped", "the case's inputs are not the op's own (cast inside its graph)")
                for name in ORACLES]
    want = _reference(case)
    guarded, session, standalone = _sessions(_model(case).SerializeToString())
    feed = {name: value for name, value in case.inputs.items()
            if name in {i.name for i in guarded.get_inputs()}}
    checks = [_judge(GUARDED, lambda: guarded.run(None, feed), want, guarded=True),
              _judge(SESSION, lambda: session.run(None, feed), want, guarded=True)]
    if isinstance(standalone, str):
        checks.append(Check(STANDALONE, "skipped", "no exact standard-ONNX composition", detail=standalone))
    else:
        checks.append(_judge(STANDALONE, lambda: standalone.run(None, feed), want, guarded=False))
    return checks


def _judge(oracle: str, run, want, *, guarded: bool) -> Check:
    try:
        got = run()
    except OpError as exc:
        if isinstance(want, OpError) and guarded and exc.kind == want.kind:
            return Check(oracle, "agree")
        return Check(oracle, "unexplained", "raised where the reference did not" if not isinstance(want, OpError)
                     else "raised another error than the reference", detail=str(exc)[:300])
    except Exception as exc:  # noqa: BLE001 - ORT's own error: right for the standalone path on bad input
        if isinstance(want, OpError) and not guarded:
            return Check(oracle, "agree", detail=str(exc).splitlines()[0][:300])
        return Check(oracle, "unexplained", "ONNX Runtime failed", detail=str(exc).splitlines()[0][:300])
    if isinstance(want, OpError):
        return Check(oracle, "unexplained", "returned outputs where the reference raises", detail=str(want)[:300])
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        why = _identical(g, w)
        if why:
            return Check(oracle, "unexplained", "results differ from the reference", detail=f"output {i}: {why}")
    return Check(oracle, "agree")


# --- the standalone model, natively in OpenVINO ------------------------------------------------

def _compiled(serialized: bytes):
    """(the case's standalone lowering compiled by a plain OpenVINO Core, its input names), or the
    reason there is none. Not cached (a compiled model holds its tensors and threads); the inputs'
    dimensions are made dynamic (static ones made OpenVINO hold 1.3 GiB instead of 0.7 for 2**24 + 2
    elements)."""
    from ..interop.openvino import DEFAULT_CONFIG, require_openvino, roomy_signal_stack
    from ..lowering import lower

    try:
        model = lower(serialized, fallback="none").model
    except ValueError as exc:
        return str(exc)
    for value in model.graph.input:  # dynamic: OpenVINO then plans no static buffer per intermediate
        for dim in value.type.tensor_type.shape.dim:
            dim.Clear()
            dim.dim_param = f"{value.name}_dim"
    core = runtime.cached("openvino.plain_core", None, lambda: require_openvino().Core())
    compiled = core.compile_model(core.read_model(model.SerializeToString(), b""), "CPU", DEFAULT_CONFIG)
    roomy_signal_stack()
    return compiled, [i.name for i in model.graph.input]


def judge_openvino(case: Case) -> list[Check]:
    """The standalone lowering of the case's model run natively in OpenVINO, judged against the
    reference (oracle :data:`OPENVINO`): ``agree`` bit for bit (or both fail), ``explained`` only by
    the op judge's ``explain_standalone`` (a precision limit of OpenVINO's CPU plugin; never
    ``ties``: the standalone compositions rely on no runtime's order of equal values), ``skipped``
    without OpenVINO or an exact composition, else ``unexplained``."""
    from .openvino_oracle import available, message

    op = by_name(case.op)
    if not op.lowering:
        return []
    if not available():
        return [Check(OPENVINO, "skipped", "openvino is not installed (pip install 'ortops[openvino]')",
                      topic="openvino-missing")]
    if case.details.get("dtype") == "bfloat16" or set(case.inputs) != set(op.inputs):
        return [Check(OPENVINO, "skipped", "the case's inputs are not the op's own (cast inside its graph)")]
    compiled = _compiled(_model(case).SerializeToString())
    if isinstance(compiled, str):
        return [Check(OPENVINO, "skipped", "no exact standard-ONNX composition", detail=compiled)]
    compiled, names = compiled
    want = _reference(case)
    oracle = tooling(case.op).judge.OPENVINO
    try:
        result = compiled([case.inputs[name] for name in names])
        got = [np.asarray(result[output]) for output in compiled.outputs]
    except RuntimeError as exc:
        if isinstance(want, OpError):
            return [Check(OPENVINO, "agree", detail=message(exc)[:300])]
        return [Check(OPENVINO, "unexplained", "OpenVINO failed on a case the reference accepts",
                      detail=message(exc)[:300])]
    if isinstance(want, OpError):
        return [Check(OPENVINO, "unexplained", "returned outputs where the reference raises",
                      detail=f"{str(want)[:200]}; OpenVINO returned {short(got)[:300]}")]
    whys = [why for why in (_identical(g, w) for g, w in zip(got, want, strict=True)) if why]
    if not whys:
        return [Check(OPENVINO, "agree")]
    explained = oracle.explain_standalone(case, got, want)
    if explained is not None and explained.topic == TIES:
        return [Check(OPENVINO, "unexplained", "another order of equal values: a standalone model must give the "
                      "spec's answer on ties in every runtime", detail=f"{explained.detail[:240]}")]
    if explained is not None:
        return [dataclasses.replace(explained, oracle=OPENVINO, family="")]
    return [Check(OPENVINO, "unexplained", "results differ from the reference", detail=f"{whys[0]}; OpenVINO: "
                  f"{short(got)[:300]}")]

