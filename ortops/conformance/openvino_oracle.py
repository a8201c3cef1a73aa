"""OpenVINO as an oracle (``--oracle openvino``): run each case's model in OpenVINO through
:mod:`ortops.interop.openvino` and judge the answer against ortops' (the NumPy reference).

A difference is ``explained`` only when its cause is shown in that very case (the op's judge,
``OPENVINO`` of ``ortops/ops/<op>/judge.py``, recomputes the known behaviour or re-runs OpenVINO
for evidence through :data:`TOOLS`), else ``unexplained``. Every explained or skipped check carries
its topic (:data:`TOPICS`) and the divergence table's reason. The rules: docs/conformance.md.
"""

from __future__ import annotations

import functools
from types import SimpleNamespace

import numpy as np

from .. import divergences
from ..errors import OpError
from ..ops import by_name
from ..ops.tooling import tooling
from ..arrays import first_difference, order_ranks, same, short
from ..interop import openvino as ov_interop
from ..verdicts import Case, Check, Difference, verdict
from .contracts import OpJudge, OpenVinoJudge

__all__ = ["ORACLE", "TOPICS", "TOOLS", "judge_openvino", "topic_of", "available", "check", "structured_difference",
           "run_openvino", "message", "nan_evidence"]

ORACLE = "openvino"

#: topic -> what it is (:data:`ortops.divergences.TOPICS`). Explained and skipped checks carry one.
TOPICS = {t.key: t.what for t in divergences.TOPICS}

_SKIP_UNSUPPORTED_DTYPE = "the case's dtype cannot be fed to OpenVINO from NumPy"
_MISSING = "openvino is not installed (pip install 'ortops[openvino]'); OpenVINO could not judge"
_ERROR_RETURNED = "ortops raises OpError (the input is invalid or undefined in the spec); OpenVINO returns a result"
_ERROR_BOTH = "ortops raises OpError and OpenVINO rejects the input too; nothing to compare"


def topic_of(check: Check) -> str | None:
    """The topic key (one of :data:`TOPICS`) of an OpenVINO check, or None (an ``agree`` check has
    one only where the spec allows OpenVINO's other answer: ``"ties"``)."""
    return check.topic if check.topic in TOPICS else None


#: ``check(status, topic, reason="", detail="", difference=None)``: an OpenVINO check with its topic.
check = functools.partial(verdict, ORACLE)


def structured_difference(case: Case, got, want):
    """The first output where OpenVINO's answer (``got``) and ortops' (``want``) differ, as a
    :class:`ortops.verdicts.Difference` (outputs named as in the op's spec)."""
    pairs = list(zip(by_name(case.op).outputs, got, want))
    for name, g, w in pairs:
        if not same(g, w):
            return Difference.of(name, "ortops", w, ORACLE, g)
    name, g, w = pairs[0]
    return Difference.of(name, "ortops", w, ORACLE, g, note="equal within the tolerance")


def available() -> bool:
    """Whether OpenVINO can be imported."""
    try:
        ov_interop.require_openvino()
    except ImportError:
        return False
    return True


def _op_judge(case: Case) -> OpJudge:
    return tooling(case.op).judge


def _op_oracle(case: Case) -> OpenVinoJudge:
    return _op_judge(case).OPENVINO


def _run_openvino(case: Case) -> list[np.ndarray]:
    return ov_interop.run(_op_judge(case).model(case), {n: case.inputs[n] for n in by_name(case.op).inputs})


def run_openvino(case: Case) -> list[np.ndarray]:
    """The case's model run in OpenVINO (at float32) on its inputs, outputs in order (through
    :func:`_run_openvino`, which tests replace)."""
    return _run_openvino(case)


def nan_evidence(case: Case, fallback=None) -> str | None:
    """Re-run OpenVINO on an order-equivalent input without NaN (:func:`order_ranks`);
    evidence when OpenVINO then agrees with ortops (or when ``fallback(case, got, want)``, the
    op's own evidence for an allowed difference, accepts the answer)."""
    data = case.inputs["data"]
    base = ov_interop.to_work(data, np.float32) if data.dtype == np.float64 else data  # the CPU plugin's own view
    if base.size >= 2**24:
        return None
    inputs = {**case.inputs, "data": order_ranks(base).astype(data.dtype)}
    ranked = Case(case.name, case.op, case.source, inputs, case.attrs)
    got = run_openvino(ranked)
    want = _op_judge(case).expected(inputs, case.attrs)
    ok, _ = _op_oracle(case).matches(ranked, got, want)
    if not ok and fallback is not None:
        ok = bool(fallback(ranked, got, want))
    if not ok:
        return None
    narrowed = " (float64 rounded to float32 first, +-inf saturating to +-3.4e38)" if data.dtype == np.float64 else ""
    return (f"on the data replaced by its ranks in ortops' order{narrowed} - the same selection without NaN - "
            "OpenVINO agrees with ortops")


