"""Cached ONNX Runtime sessions the judges run models in (the conformance suites and runner), built
once per model: at most :data:`CACHE_SIZE` (least recently used dropped first; in
:mod:`ortops.runtime`'s cache, so a forked child starts with none), each single-threaded on the
calling thread, without spinning or memory arena. A pool per cached session would only add idle
threads and memory (the unbounded cache peaked at 2.3 GiB and 518 threads: CHANGELOG.md).
"""

from __future__ import annotations

import onnx

from . import runtime

__all__ = ["ortops_session", "plain_session", "BuiltinUnavailable", "CACHE_SIZE", "CACHE", "session_options",
           "clear", "ort_version"]

#: How many sessions the runner keeps; a case's models are built again after they fall out.
CACHE_SIZE = 48
#: The name of the runner's cache in :mod:`ortops.runtime`.
CACHE = "conformance.sessions"


class BuiltinUnavailable(Exception):
    """ORT has no kernel for a standard node (e.g. NOT_IMPLEMENTED for uint64 TopK-11)."""


def session_options():
    """``onnxruntime.SessionOptions`` for one conformance session: silent, single-threaded on
    the caller, no spinning, no memory arena."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 4
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.enable_cpu_mem_arena = False
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return options


def _build(serialized: bytes, with_ortops: bool):
    import onnxruntime as ort

    from .session import InferenceSession

    options = session_options()
    try:
        if with_ortops:
            return InferenceSession(serialized, options, path="pyop")  # lowered paths: conformance.lowering
        return ort.InferenceSession(serialized, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - ORT's own words go into the report
        if "NOT_IMPLEMENTED" in str(exc) or "Could not find an implementation" in str(exc):
            raise BuiltinUnavailable(str(exc).strip().splitlines()[0][:300]) from None
        raise


def _session(serialized: bytes, with_ortops: bool):
    return runtime.cached(CACHE, (serialized, with_ortops), lambda: _build(serialized, with_ortops),
                          limit=CACHE_SIZE)


def clear() -> None:
    """Drop every cached session (their memory goes back when nothing else holds them)."""
    runtime.clear(CACHE)


def ortops_session(model: onnx.ModelProto):
    """An :class:`ortops.InferenceSession` for ``model``, cached by its bytes.

    Raises BuiltinUnavailable when ORT lacks a kernel for one of the model's standard nodes.
    """
    return _session(model.SerializeToString(), True)


def plain_session(model: onnx.ModelProto):
    """A plain ``onnxruntime.InferenceSession`` (built-in ops only), cached by model bytes."""
    return _session(model.SerializeToString(), False)


def ort_version() -> str:
    """The installed onnxruntime's version, for a check that names ORT."""
    import onnxruntime

    return onnxruntime.__version__
