"""The runtimes ``ortops compare`` runs a model in (:data:`RUNTIMES`), each in a child process
(:mod:`ortops.processes`): ``onnxruntime`` (CPU; :class:`ortops.InferenceSession` when the model
holds ortops nodes), ``openvino`` (:func:`ortops.interop.openvino.compile_model`, CPU, at
``INFERENCE_PRECISION_HINT``) and ``reference`` (``onnx.reference.ReferenceEvaluator`` with
ortops' NumPy references, :func:`reference_ops`). A runtime that aborts is ``crashed``, one not
installed ``missing``, one that refuses the model ``failed``.
"""

from __future__ import annotations

import contextlib
import os
import pathlib
import time
from collections.abc import Callable, Iterator, Mapping
from typing import NamedTuple

import numpy as np
import onnx

from . import model as model_mod

__all__ = ["RUNTIMES", "Runner", "RuntimeResult", "reference_ops", "run_here", "run_in_child"]

RUNTIMES = ("onnxruntime", "openvino", "reference")


class RuntimeResult(NamedTuple):
    """What one runtime did: ``status`` is ``ok``, ``missing``, ``failed`` or ``crashed``."""

    runtime: str
    status: str
    detail: str
    version: str
    settings: dict
    outputs: dict  # tensor name -> numpy array (status ok only)
    seconds: float


def reference_ops() -> list[type]:
    """``onnx.reference.op_run.OpRun`` classes, one per ortops op, for ``ReferenceEvaluator(new_ops=...)``.

    Each runs the op's NumPy reference (``OpSpec.reference``) with the node's attributes, parsed
    by the op's spec. ``ReferenceEvaluator`` finds an implementation by (domain, op type), but
    ``OpRun`` looks its default attributes up by op type alone, so a custom ``TopK`` would get the
    standard TopK's ``largest`` and ``sorted`` as keyword arguments (onnx 1.23: a TypeError for a
    ``_run`` that names its attributes). So each class carries the schema ortops registers for its
    domain (``op_schema``), and reads the attributes from the node itself, parsed by the op's spec.
    """
    from onnx.reference.op_run import OpRun

    from ..builder.schemas import SCHEMA_VERSION, register_schemas
    from ..ops import OPS

    register_schemas()
    classes = []
    for op in OPS:
        def _run(self, *inputs, _op=op, **attrs):
            names = {a.name for a in _op.attrs}  # the first of a repeated attribute, as onnx reads it
            raw = {a.name: onnx.helper.get_attribute_value(a) for a in reversed(self.onnx_node.attribute)
                   if a.name in names}
            result = _op.reference(*inputs, **_op.parse_attributes(raw, self.onnx_node.name))
            return (result,) if isinstance(result, np.ndarray) else tuple(result)

        classes.append(type(op.op_type, (OpRun,), {
            "op_domain": op.domain, "op_schema": onnx.defs.get_schema(op.op_type, SCHEMA_VERSION, op.domain),
            "_run": _run}))
    return classes


def _version(package: str) -> str:
    from ..reporting import version

    return f"{package} {version(package) or 'not installed'}"


def run_here(runtime: str, model_path: str, feed: Mapping[str, np.ndarray], settings: Mapping) -> tuple[dict, str]:
    """Run the model in ``runtime`` in this process: (tensor name -> array, version string).

    ``settings["external_dir"]``: the folder of the model's external data (default: the model's).
    Raises ModuleNotFoundError when the runtime is not installed, anything else when it cannot
    run the model.
    """
    if runtime == "openvino":
        from ..interop import openvino as ov_interop

        ov_interop.require_openvino()
        precision = settings.get("precision", "f32")
        compiled = ov_interop.compile_model(model_path, "CPU", ov_interop.precision_config(precision))
        request = compiled.create_infer_request()
        request.infer({name: np.asarray(value) for name, value in feed.items()})
        values = [np.array(request.get_output_tensor(i).data, copy=True) for i in range(len(compiled.outputs))]
        return {name: v for port, v in zip(compiled.outputs, values) for name in port.get_names()}, _version("openvino")
    model = onnx.load(model_path, load_external_data=False)
    external_dir = settings.get("external_dir") or os.path.dirname(model_path)
    if runtime == "onnxruntime":
        import onnxruntime as ort

        from ..graph import graphs
        from ..ops import DOMAINS
        from ..session import InferenceSession

        if any(n.domain in DOMAINS for g in graphs(model.graph) for n in g.node):
            onnx.load_external_data_for_model(model, external_dir)
            session = InferenceSession(model)
        else:
            session = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
        names = [o.name for o in session.get_outputs()]
        return dict(zip(names, session.run(None, dict(feed)))), f"onnxruntime {ort.__version__}"
    if runtime == "reference":
        from onnx.reference import ReferenceEvaluator

        onnx.load_external_data_for_model(model, external_dir)
        evaluator = ReferenceEvaluator(model, new_ops=reference_ops())
        return dict(zip(evaluator.output_names, evaluator.run(None, dict(feed)))), _version("onnx")
    raise ValueError(f"unknown runtime {runtime!r}; choose from {RUNTIMES}")


