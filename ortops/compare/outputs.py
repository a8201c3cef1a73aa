"""Per-output comparison of two runtimes' arrays, in the manner of Polygraphy: integers exactly;
floats elementwise within ``atol + rtol * |baseline|`` (NaN equal to NaN at the same positions, an
infinity only to itself), or by one statistic of the errors (``check_error_stat``: max, mean,
median or a quantile; passes when the absolute one <= atol or the relative one <= rtol). A dtype
or shape mismatch is a result, never an exception. :class:`Tolerances`: the default and each
output's own (``--atol out=1e-3``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import NamedTuple

import numpy as np

from ..arrays import jsonable

__all__ = ["DEFAULT_ATOL", "DEFAULT_QUANTILE", "DEFAULT_RTOL", "ERROR_STATS", "Comparison", "ErrorStats", "Tolerance",
           "ToleranceError", "Tolerances", "compare_arrays", "error_stats", "parse_tolerances"]

#: Polygraphy's defaults.
DEFAULT_ATOL, DEFAULT_RTOL, DEFAULT_QUANTILE = 1e-5, 1e-5, 0.99
#: The statistics ``check_error_stat`` takes, Polygraphy's names (``elemwise``: every element).
ERROR_STATS = ("elemwise", "max", "mean", "median", "quantile")


class ToleranceError(ValueError):
    """A tolerance setting that is not a number >= 0, a statistic not in :data:`ERROR_STATS`, or a
    quantile outside [0, 1]."""


class Tolerance(NamedTuple):
    """How one output is compared: ``atol``, ``rtol`` (>= 0), ``check_error_stat`` (one of
    :data:`ERROR_STATS`), ``error_quantile`` (in [0, 1], used by ``quantile``)."""

    atol: float = DEFAULT_ATOL
    rtol: float = DEFAULT_RTOL
    check_error_stat: str = "elemwise"
    error_quantile: float = DEFAULT_QUANTILE


class Tolerances(NamedTuple):
    """The default :class:`Tolerance` and each output's overrides (output name -> field -> value)."""

    default: Tolerance = Tolerance()
    per_output: Mapping[str, Mapping[str, float | str]] = {}

    def of(self, name: str) -> Tolerance:
        """The tolerance of the tensor ``name``: its own settings over the default."""
        return self.default._replace(**self.per_output.get(name, {}))

    def as_dict(self) -> dict:
        return {"default": self.default._asdict(), "per_output": {k: dict(v) for k, v in self.per_output.items()}}


def _tolerance_value(option: str, text: str):
    if option == "check_error_stat":
        if text not in ERROR_STATS:
            raise ToleranceError(f"--check-error-stat {text!r} is not one of {', '.join(ERROR_STATS)}")
        return text
    try:
        value = float(text)
    except ValueError:
        raise ToleranceError(f"--{option.replace('_', '-')} {text!r} is not a number") from None
    high = 1.0 if option == "error_quantile" else np.inf
    if not 0 <= value <= high:
        raise ToleranceError(f"--{option.replace('_', '-')} {text} is outside [0, {high:g}]")
    return value


def parse_tolerances(**options: Iterable[str]) -> Tolerances:
    """:class:`Tolerances` from command-line values, by field (``atol=["1e-4", "boxes=1e-3"]``).

    Each value is ``VALUE`` (the default for every output) or ``OUTPUT=VALUE`` (that output only; the
    name is everything before the last ``=``, as ``--dim NAME=VALUE``). The last value given wins.
    Raises :class:`ToleranceError` naming the bad value and the valid range.
    """
    default, per_output = {}, {}
    for option, values in options.items():
        if option not in Tolerance._fields:
            raise ToleranceError(f"unknown tolerance setting {option!r}; known: {', '.join(Tolerance._fields)}")
        for text in values:
            name, sep, value = str(text).rpartition("=")
            if sep and not name:
                raise ToleranceError(f"--{option.replace('_', '-')} {text!r}: the output name before '=' is empty")
            target = per_output.setdefault(name, {}) if sep else default
            target[option] = _tolerance_value(option, value)
    return Tolerances(Tolerance()._replace(**default), per_output)


class ErrorStats(NamedTuple):
    """Statistics of the elementwise errors of a float output over the positions where both values
    are finite: absolute ``|a - b|`` and relative ``|a - b| / |b|`` (``b`` the baseline; inf where
    ``b == 0`` and ``a != b``, 0 where both are 0) errors, their max, mean, median and the
    ``quantile``-th quantile (NumPy's linear interpolation, as Polygraphy's)."""

    max_abs: float
    mean_abs: float
    median_abs: float
    quantile_abs: float
    max_rel: float
    mean_rel: float
    median_rel: float
    quantile_rel: float
    quantile: float

    def of(self, stat: str) -> tuple[float, float]:
        """(absolute, relative) value of the statistic ``stat`` (``elemwise``: the max)."""
        key = "max" if stat == "elemwise" else stat
        return getattr(self, f"{key}_abs"), getattr(self, f"{key}_rel")

    def as_dict(self) -> dict:
        return {k: (v if np.isfinite(v) else str(v)) for k, v in self._asdict().items()}


