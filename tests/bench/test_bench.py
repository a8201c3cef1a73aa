"""Smoke tests of ``ortops bench``: the harness runs end to end on tiny shapes and writes its
outputs. Nothing here asserts a timing (STYLE: timing belongs in benchmarks)."""

from __future__ import annotations

import importlib.util
import json
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from ortops import bench
from ortops.bench import calls


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    status = bench.main(["--smoke", "--out", str(out)])
    return status, out, json.loads((out / "bench.json").read_text())


def test_smoke_run_writes_json_table_and_plot(smoke_run):
    status, out, report = smoke_run
    assert status == 0
    assert "ratio" in (out / "bench.txt").read_text()
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "scaling.png").stat().st_size > 0
    else:
        assert any("matplotlib" in note for note in report["notes"])


def test_json_describes_the_machine_and_the_run(smoke_run):
    _, _, report = smoke_run
    machine = report["machine"]
    assert machine["cpu_count"] >= 1
    assert machine["platform"]
    assert machine["versions"]["onnxruntime"] and machine["versions"]["numpy"]
    assert report["config"]["mode"] == "smoke"
    assert report["config"]["ops"] == list(bench.OPS)


def test_every_row_has_samples_and_a_ratio(smoke_run):
    _, _, report = smoke_run
    rows = report["rows"]
    assert {row["op"] for row in rows} >= set(bench.OPS) | {f"{op} overhead" for op in bench.OPS}
    for row in rows:
        assert row["samples_s"] and all(s > 0 for s in row["samples_s"]), row
        assert row["ratio"] is not None and row["ratio"] > 0, row
        assert not row["output_mismatch"], row


def test_rows_cover_the_implementations(smoke_run):
    _, _, report = smoke_run
    impls = {(row["op"], row["impl"]) for row in report["rows"]}
    for op in bench.OPS:
        assert (op, "ortops") in impls and (op, "built-in") in impls and (op, "reference") in impls
        assert (f"{op} overhead", "identity PyOp") in impls
    if importlib.util.find_spec("openvino") is not None:
        assert ("TopK", "openvino stable=1") in impls and ("TopK", "openvino stable=0") in impls
        assert ("ScatterElementsUpdate", "openvino") in impls


def test_targets_carry_a_verdict(smoke_run):
    _, _, report = smoke_run
    targets = [t for row in report["rows"] for t in row["targets"]]
    assert any(t["text"].startswith("≤1.5× identity PyOp") for t in targets)
    for t in targets:
        assert t["ok"] in (True, False, None)
        assert (t["ok"] is None) == (t["value"] is None)


def test_scaling_and_memory(smoke_run):
    _, _, report = smoke_run
    for op in bench.OPS:
        points = report["scaling"]["series"][op]
        assert len(points) == len(bench.CONFIGS["smoke"].scaling_sizes)
        assert all(p["elements"] > 0 for p in points)
        assert all(p["ortops"]["median_s"] > 0 and p["built-in"]["median_s"] > 0 for p in points)
    assert [m["op"] for m in report["memory"]] == list(bench.OPS)
    for entry in report["memory"]:
        for impl in ("ortops", "built-in"):
            assert entry[impl].get("peak_kib", 0) > 0, entry


def test_plot_is_skipped_without_matplotlib(tmp_path, monkeypatch):
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "matplotlib" else real_find_spec(name, *args))
    note = bench.plot.plot_scaling({"TopK": []}, tmp_path / "scaling.png", "title")
    assert "matplotlib" in note
    assert not (tmp_path / "scaling.png").exists()


def test_identity_pyop_returns_its_input():
    session = calls.identity_session()
    x = np.arange(8, dtype=np.float32).reshape(1, 8)
    (y,) = session.run(None, {"data": x})
    np.testing.assert_array_equal(y, x)


def test_quick_and_smoke_exclude_each_other(capsys):
    with pytest.raises(SystemExit):
        bench.build_parser().parse_args(["--quick", "--smoke"])
    args = bench.build_parser().parse_args(["--quick", "--ops", "TopK", "--repeat", "3"])
    assert args.quick and args.ops == ["TopK"] and args.repeat == 3 and args.out == "bench-out"


@pytest.mark.parametrize("option", ["--repeat", "--out"])
def test_a_bad_repeat_or_out_is_a_usage_error(tmp_path, capsys, option):
    (tmp_path / "a_file").write_text("keep me")
    value = "-1" if option == "--repeat" else str(tmp_path / "a_file")
    with pytest.raises(SystemExit) as exited:
        bench.main(["--smoke", "--ops", "TopK", "--out", str(tmp_path / "out"), option, value])
    assert exited.value.code == 2 and f"{option} " in capsys.readouterr().err
    assert (tmp_path / "a_file").read_text() == "keep me"


@pytest.mark.slow
def test_ctrl_c_while_the_bench_runs_openvino_ends_in_keyboard_interrupt(tmp_path):
    """Ctrl-C once OpenVINO had compiled a model in the bench's process killed it with SIGSEGV
    (exit 139, in 8 of 8 tries): OpenVINO's small alternate signal stack. It ends in one line."""
    pytest.importorskip("openvino")
    code = textwrap.dedent(f"""
        import os, signal, sys, threading, time
        signal.signal(signal.SIGINT, signal.default_int_handler)  # a background job may inherit SIG_IGN

        def interrupt_once_openvino_ran():
            while "openvino" not in sys.modules:
                time.sleep(0.05)
            time.sleep(1.5)
            os.kill(os.getpid(), signal.SIGINT)

        if __name__ == "__main__":
            from ortops.cli import main
            threading.Thread(target=interrupt_once_openvino_ran, daemon=True).start()
            sys.argv[1:] = ["bench", "--smoke", "--ops", "TopK", "--out", {str(tmp_path / "out")!r}]
            sys.exit(main())  # as the ortops command: the process dies of the signal
    """)
    (tmp_path / "run.py").write_text(code)
    done = subprocess.run([sys.executable, str(tmp_path / "run.py")], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == -signal.SIGINT and done.stderr.strip().endswith("ortops bench: interrupted"), (
        done.returncode, done.stderr[-2000:])
