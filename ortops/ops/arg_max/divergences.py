"""The known divergences of ``ArgMax``: how runtimes differ from ortops on it, and why that is
not a bug of ortops (collected with every op's into :data:`ortops.divergences.DIVERGENCES`)."""

from __future__ import annotations

from ..spec import Divergence, NCNN_OBSERVED

__all__ = ["DIVERGENCES"]

OP = "ArgMax"

DIVERGENCES: tuple[Divergence, ...] = (
    Divergence('nan', OP, 'onnxruntime',
               "ORT's ArgMax/TopK do not order NaN: ortops (its documented choice) ranks NaN above +inf, the higher index first among NaNs",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('ncnn-tie-rule', OP, 'onnxruntime',
               "ncnn's tie rule: higher index first; ONNX TopK lower index first",
               ('onnxruntime 1.31.1', 'onnxruntime 1.32.0')),
    Divergence('nan', OP, 'ncnn',
               "ncnn's std::partial_sort of (value, index) pairs with std::greater has no consistent order with NaN (no strict weak order): where a NaN ranks depends on where it sits ([nan,1,inf,-inf,2,-0.0,0.0,3] topk=1 gave inf at index 2; topk=8 put NaN last); ortops' documented order ranks NaN above +inf, the higher index first among NaNs",
               NCNN_OBSERVED),
    Divergence('k-range', OP, 'ncnn',
               "ncnn checks neither topk against the element count nor an empty input: it reads past the data and returns stray values, or breaks its heap and aborts ('double free or corruption'), or segfaults; ortops raises OpError",
               NCNN_OBSERVED),
    Divergence('float-index-precision', OP, 'ncnn',
               "ncnn writes flat indices as float32: an index above 2**24 comes back silently rounded (2**24 + 1 as 2**24); ortops raises OpError",
               NCNN_OBSERVED),
    Divergence('ncnn-tie-rule', OP, 'onnx',
               "ncnn's tie rule: the last of equal maxima; this ONNX vector has select_last_index=0 (the first)",
               ('onnx 1.23.2',)),
)
