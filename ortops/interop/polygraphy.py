"""A Polygraphy plugin: ``polygraphy run MODEL.onnx --ortops --openvino [--ortops-explain]``.

The ``polygraphy`` extra registers :func:`export_argument_groups` in Polygraphy's entry-point group
``polygraphy.run.plugins``. ``--ortops`` runs the model through :class:`ortops.InferenceSession`
(:class:`OrtopsRunner`, ``--ortops-path``); ``--openvino`` through :mod:`ortops.interop.openvino`
(:class:`OpenvinoRunner`, ``--openvino-device``, ``--openvino-precision``: part of the runner's
name); ``--ortops-explain`` runs ``ortops compare``'s node audit on the inputs Polygraphy fed and
says, for each output Polygraphy failed, which node explains it (:func:`explain_failures`), never
changing Polygraphy's verdict or exit status. Usage: docs/polygraphy.md.

Only Polygraphy loads this module; it imports Polygraphy at the top, ONNX Runtime and OpenVINO
when a runner is activated.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import time
import uuid
from collections import OrderedDict

import numpy as np
from polygraphy import util
from polygraphy.backend.base import BaseRunner
from polygraphy.backend.onnxrt import OnnxrtRunner
from polygraphy.common import TensorMetadata
from polygraphy.comparator import AccuracyResults, StreamingDataLoader
from polygraphy.datatype import DataType
from polygraphy.logger import G_LOGGER
from polygraphy.tools.args import (
    CompareFuncSimpleArgs,
    ComparatorCompareArgs,
    ComparatorRunArgs,
    ModelArgs,
    OnnxLoadArgs,
)
from polygraphy.tools.args import util as args_util
from polygraphy.tools.args.base import BaseArgs, BaseRunnerArgs
from polygraphy.tools.script import make_invocable, safe

from ..session import PATHS
from .openvino import PRECISIONS, precision_config

__all__ = [
    "OpenvinoRunner",
    "OpenvinoRunnerArgs",
    "OrtopsExplainArgs",
    "OrtopsRunner",
    "OrtopsRunnerArgs",
    "describe",
    "explain_failures",
    "export_argument_groups",
]

#: The runtime of ``ortops compare`` that reproduces a Polygraphy runner, by runner-name prefix.
RUNTIME_OF_RUNNER = {"onnxrt-runner": "onnxruntime", "ortops-runner": "onnxruntime", "openvino-runner": "openvino"}


# --- runners -------------------------------------------------------------------------------------


def _ortops_session(model, path: str):
    import onnxruntime

    import ortops

    model, _ = util.invoke_if_callable(model)
    options = onnxruntime.SessionOptions()
    # Idle ORT threads spin by default; beside another runtime in one process they steal its cores.
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return ortops.InferenceSession(model, options, path=path)


class OrtopsRunner(OnnxrtRunner):
    """Runs inference in ONNX Runtime with ortops' ops (:class:`ortops.InferenceSession`).

    Parameters
    ----------
    model : str, bytes, onnx.ModelProto, or a callable returning one
        The model; a callable (a Polygraphy loader) is called on activation.
    path : {"auto", "pyop", "lowered"}, default "auto"
        How each ortops node runs (:class:`ortops.InferenceSession`).
    name : str, optional
        Default: ``ortops-runner-N<count>-<date>-<time>``.

    Notes
    -----
    Inference, input metadata and deactivation are :class:`polygraphy.backend.onnxrt.OnnxrtRunner`'s;
    only the session differs. Intra- and inter-op thread spinning is off. An op that rejects its
    input raises :class:`ortops.OpError` (a ``ValueError`` naming the node) from ``infer``.
    """

    def __init__(self, model, *, path: str = "auto", name: str | None = None):
        BaseRunner.__init__(self, name=name, prefix="ortops-runner")  # first: BaseRunner.__del__ needs it
        if path not in PATHS:
            raise ValueError(f"path={path!r} is not one of {PATHS}")
        self.path = path
        self._sess = functools.partial(_ortops_session, model, path)


class OpenvinoRunner(BaseRunner):
    """Runs inference in OpenVINO, ortops nodes included (:mod:`ortops.interop.openvino`).

    Parameters
    ----------
    model : str, bytes, onnx.ModelProto, or a callable returning one
        The ONNX model; a callable (a Polygraphy loader) is called on activation.
    precision : {"f32", "bf16", "f16", "default"}, default "f32"
        ``INFERENCE_PRECISION_HINT``; ``"default"`` leaves it to the device plugin (bfloat16 on CPUs
        that have it). Part of the default name: ``openvino-runner-f32-N<count>-<date>-<time>``.
    device : str, default "CPU"
    name : str, optional

    Raises
    ------
    ValueError
        For another ``precision``.
    ortops.OpError
        On activation, for an ortops node with a bad attribute (naming the node).
    ModuleNotFoundError
        On activation, when OpenVINO is not installed (naming the extra).

    Notes
    -----
    Outputs are copies, named as OpenVINO names the ports (the ONNX output names). Polygraphy checks
    the names, dtypes and shapes of the feed first; values OpenVINO mishandles are OpenVINO's (see
    :mod:`ortops.interop.openvino`): a ScatterElementsUpdate index below -d writes out of bounds and
    may kill the process, so use ``polygraphy run --use-subprocess`` for inputs you have not checked.
    """

    def __init__(self, model, *, precision: str = "f32", device: str = "CPU", name: str | None = None):
        super().__init__(name=name, prefix=f"openvino-runner-{precision}")  # first: BaseRunner.__del__ needs it
        if precision not in PRECISIONS:
            raise ValueError(f"precision={precision!r} is not one of {PRECISIONS}")
        self._model = model
        self.precision = precision
        self.device = device
        self.config = precision_config(precision)

    @util.check_called_by("activate")
    def activate_impl(self):
        from . import openvino as ov_interop

        model, _ = util.invoke_if_callable(self._model)
        try:
            self.compiled = ov_interop.compile_model(model, self.device, self.config)
        except ModuleNotFoundError as exc:  # one line, as Polygraphy says a missing module, not a traceback
            G_LOGGER.critical(str(exc))
        self.request = self.compiled.create_infer_request()

    @util.check_called_by("get_input_metadata")
    def get_input_metadata_impl(self):
        meta = TensorMetadata()
        for port in self.compiled.inputs:
            shape = port.get_partial_shape()
            dims = None if shape.rank.is_dynamic else [d.get_length() if d.is_static else None for d in shape]
            meta.add(port.get_any_name(), dtype=DataType.from_dtype(port.get_element_type().to_dtype()), shape=dims)
        return meta

    @util.check_called_by("infer")
    def infer_impl(self, feed_dict):
        feed = {name: np.asarray(util.array.to_numpy(value)) for name, value in feed_dict.items()}
        start = time.time()
        self.request.infer(feed)
        self.inference_time = time.time() - start
        return OrderedDict((port.get_any_name(), np.array(self.request.get_tensor(port).data, copy=True))
                           for port in self.compiled.outputs)

    @util.check_called_by("deactivate")
    def deactivate_impl(self):
        del self.request
        del self.compiled


# --- argument groups -----------------------------------------------------------------------------


def _model_in_script(arg_groups, script):
    """The model as the generated script names it: the path, or Polygraphy's ONNX loader (serialized)
    when ONNX options (``--onnx-outputs``, shape inference, ...) change the model."""
    if arg_groups[OnnxLoadArgs].must_use_onnx_loader():
        return arg_groups[OnnxLoadArgs].add_to_script(script, serialize_model=True)
    return arg_groups[ModelArgs].path


class OrtopsRunnerArgs(BaseRunnerArgs):
    """
    ONNX-Runtime with ortops: running inference with ONNX Runtime and ortops' custom ops.

    Depends on:

        - ModelArgs
        - OnnxLoadArgs
    """

    def get_name_opt_impl(self):
        return "ONNX-Runtime with ortops' ops", "ortops"

    def get_extra_help_text_impl(self):
        return "Runs models with ortops.openvino/ortops.ncnn nodes (ortops.InferenceSession)."

    def add_parser_args_impl(self):
        self.group.add_argument("--ortops-path", choices=PATHS, default=None,
                                help="How --ortops runs each ortops node: 'auto' (the faster exact path per op), "
                                     "'pyop' or 'lowered' (ortops.InferenceSession's path). Defaults to 'auto'.")

    def parse_impl(self, args):
        """Attributes: ``path`` (str or None): ``--ortops-path``."""
        self.path = args_util.get(args, "ortops_path")

    def add_to_script_impl(self, script):
        script.add_import(imports=["OrtopsRunner"], frm=__name__)
        script.add_runner(make_invocable("OrtopsRunner", _model_in_script(self.arg_groups, script), path=self.path))


class OpenvinoRunnerArgs(BaseRunnerArgs):
    """
    OpenVINO: running inference with OpenVINO (ortops nodes included, via ortops.interop.openvino).

    Depends on:

        - ModelArgs
        - OnnxLoadArgs
    """

    def get_name_opt_impl(self):
        return "OpenVINO", "openvino"

    def get_extra_help_text_impl(self):
        return "Float32 unless --openvino-precision says otherwise; the precision is part of the runner's name."

    def add_parser_args_impl(self):
        self.group.add_argument("--openvino-precision", choices=PRECISIONS, default=None,
                                help="OpenVINO's INFERENCE_PRECISION_HINT for --openvino. 'default' leaves it to the "
                                     "device plugin (bf16 on CPUs that have it). Defaults to 'f32'.")
        self.group.add_argument("--openvino-device", default=None, help="The OpenVINO device. Defaults to 'CPU'.")

    def parse_impl(self, args):
        """Attributes: ``precision`` (str): ``--openvino-precision`` (f32 by default); ``device`` (str or None)."""
        self.precision = args_util.get(args, "openvino_precision") or "f32"
        self.device = args_util.get(args, "openvino_device")

    def add_to_script_impl(self, script):
        script.add_import(imports=["OpenvinoRunner"], frm=__name__)
        script.add_runner(make_invocable("OpenvinoRunner", _model_in_script(self.arg_groups, script),
                                         precision=self.precision, device=self.device))


class OrtopsExplainArgs(BaseArgs):
    """
    ortops Explanations: explaining the outputs Polygraphy failed with ortops' node audit.

    Depends on:

        - ModelArgs
        - ComparatorRunArgs
        - ComparatorCompareArgs
        - CompareFuncSimpleArgs: for the tolerances
    """

    def add_parser_args_impl(self):
        self.group.add_argument(
            "--ortops-explain", action="store_true", default=None,
            help="After Polygraphy's comparison, run ortops compare's node audit on the inputs Polygraphy fed "
                 "(onnxrt and ortops runners as onnxruntime, openvino as openvino) and print, for each output "
                 "Polygraphy failed, ortops' verdict and the node that explains it, or that nothing does. "
                 "Informational: Polygraphy's verdict and exit status stay.")

    def parse_impl(self, args):
        """Attributes: ``explain`` (bool); ``folder`` (str or None): where Polygraphy saves what the audit reads.

        ``polygraphy run`` asks only the runner and comparator groups for script code, so with
        ``--ortops-explain`` this has Polygraphy save its inputs and accuracy results (to a temporary
        folder unless ``--save-inputs``/``--save-accuracy-results`` name them) and wraps the
        comparator's ``add_to_script_impl`` to append the audit.
        """
        self.explain = bool(args_util.get(args, "ortops_explain"))
        self.folder = None
        if not self.explain:
            return
        run_args, compare_args = self.arg_groups[ComparatorRunArgs], self.arg_groups[ComparatorCompareArgs]
        folder = os.path.join(tempfile.gettempdir(), f"ortops-explain-{uuid.uuid4().hex[:12]}")
        if not run_args.save_inputs_path:
            run_args.save_inputs_path = os.path.join(folder, "inputs.json")
            self.folder = folder
        if not compare_args.save_accuracy_results_path:
            compare_args.save_accuracy_results_path = os.path.join(folder, "accuracy.json")
            self.folder = folder
        comparator_code = compare_args.add_to_script_impl

        def add_to_script_impl(script, *args, **kwargs):
            success = comparator_code(script, *args, **kwargs)
            self.add_to_script(script)
            return success

        compare_args.add_to_script_impl = add_to_script_impl

    def add_to_script_impl(self, script):
        simple = self.arg_groups[CompareFuncSimpleArgs]
        script.add_import(imports=["explain_failures"], frm=__name__)
        script.append_suffix(safe("\n# ortops: explain the outputs that failed\n{:}", make_invocable(
            "explain_failures", self.arg_groups[ModelArgs].path,
            inputs=self.arg_groups[ComparatorRunArgs].save_inputs_path,
            accuracy=self.arg_groups[ComparatorCompareArgs].save_accuracy_results_path,
            atol=_smallest(simple.atol), rtol=_smallest(simple.rtol), cleanup=self.folder)))


def _smallest(tolerances):
    """One tolerance for the audit from Polygraphy's per-output ones (``{name or '': value}``): the smallest."""
    return min(float(v) for v in tolerances.values()) if tolerances else None


