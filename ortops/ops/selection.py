"""Judging two runtimes' selections (top-k, arg-max) of the same data, slice by slice.

Used by the audits of TopK and ArgMax-like ops. A runtime's answer on a slice is *valid* when its
indices are distinct, in range, point at the values it returned, and those values are a top-k of
the slice (the same multiset as the sorted slice's first k). Two valid answers that differ can only
differ in which of several equal values they took, or in their order: a tie. NaN is ordered by no
spec, so a slice holding NaN is judged by the ``nan`` topic.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..arrays import has_nan, same
from ..verdicts import Finding

__all__ = ["judge_selection", "valid_selection"]


def _slices(array: np.ndarray, axis: int) -> np.ndarray:
    array = np.moveaxis(np.asarray(array), axis, -1)
    return array.reshape(-1, array.shape[-1]) if array.ndim else array.reshape(1, 1)


def valid_selection(data, axis: int, values, indices, want_values) -> bool:
    """Whether ``(values, indices)``, shaped like ``want_values``, select along ``axis`` of
    ``data`` the same values as ``want_values`` (the same multiset per slice, NaN equal to NaN):
    indices distinct, in range and pointing at their values. The order is not judged."""
    values, indices, want_values = np.asarray(values), np.asarray(indices, np.int64), np.asarray(want_values)
    if values.shape != want_values.shape or indices.shape != values.shape:
        return False
    if np.any(indices < 0) or np.any(indices >= data.shape[axis]):
        return False
    if np.any(np.diff(np.sort(indices, axis=axis), axis=axis) == 0):
        return False
    return same(np.take_along_axis(data, indices, axis=axis), values) and same(
        np.sort(values, axis=axis), np.sort(want_values, axis=axis))


def _valid(row, idx, vals, k, largest) -> bool:
    order = np.sort(row)[::-1] if largest else np.sort(row)
    return valid_selection(row, 0, vals, idx, order[:k])


def judge_selection(data, axis: int, k: int, largest: bool, answers: Sequence[tuple[np.ndarray, np.ndarray]],
                    runtimes: Sequence[str], *, ordered: str = "value", what: str = "k-th", other_data=None,
                    atol: float = 0.0, rtol: float = 0.0) -> Finding:
    """Why two runtimes' selections of ``k`` elements along ``axis`` of ``data`` differ.

    ``answers`` holds (values, indices) per runtime, shaped like ``data`` with ``k`` along ``axis``.
    ``ordered`` is ``"value"`` (output sorted by value, so equal answers must list the same values in
    the same order), ``"index"`` or ``"none"`` (any order of a valid set). Returns an explained
    ``ties`` finding when both answers are valid top-k selections, an explained ``nan`` finding when
    every differing slice holds NaN, an unexplained one otherwise.

    ``other_data`` is the second runtime's own input when it is not bit-identical to ``data`` (but
    within ``atol``/``rtol``): a slice whose indices agree and whose values are within tolerance
    does not differ, and a slice where each runtime's answer is a valid selection of its own input
    is a near-tie (topic ``near-ties`` when every differing slice is one): values closer than the
    tolerance, not equal, were ranked differently.
    """
    data = np.asarray(data)
    rows = _slices(data, axis)
    per = [(_slices(v, axis), _slices(i, axis).astype(np.int64)) for v, i in answers]
    if any(v.shape[0] != rows.shape[0] for v, _ in per):
        return Finding(None, False, "the outputs do not have one slice per slice of the data")
    other_rows = None if other_data is None else _slices(np.asarray(other_data), axis)

    def close(a, b) -> bool:
        if a.dtype.kind != "f" or other_rows is None:
            return same(a, b)
        a, b = a.astype(np.float64), b.astype(np.float64)
        return bool(np.all((np.abs(a - b) <= atol + rtol * np.abs(a)) | (np.isnan(a) & np.isnan(b))))

    differing = [s for s in range(rows.shape[0])
                 if not (same(per[0][1][s], per[1][1][s]) and close(per[0][0][s], per[1][0][s]))]
    nan_slices, boundary, inside, reordered, invalid, near = [], [], [], [], [], []
    lower = {r: 0 for r in runtimes}
    for s in differing:
        row = rows[s]
        if has_nan(row):
            nan_slices.append(s)
            continue
        bad = [name for name, (vals, idx) in zip(runtimes, per) if not _valid(row, idx[s], vals[s], k, largest)]
        if bad and other_rows is not None and _valid(row, per[0][1][s], per[0][0][s], k, largest) and _valid(
                other_rows[s], per[1][1][s], per[1][0][s], k, largest):
            near.append(s)
            continue
        if bad:
            invalid.append((s, bad[0]))
            continue
        stable = np.argsort(-row if largest else row, kind="stable")[:k]  # among equal values, the lower index first
        for name, (_, idx) in zip(runtimes, per):
            if (np.array_equal(idx[s], stable) if ordered == "value"
                    else np.array_equal(np.sort(idx[s]), np.sort(stable))):
                lower[name] += 1
        (v0, i0), (v1, i1) = ((v[s], i[s]) for v, i in per)
        if not np.array_equal(np.sort(i0), np.sort(i1)):
            boundary.append(s)  # both valid, other elements: equal values straddle the k-th position
        elif not same(v0, v1):
            (invalid if ordered == "value" else reordered).append((s, "order") if ordered == "value" else s)
        else:
            inside.append(s)  # the same elements and values, equal values listed in another order
    total = rows.shape[0]
    if invalid:
        s, who = invalid[0]
        if who == "order":
            why = "the values are listed in another order, though the output is sorted by value"
        else:
            why = f"{who}'s answer is not a {what} selection of the data"
        return Finding(None, False, f"{len({s for s, _ in invalid})} of {total} slices differ unexplained; "
                                    f"first: slice {s}: {why}")
    if not differing:
        return Finding(None, True, "no slice differs")
    if near and not (boundary or inside or nan_slices or reordered):
        return Finding("near-ties", True, f"near-ties: in {len(near)} of {total} slices the inputs differ within the "
                                     "tolerance and each runtime's answer is exact for its own input: values closer "
                                     "than the tolerance were ranked differently")
    if reordered and not (boundary or inside or nan_slices):
        return Finding(None, True, f"{len(reordered)} of {total} slices hold the same elements in another order; "
                                   f"the spec leaves the output order open (sort={ordered!r})")
    if nan_slices and not boundary and not inside:
        return Finding("nan", True, f"NaN: all {len(nan_slices)} differing slices of {total} hold NaN, "
                                    "whose order no spec fixes")
    where = f"several equal {what} values" if what in ("maximum", "minimum") else f"equal values at the {what} position"
    parts = [text for found, text in (
        (boundary, f"{len(boundary)} of {total} slices have {where} and the runtimes took different ones"),
        (inside, f"{len(inside)} of {total} slices have equal values inside the selected set, listed in another order"),
        (nan_slices, f"{len(nan_slices)} hold NaN"),
        (reordered, f"{len(reordered)} hold the same elements in another order (sort={ordered!r})"),
        (near, f"{len(near)} rank values closer than the tolerance differently (near-ties)")) if found]
    takers = [name for name in runtimes if lower[name] == len(differing) - len(nan_slices) - len(near)]
    rule = (f"; {' and '.join(takers)} take{'s' if len(takers) == 1 else ''} the lower index" if takers
            else "; neither runtime always takes the lower index")
    return Finding("ties", True, "ties: " + "; ".join(parts) + rule)
