"""``ortops compare`` on the command line: exit statuses, one clear line for bad input, the reports."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

from ortops import cli
from . import models


def _compare(*args: str) -> int:
    return cli.main(["compare", "--no-progress", *args])


def _one_line(capsys) -> str:
    out = capsys.readouterr().out.strip()
    assert len(out.splitlines()) == 1, out
    assert out.startswith("ortops compare: ")
    return out


def test_a_file_that_is_not_onnx_is_exit_2(tmp_path, capsys):
    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"\x00\xffnot a model at all" * 10)
    assert _compare(str(bad), "--out", str(tmp_path / "r")) == cli.EXIT_USAGE == 2
    assert "is not an ONNX model" in _one_line(capsys)
    assert _compare(str(tmp_path / "missing.onnx"), "--out", str(tmp_path / "r")) == 2
    assert "no such file" in _one_line(capsys)
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("feed, message", [
    ({"y": np.zeros((2, 16), np.float32)}, "missing ['x'], unknown ['y']"),
    ({"x": np.zeros((2, 16), np.int64)}, "dtype int64, the model wants float32"),
    ({"x": np.zeros((2, 15), np.float32)}, "axis 1 must be 16"),
])
def test_inputs_that_do_not_fit_are_exit_2(tmp_path, capsys, feed, message):
    path = models.tie_chain(tmp_path / "m.onnx")
    np.savez(tmp_path / "in.npz", **feed)
    assert _compare(path, "--inputs", str(tmp_path / "in.npz"), "--out", str(tmp_path / "r")) == 2
    assert message in _one_line(capsys)


def test_a_missing_dim_is_exit_2_and_named(tmp_path, capsys):
    path = models.tie_chain(tmp_path / "m.onnx")
    assert _compare(path, "--out", str(tmp_path / "r")) == 2
    assert "--dim n=VALUE" in _one_line(capsys)


def test_other_usage_errors_are_exit_2(tmp_path, capsys):
    path = models.tie_chain(tmp_path / "m.onnx")
    existing = tmp_path / "file"
    existing.write_text("keep")
    assert _compare(path, "--dim", "n=2", "--out", str(existing)) == 2
    assert "existing file" in _one_line(capsys)
    assert _compare(path, "--dim", "n", "--out", str(tmp_path / "r")) == 2
    assert "NAME=VALUE" in _one_line(capsys)
    assert _compare(path, "--dim", "n=2", "--atol", "-1", "--out", str(tmp_path / "r")) == 2
    _one_line(capsys)
    for option, value in (("--timeout", "0"), ("--timeout", "nan"), ("--timeout", "inf"), ("--seed", "-1")):
        assert _compare(path, "--dim", "n=2", option, value, "--out", str(tmp_path / "r")) == 2
        assert f"{option} {float(value) if option == '--timeout' else value} must be" in _one_line(capsys)
    # a name that matches nothing: a tolerance or a size that would apply to nothing
    assert _compare(path, "--dim", "n=2", "--atol", "doubeld=0.5", "--out", str(tmp_path / "r")) == 2
    assert "a tolerance names ['doubeld'], which the model does not output" in _one_line(capsys)
    assert _compare(path, "--dim", "n=2", "--dim", "m=3", "--out", str(tmp_path / "r")) == 2
    assert "--dim m: no input of the model has a symbolic dimension 'm'; theirs are ['n']" in _one_line(capsys)
    with pytest.raises(SystemExit) as exc:
        cli.main(["compare", path, "--runtimes", "tensorrt"])
    assert exc.value.code == 2


def test_reports_are_written_and_the_html_is_self_contained(tmp_path, capsys):
    path = models.tie_chain(tmp_path / "m.onnx")
    out = tmp_path / "r"
    status = _compare(path, "--dim", "n=8", "--ties", "--seed", "5", "--runtimes", "onnxruntime", "reference",
                      "--out", str(out))
    report = json.loads((out / "compare.json").read_text())
    assert status == report["summary"]["exit_status"] == 0
    assert report["schema"] == "ortops.compare/1" and report["baseline"] == "onnxruntime"
    assert report["settings"]["seed"] == 5 and report["settings"]["dims"] == {"n": 8}
    assert [i["shape"] for i in report["inputs"]] == [[8, 16]] and report["inputs"][0]["distinct"] <= 4
    assert [a["node"] for a in report["audited"]] == ["selection"]
    page = (out / "compare.html").read_text()
    assert "selection" in page and "<script" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched at view time
    markdown = (out / "compare.md").read_text()
    assert "## Node audit" in markdown and "`selection`" in markdown
    printed = capsys.readouterr().out
    assert "compare.html" in printed and 'pair="reference vs onnxruntime"' in printed


def test_the_exit_status_is_1_for_an_unexplained_difference(tmp_path):
    path = models.batch_norm_with_momentum(tmp_path / "bn.onnx")
    status = _compare(path, "--runtimes", "onnxruntime", "reference", "--out", str(tmp_path / "r"))
    report = json.loads((tmp_path / "r" / "compare.json").read_text())
    assert status == report["summary"]["exit_status"]
    assert status == (1 if report["summary"]["outputs"]["unexplained"] else 0)


def test_the_command_runs_as_a_process(tmp_path):
    path = models.tie_chain(tmp_path / "m.onnx")
    done = subprocess.run([sys.executable, "-m", "ortops.cli", "compare", path, "--dim", "n=4",
                           "--runtimes", "onnxruntime", "reference", "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every difference is within tolerance or explained" in done.stdout


def test_a_runtime_that_outlives_the_timeout_is_killed_and_reported(tmp_path):
    path = models.tie_chain(tmp_path / "m.onnx")
    status = _compare(path, "--dim", "n=4", "--runtimes", "onnxruntime", "reference", "--timeout", "0.01",
                      "--out", str(tmp_path / "r"))
    report = json.loads((tmp_path / "r" / "compare.json").read_text())
    assert [r["status"] for r in report["runtimes"]] == ["crashed", "crashed"]
    assert all("no answer within 0.01 s" in r["detail"] for r in report["runtimes"])
    assert status == 1  # a runtime that failed without a visible cause is unexplained


def test_html_ids_are_unique(tmp_path):
    path = models.tie_chain(tmp_path / "m.onnx")
    _compare(path, "--dim", "n=4", "--runtimes", "onnxruntime", "reference", "--out", str(tmp_path / "r"))
    ids = re.findall(r' id="([^"]+)"', (tmp_path / "r" / "compare.html").read_text())
    assert len(ids) == len(set(ids)) > 0


def test_one_progress_line_per_finished_runtime_also_off_a_terminal(tmp_path, capsys):
    path = models.tie_chain(tmp_path / "m.onnx")
    args = ["compare", path, "--dim", "n=4", "--runtimes", "onnxruntime", "reference", "--out", str(tmp_path / "r")]
    assert cli.main(args) == 0
    printed = capsys.readouterr().out.splitlines()  # captured: not a terminal
    done = [line for line in printed if line.startswith("done ")]
    assert [line.split(":")[0] for line in done] == ["done onnxruntime", "done reference", "done compare"], printed
    assert all(re.fullmatch(r"done \w+: .+ in \d+\.\d s", line) for line in done), done
    assert done[0].startswith("done onnxruntime: ok in ")
    assert cli.main([*args, "--no-progress"]) == 0
    assert not [line for line in capsys.readouterr().out.splitlines() if line.startswith("done ")]


@pytest.mark.parametrize("damage", ["missing", "shorter"])
def test_external_data_that_is_missing_or_shorter_is_exit_2(tmp_path, capsys, damage):
    """Found when the model is read, in one line; it was a traceback from the audit, exit 1."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    weights = numpy_helper.from_array(np.arange(4096, dtype=np.float32), "w")
    graph = helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4096])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4096])], [weights])
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), path,
              save_as_external_data=True, location="weights.bin", size_threshold=0)
    data = tmp_path / "weights.bin"
    if damage == "missing":
        data.unlink()
    else:
        data.write_bytes(data.read_bytes()[:1000])
    assert _compare(str(path), "--out", str(tmp_path / "r"), "--runtimes", "onnxruntime", "reference") == 2
    assert "the external data of tensor 'w' (weights.bin, 16384 bytes) is missing or shorter" in _one_line(capsys)