def _run_child(runtime: str, model_path: str, feed: Mapping[str, np.ndarray], settings: Mapping) -> tuple:
    """What the child process of one runtime does: (status, detail, version, tensor outputs).
    ``ok``; ``missing``: the runtime is not installed; ``failed``: it could not run the model, with
    its message in ``detail``. Sequences, maps and other values are not compared."""
    try:
        outputs, version = run_here(runtime, model_path, feed, settings)
    except ModuleNotFoundError as exc:
        return "missing", f"{runtime} is not installed ({exc})", "", {}
    except Exception as exc:  # noqa: BLE001 - any refusal of the model is reported, not raised
        return "failed", f"{type(exc).__name__}: {' '.join(str(exc).split())[:2000]}", "", {}
    return "ok", "", version, {n: np.asarray(v) for n, v in outputs.items()
                               if isinstance(v, np.ndarray) or np.asarray(v).dtype.kind in "biufc"}


def run_in_child(runtime: str, model_path: pathlib.Path, feed: Mapping[str, np.ndarray], settings: Mapping,
                 context: Mapping | None = None, *, timeout: float | None = None) -> RuntimeResult:
    """Run ``runtime`` on ``feed`` (name -> array) in a child process (:func:`ortops.processes.call_once`).

    ``settings`` are the runtime's own (reported); ``context`` is what every runtime may need
    (``external_dir``: the folder of the original model's external data). A child that dies
    (a signal, an exit) or gives no answer within ``timeout`` seconds is ``crashed``.
    """
    from ..processes import call_once

    start = time.perf_counter()
    outcome = call_once(_run_child, runtime, os.fspath(model_path), dict(feed), {**(context or {}), **settings},
                        timeout=timeout)
    seconds = time.perf_counter() - start
    if outcome.ok:
        answer = outcome.value
    elif outcome.crash and outcome.crash.startswith("no answer"):
        answer = "crashed", f"{outcome.crash} (killed)", "", {}
    else:
        tail = " | ".join(outcome.stderr.strip().splitlines()[-3:])
        how = outcome.crash or f"raised {outcome.error}"
        answer = "crashed", f"the {runtime} process died ({how})" + (f": {tail}" if tail else ""), "", {}
    status, detail, version, outputs = answer
    return RuntimeResult(runtime, status, detail, version, dict(settings), outputs, seconds)


class Runner(NamedTuple):
    """Runs models of ``source`` (whose folder holds their external data) in a runtime's child
    process, each written to ``directory`` while it runs (:func:`ortops.compare.model.save`: when
    the source's folder is read-only, the data files are copied there once for every model):
    ``settings`` (runtime -> its own), ``context`` (what every runtime may need) and ``timeout`` as
    :func:`run_in_child`'s."""

    source: pathlib.Path
    settings: Mapping[str, Mapping]
    context: Mapping
    timeout: float | None
    directory: pathlib.Path

    @contextlib.contextmanager
    def saved(self, model: onnx.ModelProto) -> Iterator[Callable[[str, Mapping[str, np.ndarray]], RuntimeResult]]:
        """``model`` written once while the block runs: yields ``run(runtime, feed)``."""
        path = model_mod.save(model, self.source, self.directory)
        try:  # the model may be written next to the source's external data, outside the folder
            yield lambda runtime, feed: run_in_child(runtime, path, feed, self.settings.get(runtime, {}),
                                                     self.context, timeout=self.timeout)
        finally:
            path.unlink(missing_ok=True)

    def run(self, runtime: str, model: onnx.ModelProto, feed: Mapping[str, np.ndarray]) -> RuntimeResult:
        with self.saved(model) as run:
            return run(runtime, feed)