def error_stats(abs_err: np.ndarray, rel_err: np.ndarray, quantile: float = DEFAULT_QUANTILE) -> ErrorStats:
    """:class:`ErrorStats` of the flat error arrays (empty arrays: all 0)."""
    if not abs_err.size:
        return ErrorStats(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, quantile)
    with np.errstate(invalid="ignore", over="ignore"):
        return ErrorStats(*(float(f(e)) for e in (abs_err, rel_err)
                            for f in (np.max, np.mean, np.median, lambda x: _quantile(x, quantile))), quantile)


def _quantile(values: np.ndarray, q: float) -> float:
    """NumPy's linear quantile, but inf (not NaN) where it interpolates towards an infinite error."""
    value = float(np.quantile(values, q))
    if np.isnan(value):
        low, high = (float(np.quantile(values, q, method=m)) for m in ("lower", "higher"))
        value = low if low == high or q * (values.size - 1) % 1 == 0 else high
    return value


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
    tolerance: Tolerance = Tolerance()
    stats: ErrorStats | None = None

    @property
    def share(self) -> float:
        return self.mismatches / self.size if self.size else 0.0

    def as_dict(self) -> dict:
        d = self._asdict()
        d["dtype"], d["shape"] = list(self.dtype), [list(s) for s in self.shape]
        d["worst"] = None if self.worst is None else list(self.worst)
        d["worst_values"] = None if self.worst_values is None else [jsonable(v) for v in self.worst_values]
        d["share"] = self.share
        d["tolerance"] = self.tolerance._asdict()
        d["stats"] = None if self.stats is None else self.stats.as_dict()
        for key in ("max_abs", "max_rel", "needed_atol", "needed_rtol"):
            if d[key] is not None and not np.isfinite(d[key]):
                d[key] = str(d[key])  # JSON has no inf
        return d


def compare_arrays(got, want, *, atol: float = DEFAULT_ATOL, rtol: float = DEFAULT_RTOL,
                   check_error_stat: str = "elemwise", error_quantile: float = DEFAULT_QUANTILE) -> Comparison:
    """Compare ``got`` (another runtime) with ``want`` (the baseline); arguments as :class:`Tolerance`."""
    tolerance = Tolerance(atol, rtol, check_error_stat, error_quantile)
    return _compare(got, want, tolerance)._replace(tolerance=tolerance)


def _compare(got, want, tolerance: Tolerance) -> Comparison:
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
        return _compare_floats(got, want, tolerance, dtypes, shapes)
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


def _compare_floats(got, want, tolerance: Tolerance, dtypes, shapes) -> Comparison:
    atol, rtol, stat = tolerance.atol, tolerance.rtol, tolerance.check_error_stat
    g, w = got.astype(np.float64), want.astype(np.float64)
    g_nan, w_nan = np.isnan(g), np.isnan(w)
    finite = np.isfinite(g) & np.isfinite(w)
    special_bad = (g_nan != w_nan) | (~finite & ~g_nan & ~w_nan & (g != w))
    diff = np.zeros(w.shape)
    diff[finite] = np.abs(g[finite] - w[finite])
    scale = np.abs(w)
    bad = special_bad | (finite & (diff > atol + rtol * scale))
    count = int(np.count_nonzero(bad))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rel = np.where(scale[finite] > 0, diff[finite] / scale[finite], np.where(diff[finite] > 0, np.inf, 0.0))
    stats = error_stats(diff[finite], rel, tolerance.error_quantile)
    max_abs, max_rel = stats.max_abs, stats.max_rel  # over the positions where both are finite
    if count or max_abs > 0:
        worst_flat = int(np.argmax(np.where(special_bad, np.inf, diff))) if special_bad.any() else int(np.argmax(diff))
        worst = tuple(int(i) for i in np.unravel_index(worst_flat, w.shape))
        values = (want[worst], got[worst])
    else:
        worst, values = None, None
    needed_atol = None if special_bad.any() else max_abs
    needed_rtol = None if special_bad.any() else max_rel
    parts = []
    if stat == "elemwise":
        failed = bool(count)
        if count:
            parts.append(f"{count} of {w.size} elements ({count / w.size:.2%}) outside atol={atol:g}, rtol={rtol:g}")
    else:
        stat_abs, stat_rel = stats.of(stat)
        name = f"{tolerance.error_quantile:g} quantile" if stat == "quantile" else stat
        failed = bool(special_bad.any()) or not (stat_abs <= atol or stat_rel <= rtol)
        if failed:
            parts.append(f"{name} absolute error {stat_abs:.3g} > atol={atol:g} and {name} relative error "
                         f"{stat_rel:.3g} > rtol={rtol:g}")
        needed_atol = None if special_bad.any() else stat_abs
        needed_rtol = None if special_bad.any() else stat_rel
    nan_split = int(np.count_nonzero(g_nan != w_nan))
    if nan_split:
        parts.append(f"NaN at {nan_split} positions in one runtime only")
    if not (count or failed):
        worst, values = None, None
    return Comparison("mismatch" if failed else "match", dtypes, shapes, int(w.size), count, max_abs, max_rel, worst,
                      values, needed_atol, needed_rtol, "; ".join(parts), stats=stats)
