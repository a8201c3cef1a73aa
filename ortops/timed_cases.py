"""What ``ortops bench`` times, as data that op folders (``ortops/ops/<op>/bench.py``) and the
bench share: a :class:`Case` (an op, its parameters, the implementations timed on it) and the
:class:`Target` objects shown on its rows."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Case", "Target", "dims"]


@dataclass(frozen=True)
class Target:
    """A goal shown on one row: ``median(row) / median(against) <= limit``."""

    text: str
    against: tuple[str, str]  # (case id, implementation) of the denominator
    limit: float
    speedup: bool = False  # show as "N× faster" (limit < 1)


@dataclass
class Case:
    """One benchmark case: ``op``'s parameters ``params``, timed in each of ``impls``."""

    op: str
    name: str
    params: dict
    impls: tuple[str, ...]
    load_average: float | None = None  # 1-minute load average when the case started
    seconds: float | None = None  # how long the case took, set-up included
    targets: dict[str, list[Target]] = field(default_factory=dict)  # implementation -> targets
    baselines: dict[str, str] = field(default_factory=dict)  # implementation -> its ratio's denominator
    notes: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.op} {self.name}"


def dims(shape) -> str:
    """``[2, 3]``: a shape in case names."""
    return "[" + ", ".join(str(d) for d in shape) + "]"