@pytest.mark.parametrize("signum, said", [(signal.SIGTERM, "terminated (SIGTERM)"), (signal.SIGINT, "interrupted")])
def test_a_signal_ends_compare_in_one_line_and_removes_what_it_wrote(tmp_path, signum, said):
    """SIGTERM killed compare at once: the model it writes next to the user's (external data)
    stayed there, and so did its temporary folder. Ctrl-C printed a traceback. The process
    still dies of the signal, so that a shell loop stops."""
    folder = tmp_path / "model"
    folder.mkdir()
    path = models.slow_loop(folder / "slow.onnx")
    # Ctrl-C's Python default, even where this test run started with SIGINT ignored (a background job)
    start = ("import signal, sys; signal.signal(signal.SIGINT, signal.default_int_handler); "
             "from ortops.cli import main; sys.exit(main())")
    # The process's temporary files: none may stay (multiprocessing's too). A short path: a
    # socket's path has a length limit.
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="ortops-t"))
    process = subprocess.Popen([sys.executable, "-c", start, "compare", path, "--runtimes", "reference",
                                "onnxruntime", "--no-progress", "--out", str(tmp_path / "r")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "TMPDIR": str(scratch)})
    for _ in range(600):  # the reference runs the loop for tens of seconds
        if any(folder.glob(".slow.ortops-compare-*")):
            break
        time.sleep(0.1)
    time.sleep(1)
    process.send_signal(signum)
    out, err = process.communicate(timeout=60)
    assert process.returncode == -signum, (out, err)
    assert err.strip().splitlines()[-1] == f"ortops compare: {said}", err
    assert sorted(p.name for p in folder.iterdir()) == ["slow.data", "slow.onnx"]
    time.sleep(1)  # the fork server removes its own socket as it exits, after the parent
    left = [p.name for p in scratch.iterdir() if p.name.startswith(("pymp-", "ortops-"))]
    shutil.rmtree(scratch)
    assert left == []


def test_a_reader_that_goes_away_leaves_the_reports_written(tmp_path):
    """`ortops compare ... | head -1`: rich ended the process at the broken pipe, exit 1, before the
    reports were written."""
    path = models.tie_chain(tmp_path / "m.onnx")
    process = subprocess.Popen([sys.executable, "-m", "ortops.cli", "compare", path, "--dim", "n=4", "--runtimes",
                                "onnxruntime", "reference", "--out", str(tmp_path / "r")],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    process.stdout.readline()
    process.stdout.close()
    process.wait(timeout=120)
    assert process.returncode == 0, process.stderr.read()
    assert json.loads((tmp_path / "r" / "compare.json").read_text())["summary"]["exit_status"] == 0


def test_an_ascii_stdout_takes_non_ascii_names(tmp_path):
    """PYTHONIOENCODING=ascii: a model named 'nöne.onnx' ended in UnicodeEncodeError, exit 1."""
    done = subprocess.run([sys.executable, "-m", "ortops.cli", "compare", str(tmp_path / "nöne.onnx")],
                          capture_output=True, text=True, timeout=120, check=False,
                          env={**os.environ, "PYTHONIOENCODING": "ascii", "LC_ALL": "C"})
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "no such file" in done.stdout + done.stderr