def export_argument_groups() -> list[BaseArgs]:
    """The entry point of ``polygraphy.run.plugins``: the argument groups this plugin adds."""
    return [OrtopsRunnerArgs(), OpenvinoRunnerArgs(), OrtopsExplainArgs()]


# --- the explanation -----------------------------------------------------------------------------


def _runtime(runner_name: str) -> tuple[str | None, str]:
    """(ortops compare's runtime for a Polygraphy runner, or None; the OpenVINO precision in its name)."""
    for prefix, runtime in RUNTIME_OF_RUNNER.items():
        if runner_name.startswith(prefix + "-"):
            rest = runner_name[len(prefix) + 1:].split("-")
            precision = rest[0] if runtime == "openvino" and rest[0] in PRECISIONS else "f32"
            return runtime, precision
    return None, "f32"


def _failed(results) -> dict[tuple, list[str]]:
    """{(runner pair, iteration): names of the outputs some comparison function failed}, in order."""
    failed: dict[tuple, dict[str, None]] = {}  # an ordered set of names per key
    for result in results:
        for pair, iterations in result.items():
            for iteration, outputs in enumerate(iterations):
                names = failed.setdefault((tuple(pair), iteration), {})
                names.update(dict.fromkeys(name for name, verdict in outputs.items() if not bool(verdict)))
    return {key: list(names) for key, names in failed.items() if names}


