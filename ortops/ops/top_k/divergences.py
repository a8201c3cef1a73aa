"""The known divergences of ``TopK``: how runtimes differ from ortops on it, and why that is
not a bug of ortops (collected with every op's into :data:`ortops.divergences.DIVERGENCES`)."""

from __future__ import annotations

from ..spec import Divergence, OPENVINO_OBSERVED

__all__ = ["DIVERGENCES"]

OP = "TopK"

DIVERGENCES: tuple[Divergence, ...] = (
    Divergence('ties', OP, "openvino",
               "OpenVINO CPU's TopK with sort='index' does not keep the lowest-index equal values at the k boundary, even with stable=1 (its spec's 'stable' only promises the relative order of equal elements); ortops selects as sort='value', stable=1 does, then orders by index",
               OPENVINO_OBSERVED),
    Divergence('nan', OP, 'onnxruntime',
               'NaN order is implementation-defined (ONNX and OpenVINO specs); ortops ranks NaN above +inf in every mode',
               ('onnxruntime 1.31.1',)),
)
