"""How OpenVINO's answer on an ncnn ArgMax case is judged (see :mod:`ortops.conformance.openvino_oracle`).

OpenVINO runs the exact composition of :mod:`ortops.ops.arg_max.openvino`: the answer must be
ortops' exactly; with NaN (undefined in ncnn) a difference is explained when OpenVINO agrees
on the data replaced by its ranks in ortops' order.
"""

from __future__ import annotations

import numpy as np

from ... import reference
from ...conformance import openvino_oracle as ov
from ...conformance.cases import Case, Check
from ...conformance.compare import has_nan, same
from ...divergences import reason

__all__ = ["model", "expected", "matches", "explain"]


def model(case: Case):
    """The ONNX model ortops runs for ``case``."""
    from ...builder import arg_max_model

    attrs = dict(out_max_val=case.attrs.get("out_max_val", 0), topk=case.attrs.get("topk", 1))
    return arg_max_model(case.inputs["data"].ndim, **attrs)


def expected(inputs: dict, attrs: dict) -> list[np.ndarray]:
    """ortops' answer (the reference)."""
    return [reference.arg_max(inputs["data"], **attrs)]


def matches(case: Case, got, want) -> tuple[bool, bool]:
    """(matches, only as another allowed answer): exact."""
    return same(got[0], want[0]), False


def explain(case: Case, got, want) -> Check | None:
    """An explained check when NaN order accounts for the difference."""
    if not has_nan(case.inputs["data"]):
        return None
    evidence = ov.nan_evidence(case)
    if evidence:
        return ov.check("explained", "nan", reason("nan", "openvino"),
                        f"{ov.difference(case, got, want)}; {evidence}; OpenVINO: {ov.short(got)}")
    return None
