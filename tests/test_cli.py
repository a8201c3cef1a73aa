"""The ``ortops`` command line: exit statuses, option checks, install hints printed as written."""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys

import onnx
import onnx.parser
import pytest

from ortops import cli
from ortops import real_model
from ortops.conformance import openvino_oracle, runner


def _conformance(*args: str) -> int:
    return cli.main(["conformance", "--no-progress", *args])


def _no_run(*args, **kwargs):
    raise AssertionError("no case may run when the options are wrong")


def test_out_that_is_a_file_is_refused_before_any_case_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner, "judge_case", _no_run)
    existing = tmp_path / "report.txt"
    existing.write_text("keep me")
    assert _conformance("--out", str(existing)) == cli.EXIT_USAGE == 2
    out = capsys.readouterr().out
    assert str(existing) in out.replace("\n", "") and "existing file" in out
    assert existing.read_text() == "keep me"


def test_repeated_ops_and_sources_run_each_case_once(tmp_path):
    once, twice = tmp_path / "once", tmp_path / "twice"
    assert _conformance("--ops", "TopK", "--sources", "seed-example", "--out", str(once)) == 0
    assert _conformance("--ops", "TopK", "TopK", "--sources", "seed-example", "seed-example",
                        "--oracle", "onnxruntime", "--oracle", "onnxruntime", "--out", str(twice)) == 0
    names = [json.loads((d / "report.json").read_text())["summary"]["total"] for d in (once, twice)]
    assert names[0] == names[1] > 0


