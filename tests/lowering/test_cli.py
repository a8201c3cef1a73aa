"""``ortops lower IN -o OUT [--standalone] [--standard]``."""

from __future__ import annotations

import pytest
import onnx
from onnx import TensorProto

from ortops import builder
from ortops.cli import EXIT_OK, EXIT_UNEXPLAINED, EXIT_USAGE, main
from ortops.ops import DOMAINS


def test_lower_writes_a_standalone_model_and_says_what_it_lowered(tmp_path, capsys):
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value"), src)
    assert main(["lower", str(src), "-o", str(out), "--standalone"]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "lowered (standalone): ortops.openvino::TopK node 'top_k'" in printed and "standalone" in printed
    model = onnx.load(out)
    onnx.checker.check_model(model)
    assert not any(n.domain in DOMAINS for n in model.graph.node)


def test_lower_guarded_by_default(tmp_path, capsys):
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(builder.arg_max_model(2, topk=2), src)
    assert main(["lower", str(src), "-o", str(out)]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "lowered (guarded): ortops.ncnn::ArgMax node 'arg_max'" in printed
    assert printed.splitlines()[-1].endswith("; guarded (ortops needed to run it)")


def test_a_model_without_ortops_nodes_is_said_to_need_no_ortops(tmp_path, capsys):
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(builder.onnx_top_k_model(11, TensorProto.FLOAT, 2), src)
    for standard in ([], ["--standard"]):
        assert main(["lower", str(src), "-o", str(out), *standard]) == EXIT_OK
        printed = capsys.readouterr().out.splitlines()
        assert printed[-1].endswith("; standalone (no ortops node left)"), printed


def test_standalone_refused_lists_the_node_and_writes_nothing(tmp_path, capsys):
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(builder.top_k_model(TensorProto.UINT64, 1, axis=0, mode="max", sort="value"), src)
    assert main(["lower", str(src), "-o", str(out), "--standalone"]) == EXIT_UNEXPLAINED
    assert "top_k" in capsys.readouterr().err and not out.exists()
    assert main(["lower", str(src), "-o", str(out)]) == EXIT_OK
    assert "kept as PyOp: ortops.openvino::TopK node 'top_k': uint64" in capsys.readouterr().out


def test_missing_input_is_a_usage_error(tmp_path, capsys):
    assert main(["lower", str(tmp_path / "nope.onnx"), "-o", str(tmp_path / "o.onnx")]) == EXIT_USAGE
    assert "cannot read" in capsys.readouterr().err


def test_an_empty_file_is_not_a_model(tmp_path, capsys):
    """protobuf reads an empty file as a model with no field: refused, nothing written."""
    (tmp_path / "empty.onnx").write_bytes(b"")
    assert main(["lower", str(tmp_path / "empty.onnx"), "-o", str(tmp_path / "o.onnx")]) == EXIT_USAGE
    assert "not an ONNX model (no graph)" in capsys.readouterr().err and not (tmp_path / "o.onnx").exists()


@pytest.mark.parametrize("where", ["missing/dir/out.onnx", "a_file/out.onnx", "."])
def test_an_output_that_cannot_be_written_is_one_line_and_exit_2(tmp_path, capsys, where):
    src = tmp_path / "in.onnx"
    onnx.save(builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value"), src)
    (tmp_path / "a_file").write_text("not a folder")
    out = tmp_path / where
    assert main(["lower", str(src), "-o", str(out)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"ortops lower: -o {out} ")
    assert not (tmp_path / "missing").exists()


def test_standard_rewrites_standard_nodes_and_says_which(tmp_path, capsys):
    src, out = tmp_path / "in.onnx", tmp_path / "out.onnx"
    onnx.save(builder.onnx_top_k_model(11, TensorProto.FLOAT, 2), src)
    assert main(["lower", str(src), "-o", str(out), "--standalone", "--standard"]) == EXIT_OK
    printed = capsys.readouterr().out
    assert "rewritten (standard): TopK node 'onnx_top_k_11'" in printed and "1 standard rewritten" in printed
    onnx.save(builder.onnx_top_k_model(11, TensorProto.UINT64, 2), src)
    assert main(["lower", str(src), "-o", str(out), "--standard"]) == EXIT_OK
    assert "left as it was: TopK node 'onnx_top_k_11': uint64 data" in capsys.readouterr().out
