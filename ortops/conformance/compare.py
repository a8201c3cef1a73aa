"""Comparisons used by the judges: exact equality (NaN equal to NaN) and descriptions."""

from __future__ import annotations

import numpy as np

from ..reporting.difference import Difference, preview

__all__ = ["same", "bitwise_same", "describe_difference", "difference", "has_nan", "has_ties", "tolerance", "complete_differences"]


def same(a: np.ndarray, b: np.ndarray) -> bool:
    """Exactly equal shapes and values; NaN equals NaN. Dtypes may differ (int32 vs int64)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape:
        return False
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.array_equal(a, b))


def bitwise_same(a: np.ndarray, b: np.ndarray) -> bool:
    """:func:`same`, and every zero has the same sign (-0.0 is not +0.0)."""
    if not same(a, b):
        return False
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind != "f" and b.dtype.kind != "f":
        return True
    return bool(np.array_equal(np.signbit(a), np.signbit(b)))


def tolerance(dtype) -> tuple[float, float]:
    """(rtol, atol) for computed floats of ``dtype``; integers compare exactly (0, 0)."""
    dtype = np.dtype(dtype)
    if dtype == np.float32:
        return 1e-6, 1e-6
    if dtype == np.float64:
        return 1e-12, 1e-12
    if dtype == np.float16:
        return 1e-3, 1e-3
    return 0.0, 0.0


def has_nan(a: np.ndarray) -> bool:
    return np.asarray(a).dtype.kind == "f" and bool(np.isnan(a).any())


def has_ties(a: np.ndarray) -> bool:
    """Whether two elements of ``a`` are equal."""
    flat = np.asarray(a).reshape(-1)
    return flat.size > 1 and np.unique(flat).size < flat.size


def describe_difference(name: str, got: np.ndarray, want: np.ndarray) -> str:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"{name}: shape {got.shape} vs {want.shape}"
    mismatch = np.argwhere(~((got == want) | (_isnan(got) & _isnan(want))))
    first = tuple(int(i) for i in mismatch[0])
    return f"{name}: {len(mismatch)} of {got.size} differ, first at {first}: {got[first]!r} vs {want[first]!r}"


def _isnan(a: np.ndarray) -> np.ndarray:
    return np.isnan(a) if a.dtype.kind == "f" else np.zeros(a.shape, bool)


def difference(output: str, got, want, *, right: str, left: str = "ortops", note: str = "") -> Difference:
    """The concrete difference between ``got`` (returned by ``left``) and ``want`` (by
    ``right``) for the output named ``output``, as data (:class:`ortops.reporting.Difference`)."""
    return Difference.of(output, left, got, right, want, note)


def complete_differences(case, checks) -> None:
    """Give every non-agree check without a difference one: what ortops returned on the case
    (its spec's reference answer, which the ``reference`` check compares with ortops, or the
    OpError it raises) against what the check's oracle observed (its detail, or its reason
    when it could not run). Judges that compared arrays attach their own, element by element;
    this covers the verdicts that are about an outcome (a skipped oracle, an error)."""
    missing = [c for c in checks if c.status != "agree" and c.difference is None]
    if not missing:
        return
    import importlib

    from ..errors import OpError
    from ..ops import by_name

    try:
        outputs = importlib.import_module(by_name(case.op).oracle).expected(case.inputs, case.attrs)
        names = by_name(case.op).outputs
        ours = "; ".join(f"{n}={preview(o)}" for n, o in zip(names, outputs))
    except OpError as exc:
        ours = f"OpError ({exc.kind}): {exc.detail}"
    except Exception as exc:  # noqa: BLE001 - the report says what could not be computed
        ours = f"(not computed: {type(exc).__name__}: {exc})"
    for check in missing:
        theirs = check.detail or check.reason
        if check.status == "skipped":
            theirs = f"not compared: {check.detail or check.reason}"
        check.difference = Difference.outcome("ortops (= the reference)", ours, check.oracle, theirs)
