"""The block-maxima prefilter of the TopK and ncnn ArgMax (topk > 1) lowerings, and the
measured rule for when to use it.

The composition, for slices of length n along the last axis and a constant k: cut each slice
into m = ceil(n / B) blocks of B (the last one padded with the selection's identity), reduce
each block to its best element (``ReduceMax`` for mode max, ``ReduceMin`` for min), select the
k best blocks with ONNX TopK (stable: the lower block first among equal maxima), put them back
in ascending block order, gather their k·B elements and select k among them with ONNX TopK;
a candidate's position p maps back to ``block[p // B] * B + p % B``.

Why it is exact (ortops' order: by value in the mode's direction, then the lower index first,
with no NaN: the lowering's hazard sends NaN elsewhere):

* Every block holding one of the k selected elements is selected. If block j holds a selected
  e and is not selected, each of the k selected blocks b ranks ahead of j (a better maximum,
  or an equal one and b < j), so its first best element ranks ahead of e (better, or equal
  with a lower index): k elements ahead of e, and e would not be selected.
* The candidates keep ascending index order (blocks ascending, each block in order), so the
  stable TopK over them breaks ties by the lower index, as over the whole slice.
* Padding sits above every real index and is never better than a real element (−inf for max,
  +inf for min, the type's minimum or maximum for integers), so it ranks after every real
  candidate; the candidates hold at least k real elements ((k−1)·B + the padded block's
  real ones ≥ k), so no pad is ever selected.

``ReduceMax``/``ReduceMin`` in ORT 1.32 do not reliably return NaN for a block holding NaN
(measured: 2985 mismatches in 550 random NaN-holding tensors), so the prefilter is used only
where the input is known to hold no NaN: integers, or behind the no-NaN hazard.

:data:`RULE` decides, from n and k alone, whether the prefilter is faster than ONNX TopK on this
runtime and with which B: it is fitted to measurements of ``scripts/topk_cost_model.py`` (the
grid and the results are in ``docs/topk_cost_model.json``, the fit in docs/performance.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from onnx import TensorProto

from ..portable import block_index, in_blocks, with_axes

__all__ = ["Rule", "RULE", "REDUCIBLE", "block_size", "no_nan", "compose"]

#: The key types the prefilter reduces with ReduceMax/ReduceMin. int16 has no ORT kernel. int64
#: (and uint32, widened to int64) is left out: ORT 1.31's int64 ReduceMax returns 0 for a row
#: [0, 4294967295] (it compares in 32 bits), and a standalone model must be exact in any runtime.
REDUCIBLE = {TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.INT8: np.int8,
             TensorProto.UINT8: np.uint8, TensorProto.INT32: np.int32}


@dataclass(frozen=True)
class Rule:
    """When to prefilter a slice of length n for k elements, and the block size B.

    The prefilter is used when ``n >= min_n``, ``k <= n / min_ratio`` (the slice is long and
    k small against it) and the tensor holds at least ``min_elements`` (``batch * n``; an
    unknown batch counts as 1): below that, its dozen nodes cost more than they save. B is ``scale * sqrt(n / k)`` rounded, clipped to ``[min_block,
    max_block]``, then moved to the nearest divisor of n within a factor ``divisor_slack``
    (no padding) when there is one. ``force``: always prefilter, with that B (tests; the
    cost-model script) — B is still lowered to n // k where k blocks need it.
    """

    min_n: int = 1024
    min_ratio: float = 1024
    min_elements: int = 131072
    scale: float = 1.0
    min_block: int = 16
    max_block: int = 4096
    divisor_slack: float = 1.5
    force: int | None = None


#: The rule fitted on the 2-core machine (scripts/topk_cost_model.py, docs/performance.md): its
#: values are ``"fitted"`` in docs/topk_cost_model.json (a test checks that they agree).
RULE = Rule()


def block_size(n: int, k: int, batch: int | None = 1, rule: Rule | None = None) -> int | None:
    """The block size B to prefilter ``batch`` slices (None: unknown, counted as 1) of length
    ``n`` for ``k`` elements, or None when ``rule`` (default :data:`RULE`) predicts ONNX TopK
    alone is faster. B <= n // k always (k blocks exist)."""
    rule = RULE if rule is None else rule
    if not 1 <= k <= n:
        return None
    if rule.force is not None:
        return max(1, min(rule.force, n // k))
    if n < rule.min_n or k * rule.min_ratio > n or n * (batch or 1) < rule.min_elements:
        return None
    ideal = min(max(round(rule.scale * math.sqrt(n / k)), rule.min_block), rule.max_block, n // k)
    divisors = [d for d in _divisors(n) if ideal / rule.divisor_slack <= d <= min(ideal * rule.divisor_slack, n // k)]
    if divisors:
        return min(divisors, key=lambda d: abs(math.log(d / ideal)))
    return ideal


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def identity(elem: int, largest: int):
    """The padding: a value no real element ranks after (for the mode), of ONNX type ``elem``."""
    dtype = np.dtype(REDUCIBLE[elem])
    if dtype.kind == "f":
        return np.array(-np.inf if largest else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if largest else info.max, dtype)


def _reduce(b, op_type: str, x: str) -> str:
    """``op_type`` over the last axis, not kept."""
    return with_axes(b, op_type, x, [-1], keepdims=0)


def no_nan(b, key: str, n: int, block: int, rank: int, elem: int, largest: int) -> str:
    """True unless ``key`` may hold NaN: the sum of its block sums is not NaN (+inf and -inf
    together also trip it). Summed per block first: ORT splits a reduction over the last axis
    over its threads, and runs one over every axis on one (half the time on [64, 32000]). The
    padding, ±inf, would trip it next to an opposite infinity: a padded key is summed per slice."""
    if -(-n // block) * block == n:
        sums = _reduce(b, "ReduceSum", in_blocks(b, key, n, block, rank, identity(elem, largest)))
    else:
        sums = _reduce(b, "ReduceSum", key)
    return b.add("Not", [b.add("IsNaN", [b.reduce("ReduceSum", sums)])])


def compose(b, key: str, k: int, n: int, block: int, rank: int, elem: int, largest: int,
            by_index: bool, last_first: bool = False) -> tuple[str, str]:
    """(values, int64 indices) of the k best elements of every slice of ``key`` (ONNX type
    ``elem`` in :data:`REDUCIBLE`, rank ``rank``, static length ``n`` along the last axis, no
    NaN) in ortops' order, or by ascending index with ``by_index``; ``b.opset >= 13``.

    ``last_first``: of equal values the higher index first (ncnn's order). That is the
    composition above on the reversed slice, built without reversing it: the padding goes
    first, and only the block maxima and the k·B candidates are reversed for their TopKs."""
    axis = rank - 1
    keep = [0] * axis
    blocks = -(-n // block)
    x = in_blocks(b, key, n, block, rank, identity(elem, largest), last_first)
    maxima = _reduce(b, "ReduceMax" if largest else "ReduceMin", x)
    kk = b.const(np.array([k], np.int64))
    _, chosen = b.add("TopK", [b.reversed(maxima, -1) if last_first else maxima, kk], 2, axis=-1, largest=largest,
                      sorted=1)
    if last_first:
        chosen = b.add("Sub", [b.const(np.array(blocks - 1, np.int64)), chosen])
    # Ascending block order: the candidates then keep ascending index order.
    chosen, _ = b.add("TopK", [chosen, kk], 2, axis=-1, largest=0, sorted=1)
    candidates = b.add("GatherND", [x, b.add("Reshape", [chosen, b.const(np.array(keep + [k, 1], np.int64))])],
                       batch_dims=axis)
    candidates = b.add("Reshape", [candidates, b.const(np.array(keep + [k * block], np.int64))])
    values, positions = b.add("TopK", [b.reversed(candidates, -1) if last_first else candidates, kk], 2, axis=-1,
                              largest=largest, sorted=1)
    if last_first:
        positions = b.add("Sub", [b.const(np.array(k * block - 1, np.int64)), positions])
    if by_index:
        positions, _ = b.add("TopK", [positions, kk], 2, axis=-1, largest=0, sorted=1)
        values = b.add("GatherElements", [candidates, positions], axis=-1)
    indices = block_index(b, chosen, positions, block, -1)
    if last_first and blocks * block != n:  # the padding went first
        indices = b.add("Sub", [indices, b.const(np.array(blocks * block - n, np.int64))])
    return values, indices
