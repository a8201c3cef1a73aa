"""Per-output comparison of two runtimes' arrays, in the manner of Polygraphy.

Integers and bools compare exactly; floats elementwise with ``|a - b| <= atol + rtol * |b|``
(``b`` the baseline), NaN equal to NaN and at the same positions, +-inf equal only to itself.
A dtype or shape mismatch is a result, never an exception.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["DEFAULT_ATOL", "DEFAULT_RTOL", "Comparison", "compare_arrays"]

#: Polygraphy's defaults.
DEFAULT_ATOL, DEFAULT_RTOL = 1e-5, 1e-5


class Comparison(NamedTuple):
    """The comparison of one tensor: ``status`` is ``match``, ``mismatch``, ``shape`` or ``dtype``.

    ``max_abs``/``max_rel`` are over positions where both values are finite; ``mismatches`` counts
    positions outside tolerance (NaN at one side only counts); ``worst`` is the index of the largest
    absolute error (or the first mismatch); ``needed_atol`` is the smallest atol that would pass with
    rtol=0, ``needed_rtol`` the smallest rtol with atol=0 (None where no tolerance helps: a NaN or
    inf mismatch, or integers).
    """

    status: str
    dtype: tuple[str, str]
    shape: tuple[tuple[int, ...], tuple[int, ...]]
    size: int
    mismatches: int
    max_abs: float | None
    max_rel: float | None
    worst: tuple[int, ...] | None
    worst_values: tuple | None
    needed_atol: float | None
    needed_rtol: float | None
    detail: str

    @property
    def share(self) -> float:
        return self.mismatches / self.size if self.size else 0.0

    def as_dict(self) -> dict:
        d = self._asdict()
        d["dtype"], d["shape"] = list(self.dtype), [list(s) for s in self.shape]
        d["worst"] = None if self.worst is None else list(self.worst)
        d["worst_values"] = None if self.worst_values is None else [_plain(v) for v in self.worst_values]
        d["share"] = self.share
        for key in ("max_abs", "max_rel", "needed_atol", "needed_rtol"):
            if d[key] is not None and not np.isfinite(d[key]):
                d[key] = str(d[key])  # JSON has no inf
        return d


def _plain(value):
    value = np.asarray(value).item()
    if isinstance(value, float) and not np.isfinite(value):
        return str(value)
    return value


def compare_arrays(got, want, *, atol: float = DEFAULT_ATOL, rtol: float = DEFAULT_RTOL) -> Comparison:
    """Compare ``got`` (another runtime) with ``want`` (the baseline)."""
    got, want = np.asarray(got), np.asarray(want)
    dtypes = (str(want.dtype), str(got.dtype))
    shapes = (tuple(want.shape), tuple(got.shape))
    if got.shape != want.shape:
        return Comparison("shape", dtypes, shapes, int(want.size), int(want.size), None, None, None, None, None, None,
                          f"shape {got.shape} differs from the baseline's {want.shape}")
    if got.dtype != want.dtype and not (got.dtype.kind == want.dtype.kind == "f"):
        same_kind = {got.dtype.kind, want.dtype.kind} <= set("iub")
        if not same_kind:
            return Comparison("dtype", dtypes, shapes, int(want.size), int(want.size), None, None, None, None, None,
                              None, f"dtype {got.dtype} differs from the baseline's {want.dtype}")
    size = int(want.size)
    if size == 0:
        return Comparison("match", dtypes, shapes, 0, 0, 0.0, 0.0, None, None, 0.0, 0.0, "")
    if want.dtype.kind in "f" or got.dtype.kind in "f":
        return _compare_floats(got, want, atol, rtol, dtypes, shapes)
    bad = got.astype(object) != want.astype(object) if got.dtype != want.dtype else got != want
    count = int(np.count_nonzero(bad))
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), want.shape)) if count else None
    values = (want[worst], got[worst]) if worst is not None else None
    dtype_note = "" if got.dtype == want.dtype else f" (dtypes {want.dtype} and {got.dtype})"
    return Comparison("mismatch" if count else "match", dtypes, shapes, size, count, float(diff.max()),
                      _max_rel(diff, np.abs(want.astype(np.float64))), worst, values, None, None,
                      (f"{count} of {size} elements differ (integers compare exactly)" if count else "") + dtype_note)


def _max_rel(diff: np.ndarray, scale: np.ndarray) -> float:
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = np.where(scale > 0, diff / scale, np.where(diff > 0, np.inf, 0.0))
    return float(np.max(rel)) if rel.size else 0.0


def _compare_floats(got, want, atol, rtol, dtypes, shapes) -> Comparison:
    g, w = got.astype(np.float64), want.astype(np.float64)
    g_nan, w_nan = np.isnan(g), np.isnan(w)
    finite = np.isfinite(g) & np.isfinite(w)
    special_bad = (g_nan != w_nan) | (~finite & ~g_nan & ~w_nan & (g != w))
    diff = np.zeros(w.shape)
    diff[finite] = np.abs(g[finite] - w[finite])
    scale = np.abs(w)
    bad = special_bad | (finite & (diff > atol + rtol * scale))
    count = int(np.count_nonzero(bad))
    max_abs = float(diff.max())
    max_rel = _max_rel(np.where(finite, diff, 0.0), np.where(finite, scale, 1.0))
    if count:
        worst_flat = int(np.argmax(np.where(special_bad, np.inf, diff))) if special_bad.any() else int(np.argmax(diff))
        worst = tuple(int(i) for i in np.unravel_index(worst_flat, w.shape))
        values = (want[worst], got[worst])
    else:
        worst, values = None, None
    needed_atol = None if special_bad.any() else max_abs
    needed_rtol = None if special_bad.any() else max_rel
    parts = []
    if count:
        parts.append(f"{count} of {w.size} elements ({count / w.size:.2%}) outside atol={atol:g}, rtol={rtol:g}")
    nan_split = int(np.count_nonzero(g_nan != w_nan))
    if nan_split:
        parts.append(f"NaN at {nan_split} positions in one runtime only")
    return Comparison("mismatch" if count else "match", dtypes, shapes, int(w.size), count, max_abs, max_rel, worst,
                      values, needed_atol, needed_rtol, "; ".join(parts))
