"""A case's verdicts combined: :class:`Result` (the cases and checks themselves, and the oracle
families, are core data: :mod:`ortops.verdicts`), and ortops' expected answer on a case."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import jsonable
from ..errors import OpError
from ..ops.tooling import tooling
from ..verdicts import Case, Check

__all__ = ["Result", "combine", "expected_outputs"]


@dataclass
class Result:
    case: Case
    checks: list[Check]
    seconds: float

    @property
    def status(self) -> str:
        return combine(self.checks)[0]

    @property
    def reason(self) -> str:
        return combine(self.checks)[1]

    def oracles(self) -> dict[str, tuple[str, str]]:
        """Each oracle family that judged the case: (status, reason)."""
        families: dict[str, list[Check]] = {}
        for check in self.checks:
            families.setdefault(check.family, []).append(check)
        return {family: combine(checks, alone=family != "reference") for family, checks in families.items()}

    def to_json(self) -> dict[str, Any]:
        """The case and its verdicts as JSON-ready data (``report.json``'s ``cases`` items)."""
        c = self.case
        data = c.inputs.get("data", next(iter(c.inputs.values())))
        return {
            "name": c.name,
            "op": c.op,
            "source": c.source,
            "status": self.status,
            "reason": self.reason,
            "dtype": c.dtype,
            "shape": list(data.shape),
            "attributes": {k: (v.item() if isinstance(v, np.generic) else v) for k, v in c.attrs.items()},
            "oracles": {family: status for family, (status, _) in self.oracles().items()},
            "oracle_reasons": {family: reason for family, (status, reason) in self.oracles().items() if reason},
            "checks": [check.to_json() for check in self.checks],
            "details": jsonable(c.details),
            "seconds": round(self.seconds, 4),
        }


def combine(checks: list[Check], *, alone: bool = False) -> tuple[str, str]:
    """A case's status and reason from its checks.

    unexplained if any check is; else explained if any is; else agree if some oracle other
    than the reference agreed; else skipped (only the reference could judge). ``alone``: the
    checks of one oracle family other than the reference, judged as if the reference agreed.
    """
    if alone:
        checks = [Check("reference", "agree"), *checks]
    for status in ("unexplained", "explained"):
        hits = [c for c in checks if c.status == status]
        if hits:
            return status, "; ".join(f"{c.oracle}: {c.reason}" for c in hits)
    others = [c for c in checks if c.oracle != "reference"]
    if any(c.status == "agree" for c in others) or not others:
        return "agree", ""
    return "skipped", "; ".join(f"{c.oracle}: {c.reason}" for c in others if c.status == "skipped")


def expected_outputs(case: Case) -> dict[str, np.ndarray] | OpError:
    """ortops' expected answer on ``case`` (the spec's reference, through the op's judge), by
    output name, or the OpError the spec's checks raise."""
    op = tooling(case.op)
    try:
        return dict(zip(op.op.outputs, op.judge.expected(case.inputs, case.attrs)))
    except OpError as exc:
        return exc