def describe(report: dict, outputs, runtime: str) -> list[str]:
    """One line per output of ``outputs``: ortops' verdict for it in ``runtime`` against the baseline.

    Parameters
    ----------
    report : dict
        What :func:`ortops.compare.compare` returned.
    outputs : sequence of str
        The outputs Polygraphy failed.
    runtime : str
        The non-baseline runtime of the report.
    """
    broken = [r for r in report["runtimes"] if r["status"] != "ok"]
    if broken:
        return [f"ortops could not run {r['name']} ({r['status']}): {r['detail']}"
                + (f"; {r['verdict']}: {r['explanation']}" if r.get("explanation") else "") for r in broken]
    rows = {row["output"]: row for row in report["outputs"] if row["runtime"] == runtime}
    settings = report["settings"]
    lines = []
    for name in outputs:
        row = rows.get(name)
        if row is None:
            lines.append(f"{name}: ortops did not compare it (not an output of the model file)")
        elif row["verdict"] == "explained":
            lines.append(f"{name}: ortops verdict explained, at node {row['node']}: {row['explanation']}")
        elif row["verdict"] == "match":
            lines.append(f"{name}: ortops verdict match: within atol={settings['atol']:g}, rtol={settings['rtol']:g} "
                         "in ortops' run, so there is nothing to explain")
        else:
            lines.append(f"{name}: ortops verdict {row['verdict']}: nothing explains it"
                         + (f" ({row['explanation']})" if row["explanation"] else ""))
    return lines


