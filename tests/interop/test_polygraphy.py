"""ortops.interop.polygraphy: the plugin of `polygraphy run` (--ortops, --openvino, --ortops-explain)."""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

pytest.importorskip("polygraphy", reason="polygraphy is not installed (an extra: pip install 'ortops[polygraphy]')")
pytest.importorskip("openvino", reason="OpenVINO is not installed: pip install 'ortops[polygraphy]'")

from polygraphy.json import save_json  # noqa: E402

from ortops import builder, reference  # noqa: E402
from ortops.interop import polygraphy as plugin  # noqa: E402
from helpers import top_k_and_arg_max_model  # noqa: E402

GROUP = "polygraphy.run.plugins"
ENTRY = "ortops.interop.polygraphy:export_argument_groups"
POLYGRAPHY = pathlib.Path(sys.executable).with_name("polygraphy")


def _distinct(shape, seed=0) -> np.ndarray:
    """Tie-free float32 data: a permutation of distinct values."""
    return np.random.default_rng(seed).permutation(np.prod(shape)).reshape(shape).astype(np.float32)


# --- the runners --------------------------------------------------------------------------------


def test_ortops_runner_runs_an_ortops_top_k_like_its_reference():
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value", stable=1,
                                index_element_type="i64")
    data, k = _distinct((3, 20)), np.array([4], np.int64)
    with plugin.OrtopsRunner(model.SerializeToString()) as runner:
        assert runner.name.startswith("ortops-runner-N")
        meta = runner.get_input_metadata(use_numpy_dtypes=False)
        assert list(meta) == ["data", "k"]
        assert meta["data"].dtype.numpy() == np.float32 and meta["k"].dtype.numpy() == np.int64
        options = runner.sess.get_session_options()
        assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
        assert options.get_session_config_entry("session.inter_op.allow_spinning") == "0"
        outputs = runner.infer({"data": data, "k": k})
    want = reference.top_k(data, k, axis=-1, mode="max", sort="value", stable=1, index_element_type="i64")
    assert list(outputs) == ["values", "indices"]
    np.testing.assert_array_equal(outputs["values"], want.values)
    np.testing.assert_array_equal(outputs["indices"], want.indices)
    assert not runner.is_active


def test_openvino_runner_runs_an_ncnn_arg_max_like_its_reference_and_records_its_precision(tmp_path):
    path = tmp_path / "arg_max.onnx"
    onnx.save(builder.arg_max_model(2, out_max_val=1, topk=3), path)
    data = _distinct((4, 25), seed=1)
    runner = plugin.OpenvinoRunner(os.fspath(path))
    assert runner.name.startswith("openvino-runner-f32-N") and runner.config == {"INFERENCE_PRECISION_HINT": "f32"}
    runner.activate()
    try:
        meta = runner.get_input_metadata(use_numpy_dtypes=False)
        assert list(meta) == ["data"] and meta["data"].dtype.numpy() == np.float32
        assert list(meta["data"].shape) == [None, None]  # the model's symbolic d0, d1
        outputs = runner.infer({"data": data})
        assert runner.last_inference_time() is not None
    finally:
        runner.deactivate()
    np.testing.assert_array_equal(outputs["output"], reference.arg_max(data, out_max_val=1, topk=3))


def test_runner_options_are_checked():
    with pytest.raises(ValueError, match="precision='f64'"):
        plugin.OpenvinoRunner("m.onnx", precision="f64")
    with pytest.raises(ValueError, match="path='fast'"):
        plugin.OrtopsRunner("m.onnx", path="fast")
    assert plugin.OpenvinoRunner("m.onnx", precision="default").config == {}


# --- the entry point ----------------------------------------------------------------------------


def _ours(entry_points):
    return [ep for ep in entry_points if ep.value == ENTRY]


def test_the_installed_package_registers_the_plugin():
    try:
        importlib.metadata.distribution("ortops")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("ortops runs from a checkout without being installed (pip install -e '.[polygraphy]'): "
                    "entry points come from installed metadata only")
    found = _ours(importlib.metadata.entry_points(group=GROUP))
    assert [ep.name for ep in found] == ["ortops"]
    groups = found[0].load()()
    assert sorted(g.get_name_opt()[1] for g in groups if hasattr(g, "get_name_opt")) == ["openvino", "ortops"]
    assert any(isinstance(g, plugin.OrtopsExplainArgs) for g in groups)


@pytest.mark.slow
def test_a_fresh_install_registers_the_plugin(tmp_path):
    """Build and install a copy of the package (no dependencies) into a folder, as pip does for the extra
    (the build backend comes from the package index); Python finds the entry point there."""
    root, source, target = pathlib.Path(__file__).resolve().parents[2], tmp_path / "source", tmp_path / "site"
    shutil.copytree(root / "ortops", source / "ortops", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, source / name)
    install = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", os.fspath(target),
                              os.fspath(source)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    code = ("import importlib.metadata as m, sys; "
            f"print([e.value for e in m.entry_points(group={GROUP!r}) if str(e.dist._path).startswith(sys.argv[1])])")
    done = subprocess.run([sys.executable, "-c", code, os.fspath(target)], check=True, capture_output=True, text=True,
                          cwd=tmp_path,  # not the checkout: its ortops.egg-info would be found first
                          env={**os.environ, "PYTHONPATH": os.fspath(target)})
    assert done.stdout.strip() == repr([ENTRY])


# --- the explanation ----------------------------------------------------------------------------


