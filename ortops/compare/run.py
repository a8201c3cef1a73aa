"""``ortops compare``'s pipeline: load, choose inputs, run each runtime in a child, compare, audit."""

from __future__ import annotations

import datetime
import os
import pathlib
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from ..arrays import jsonable
from . import audit, causal
from . import inputs as inputs_mod
from . import model as model_mod
from .groups import count
from .outputs import DEFAULT_ATOL, DEFAULT_RTOL, Tolerance, Tolerances, compare_arrays
from .runtimes import RUNTIMES, Runner, RuntimeResult

__all__ = ["SCHEMA", "Step", "compare", "exit_status"]

#: The ``schema`` field of compare.json.
SCHEMA = "ortops.compare/1"


class Step(NamedTuple):
    """What :func:`compare` tells its ``progress`` callback: a step starts (``finished`` False) or
    ends. ``name`` is a runtime, ``"compare"`` (outputs and node audit) or ``"causal"`` (the
    causal checks); a finished runtime has its ``status`` and wall ``seconds``."""

    name: str
    finished: bool
    status: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        """``done onnxruntime: ok in 1.7 s`` for a finished step (wall seconds)."""
        return f"done {self.name}: {self.status or 'ok'} in {self.seconds:.1f} s"


def _describe_inputs(feed, source: str, seed: int | None, ties: bool) -> list[dict]:
    rows = []
    for name, value in feed.items():
        value = np.asarray(value)
        row = {"name": name, "dtype": str(value.dtype), "shape": list(value.shape), "source": source}
        if source == "generated":
            row.update(seed=seed, ties=ties)
        if value.size and value.dtype.kind in "iufb":
            row.update(min=jsonable(value.min()), max=jsonable(value.max()), distinct=int(np.unique(value).size))
        rows.append(row)
    return rows


