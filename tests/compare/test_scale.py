"""``ortops compare`` on a model with 90 TopK nodes: grouped by op, every console line within the
width, every count with its unit; the full lists in compare.json and compare.md."""

from __future__ import annotations

import json

import pytest

from ortops import cli
from ortops.compare.groups import fit, group_nodes, span
from ortops.compare.render import _group_lines
from . import models

NAMES = ["/TopK"] + [f"/TopK_{i}" for i in range(1, 90)]


@pytest.fixture(scope="module")
def ninety(tmp_path_factory):
    pytest.importorskip("openvino")
    folder = tmp_path_factory.mktemp("ninety")
    path = models.many_top_k(folder / "many.onnx", 90)
    return path, folder


@pytest.mark.parametrize("columns", [None, "132", "60"])
def test_ninety_top_k_nodes_read_as_one_group_on_lines_that_fit(ninety, capsys, monkeypatch, columns):
    path, folder = ninety
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)  # off a terminal: 100 columns
    else:
        monkeypatch.setenv("COLUMNS", columns)
    width = int(columns or 100)
    out = folder / f"r{columns}"
    status = cli.main(["compare", path, "--dim", "n=8", "--ties", "--runtimes", "onnxruntime", "openvino",
                       "--out", str(out)])
    printed = capsys.readouterr().out.splitlines()
    report = json.loads((out / "compare.json").read_text())
    assert status == report["summary"]["exit_status"]
    too_long = [line for line in printed if len(line) > min(width, 200) and line != f"  {out}"]
    assert not too_long, too_long
    differing = [n for n in report["nodes"] if n["status"] != "agree"]
    if not differing:
        pytest.skip("this OpenVINO breaks ties as ORT does: nothing differs")
    assert {n["topic"] for n in differing} == {"ties"} and len(differing) == 90
    group = [line for line in printed if line.startswith("openvino vs onnxruntime: ")]
    assert len(group) == 1, printed
    assert any(line.startswith("  Worked example, /TopK: ") for line in printed)
    if width >= 100:
        assert "90 TopK nodes (/TopK ... /TopK_89): 90 ties explained." in group[0]
        assert 'outputs=2 agree=1 explained=1 unexplained=0' in "\n".join(printed)
        assert "  by 90 nodes (/TopK ... /TopK_89): ties; causal check passed" in printed
    row = next(o for o in report["outputs"] if o["output"] == "indices")
    assert row["explanation"].startswith(
        "follows from 90 TopK nodes (/TopK ... /TopK_89): 90 ties; first, /TopK (TopK): ")
    assert row["causal"]["cut"] == NAMES  # the full list, in compare.json
    markdown = (out / "compare.md").read_text()
    assert "- 90 TopK nodes (/TopK ... /TopK_89): 90 ties explained. Worked example, /TopK: " in markdown
    assert all(f"`{name}`" in markdown for name in NAMES)  # the node table names every node


def test_groups_count_their_units_and_abbreviate():
    rows = [{"node": n, "op": "TopK", "status": "explained", "topic": "ties" if i % 3 else "near-ties"}
            for i, n in enumerate(NAMES[:7])]
    rows.append({"node": "am", "op": "ArgMax", "status": "unexplained", "topic": None})
    first, second = group_nodes(rows)
    assert first.text() == "7 TopK nodes (/TopK ... /TopK_6): 3 near-ties, 4 ties"
    assert second.text() == "1 ArgMax node (am): unexplained"
    for row in rows:
        row.update(detail="differs", reason="")
    assert _group_lines(first)[0] == "7 TopK nodes (/TopK ... /TopK_6): 3 near-ties, 4 ties explained."
    assert _group_lines(second) == ("1 ArgMax node (am): unexplained.", "Worked example, am: differs")
    assert span(["a", "b", "c"]) == "a, b, c" and span(list("abcd")) == "a ... d"
    assert fit("  word " * 40, 30) == "  word word word word word ..."
    assert fit("short", 30) == "short"


def test_a_runtime_that_did_not_run_keeps_its_whole_reason(tmp_path):
    """Lines are cut to the width, but a missing runtime's reason ends in the extra to install:
    "pip install 'ortops[openvino]'" was cut off at 100 columns."""
    import io

    from ortops.compare import compare
    from ortops.compare.render import print_summary
    from ortops.reporting import console

    path = models.tie_chain(tmp_path / "m.onnx")
    report = compare(path, inputs={"x": models.tie_heavy((8, 16))}, runtimes=["onnxruntime", "reference"])
    reason = ("openvino is not installed (running ortops models in OpenVINO needs the openvino package: pip install "
              "'ortops[openvino]' (No module named 'openvino'))")
    report["runtimes"].append({**report["runtimes"][1], "name": "openvino", "status": "missing", "version": "",
                               "detail": reason})
    buffer = io.StringIO()
    print_summary(report, console.make_console(buffer, plain=True), width=100)
    lines = buffer.getvalue().splitlines()
    assert f"runtime openvino: missing in {report['runtimes'][1]['seconds']:.1f} s: {reason}" in lines, lines
    assert all(len(line) <= 100 for line in lines if not line.startswith("runtime openvino"))