def message(exc: Exception) -> str:
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    useful = [ln for ln in lines if not ln.startswith(("Exception from", "Check '", "At:", "/"))]
    return " ".join(useful or lines or [type(exc).__name__])[:400]


def _explain(case: Case, got, want) -> Check:
    explained = _op_oracle(case).explain(case, got, want, TOOLS)
    if explained is not None:
        if explained.difference is None:
            explained.difference = structured_difference(case, got, want)
        return explained
    return check("unexplained", None, "OpenVINO and ortops differ and no known behaviour accounts for it",
                 f"{first_difference(by_name(case.op).outputs, got, want)}; OpenVINO: {short(got)}; ortops: {short(want)}",
                 difference=structured_difference(case, got, want))


def _judge_error(case: Case, error: OpError) -> Check:
    topic = divergences.ERROR_TOPICS.get(error.kind, "invalid-input")
    oracle = _op_oracle(case)
    ours = f"OpError ({error.kind}): {error.detail}"
    if not getattr(oracle, "RUN_INVALID", True):
        return check("skipped", topic, oracle.NOT_RUN, f"ortops: {error}",
                     Difference.outcome("ortops", ours, ORACLE, f"not run: {oracle.NOT_RUN}"))
    try:
        got = run_openvino(case)
    except (RuntimeError, OpError) as exc:
        return check("skipped", topic, _ERROR_BOTH, f"ortops: {error}; OpenVINO: {message(exc)}",
                     Difference.outcome("ortops", ours, ORACLE, f"rejects: {message(exc)}"))
    return check("explained", topic, _ERROR_RETURNED, f"ortops: {error}; OpenVINO returns {short(got)}",
                 Difference.outcome("ortops", ours, ORACLE, f"returns {short(got)}"))


#: What an op's ``explain`` may call back to (:class:`ortops.conformance.contracts.OpenVinoTools`).
TOOLS = SimpleNamespace(run_openvino=run_openvino, nan_evidence=nan_evidence)


# --- the judge ---------------------------------------------------------------------------------------


def judge_openvino(case: Case) -> list[Check]:
    """OpenVINO's verdict on one conformance case, as one check (oracle ``"openvino"``): ``agree``,
    ``explained`` (a known divergence shown in this case), ``skipped`` (OpenVINO is missing, cannot
    take the input, or rejects an input ortops rejects too) or ``unexplained``."""
    if not available():
        return [check("skipped", "openvino-missing", _MISSING)]
    data = case.inputs["data"]
    if case.details.get("dtype") == "bfloat16":  # carried as float32 and cast inside the graph
        return [check("skipped", "float16-bfloat16", _SKIP_UNSUPPORTED_DTYPE, "bfloat16 (cast inside the graph)")]
    if data.dtype.kind == "V":  # structured, or ml_dtypes' bfloat16
        return [check("skipped", "float16-bfloat16", _SKIP_UNSUPPORTED_DTYPE, f"dtype {data.dtype}")]
    oracle = _op_oracle(case)
    try:
        want = _op_judge(case).expected(case.inputs, case.attrs)
    except OpError as error:
        return [_judge_error(case, error)]
    try:
        got = run_openvino(case)
    except (RuntimeError, OpError) as exc:
        return [check("unexplained", None, "OpenVINO failed on a case ortops accepts", message(exc))]
    wrong = oracle.check_output(case, got) if hasattr(oracle, "check_output") else None
    if wrong is not None:
        return [wrong]
    ok, alternative = oracle.matches(case, got, want)
    if ok:
        if alternative:
            return [check("agree", "ties", "", f"OpenVINO gives {oracle.ALTERNATIVE} (allowed by the spec)")]
        return [check("agree", None)]
    return [_explain(case, got, want)]