def compare(model_path, *, inputs: Mapping[str, np.ndarray] | str | os.PathLike | None = None, seed: int = 0,
            dims: Mapping[str, int] | None = None, ties: bool = False, runtimes: Sequence[str] = RUNTIMES,
            atol: float = DEFAULT_ATOL, rtol: float = DEFAULT_RTOL, openvino_precision: str = "f32",
            trace: bool = False, progress: Callable[[Step], None] | None = None, timeout: float | None = None,
            tolerances: Tolerances | None = None) -> dict:
    """Run ``model_path`` in each runtime on the same inputs and explain every difference.

    Parameters
    ----------
    model_path : str or os.PathLike
        An ``.onnx`` file; external data stays in its files.
    inputs : mapping of str to numpy.ndarray, or a path to a ``.npz`` file, optional
        The feed; default: generated from the model's input types and shapes (``seed``, ``dims``,
        ``ties``; see :func:`ortops.compare.inputs.generate`).
    runtimes : sequence of str
        Among ``onnxruntime``, ``openvino``, ``reference``; the first that runs is the baseline.
    atol, rtol : float
        Float tolerance, ``|other - base| <= atol + rtol * |base|``.
    tolerances : ortops.compare.outputs.Tolerances, optional
        Replaces ``atol``/``rtol``: the default tolerance and error statistic, and each output's own
        (:func:`ortops.compare.outputs.parse_tolerances`). The node audit uses the default.
    openvino_precision : str, default "f32"
        OpenVINO's ``INFERENCE_PRECISION_HINT`` (``"default"``: the plugin's choice).
    trace : bool, default False
        Expose every tensor of the main graph, not only the audited nodes', and name the first node
        where the runtimes split (``trace`` in the report). Costs memory; may change what a runtime
        fuses.
    progress : callable, optional
        Called with a :class:`Step` as each step starts and ends: each runtime (its status and wall
        seconds), ``"compare"``, ``"causal"`` (the causal checks, only when an output is explained).
    timeout : float, optional
        Seconds a runtime's child (and each causal run) may take before it is killed (``crashed``).

    Returns
    -------
    dict
        The report (schema :data:`SCHEMA`).

    Raises
    ------
    ortops.compare.model.ModelError
        The file is not an ONNX model.
    ortops.compare.inputs.InputError
        Inputs that do not fit the model, a missing ``--dim`` or one no input has, or a
        tolerance of an output the model does not have.
    """
    tell = progress or (lambda message: None)
    tolerances = tolerances or Tolerances(Tolerance(atol, rtol))
    atol, rtol = tolerances.default.atol, tolerances.default.rtol
    start = time.perf_counter()
    path = pathlib.Path(model_path)
    model = model_mod.load(path)
    dims = dict(dims or {})
    if inputs is None:
        feed, source = inputs_mod.generate(model, seed=seed, dims=dims, ties=ties), "generated"
    elif isinstance(inputs, (str, os.PathLike)):
        feed, source = inputs_mod.load_npz(inputs), "npz"
    else:
        feed, source = dict(inputs), "given"
    inputs_mod.check_feed(model, feed, dims)
    original_outputs = [o.name for o in model.graph.output]
    if unknown := [name for name in tolerances.per_output if name not in original_outputs]:
        raise inputs_mod.InputError(f"a tolerance names {unknown}, which the model does not output; its outputs "
                                    f"are {original_outputs}")
    node_count = len(model.graph.node)
    runtime_settings = {"openvino": {"precision": openvino_precision}}
    with tempfile.TemporaryDirectory(prefix="ortops-compare-") as tmp:
        # One folder for the run: copies of external data from a read-only folder are made once.
        runner = Runner(path, runtime_settings, {"external_dir": os.fspath(path.parent.resolve())}, timeout,
                        pathlib.Path(tmp))

        def probe(m, names):  # the conditions of If nodes, where every runtime computes the same
            # A branch is lifted into the model every runtime then runs: lifting one that some
            # runtime does not take for these inputs would run a model that is not the user's.
            exposed = model_mod.expose(m, names)  # once: a copy of the model and a shape inference
            with runner.saved(exposed) as run:
                results = {runtime: run(runtime, feed) for runtime in runtimes}
            failed = [f"{name} {r.status}: {r.detail}" for name, r in results.items() if r.status != "ok"]
            if failed or not results:
                return {}, "; ".join(failed) or "no runtime to run"
            values, disagree = {}, []
            for name in names:
                seen = {runtime: np.asarray(r.outputs.get(name)).tolist() for runtime, r in results.items()}
                if len({repr(v) for v in seen.values()}) == 1:
                    values[name] = results[runtimes[0]].outputs[name]
                else:
                    disagree.append(f"the runtimes disagree on {name!r}: "
                                    + ", ".join(f"{runtime} {v}" for runtime, v in seen.items()))
            return values, "; ".join(disagree)

        lifted = model_mod.lift_branches(model, audit.is_audited, probe, known=feed)
        model = lifted.model
        nodes = audit.audited_nodes(model)
        exposed = [model_mod.AuditedNode.of(i, n) for i, n in enumerate(model.graph.node)] if trace else nodes
        audited = model_mod.expose(model, [n for node in exposed for n in (*node.inputs, *node.outputs)])
        results: dict[str, RuntimeResult] = {}
        with runner.saved(audited) as run:
            for runtime in runtimes:
                tell(Step(runtime, False))
                results[runtime] = run(runtime, feed)
                if results[runtime].status == "failed" and len(audited.graph.output) > len(model.graph.output):
                    # The exposed tensors may be what the runtime refuses: retry on the model as it is.
                    retry = runner.run(runtime, model, feed)
                    if retry.status == "ok":
                        results[runtime] = retry._replace(
                            detail="ran without the audited tensors exposed: " + results[runtime].detail)
                tell(Step(runtime, True, results[runtime].status, results[runtime].seconds))
        tell(Step("compare", False))
        compared = time.perf_counter()
        ran = {name: r.outputs for name, r in results.items() if r.status == "ok"}
        baseline = next(iter(ran), None)
        graph = audit.Graph(model)
        base_dir = os.fspath(path.parent)
        node_results = (audit.audit_nodes(model, nodes, feed, ran, baseline, atol=atol, rtol=rtol, base_dir=base_dir)
                        if baseline else [])
        found = (audit.origins(model, feed, ran, baseline, atol=atol, rtol=rtol, base_dir=base_dir)
                 if trace and baseline else [])
        output_rows = []
        for runtime, name in ((r, n) for r in ran if r != baseline for n in original_outputs):
            want, got = ran[baseline].get(name), ran[runtime].get(name)
            row = {"output": name, "runtime": runtime, "verdict": "unexplained", "explanation": "", "node": None,
                   "comparison": None}
            if want is None and got is None:  # a sequence, map or string output: not compared
                row.update(verdict="skipped", explanation="not a numeric tensor in either runtime")
            elif want is None or got is None:
                row["explanation"] = f"{runtime if got is None else baseline} returned no output {name!r}"
            else:
                comparison = compare_arrays(got, want, **tolerances.of(name)._asdict())
                if comparison.status == "match":
                    row["verdict"] = "match"
                else:
                    row["verdict"], row["explanation"], row["node"] = audit.explain_output(graph, name, runtime,
                                                                                           node_results)
                if row["verdict"] == "unexplained":
                    row["explanation"] += audit.origin_note(graph, name, runtime, found)
                    if runtime == "openvino" and openvino_precision != "f32" and comparison.dtype[0].startswith("float"):
                        row["explanation"] += (f"; OpenVINO ran at precision {openvino_precision} "
                                               "(--openvino-precision f32 compares at float32)")
                row.update(comparison=comparison.as_dict(), causal=None)
            output_rows.append(row)
        tell(Step("compare", True, "outputs compared, nodes audited", time.perf_counter() - compared))
        explained = [row for row in output_rows if row["verdict"] == "explained"]
        if explained:
            tell(Step("causal", False))
            started = time.perf_counter()
            checks = causal.check_outputs(model, feed, ran, baseline, explained, node_results, atol=atol, rtol=rtol,
                                          runner=runner, base_dir=base_dir)
            for row in explained:
                _apply_causal(row, checks[row["output"], row["runtime"]])
            tell(Step("causal", True, f"{count(len(explained), 'output')} checked", time.perf_counter() - started))
        runtime_rows = []
        for name, result in results.items():
            row = {"name": name, "status": result.status, "detail": result.detail, "version": result.version,
                   "settings": result.settings, "seconds": round(result.seconds, 3), "verdict": None, "node": None,
                   "causal": None}
            if result.status in ("failed", "crashed"):
                cause = audit.explain_failure(model, nodes, feed, ran, base_dir, result.detail)
                if cause is not None:
                    finding, node = cause
                    row.update(verdict="explained", topic=finding.topic, node=node.name,
                               explanation=f"{model_mod.node_label(node)}: {finding.detail}")
                    check = causal.check_failure(model, feed, ran, name, node, runner=runner, base_dir=base_dir)
                    row["causal"] = check.as_dict()
                    if check.status == "failed":
                        row.update(verdict="unexplained", explanation=f"{row['explanation']}; but {check.detail}")
                else:
                    row.update(verdict="unexplained", topic=None, explanation="no audited node shows why")
            runtime_rows.append(row)
    report = {
        "schema": SCHEMA,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "model": {"path": os.fspath(path), "inputs": [i.name for i in inputs_mod.graph_inputs(model)],
                  "outputs": original_outputs, "nodes": node_count,
                  "opsets": {o.domain or "ai.onnx": o.version for o in model.opset_import},
                  "external_data": model_mod.external_files(model)},
        "settings": {"atol": atol, "rtol": rtol, "runtimes": list(runtimes), "openvino_precision": openvino_precision,
                     "seed": seed if source == "generated" else None, "dims": dims, "ties": ties, "trace": trace,
                     "tolerances": tolerances.as_dict()},
        "inputs": _describe_inputs(feed, source, seed, ties),
        "baseline": baseline,
        "runtimes": runtime_rows,
        "outputs": output_rows,
        "nodes": [r.as_dict() for r in node_results],
        "trace": [o._asdict() for o in found],
        "audited": [{"node": n.name, "op": model_mod.op_name(n), "index": n.index} for n in nodes],
        "lifted": [{"node": name, "branch": branch} for name, branch in lifted.inlined],
        "unobserved": [u._asdict() for u in lifted.unobserved],
        "seconds": round(time.perf_counter() - start, 3),
    }
    report["summary"] = _summary(report)
    return report


