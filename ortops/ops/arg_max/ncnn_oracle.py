"""How real ncnn's answer on an ArgMax case is judged (see :mod:`ortops.conformance.ncnn_oracle`).

ncnn runs its own ArgMax layer (:mod:`ortops.ops.arg_max.ncnn`), fed as one ``(1, 1, N)``
channel so that no padding is involved: ncnn's flat index i is ortops' flat index i. The
answer must be ortops' bit for bit (values and indices; any NaN equals any NaN).

Known differences, explained only when shown in the case itself:

* **NaN** (ncnn's ``std::partial_sort`` with ``std::greater`` on (value, index) pairs has no
  consistent order with NaN): ncnn is re-run on the data replaced by its ranks in ortops' order
  (NaN above +inf, all NaNs equal, -0.0 == +0.0), the same selection without NaN; the
  difference is explained when ncnn's indices there equal ortops'. The detail quotes what
  ncnn returned on the real data.
* **topk above the element count**, an empty input, a selected index above 2**24: ortops
  raises OpError; what ncnn did (stray values, a crash) is judged by the shared oracle.

NaN cases run in a child process of their own (:func:`isolate`).
"""

from __future__ import annotations

import numpy as np

from ... import reference
from ...verdicts import Case, Check
from ...arrays import has_nan, order_ranks
from ...divergences import reason
from .conformance import _describe, _identical, _short
from .ncnn import run

__all__ = ["RUNNER", "NOT_RUN", "expected", "isolate", "matches", "difference", "explain"]

#: The function that runs ncnn's layer in the oracle's child process.
RUNNER = run

#: OpError kinds whose cases are not sent to ncnn, with the reason: ncnn's layer has no dtype
#: (it reads float32 from whatever buffer it is given), so another dtype has no ncnn meaning.
NOT_RUN = {"dtype": "ncnn's ArgMax reads float32 only (a Mat has no dtype); ortops refuses other dtypes: not run in ncnn"}


def expected(inputs: dict, attrs: dict) -> np.ndarray:
    """ortops' answer (the reference); OpError for an input ortops refuses."""
    return reference.arg_max(inputs["data"], **attrs)


def isolate(case: Case) -> bool:
    """Whether the case runs in a child of its own: NaN in the data."""
    return has_nan(case.inputs["data"])


def matches(case: Case, got, want) -> bool:
    """Bit for bit (NaN equal to NaN)."""
    return _identical(got, want)


def difference(got, want) -> str:
    """What differs, row by row."""
    return _describe(np.asarray(got), np.asarray(want))


def explain(case: Case, got, want, run) -> Check | None:
    """An explained check (topic ``nan``) when NaN order accounts for the difference, else None.

    ``run(inputs) -> Outcome`` runs ncnn on other inputs of the case.
    """
    data = case.inputs["data"]
    if not has_nan(data) or np.unique(data).size >= 2**24:
        return None
    ranked = run({**case.inputs, "data": order_ranks(data)})
    if not ranked.ok or not np.array_equal(np.asarray(ranked.value)[-1], np.asarray(want)[-1]):
        return None
    nans = np.flatnonzero(np.isnan(data.reshape(-1))).tolist()
    got = np.asarray(got)
    values = f"; its values {_short(got[0].tolist())}" if got.shape[0] == 2 else ""
    return Check("ncnn", "explained", reason("nan", "ncnn", case.op), topic="nan", detail=
                 f"NaN at flat indices {_short(nans)}: ncnn returned indices {_short(got[-1].astype(int).tolist())}"
                 f"{values}; ortops {_short(np.asarray(want)[-1].astype(int).tolist())}. On the data replaced by its "
                 "ranks in ortops' order (NaN above +inf) - the same selection without NaN - ncnn agrees with ortops")
