"""Sessions and calls: each implementation of a case as a zero-argument function."""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import numpy as np

from .. import bridge
from .cases import op_bench

__all__ = ["BENCH_DOMAIN", "PATHS", "path_of", "timed_options", "inputs", "plain_session", "identity_session",
           "make_call", "first_output", "same_values"]

#: The implementations every case gets besides its op's own, and how they run the ortops node:
#: the PyOp, the guarded lowering (ortops.InferenceSession path="lowered"), and the
#: standalone lowering in a plain onnxruntime session.
PATHS = {"ortops PyOp": "pyop", "ortops lowered": "lowered", "lowered standalone": "standalone"}


_PATH_OF = {"ortops PyOp": "PyOp", "identity PyOp": "PyOp", "ortops lowered": "lowered", "lowered standalone": "lowered",
            "ortops": "auto", "ORT Identity": "built-in", "built-in": "built-in", "openvino": "OpenVINO",
            "reference": "NumPy"}


def path_of(impl: str) -> str:
    """The execution path of an implementation (``built-in ...`` and ``openvino ...`` variants
    included), for the table's ``path`` column."""
    return _PATH_OF.get(impl, _PATH_OF.get(impl.split(" ", 1)[0], ""))


def timed_options():
    """Quiet ``onnxruntime.SessionOptions`` with ``session.intra_op.allow_spinning=0``: spinning
    threads of interleaved sessions take each other's cores."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options

BENCH_DOMAIN = "ortops_bench"  # the private domain of the identity PyOp


def inputs(op: str, p: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Seeded float32 inputs, generated in float32 (no float64 temporaries to skew peak RSS)."""
    return op_bench(op).inputs(p, np.random.default_rng(seed))


def plain_session(model):
    """A plain onnxruntime session (built-in ops only), quiet, spinning off (:func:`timed_options`)."""
    import onnxruntime as ort

    return ort.InferenceSession(model.SerializeToString(), timed_options(), providers=["CPUExecutionProvider"])


def ortops_session(model, path: str = "auto"):
    """An :class:`ortops.InferenceSession` on ``path``, timed options (:func:`timed_options`)."""
    import ortops

    return ortops.InferenceSession(model, timed_options(), path=path)


class Sessions(NamedTuple):
    """The timed sessions an op's bench ``call`` makes: ``plain(model)``, ``ortops(model)``."""

    plain: Callable
    ortops: Callable


SESSIONS = Sessions(plain_session, ortops_session)


def _identity(x):
    return x


_identity_registered = False


def _register_identity() -> None:
    global _identity_registered
    from onnxruntime_extensions import PyCustomOpDef, onnx_op

    onnx_op(op_type=f"{BENCH_DOMAIN}::Identity", inputs=[PyCustomOpDef.dt_float],
            outputs=[PyCustomOpDef.dt_float])(_identity)
    _identity_registered = True


# Registered in ortops.register()'s one batch: a PyOp registered after the extensions library
# was loaded into a session would crash that session's next run (ortops.bridge.register).
bridge.also_register(_register_identity)


def identity_session():
    """An ortops session of one identity PyOp in domain :data:`BENCH_DOMAIN`, registered in ortops'
    own batch (``ortops.bridge.also_register``), so its calls go through ortops' hook.

    Raises RuntimeError when ``ortops.bench`` was imported after ortops registered its ops.
    """
    import onnx
    from onnx import TensorProto, helper

    import ortops

    ortops.register()
    if not _identity_registered:
        raise RuntimeError("the benchmark's identity PyOp is registered with ortops' ops: import ortops.bench "
                           "before the process creates its first ortops session")
    node = helper.make_node("Identity", ["data"], ["output"], domain=BENCH_DOMAIN, name="identity_pyop")
    graph = helper.make_graph([node], "identity_pyop",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["d0", "d1"])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["d0", "d1"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid(BENCH_DOMAIN, 1)],
                              ir_version=ortops.builder.IR_VERSION)
    onnx.checker.check_model(model)
    return ortops.InferenceSession(model, timed_options())


def _ort_identity_session():
    from onnx import TensorProto, helper

    from .. import builder

    node = helper.make_node("Identity", ["data"], ["output"], name="identity")
    return plain_session(builder.make_model([node], [("data", TensorProto.FLOAT, [None, None])],
                                             [("output", TensorProto.FLOAT, [None, None])], onnx_opset=13))


def make_call(op: str, impl: str, p: dict, feed: dict[str, np.ndarray]) -> Callable[[], Any]:
    """A zero-argument function running ``impl`` on ``feed`` once and returning its outputs."""
    if op.endswith(" overhead"):
        op = p["op"]
        if impl in ("identity PyOp", "ORT Identity"):
            session = identity_session() if impl == "identity PyOp" else _ort_identity_session()
            data = {"data": feed["data"].reshape(1, -1)}
            return lambda: session.run(None, data)
    if impl in PATHS:
        return _path_call(op, PATHS[impl], p, feed)
    call = op_bench(op).call(impl, p, feed, SESSIONS)
    if call is None:
        raise ValueError(f"no implementation {impl!r} for {op}")
    if impl.startswith("openvino"):  # it compiled a model: the thread keeps a signal stack Python fits in
        from ..interop.openvino import roomy_signal_stack

        roomy_signal_stack()
    return call


def _path_call(op: str, path: str, p: dict, feed: dict[str, np.ndarray]) -> Callable[[], Any]:
    """The op's ortops model (its bench module's ``ortops_model``) on one execution path."""
    import ortops

    bench = op_bench(op)
    model, inputs = bench.ortops_model(p), bench.ortops_feed(p, feed)
    if path == "standalone":
        session = plain_session(ortops.lower(model, fallback="none").model)
    else:
        session = ortops_session(model, path)
    return lambda: session.run(None, inputs)


def first_output(outputs) -> np.ndarray:
    if isinstance(outputs, np.ndarray):
        return outputs
    return np.asarray(outputs[0])


def same_values(got: np.ndarray, expected: np.ndarray) -> bool:
    """Same shape and, as multisets, close values (order differs between sort modes)."""
    if got.shape != expected.shape:
        return False
    return bool(np.allclose(np.sort(got, axis=None), np.sort(expected, axis=None), rtol=1e-4, atol=1e-4))
