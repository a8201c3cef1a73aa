"""The audit of standard ``NonMaxSuppression`` (ONNX opset 10/11): why two runtimes' selections differ.

Each runtime's ``selected_indices`` (int64 [num_selected, 3]: batch, class, box) is checked, per
(batch, class), against the spec's greedy rule on the node's actual inputs. The spec leaves the
order among equal scores open, so a selection is valid when some order of the equal scores yields
it. :func:`classify` finds ``ties`` (both valid), ``near-ties`` (both valid once one comparison
within ``atol + rtol * |threshold|`` goes the other way) or an unexplained difference, with the
evidence. IoU is computed in float64 from the spec's two box formats; a box of zero area overlaps
nothing, as in ONNX Runtime. The rules in full: docs/compare.md ("NMS and subgraphs").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from ..verdicts import Audit, Capture, Finding

__all__ = ["AUDIT", "NmsSettings", "Validity", "classify", "corners", "iou", "settings", "validate"]


def corners(boxes, center_point_box: int = 0) -> np.ndarray:
    """``[..., 4]`` boxes as float64 ``[y_min, x_min, y_max, x_max]`` (spec formats: see the module)."""
    b = np.asarray(boxes, np.float64)
    if center_point_box == 1:
        x, y, half_w, half_h = b[..., 0], b[..., 1], b[..., 2] / 2, b[..., 3] / 2
        return np.stack([y - half_h, x - half_w, y + half_h, x + half_w], axis=-1)
    return np.stack([np.minimum(b[..., 0], b[..., 2]), np.minimum(b[..., 1], b[..., 3]),
                     np.maximum(b[..., 0], b[..., 2]), np.maximum(b[..., 1], b[..., 3])], axis=-1)


def iou(a, b, center_point_box: int = 0) -> np.ndarray:
    """IoU of every box of ``a`` (shape [n, 4]) with every box of ``b`` ([m, 4]): float64 [n, m]."""
    a, b = corners(a, center_point_box)[:, None, :], corners(b, center_point_box)[None, :, :]
    height = np.clip(np.minimum(a[..., 2], b[..., 2]) - np.maximum(a[..., 0], b[..., 0]), 0, None)
    width = np.clip(np.minimum(a[..., 3], b[..., 3]) - np.maximum(a[..., 1], b[..., 1]), 0, None)
    inter = height * width
    area_a = (a[..., 2] - a[..., 0]) * (a[..., 3] - a[..., 1])
    area_b = (b[..., 2] - b[..., 0]) * (b[..., 3] - b[..., 1])
    union = area_a + area_b - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where((inter > 0) & (area_a > 0) & (area_b > 0) & (union > 0), inter / union, 0.0)


class NmsSettings(NamedTuple):
    """The node's scalar inputs and attribute, with the spec's defaults for omitted ones."""

    max_output_boxes_per_class: int
    iou_threshold: float
    score_threshold: float | None
    center_point_box: int


def settings(node, inputs: Sequence[np.ndarray | None]) -> NmsSettings:
    """:class:`NmsSettings` from the node and its inputs (boxes, scores, max_output, iou, score)."""
    def scalar(i, cast, default):
        value = inputs[i] if len(inputs) > i else None
        return default if value is None or np.asarray(value).size == 0 else cast(np.asarray(value).reshape(-1)[0])

    center = next((a.i for a in node.attribute if a.name == "center_point_box"), 0)
    return NmsSettings(max(scalar(2, int, 0), 0), scalar(3, float, 0.0), scalar(4, float, None), int(center))


class Validity(NamedTuple):
    """One runtime's selection for one (batch, class): ``problems`` (the spec's rule broken beyond
    any tie or near-tie; empty when valid), ``ties`` and ``near`` (where equal scores, or a comparison
    within tolerance of a threshold, were needed to reach it)."""

    problems: list[str]
    ties: list[str]
    near: list[str]


def _box(index: int, scores: np.ndarray) -> str:
    return f"box {index} (score {scores[index]:.7g})"


def validate(selected: Sequence[int], boxes: np.ndarray, scores: np.ndarray, s: NmsSettings, *,
             atol: float = 0.0, rtol: float = 0.0) -> Validity:
    """Whether ``selected`` (box indices, in output order) is what the spec's greedy rule gives for
    ``boxes`` ([num_boxes, 4]) and ``scores`` ([num_boxes]) under some order of equal scores."""
    problems, ties, near = [], [], []
    selected = [int(i) for i in selected]
    scores = np.asarray(scores, np.float64)
    n = scores.shape[0]
    iou_tol = atol + rtol * abs(s.iou_threshold)
    score_tol = atol + rtol * abs(s.score_threshold or 0.0)
    order_tol = atol + rtol * (float(np.max(np.abs(scores))) if n else 0.0)
    if any(not 0 <= i < n for i in selected) or len(set(selected)) != len(selected):
        return Validity([f"box indices {selected} repeat or fall outside [0, {n - 1}]"], [], [])
    if len(selected) > s.max_output_boxes_per_class:
        problems.append(f"{len(selected)} boxes selected, more than max_output_boxes_per_class="
                        f"{s.max_output_boxes_per_class}")
    if s.score_threshold is not None:
        for i in selected:
            if not scores[i] > s.score_threshold:
                (near if s.score_threshold - scores[i] <= score_tol else problems).append(
                    f"{_box(i, scores)} selected, not above score_threshold={s.score_threshold:.7g}")
    for a, b in itertools.pairwise(selected):
        if scores[b] > scores[a]:
            (near if scores[b] - scores[a] <= order_tol else problems).append(
                f"{_box(b, scores)} listed after {_box(a, scores)}")
        elif scores[b] == scores[a]:
            ties.append(f"{_box(a, scores)} and box {b} have equal scores")
    chosen = np.asarray(boxes)[selected]
    overlap = np.triu(iou(chosen, chosen, s.center_point_box), 1)
    for a, b in zip(*np.nonzero(overlap > s.iou_threshold)):
        i, j = selected[a], selected[b]
        (near if overlap[a, b] - s.iou_threshold <= iou_tol else problems).append(
            f"{_box(j, scores)} kept though its IoU with {_box(i, scores)} is {overlap[a, b]:.7g} "
            f"> iou_threshold={s.iou_threshold:.7g}")
    candidates = np.arange(n) if s.score_threshold is None else np.nonzero(scores > s.score_threshold)[0]
    rest = np.setdiff1d(candidates, selected)
    full = 0 < len(selected) == s.max_output_boxes_per_class or s.max_output_boxes_per_class == 0
    last = scores[selected[-1]] if selected else np.inf
    overlaps = iou(np.asarray(boxes)[rest], chosen, s.center_point_box)
    chosen_scores = scores[selected]
    for row, u in enumerate(rest):
        if full and scores[u] <= last + order_tol:
            if scores[u] == last and s.max_output_boxes_per_class:
                ties.append(f"{_box(u, scores)} left out at max_output_boxes_per_class="
                            f"{s.max_output_boxes_per_class}, tied with the last one kept")
            elif scores[u] > last:
                near.append(f"{_box(u, scores)} left out at the limit, within {order_tol:.3g} of the last kept")
            continue
        before = chosen_scores >= scores[u]
        above = overlaps[row] > s.iou_threshold
        if np.any(before & above & (chosen_scores > scores[u])):
            continue
        if np.any(before & above):
            j = selected[int(np.argmax(before & above))]
            ties.append(f"{_box(u, scores)} suppressed by equal-scored box {j} "
                        f"(IoU {overlaps[row][selected.index(j)]:.7g})")
            continue
        # Near the threshold only with a tolerance, and only for boxes that overlap at all (no
        # implementation suppresses on an empty intersection).
        reach = ((chosen_scores >= scores[u] - order_tol) & (overlaps[row] > 0)
                 & (overlaps[row] >= s.iou_threshold - iou_tol)) if iou_tol > 0 else np.zeros(len(selected), bool)
        if np.any(reach):
            j = int(np.argmax(np.where(reach, overlaps[row], -1)))
            near.append(f"{_box(u, scores)} left out: IoU {overlaps[row][j]:.7g} with "
                        f"{_box(selected[j], scores)} is within {iou_tol:.3g} of iou_threshold="
                        f"{s.iou_threshold:.7g}")
            continue
        if s.score_threshold is not None and scores[u] - s.score_threshold <= score_tol:
            near.append(f"{_box(u, scores)} left out, within {score_tol:.3g} of score_threshold="
                        f"{s.score_threshold:.7g}")
            continue
        best = int(np.argmax(overlaps[row])) if selected else None
        seen = "" if best is None else (f"; its largest IoU with a box kept is {overlaps[row][best]:.7g}, "
                                        f"with {_box(selected[best], scores)}")
        problems.append(f"{_box(u, scores)} left out though no box kept before it overlaps it above "
                        f"iou_threshold={s.iou_threshold:.7g}{seen}")
    return Validity(problems, ties, near)


def _groups(selected: np.ndarray) -> dict[tuple[int, int], list[int]]:
    groups: dict[tuple[int, int], list[int]] = {}
    for batch, klass, box in np.asarray(selected, np.int64).reshape(-1, 3):
        groups.setdefault((int(batch), int(klass)), []).append(int(box))
    return groups


def _about(evidence: list[str], boxes: set[int]) -> list[str]:
    """``evidence`` with the entries that name one of ``boxes`` (those the runtimes chose
    differently) first, a box left out or suppressed before two equal scores merely listed."""
    return sorted(evidence, key=lambda text: (not {int(b) for b in re.findall(r"\bbox (\d+)", text)} & boxes,
                                              text.endswith("have equal scores")))


def classify(capture: Capture) -> Finding:
    """The :class:`Finding` for one NonMaxSuppression node whose outputs differ (see the module)."""
    boxes, scores = (np.asarray(v) for v in capture.inputs[:2])
    s = settings(capture.node, capture.inputs)
    base, other = (np.asarray(v[0]) for v in (capture.base, capture.other))
    if base.ndim != 2 or other.ndim != 2 or base.shape[-1:] != (3,) or other.shape[-1:] != (3,):
        return Finding(None, False, f"selected_indices of shapes {base.shape} and {other.shape}, not [n, 3]")
    groups = {capture.base_runtime: _groups(base), capture.other_runtime: _groups(other)}
    keys = sorted(set().union(*groups.values()))
    if all(groups[r].get(k) == groups[capture.base_runtime].get(k) for r in groups for k in keys):
        return Finding(None, False, "the same boxes for every (batch, class), in another order of rows; "
                                    "the spec does not order the rows, ortops has no topic for it")
    ties, near, problems, differing = [], [], [], 0
    for batch, klass in keys:
        picks = {r: g.get((batch, klass), []) for r, g in groups.items()}
        if len({tuple(p) for p in picks.values()}) == 1:
            continue
        differing += 1
        first, second = picks.values()
        changed = set(first) ^ set(second) or {a for a, b in zip(first, second) if a != b}
        if not (0 <= batch < boxes.shape[0] and 0 <= klass < scores.shape[1]):
            problems.append(f"{capture.other_runtime}: (batch {batch}, class {klass}) is outside the input's "
                            f"{boxes.shape[0]} batches and {scores.shape[1]} classes")
            continue
        for runtime, pick in picks.items():
            v = validate(pick, boxes[batch], scores[batch, klass], s, atol=capture.atol, rtol=capture.rtol)
            for found, evidence in zip((problems, ties, near), v):  # Validity's order
                found += [f"{runtime}, batch {batch}, class {klass}: {e}" for e in _about(evidence, changed)]
    def first(evidence: list[str], more: str = "more") -> str:
        return evidence[0] + (f" (and {len(evidence) - 1} {more})" if len(evidence) > 1 else "")

    units = f"{differing} (batch, class) selection(s) differ"
    if problems:
        return Finding(None, False, f"{len(problems)} selection(s) that no order of equal scores gives: "
                                    f"{first(problems)}")
    if near:
        return Finding("near-ties", True, f"{units}, each valid within tolerance: {first(near, 'more near-ties')}")
    if ties:
        return Finding("ties", True, f"{units} only where scores are equal: {first(ties)}")
    return Finding(None, False, f"{units}, yet both follow the spec's rule without any tie")


#: The audit of standard NonMaxSuppression, for :func:`ortops.compare.audit.registry`.
AUDIT = Audit(classify)