def test_a_run_that_judges_nothing_fails_and_says_why(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(real_model, "available", lambda: False)
    assert _conformance("--sources", "real-model", "--out", str(tmp_path / "r")) == cli.EXIT_USAGE
    out = capsys.readouterr().out
    assert "0 cases" in out and "pip install 'ortops[ocr]'" in out  # the extra's name survives rich markup
    assert not (tmp_path / "r" / "report.json").exists()


def test_min_cases(tmp_path, capsys):
    assert _conformance("--ops", "TopK", "--sources", "seed-example", "--min-cases", "10000",
                        "--out", str(tmp_path / "r")) == cli.EXIT_USAGE
    out = capsys.readouterr().out.replace("\n", "")
    assert "fewer than the 10000 required" in out and "no suite has cases" not in out, out
    assert _conformance("--ops", "TopK", "--sources", "seed-example", "--min-cases", "1",
                        "--out", str(tmp_path / "r")) == cli.EXIT_OK
    assert _conformance("--min-cases", "0", "--out", str(tmp_path / "r")) == cli.EXIT_USAGE


def test_missing_openvino_is_a_usage_error_with_the_extra_named(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(openvino_oracle, "available", lambda: False)
    monkeypatch.setattr(runner, "judge_case", _no_run)
    assert _conformance("--oracle", "openvino", "--out", str(tmp_path / "r")) == cli.EXIT_USAGE
    assert "pip install 'ortops[openvino]'" in capsys.readouterr().out


def test_bad_option_exits_2():
    with pytest.raises(SystemExit) as exc:
        cli.main(["conformance", "--ops", "NoSuchOp"])
    assert exc.value.code == 2


def test_version_names_ortops_and_the_runtimes():
    done = subprocess.run([sys.executable, "-m", "ortops.cli", "--version"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    from importlib import metadata

    assert done.stdout.startswith(f"ortops {metadata.version('ortops')} (")
    for name in cli.RUNTIME_PACKAGES:
        assert name in done.stdout


def test_piped_output_is_not_cut(tmp_path):
    done = subprocess.run([sys.executable, "-m", "ortops.cli", "conformance", "--ops", "ScatterElementsUpdate",
                           "--sources", "seed-example", "--no-progress", "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "ScatterElementsUpdate" in done.stdout and "…" not in done.stdout
    assert f"Report: {tmp_path / 'r' / 'report.md'}" in done.stdout


@pytest.mark.parametrize("option", ["--out", "--save-cases"])
def test_an_output_folder_under_a_file_is_refused_before_any_case_runs(tmp_path, capsys, monkeypatch, option):
    monkeypatch.setattr(runner, "judge_case", _no_run)
    (tmp_path / "a_file").write_text("keep me")
    target = tmp_path / "a_file" / "reports"
    args = [option, str(target)] + (["--out", str(tmp_path / "ok")] if option != "--out" else [])
    assert _conformance(*args) == cli.EXIT_USAGE
    out = capsys.readouterr().out.replace("\n", "")
    assert f"{option} {target} cannot be written: {tmp_path / 'a_file'} is a file, not a directory" in out


def test_from_a_folder_that_does_not_exist_is_refused(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(runner, "judge_case", _no_run)
    missing = tmp_path / "no-such-dir"
    assert _conformance("--from", str(missing), "--case", "x", "--out", str(tmp_path / "r")) == cli.EXIT_USAGE
    assert f"--from {missing} does not exist" in capsys.readouterr().out.replace("\n", "")


def test_compare_out_under_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "a_file").write_text("")
    status = cli.main(["compare", str(tmp_path / "m.onnx"), "--out", str(tmp_path / "a_file" / "r"), "--no-progress"])
    assert status == cli.EXIT_USAGE
    assert "--out" in capsys.readouterr().out and not (tmp_path / "a_file").is_dir()


def test_an_out_folder_where_nothing_can_be_written_is_refused_before_any_case_runs(capsys, monkeypatch):
    """Writing is tried, not read off permission bits (which pass for root, and on a read-only
    file system): /proc takes no new file."""
    if not pathlib.Path("/proc/self").is_dir():
        pytest.skip("no /proc on this system")
    monkeypatch.setattr(runner, "judge_case", _no_run)
    assert _conformance("--out", "/proc/ortops-report") == cli.EXIT_USAGE
    assert "--out /proc/ortops-report cannot be written: writing in /proc fails" in capsys.readouterr().out


@pytest.mark.parametrize("command", ["conformance", "compare"])
def test_a_report_name_taken_by_a_folder_is_one_line_and_exit_2(tmp_path, capsys, command):
    """The folder is checked before the run; a report file's name held by a folder is found
    when it is written, and said in one line."""
    out = tmp_path / "out"
    if command == "conformance":
        (out / "report.json").mkdir(parents=True)
        status = _conformance("--out", str(out), "--ops", "TopK", "--sources", "seed-example")
    else:
        (out / "compare.json").mkdir(parents=True)
        model = tmp_path / "relu.onnx"
        onnx.save(onnx.parser.parse_model("""<ir_version: 8, opset_import: ["" : 13]>
                  g (float[2] x) => (float[2] y) { y = Relu(x) }"""), model)
        status = cli.main(["compare", str(model), "--out", str(out), "--runtimes", "onnxruntime", "--no-progress"])
    printed = capsys.readouterr().out.replace("\n", "")
    assert status == cli.EXIT_USAGE and "the report cannot be written: [Errno 21] Is a directory" in printed


@pytest.mark.parametrize("damage", ["json", "npz"])
def test_a_damaged_saved_case_is_one_line_and_exit_2(tmp_path, capsys, damage):
    saved = tmp_path / "saved"
    assert _conformance("--out", str(tmp_path / "r"), "--ops", "TopK", "--sources", "seed-example",
                        "--save-cases", str(saved)) == cli.EXIT_OK
    meta = next(saved.glob("*.json"))
    name = meta.stem
    target = meta if damage == "json" else saved / json.loads(meta.read_text())["files"]["inputs"]
    target.write_text("{ not what was saved")
    capsys.readouterr()
    assert _conformance("--case", name, "--from", str(saved)) == cli.EXIT_USAGE
    assert f"the saved case {name!r} in {saved} cannot be read" in capsys.readouterr().out.replace("\n", "")


def test_conformance_with_stdout_closed_writes_its_report(tmp_path):
    """`ortops conformance >&-`: sys.stdout is None, and the run ended in AttributeError (isatty)."""
    done = subprocess.run([sys.executable, "-m", "ortops.cli", "conformance", "--ops", "ArgMax", "--sources",
                           "seed-example", "--out", str(tmp_path / "r")], stdout=None, stderr=subprocess.PIPE,
                          text=True, timeout=120, check=False, preexec_fn=lambda: __import__("os").close(1))
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "r" / "report.json").read_text())["summary"]["unexplained"] == 0
