"""Every non-agree verdict gets a concrete difference (the comparisons themselves: :mod:`ortops.arrays`)."""

from __future__ import annotations

from ..arrays import preview
from ..verdicts import Difference

__all__ = ["complete_differences"]


def complete_differences(case, checks) -> None:
    """Give every non-agree check without a difference one: what ortops returned on the case
    (its spec's reference answer, which the ``reference`` check compares with ortops, or the
    OpError it raises) against what the check's oracle observed (its detail, or its reason
    when it could not run). Judges that compared arrays attach their own, element by element;
    this covers the verdicts that are about an outcome (a skipped oracle, an error)."""
    missing = [c for c in checks if c.status != "agree" and c.difference is None]
    if not missing:
        return
    from ..errors import OpError
    from ..ops import by_name

    try:
        outputs = by_name(case.op).oracle().expected(case.inputs, case.attrs)
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
