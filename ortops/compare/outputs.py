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

from ..arrays import equal, jsonable

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
    max_abs: float | None = None
    max_rel: float | None = None
    worst: tuple[int, ...] | None = None
    worst_values: tuple | None = None
    needed_atol: float | None = None
    needed_rtol: float | None = None
    detail: str = ""
    tolerance: Tolerance = Tolerance()
    stats: ErrorStats | None = None

    @property
    def share(self) -> float:
        return self.mismatches / self.size if self.size else 0.0

    def as_dict(self) -> dict:
        """JSON-ready (compare.json's ``outputs[].comparison``): lists, and NaN or inf as strings."""
        return jsonable({**self._asdict(), "tolerance": self.tolerance._asdict(),
                         "stats": None if self.stats is None else self.stats._asdict(), "share": self.share})


def compare_arrays(got, want, *, atol: float = DEFAULT_ATOL, rtol: float = DEFAULT_RTOL,
                   check_error_stat: str = "elemwise", error_quantile: float = DEFAULT_QUANTILE) -> Comparison:
    """Compare ``got`` (another runtime) with ``want`` (the baseline); arguments as :class:`Tolerance`."""
    tolerance = Tolerance(atol, rtol, check_error_stat, error_quantile)
    got, want = np.asarray(got), np.asarray(want)
    head = (str(want.dtype), str(got.dtype)), (tuple(want.shape), tuple(got.shape)), int(want.size)
    if got.shape != want.shape:
        return Comparison("shape", *head, want.size, detail=f"shape {got.shape} differs from the baseline's "
                                                            f"{want.shape}", tolerance=tolerance)
    kinds = {got.dtype.kind, want.dtype.kind}
    if got.dtype != want.dtype and not (kinds <= set("iub") or kinds == {"f"}):
        return Comparison("dtype", *head, want.size, detail=f"dtype {got.dtype} differs from the baseline's "
                                                            f"{want.dtype}", tolerance=tolerance)
    if want.size == 0:
        return Comparison("match", *head, 0, 0.0, 0.0, needed_atol=0.0, needed_rtol=0.0, tolerance=tolerance)
    if "f" in kinds:
        return _compare_floats(got, want, tolerance, head)
    bad = got.astype(object) != want.astype(object) if got.dtype != want.dtype else got != want
    count = int(np.count_nonzero(bad))
    diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
    worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(diff)), want.shape)) if count else None
    values = (want[worst], got[worst]) if worst is not None else None
    dtype_note = "" if got.dtype == want.dtype else f" (dtypes {want.dtype} and {got.dtype})"
    return Comparison("mismatch" if count else "match", *head, count, float(diff.max()),
                      float(np.max(_relative(diff, np.abs(want.astype(np.float64))))), worst, values,
                      detail=(f"{count} of {want.size} elements differ (integers compare exactly)" if count else "")
                      + dtype_note, tolerance=tolerance)


def _relative(diff: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``diff / scale``: inf where ``scale`` is 0 and ``diff`` is not, 0 where both are."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(scale > 0, diff / scale, np.where(diff > 0, np.inf, 0.0))


def _compare_floats(got, want, tolerance: Tolerance, head: tuple) -> Comparison:
    atol, rtol, stat = tolerance.atol, tolerance.rtol, tolerance.check_error_stat
    g, w = got.astype(np.float64), want.astype(np.float64)
    finite = np.isfinite(g) & np.isfinite(w)
    special_bad = ~finite & ~equal(g, w)  # NaN at one side only, or unequal infinities
    diff = np.zeros(w.shape)
    diff[finite] = np.abs(g[finite] - w[finite])
    scale = np.abs(w)
    count = int(np.count_nonzero(special_bad | (finite & (diff > atol + rtol * scale))))
    stats = error_stats(diff[finite], _relative(diff[finite], scale[finite]), tolerance.error_quantile)
    stat_abs, stat_rel = stats.of(stat)  # elemwise: the max, over the positions where both are finite
    if stat == "elemwise":
        failed = bool(count)
        outside = f"{count} of {w.size} elements ({count / w.size:.2%}) outside atol={atol:g}, rtol={rtol:g}"
        parts = [outside] if failed else []
    else:
        name = f"{tolerance.error_quantile:g} quantile" if stat == "quantile" else stat
        failed = bool(special_bad.any()) or not (stat_abs <= atol or stat_rel <= rtol)
        parts = [(f"{name} absolute error {stat_abs:.3g} > atol={atol:g} and {name} relative error "
                  f"{stat_rel:.3g} > rtol={rtol:g}")] if failed else []
    nan_split = int(np.count_nonzero(np.isnan(g) != np.isnan(w)))
    if nan_split:
        parts.append(f"NaN at {nan_split} positions in one runtime only")
    worst, values = None, None
    if count or failed:
        worst = tuple(int(i) for i in np.unravel_index(int(np.argmax(np.where(special_bad, np.inf, diff))), w.shape))
        values = (want[worst], got[worst])
    needed = (None, None) if special_bad.any() else (stat_abs, stat_rel)
    return Comparison("mismatch" if failed else "match", *head, count, stats.max_abs, stats.max_rel, worst, values,
                      *needed, "; ".join(parts), tolerance, stats)
