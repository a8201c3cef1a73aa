"""The concrete difference between what two sides returned, as data.

A report says not only *that* two runtimes disagree but *what exactly*: which output, what
each side returned, where the first difference is and how many elements differ.
:meth:`Difference.of` computes that from two arrays; :meth:`Difference.outcome` records a
difference of outcome (one side raised an error, the other returned a result, or a side
could not run). :meth:`Difference.to_json` / :meth:`Difference.from_json` round-trip it
through ``report.json``; :meth:`Difference.describe` is one line of text.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

__all__ = ["Difference", "preview", "jsonable", "PREVIEW_ITEMS"]

#: Arrays up to this many elements are printed whole; larger ones as dtype, shape and their
#: first 8 elements in C order.
PREVIEW_ITEMS = 64


def preview(array: Any, limit: int = PREVIEW_ITEMS) -> str:
    """``array`` printed on one line: whole up to ``limit`` elements, else its dtype, shape,
    size and first 8 elements in C order. A non-array is ``str(value)``."""
    if not isinstance(array, (np.ndarray, np.generic, list, tuple)):
        return str(array)
    a = np.asarray(array)
    with np.printoptions(threshold=max(limit, 1), linewidth=10**9, floatmode="maxprec"):
        if a.size <= limit:
            return " ".join(np.array2string(a, separator=", ").split())
        head = " ".join(np.array2string(a.reshape(-1)[:8], separator=", ").split())
    return f"{a.dtype} {list(a.shape)}, {a.size} elements, first in C order: {head[:-1]}, ...]"


def jsonable(value: Any) -> Any:
    """``value`` with NumPy scalars and arrays turned into Python numbers and lists (NaN and
    infinities become the strings ``"nan"``, ``"inf"``, ``"-inf"``), tuples into lists."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not np.isfinite(value):
        return "nan" if np.isnan(value) else ("inf" if value > 0 else "-inf")
    return value


def _equal(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    eq = a == b
    if a.dtype.kind in "fc" and b.dtype.kind in "fc":
        eq |= np.isnan(a) & np.isnan(b)
    return eq


@dataclass(frozen=True)
class Difference:
    """What two sides returned for one output, and where they first differ.

    Attributes
    ----------
    output : str
        The output's name (``"values"``, ``"indices"``, ...); ``""`` for a difference of
        outcome (:meth:`outcome`).
    left, right : str
        Who returned each side, e.g. ``"ortops"`` and ``"onnxruntime TopK-11"``.
    left_value, right_value : str
        What each side returned, printed (:func:`preview`), or the outcome (``"OpError:
        k=0 is outside ..."``, ``"NOT_IMPLEMENTED ..."``).
    first_index : tuple of int or None
        The first differing position in C order; None when the shapes differ or for an outcome.
    left_at, right_at : str or None
        The two elements at ``first_index``.
    mismatches, size : int or None
        How many elements differ, of how many.
    left_shape, right_shape : tuple of int or None
        The two shapes (None for an outcome).
    note : str
        One optional line (e.g. "the same elements in another order").
    max_abs_diff : float or None
        The largest absolute difference over the positions that differ (numbers of the same
        shape only; None when it is not a finite number, e.g. NaN against a number).
    rtol, atol : float
        The tolerance :meth:`of` compared with (0 and 0: exact).
    """

    output: str
    left: str
    right: str
    left_value: str
    right_value: str
    first_index: tuple[int, ...] | None = None
    left_at: str | None = None
    right_at: str | None = None
    mismatches: int | None = None
    size: int | None = None
    left_shape: tuple[int, ...] | None = None
    right_shape: tuple[int, ...] | None = None
    note: str = ""
    max_abs_diff: float | None = None
    rtol: float = 0.0
    atol: float = 0.0

    @classmethod
    def of(cls, output: str, left: str, left_array: Any, right: str, right_array: Any, note: str = "", *,
           rtol: float = 0.0, atol: float = 0.0) -> "Difference":
        """The difference between two arrays (shapes may differ; NaN equals NaN). With ``rtol``
        or ``atol``, numbers within ``atol + rtol * |right|`` of each other count as equal."""
        a, b = np.asarray(left_array), np.asarray(right_array)
        first = left_at = right_at = mismatches = biggest = None
        if a.shape == b.shape:
            equal = _equal(a, b)
            numeric = a.dtype.kind in "iufb" and b.dtype.kind in "iufb"
            if numeric and (rtol or atol):
                with np.errstate(all="ignore"):
                    equal |= np.isclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol)
            differ = np.argwhere(~equal)
            mismatches = int(len(differ))
            if mismatches:
                first = tuple(int(i) for i in differ[0])
                left_at, right_at = preview(a[first]), preview(b[first])
                if numeric:
                    with np.errstate(all="ignore"):
                        gap = np.abs(a[~equal].astype(np.float64) - b[~equal].astype(np.float64)).max()
                    biggest = float(gap) if np.isfinite(gap) else None
        return cls(output, left, right, preview(a), preview(b), first, left_at, right_at, mismatches,
                   int(a.size) if a.shape == b.shape else None, tuple(a.shape), tuple(b.shape), note, biggest,
                   float(rtol), float(atol))

    @classmethod
    def outcome(cls, left: str, left_value: Any, right: str, right_value: Any, note: str = "") -> "Difference":
        """A difference of outcome: e.g. one side raised an error, the other returned arrays."""
        return cls("", left, right, preview(left_value), preview(right_value), note=note)

    @property
    def first_position(self) -> str:
        """The first differing position as text (``"(0, 3)"``), or what stands for it."""
        if self.first_index is not None:
            return str(self.first_index)
        if self.left_shape is not None and self.left_shape != self.right_shape:
            return f"shapes differ: {self.left_shape} vs {self.right_shape}"
        if self.output and self.mismatches == 0:
            return "no element differs"
        return "n/a (outcome)"

    def describe(self) -> str:
        """One line: ``indices: 2 of 6 differ, first at (3,): ortops 5 vs ORT 10``."""
        if not self.output:
            text = f"{self.left}: {self.left_value}; {self.right}: {self.right_value}"
        elif self.first_index is None:
            text = (f"{self.output}: {self.first_position}; {self.left}: {self.left_value}; "
                    f"{self.right}: {self.right_value}")
        else:
            text = (f"{self.output}: {self.mismatches} of {self.size} differ, first at {self.first_index}: "
                    f"{self.left} {self.left_at} vs {self.right} {self.right_at}")
        return f"{text} ({self.note})" if self.note else text

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (tuples as lists)."""
        return jsonable(asdict(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Difference":
        """The inverse of :meth:`to_json`."""
        fields = dict(data)
        for key in ("first_index", "left_shape", "right_shape"):
            if fields.get(key) is not None:
                fields[key] = tuple(fields[key])
        return cls(**fields)