def _apply_causal(row: dict, check: causal.Causal) -> None:
    """An explained output row after its causal check: explained only when the check passed."""
    row["causal"] = check.as_dict()
    if check.status == "passed":
        row["explanation"] += f" (causal check passed: {check.detail})"
        return
    why = "it does not cause this difference" if check.status == "failed" else "the causal check could not run"
    row["verdict"] = "unexplained"
    row["explanation"] = f"{row['node']} differs and is explained, but {why}: {check.detail}"
    if check.trace:
        row["node"] = check.trace["node"]


def _summary(report: dict) -> dict:
    verdicts, statuses = Counter(o["verdict"] for o in report["outputs"]), Counter(n["status"] for n in report["nodes"])
    count = {v: verdicts[v] for v in ("match", "explained", "unexplained", "skipped")}
    node_count = {v: statuses[v] for v in ("agree", "explained", "unexplained", "upstream", "missing")}
    ran = [r["name"] for r in report["runtimes"] if r["status"] == "ok"]
    broken = [r for r in report["runtimes"] if r["status"] in ("failed", "crashed")]
    unexplained = count["unexplained"] + node_count["unexplained"] + sum(
        1 for r in broken if r["verdict"] == "unexplained")
    if unexplained:
        status, verdict = 1, "unexplained differences"
    elif len(ran) < 2:
        status, verdict = 2, (f"fewer than two runtimes ran ({', '.join(ran) or 'none'}): nothing to compare"
                              + ("; every failure has a visible cause" if broken else ""))
    else:
        status, verdict = 0, "every difference is within tolerance or explained"
    return {"outputs": count, "nodes": node_count, "runtimes_ran": ran, "unexplained": unexplained,
            "verdict": verdict, "exit_status": status}


def exit_status(report: dict) -> int:
    """0: every difference within tolerance or explained; 1: some unexplained; 2: nothing compared."""
    return report["summary"]["exit_status"]