def test_describe_names_the_node_or_says_nothing_explains_it():
    report = {
        "settings": {"atol": 1e-5, "rtol": 1e-5},
        "runtimes": [{"name": "onnxruntime", "status": "ok"}, {"name": "openvino", "status": "ok"}],
        "outputs": [
            {"output": "indices", "runtime": "openvino", "verdict": "explained", "node": "top10",
             "explanation": "follows from top10 (TopK): ties"},
            {"output": "scores", "runtime": "openvino", "verdict": "unexplained", "node": None,
             "explanation": "no audited node upstream differs"},
            {"output": "values", "runtime": "openvino", "verdict": "match", "node": None, "explanation": ""},
        ],
    }
    assert plugin.describe(report, ["indices", "scores", "values", "other"], "openvino") == [
        "indices: ortops verdict explained, at node top10: follows from top10 (TopK): ties",
        "scores: ortops verdict unexplained: nothing explains it (no audited node upstream differs)",
        "values: ortops verdict match: within atol=1e-05, rtol=1e-05 in ortops' run, so there is nothing to explain",
        "other: ortops did not compare it (not an output of the model file)",
    ]
    # The log level follows the verdicts, not the text (a name may read like an explanation).
    assert plugin._explained(report, ["indices"], "openvino")
    assert not plugin._explained(report, ["indices", "scores"], "openvino")
    report["outputs"][1]["output"] = "x, at node: explained, at node y"
    assert not plugin._explained(report, ["x, at node: explained, at node y"], "openvino")
    report["runtimes"][1].update(status="crashed", detail="the openvino process died (killed by signal 11)")
    assert not plugin._explained(report, ["indices"], "openvino")
    assert plugin.describe(report, ["indices"], "openvino") == [
        "ortops could not run openvino (crashed): the openvino process died (killed by signal 11)"]


def test_runner_names_map_to_ortops_compare_runtimes():
    assert plugin._runtime("onnxrt-runner-N0-01/02/26-10:00:00") == ("onnxruntime", "f32")
    assert plugin._runtime("ortops-runner-N3-01/02/26-10:00:00") == ("onnxruntime", "f32")
    assert plugin._runtime("openvino-runner-bf16-N0-01/02/26-10:00:00") == ("openvino", "bf16")
    assert plugin._runtime("trt-runner-N0-01/02/26-10:00:00") == (None, "f32")


def _polygraphy(*args, cwd, env=None):
    if not POLYGRAPHY.exists():
        pytest.skip(f"no polygraphy command next to {sys.executable}")
    return subprocess.run([os.fspath(POLYGRAPHY), "run", *args], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env=env)


def _standard_top_k(path):
    """Standard TopK-11 (largest, sorted), k=10 over the last axis of float32 [8, 1000]."""
    graph = helper.make_graph(
        [helper.make_node("TopK", ["data", "k"], ["values", "indices"], axis=-1, name="top10")], "top10",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, [8, 1000])],
        [helper.make_tensor_value_info("values", TensorProto.FLOAT, [8, 10]),
         helper.make_tensor_value_info("indices", TensorProto.INT64, [8, 10])],
        [helper.make_tensor("k", TensorProto.INT64, [1], [10])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), path)


def test_polygraphy_run_explains_a_tie_at_its_node(tmp_path):
    _standard_top_k(tmp_path / "topk.onnx")
    # Five distinct values in rows of 1000: OpenVINO 2026.4.1 lists equal values in another order than ORT.
    save_json([{"data": np.random.default_rng(0).integers(0, 5, (8, 1000)).astype(np.float32)}], tmp_path / "ties.json")
    done = _polygraphy("topk.onnx", "--onnxrt", "--openvino", "--load-inputs", "ties.json", "--ortops-explain",
                       "--save-inputs", "fed", cwd=tmp_path)  # a folder of per-iteration files, the user's
    log = done.stdout + done.stderr
    assert done.returncode == 1, log  # Polygraphy's verdict stands
    assert "FAILED | Output: 'indices'" in log, log
    assert re.search(r"ortops explain \| onnxrt-runner-N\d+\S* vs openvino-runner-f32-N\d+", log), log
    assert re.search(r"indices: ortops verdict explained, at node top10: .*ties", log), log
    assert "values: ortops" not in log, log  # values agree: Polygraphy passed them
    saved = re.search(r"Saving accuracy results to (\S+)", log).group(1)
    assert not pathlib.Path(saved).parent.exists()  # the plugin's temporary folder is gone
    assert [p.suffix for p in (tmp_path / "fed").iterdir()] == [".json"]  # the user's inputs stay


def test_polygraphy_run_ortops_nodes_in_both_runners(tmp_path):
    onnx.save(top_k_and_arg_max_model(), tmp_path / "ortops_nodes.onnx")
    # Polygraphy's default data: uniform floats, tie-free.
    done = _polygraphy("ortops_nodes.onnx", "--ortops", "--openvino", "--ortops-explain", "--save-outputs", "out.json",
                       cwd=tmp_path)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "PASSED | simple | All outputs matched | Outputs: ['values', 'indices', 'argmax']" in log, log
    assert "ortops explain | Polygraphy failed no output: nothing to explain" in log, log
    assert (tmp_path / "out.json").exists()


def test_openvino_runner_without_openvino_says_the_extra_in_one_line(tmp_path):
    """Without the openvino package, --openvino printed two chained tracebacks (72 lines)."""
    _standard_top_k(tmp_path / "topk.onnx")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text("import sys\nsys.modules['openvino'] = None\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), os.environ.get("PYTHONPATH", "")])}
    done = _polygraphy("topk.onnx", "--onnxrt", "--openvino", cwd=tmp_path, env=env)
    log = done.stdout + done.stderr
    assert done.returncode != 0, log
    assert "[!] running ortops models in OpenVINO needs the openvino package: pip install 'ortops[openvino]'" in log
    assert "Traceback" not in log, log
