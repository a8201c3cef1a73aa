"""The known divergences of ``ScatterElementsUpdate``: how runtimes differ from ortops on it, and why that is
not a bug of ortops (collected with every op's into :data:`ortops.divergences.DIVERGENCES`)."""

from __future__ import annotations

from ..spec import Divergence, OPENVINO_OBSERVED

__all__ = ["DIVERGENCES"]

OP = "ScatterElementsUpdate"

DIVERGENCES: tuple[Divergence, ...] = (
    Divergence('integer-mean-rounding', OP, "openvino",
               "OpenVINO CPU's integer mean truncates toward zero; its spec and ortops round toward negative infinity (floor)",
               OPENVINO_OBSERVED),
    Divergence('narrow-type-overflow', OP, "openvino",
               "OpenVINO CPU accumulates the integer mean's sum in the element type and wraps around (and truncates); ortops computes the exact sum and floors, as the spec says",
               OPENVINO_OBSERVED),
    Divergence('float-accumulation', OP, "openvino",
               'OpenVINO CPU accumulates float32 sums/products in float32, one rounding per update; ortops accumulates in float64 and rounds once',
               OPENVINO_OBSERVED),
    Divergence('float16-bfloat16', OP, "openvino",
               'OpenVINO computes float16 sums/products in float16; ortops in float64, rounded once',
               OPENVINO_OBSERVED),
    Divergence('ties', OP, 'onnxruntime',
               "reduction='none' with several updates for one target: the order is undefined in both specs (ortops: the last update in row-major order of indices wins)",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('float-accumulation', OP, 'onnxruntime',
               'ORT accumulates float32 in float32, update by update (reproduced by a float32 simulation); ortops accumulates in float64 and rounds once, as the reference does',
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('nan', OP, 'onnxruntime',
               "ORT's min/max keep `a < b ? a : b` (`a > b ? a : b`), so a NaN survives or vanishes by operand order (reproduced by a simulation); the spec's min/max propagate NaN, as ortops does",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('integer-mean-rounding', OP, 'onnxruntime',
               "ONNX Div truncates integers toward zero; the spec's integer mean rounds toward -inf: a naive exporter's mean is one too high where a sum is negative and not a multiple of its count",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('narrow-type-overflow', OP, 'onnxruntime',
               "the composition sums integers in int64 (uint64), which wrap where the exact sums leave that range; ortops' integer mean is exact",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
)
