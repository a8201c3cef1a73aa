"""The conformance report of a small fixed set of judged cases, against hand-written
expectations: what report.json counts per case and per runtime pair, the topics and reasons
it quotes, and how report.md and the console show them."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ortops.conformance.cases import Result
from ortops.conformance.report import write_reports
from ortops.verdicts import Case, Check

TIES = "equal values may come back in another order"
NO_BF16 = "ORT has no bfloat16 TopK"
WRONG = "a wrong value"
STANDALONE = "lowered (standalone) in OpenVINO"


def _case(name, data, source="generated", **details):
    return Case(name, "TopK", source, {"data": np.asarray(data, np.float32), "k": np.array([1])},
                {"axis": 0, "mode": "max", "sort": "value"}, details=details)


def _results():
    """Five cases, their checks written by hand (not judged here: the report is under test)."""
    agree = Check("onnxruntime TopK-11", "agree")
    return [
        Result(_case("seed_plain", [3, 1, 2], source="seed-example"),
               [Check("reference", "agree"), Check("seed example", "agree"), agree], 0.01),
        Result(_case("gen_ties", [2, 2, 1]),
               [Check("reference", "agree"), Check("onnxruntime TopK-11", "explained", TIES, topic="ties"),
                Check("onnxruntime TopK-1", "agree")], 0.01),
        Result(_case("gen_bf16", [1, 3, 2], dtype="bfloat16"),
               [Check("reference", "agree"), Check("onnxruntime TopK-24", "skipped", NO_BF16,
                                                   topic="float16-bfloat16")], 0.01),
        Result(_case("gen_wrong", [5, 4, 6]),
               [Check("reference", "agree"), agree, Check("openvino", "unexplained", WRONG)], 0.01),
        Result(_case("gen_standalone", [2, 2, 9]),
               [Check("reference", "agree"), agree, Check(STANDALONE, "explained", TIES, topic="ties")], 0.01),
    ]


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    out = tmp_path_factory.mktemp("fixed")
    write_reports(_results(), out)
    return json.loads((out / "report.json").read_text()), (out / "report.md").read_text()


def test_case_statuses_and_totals(report):
    data, _ = report
    assert {c["name"]: c["status"] for c in data["cases"]} == {
        "seed_plain": "agree", "gen_ties": "explained", "gen_bf16": "skipped", "gen_wrong": "unexplained",
        "gen_standalone": "explained"}
    assert data["summary"] == {"total": 5, "agree": 1, "explained": 2, "skipped": 1, "unexplained": 1}
    assert next(c for c in data["cases"] if c["name"] == "gen_bf16")["dtype"] == "bfloat16"


def test_pairs_count_cases_with_their_own_checks_only(report):
    data, _ = report
    pairs = {p["pair"]: {k: p[k] for k in ("cases", "agree", "explained", "skipped", "unexplained")}
             for p in data["pairs"]}
    assert pairs["ortops vs the reference"] == {"cases": 5, "agree": 5, "explained": 0, "skipped": 0,
                                                "unexplained": 0}
    # gen_ties: one TopK version explained, one agrees: the worst verdict of the pair
    assert pairs["ortops vs ORT built-ins"] == {"cases": 5, "agree": 3, "explained": 1, "skipped": 1,
                                                "unexplained": 0}
    assert pairs["ortops vs OpenVINO"] == {"cases": 1, "agree": 0, "explained": 0, "skipped": 0,
                                           "unexplained": 1}
    assert pairs["ortops vs the seeds"] == {"cases": 1, "agree": 1, "explained": 0, "skipped": 0,
                                            "unexplained": 0}
    assert pairs["standalone lowering in OpenVINO vs the reference"]["explained"] == 1
    assert "ortops vs other expected outputs" not in pairs  # no case, no note: left out
    notes = {p["pair"]: p["note"] for p in data["pairs"] if not p["cases"]}
    assert notes["ortops vs ONNX vectors"] == "no case from onnx-backend-test in this run"
    assert "--oracle ncnn" in notes["ortops vs real ncnn"]


def test_pairs_quote_each_topic_with_its_cases_and_reason(report):
    data, _ = report
    topics = {p["pair"]: p["topics"] for p in data["pairs"]}
    assert topics["ortops vs ORT built-ins"] == [
        {"topic": "ties", "ops": ["TopK"], "status": "explained", "cases": 1, "reason": TIES},
        {"topic": "float16-bfloat16", "ops": ["TopK"], "status": "skipped", "cases": 1, "reason": NO_BF16}]
    assert topics["ortops vs OpenVINO"] == [
        {"topic": "no topic", "ops": ["TopK"], "status": "unexplained", "cases": 1, "reason": WRONG}]
    assert topics["ortops vs the reference"] == []


def test_markdown_says_the_same(report):
    _, md = report
    assert "5 cases: **1 agree**, 2 explained, 1 skipped, **1 unexplained**." in md
    assert f"- `ties` (TopK) - 1 explained: {TIES}" in md
    assert f"- `float16-bfloat16` (TopK) - 1 skipped: {NO_BF16}" in md
    non_agree = md.split("\n## Cases that do not agree\n", 1)[1].split("\n## ", 1)[0]
    assert "4 cases, one row per check that does not agree." in non_agree
    assert "`seed_plain`" not in non_agree
    assert all(f"`{name}`" in non_agree for name in ("gen_ties", "gen_bf16", "gen_wrong", "gen_standalone"))


def test_matrix_counts_cases_per_runtime_and_quotes_only_its_own_topic(report):
    _, md = report
    rows = {}
    for line in md.split("\n## Divergence matrix\n", 1)[1].split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if line.startswith("|") and len(cells) > 1:
            rows[cells[0]] = cells
    header = rows["topic"]
    ties = dict(zip(header, rows["ties"]))
    # gen_ties and gen_standalone tie; ORT judged both: one explained under ties, one agrees
    assert ties["ORT built-in"] == f"1 agree, 1 explained<br>explained (1): {TIES}"
    assert ties["ortops"] == "2 agree"
    assert ties["OpenVINO runtime"] == "not run on these 2 cases"