def _explained(report: dict, outputs, runtime: str) -> bool:
    """Whether every runtime ran and ortops explained each of ``outputs`` in ``runtime``."""
    verdicts = {row["output"]: row["verdict"] for row in report["outputs"] if row["runtime"] == runtime}
    return all(r["status"] == "ok" for r in report["runtimes"]) and all(verdicts.get(n) == "explained"
                                                                       for n in outputs)


def explain_failures(model_path, *, inputs, accuracy, atol=None, rtol=None, cleanup=None) -> None:
    """Explain each output Polygraphy failed, with ``ortops compare``'s node audit; log the result.

    Parameters
    ----------
    model_path : str
        The ONNX file Polygraphy ran.
    inputs : str
        Polygraphy's saved inputs (``--save-inputs``: a JSON file or a folder of them).
    accuracy : str
        Polygraphy's saved ``AccuracyResults`` (``--save-accuracy-results``).
    atol, rtol : float, optional
        The audit's tolerances; default ortops compare's (Polygraphy's defaults, 1e-5).
    cleanup : str, optional
        A folder to remove afterwards (the plugin's temporary one).

    Notes
    -----
    For each failed (runner pair, iteration) the model runs again in the two runtimes of
    ``ortops compare`` that stand for the runners (each in a child process): ``onnxrt`` and
    ``ortops`` runners as ``onnxruntime``, ``openvino`` ones as ``openvino`` at the precision in
    their name. A runner without such a runtime (TensorRT, a loaded result of another tool) gets a
    line saying so. Never raises for what it cannot explain; logs it instead.
    """
    from ortops.compare import compare

    tolerances = {k: v for k, v in (("atol", atol), ("rtol", rtol)) if v is not None}
    try:
        if not os.path.exists(accuracy) or not os.path.exists(inputs):
            G_LOGGER.warning("ortops explain | Polygraphy saved no inputs or accuracy results (no runner ran?): "
                             "nothing to audit")
            return
        failed = _failed(AccuracyResults.load(accuracy))
        if not failed:
            G_LOGGER.info("ortops explain | Polygraphy failed no output: nothing to explain")
            return
        feeds = list(StreamingDataLoader(inputs))  # a JSON list or a folder of per-iteration files
        for ((base_runner, runner), iteration), outputs in failed.items():
            head = f"ortops explain | {base_runner} vs {runner} | iteration {iteration}"
            (base, base_precision), (other, precision) = _runtime(base_runner), _runtime(runner)
            if base is None or other is None:
                G_LOGGER.warning(f"{head}\n    ortops has no runtime for "
                                 f"{base_runner if base is None else runner}: no node audit")
                continue
            if base == other:
                G_LOGGER.warning(f"{head}\n    both runners are {base} to ortops: its audit cannot tell them apart")
                continue
            report = compare(model_path, inputs=feeds[iteration], runtimes=[base, other],
                             openvino_precision=precision if other == "openvino" else base_precision, **tolerances)
            lines = describe(report, outputs, other)
            log = G_LOGGER.info if _explained(report, outputs, other) else G_LOGGER.warning
            log("\n    ".join([head, *lines]))
    except Exception as exc:  # the audit is an addition: it must not hide Polygraphy's own verdict
        G_LOGGER.warning(f"ortops explain | the audit failed: {type(exc).__name__}: {exc}")
    finally:
        if cleanup:
            shutil.rmtree(cleanup, ignore_errors=True)
