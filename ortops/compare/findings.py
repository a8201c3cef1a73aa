"""What ``ortops compare`` needs from an op: its node audits (``ortops/ops/<op>/audit.py``).

:mod:`ortops.compare.audit` collects every op's :class:`OpAudits` through
:attr:`ortops.ops.spec.OpSpec.audit`, looping over :data:`ortops.ops.OPS`; nothing asks an op
its name. The data an audit works with (:class:`~ortops.verdicts.Capture`,
:class:`~ortops.verdicts.Finding`, :class:`~ortops.verdicts.Audit`) is in :mod:`ortops.verdicts`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol, runtime_checkable

from ..verdicts import Audit

__all__ = ["OpAudits"]


@runtime_checkable
class OpAudits(Protocol):
    """An op folder's audits: ``(domain, op_type)`` (``""`` for standard ONNX ops) -> how that
    op type is audited, for the op's own node and the standard nodes of its family."""

    AUDITS: Mapping[tuple[str, str], Audit]
