"""What the conformance layer needs from an op: the contracts an op folder's layers fulfil,
as ``typing.Protocol``\\ s. An op provides them through its :class:`~ortops.ops.spec.OpSpec`
(``cases``: :class:`Suite`; ``judge``: :class:`OpJudge`, whose ``OPENVINO`` is an
:class:`OpenVinoJudge` and whose ``NCNN``, when ncnn has the op, an :class:`NcnnJudge`);
``tests/ops/test_spec.py`` checks every op against them. Optional members a judge reads when
present are listed in each docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np
import onnx

from ..verdicts import Case, Check

__all__ = ["Suite", "OpJudge", "OpenVinoJudge", "OpenVinoTools", "NcnnJudge"]


@runtime_checkable
class Suite(Protocol):
    """An op's conformance cases, as data (``ortops/ops/<op>/cases.py``)."""

    #: source name (:data:`ortops.verdicts.SOURCES`) -> a function returning its cases.
    CASE_SOURCES: Mapping[str, Callable[[], list[Case]]]


@runtime_checkable
class OpJudge(Protocol):
    """The one judge of an op's answers (``ortops/ops/<op>/judge.py``): is an answer acceptable,
    and if not, which known divergence (topic) explains it, for every caller. The same module
    holds the node audits of ``ortops compare`` (:class:`ortops.compare.audit.OpAudits`).

    Optional: ``case_model(case) -> ModelProto | None``, the model a saved case holds when it
    is not the plain ortops node; ``NCNN`` (an :class:`NcnnJudge`) when ncnn has the op."""

    #: How OpenVINO's answer on a case is judged.
    OPENVINO: OpenVinoJudge

    def judge(self, case: Case) -> list[Check]:
        """Run the case through ortops in ORT and judge it against the reference and ORT."""

    def topics(self, case: Case) -> set[str]:
        """The divergence topics of the case beyond its dtype."""

    def model(self, case: Case) -> onnx.ModelProto:
        """The ONNX model of the case: the ortops node alone."""

    def expected(self, inputs: dict, attrs: dict) -> list[np.ndarray]:
        """ortops' answer, one array per output (raises OpError where ortops does)."""


class OpenVinoTools(Protocol):
    """What the OpenVINO judge lends an op's ``explain`` (:data:`ortops.conformance.openvino_oracle.TOOLS`)."""

    def run_openvino(self, case: Case) -> list[np.ndarray]:
        """The case's model run in OpenVINO on its inputs."""

    def nan_evidence(self, case: Case, fallback=None) -> str | None:
        """Evidence that NaN order explains a difference: OpenVINO re-run on the data's ranks agrees."""


@runtime_checkable
class OpenVinoJudge(Protocol):
    """How OpenVINO's answer on an op's case is judged (``OPENVINO`` of the op's judge).

    Optional: ``check_output(case, got) -> Check | None``; ``RUN_INVALID`` (False: OpenVINO
    is not run on an input ortops rejects) with ``NOT_RUN`` (why); ``ALTERNATIVE`` (what an
    allowed other answer is)."""

    def matches(self, case: Case, got, want) -> tuple[bool, bool]:
        """(acceptable, an allowed alternative answer)."""

    def explain(self, case: Case, got, want, ov: OpenVinoTools) -> Check | None:
        """An explained check when a known divergence shows in the data, else None; ``ov`` runs
        OpenVINO again for evidence."""

    def explain_standalone(self, case: Case, got, want) -> Check | None:
        """The same for the op's standalone lowering run in OpenVINO (a precision limit of its
        CPU plugin, or another order of equal values, which the caller counts against the model)."""


@runtime_checkable
class NcnnJudge(Protocol):
    """How real ncnn's answer on an op's case is judged (``NCNN`` of the op's judge).

    Optional: ``NOT_RUN``, OpError kind -> why ncnn is not run on such an input."""

    #: The function the ncnn child process runs, ``RUNNER(*inputs, **attrs)`` (pickled by name).
    RUNNER: Callable[..., Any]

    def expected(self, inputs: dict, attrs: dict) -> np.ndarray:
        """ortops' answer in ncnn's layout (raises OpError where ortops does)."""

    def isolate(self, case: Case) -> bool:
        """Whether the case runs in a child process of its own."""

    def matches(self, case: Case, got, want) -> bool:
        """Whether ncnn's answer is acceptable."""

    def difference(self, got, want) -> str:
        """How the answers differ, in one line."""

    def explain(self, case: Case, got, want, run) -> Check | None:
        """An explained check when a known divergence shows; ``run(inputs)`` runs ncnn again."""
