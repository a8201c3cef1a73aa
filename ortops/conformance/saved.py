"""Reproducible cases: ``ortops conformance --save-cases DIR`` and ``--case NAME [--from DIR]``.

:func:`save` writes a judged case as ``NAME.onnx``, ``NAME.inputs.npz``, ``NAME.expected.npz``
(keys ``expected.<output>``: written by someone else; ``reference.<output>``: the spec's
reference) and ``NAME.json`` (the case, the reference's outputs inline when small or its error,
and every verdict); :func:`load` rebuilds the case from them; :func:`describe` prints everything
about a judged case. The files: docs/conformance.md.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np
import onnx

from ..errors import OpError
from ..ops.tooling import tooling
from ..arrays import jsonable, preview
from ..verdicts import Difference
from .cases import Case, Result, expected_outputs

__all__ = ["save", "load", "model_of", "describe", "INLINE_OUTPUT_ITEMS"]

#: Expected outputs up to this many elements (all outputs together) are written into NAME.json.
INLINE_OUTPUT_ITEMS = 256


def model_of(case: Case) -> onnx.ModelProto:
    """The ONNX model ortops runs for ``case``: the judge's ``case_model`` when it has one
    (e.g. TopK's bfloat16 cases), else its ``model``."""
    judge = tooling(case.op).judge
    found = judge.case_model(case) if hasattr(judge, "case_model") else None
    return judge.model(case) if found is None else found


def save(result: Result, out_dir: pathlib.Path) -> pathlib.Path:
    """Write ``result``'s case into ``out_dir`` (see the module docstring); returns NAME.json."""
    case = result.case
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    files = {"model": f"{case.name}.onnx", "inputs": f"{case.name}.inputs.npz",
             "expected": f"{case.name}.expected.npz"}
    onnx.save(model_of(case), out / files["model"])
    np.savez_compressed(out / files["inputs"], **case.inputs)
    expected = expected_outputs(case)
    arrays = {f"expected.{k}": v for k, v in (case.expected or {}).items()}
    if not isinstance(expected, OpError):
        arrays.update({f"reference.{k}": v for k, v in expected.items()})
    np.savez_compressed(out / files["expected"], **arrays)
    if isinstance(expected, OpError):
        reference = {"error": {"kind": expected.kind, "message": expected.detail}}
    elif sum(v.size for v in expected.values()) <= INLINE_OUTPUT_ITEMS:
        reference = {k: {"dtype": str(v.dtype), "shape": list(v.shape), "values": jsonable(v)}
                     for k, v in expected.items()}
    else:
        reference = {k: {"dtype": str(v.dtype), "shape": list(v.shape), "in": files["expected"],
                         "key": f"reference.{k}"} for k, v in expected.items()}
    data = {
        "name": case.name, "op": case.op, "source": case.source, "dtype": case.dtype,
        "attributes": jsonable(case.attrs), "expected_from": case.expected_from,
        "expected_family": case.expected_family,
        "onnx_versions": list(case.onnx_versions), "details": jsonable(case.details),
        "files": files,
        "reference_outputs": reference,
        "status": result.status, "reason": result.reason,
        "oracles": {family: status for family, (status, _) in result.oracles().items()},
        "checks": [c.to_json() for c in result.checks],
    }
    path = out / f"{case.name}.json"
    path.write_text(json.dumps(data, indent=1) + "\n")
    return path


def load(directory: pathlib.Path, name: str) -> tuple[Case, dict[str, Any]]:
    """The case saved as ``name`` in ``directory``, and its saved JSON (verdicts included).

    Raises FileNotFoundError when ``directory`` holds no such case."""
    directory = pathlib.Path(directory)
    meta_path = directory / f"{name}.json"
    if not meta_path.is_file():
        raise FileNotFoundError(f"no saved case {name!r} in {directory} (expected {meta_path.name})")
    meta = json.loads(meta_path.read_text())
    with np.load(directory / meta["files"]["inputs"]) as npz:
        inputs = {k: npz[k] for k in npz.files}
    with np.load(directory / meta["files"]["expected"]) as npz:
        expected = {k.split(".", 1)[1]: npz[k] for k in npz.files if k.startswith("expected.")}
    case = Case(meta["name"], meta["op"], meta["source"], inputs, dict(meta["attributes"]),
                expected=expected or None, expected_from=meta["expected_from"],
                expected_family=meta.get("expected_family", "expected"),
                onnx_versions=tuple(meta["onnx_versions"]), details=meta["details"])
    return case, meta


def _array_lines(name: str, array: np.ndarray, dtype: str | None = None) -> list[str]:
    array = np.asarray(array)
    return [f"  {name}: {dtype or array.dtype} shape {list(array.shape)}", f"    {preview(array, limit=INLINE_OUTPUT_ITEMS)}"]


def describe(result: Result, saved: dict[str, Any] | None = None) -> list[str]:
    """Everything about one judged case, as plain lines: the case, its inputs (whole up to
    :data:`INLINE_OUTPUT_ITEMS` elements), ortops' expected answer, every check with its
    verdict, topic, reason, detail and concrete difference; with ``saved`` (the JSON of
    :func:`save`), the saved verdict next to the new one."""
    case = result.case
    lines = [f"case {case.name}", f"  op: {case.op}", f"  source: {case.source}", f"  dtype: {case.dtype}",
             f"  attributes: {json.dumps(jsonable(case.attrs))}"]
    if case.details:
        lines.append(f"  details: {json.dumps(jsonable(case.details))}")
    if case.expected_from:
        lines.append(f"  expected outputs from: {case.expected_from}")
    if case.onnx_versions:
        lines.append(f"  standard versions run side by side: {list(case.onnx_versions)}")
    lines.append("inputs")
    for name, array in case.inputs.items():
        lines += _array_lines(name, array, case.dtype if name == "data" else None)
    expected = expected_outputs(case)
    lines.append("expected (the spec's reference)")
    if isinstance(expected, OpError):
        lines.append(f"  OpError ({expected.kind}): {expected.detail}")
    else:
        for name, array in expected.items():
            lines += _array_lines(name, array)
    lines.append("checks")
    for c in result.checks:
        lines.append(f"  {c.status:<11} {c.oracle}" + (f"  [topic {c.topic}]" if c.topic else ""))
        if c.reason:
            lines.append(f"    reason: {c.reason}")
        if c.detail:
            lines.append(f"    detail: {c.detail}")
        d: Difference | None = c.difference
        if d is not None:
            if d.output:
                lines.append(f"    output: {d.output}; first difference: {d.first_position}"
                             + (f" ({d.left} {d.left_at} vs {d.right} {d.right_at}); {d.mismatches} of {d.size} "
                                "differ" if d.first_index is not None else ""))
            lines.append(f"    {d.left} returned: {d.left_value}")
            lines.append(f"    {d.right} returned: {d.right_value}")
    lines.append(f"verdict {result.status}" + (f": {result.reason}" if result.reason else ""))
    if saved is not None:
        same = saved["status"] == result.status
        lines.append(f"saved verdict {saved['status']}; rerun verdict {result.status}; "
                     f"{'same' if same else 'CHANGED'}")
    lines.append(f"time {result.seconds:.3f} s")
    return lines
