"""Cached ONNX Runtime sessions for the conformance runner (models are built once per key)."""

from __future__ import annotations

import functools

import onnx

__all__ = ["ortops_session", "plain_session", "BuiltinUnavailable"]


class BuiltinUnavailable(Exception):
    """ORT has no kernel for a standard node (e.g. NOT_IMPLEMENTED for uint64 TopK-11)."""


def _unavailable(exc: BaseException) -> bool:
    text = str(exc)
    return "NOT_IMPLEMENTED" in text or "Could not find an implementation" in text


@functools.lru_cache(maxsize=512)
def _session(serialized: bytes, with_ortops: bool):
    import onnxruntime as ort

    from ..session import InferenceSession

    options = ort.SessionOptions()
    options.log_severity_level = 4
    try:
        if with_ortops:
            return InferenceSession(serialized, options)
        return ort.InferenceSession(serialized, options, providers=["CPUExecutionProvider"])
    except Exception as exc:  # noqa: BLE001 - ORT's own words go into the report
        if _unavailable(exc):
            raise BuiltinUnavailable(str(exc).strip().splitlines()[0][:300]) from None
        raise


def ortops_session(model: onnx.ModelProto):
    """An :class:`ortops.InferenceSession` for ``model``, cached by its bytes.

    Raises BuiltinUnavailable when ORT lacks a kernel for one of the model's standard nodes.
    """
    return _session(model.SerializeToString(), True)


def plain_session(model: onnx.ModelProto):
    """A plain ``onnxruntime.InferenceSession`` (built-in ops only), cached by model bytes."""
    return _session(model.SerializeToString(), False)
