"""The conformance report of one small real run (TopK's seed, ONNX and generated cases), read
through report.md, report.json and report.html: unique and stable case names, bfloat16 labels, a
concrete difference for every non-agree case, a self-contained HTML page, saved cases that rerun
to the same verdict, and plain piped output. What the report counts and quotes is checked against
hand-written expectations in test_report_fixed.py, on cases whose checks are written by hand.
OpenVINO's verdicts on every case of every op are the slow test's in test_openvino_oracle.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import defaultdict
from html.parser import HTMLParser

import pytest

from ortops import cli
from ortops.conformance import collect_cases

ARGS = ["conformance", "--ops", "TopK", "--sources", "seed-example", "onnx-backend-test", "generated", "--no-progress"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The run, as a user pipes it: a child process, stdout not a terminal, 40 columns."""
    out, cases = tmp_path_factory.mktemp("report"), tmp_path_factory.mktemp("cases")
    args = ARGS + ["--out", str(out), "--save-cases", str(cases)]
    done = subprocess.run([sys.executable, "-m", "ortops.cli", *args], capture_output=True, text=True, timeout=600,
                          check=False, env={**os.environ, "COLUMNS": "40"})
    assert done.returncode == 0, done.stderr
    return {"dir": out, "cases": cases, "md": (out / "report.md").read_text(), "stdout": done.stdout,
            "json": json.loads((out / "report.json").read_text()), "html": (out / "report.html").read_text()}


def _section(md: str, title: str) -> str:
    return md.split(f"\n## {title}\n", 1)[1].split("\n## ", 1)[0]


def _table(text: str) -> list[dict[str, str]]:
    """The first Markdown table in ``text`` as dicts (``\\|`` unescaped, ``<br>`` as newlines)."""
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    split = lambda ln: [c.strip().replace("\\|", "|").replace("<br>", "\n")  # noqa: E731
                        for c in re.split(r"(?<!\\)\|", ln.strip())[1:-1]]
    header = split(lines[0])
    return [dict(zip(header, split(ln))) for ln in lines[2:]]


def test_case_names_are_unique_and_stable():
    first, _ = collect_cases(["TopK", "ScatterElementsUpdate", "ArgMax"], ["seed-example", "generated"])
    again, _ = collect_cases(["TopK", "ScatterElementsUpdate", "ArgMax"], ["seed-example", "generated"])
    names = [c.name for c in first]
    assert len(names) == len(set(names))
    assert names == [c.name for c in again]


def test_real_model_case_names_do_not_come_from_the_rendered_text():
    pytest.importorskip("rapidocr_onnxruntime", reason="the ocr extra is not installed")
    cases, _ = collect_cases(None, ["real-model"])
    names = [c.name for c in cases]
    assert len(names) == len(set(names)) > 0
    for case in cases:
        slug = re.sub(r"[^a-z0-9]+", "_", case.details["rendered"].lower()).strip("_")
        assert re.match(r"ocr_line\d+_", case.name) and slug not in case.name, case.name
        assert "scatterelementsupdate" not in case.name


def test_bfloat16_cases_are_labelled_bfloat16(run):
    bf16 = [c for c in run["json"]["cases"] if c["details"].get("dtype") == "bfloat16"]
    assert bf16 and all(c["dtype"] == "bfloat16" for c in bf16)
    rows = _table(_section(run["md"], "Cases that do not agree"))
    labelled = {r["case"].strip("`"): r["dtype"] for r in rows}
    for case in bf16:
        if case["status"] != "agree":
            assert labelled[case["name"]] == "bfloat16"
    assert all(f"<td>{c['dtype']}</td>" in run["html"] for c in bf16)
    assert "float32" not in {labelled.get(c["name"], "bfloat16") for c in bf16}


def test_every_non_agree_case_has_its_concrete_difference(run):
    data = run["json"]
    rows = _table(_section(run["md"], "Cases that do not agree"))
    listed = defaultdict(list)
    for row in rows:
        listed[row["case"].strip("`")].append(row)
    non_agree = [c for c in data["cases"] if c["status"] != "agree"]
    assert non_agree
    assert set(listed) == {c["name"] for c in non_agree}  # only the non-agree cases, each of them
    for case in non_agree:
        checks = [k for k in case["checks"] if k["status"] != "agree"]
        assert checks
        for k in checks:
            d = k["difference"]
            assert d and d["left"] and d["right"] and d["left_value"] and d["right_value"], (case["name"], k)
            if d["output"] and d["first_index"] is not None:
                assert d["mismatches"] >= 1 and d["left_at"] != d["right_at"]
        for row in listed[case["name"]]:
            assert row["first side returned"] and row["second side returned"] and row["input"]
            if sum(1 for _ in re.finditer(",", row["input"])) < 10 and "=" in row["input"]:
                assert "[" in row["input"]  # small inputs are shown inline
    # the structured difference is data, the same in report.md
    positioned = [k["difference"] for c in non_agree for k in c["checks"]
                  if k["difference"] and k["difference"]["first_index"] is not None]
    for some in positioned[:5]:
        assert f"{some['left']} {some['left_at']} vs {some['right']} {some['right_at']}" in run["md"]


class _Page(HTMLParser):
    def __init__(self):
        super().__init__()
        self.external, self.tables, self.status_cells, self.inputs = [], {}, 0, 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("script", "img", "iframe") and attrs.get("src") or tag == "link":
            self.external.append((tag, attrs))
        if tag == "a" and "://" in (attrs.get("href") or ""):
            self.external.append((tag, attrs))
        if tag == "table":
            self.tables[attrs.get("id")] = attrs.get("class", "")
        if tag == "td" and attrs.get("data-status"):
            self.status_cells += 1
        if tag in ("input", "select"):
            self.inputs += 1


def test_html_is_self_contained_with_the_same_content_and_interactive_tables(run):
    page, md = run["html"], run["md"]
    parser = _Page()
    parser.feed(page)
    assert parser.external == [] and "http://" not in page and "https://" not in page
    assert "grid" in parser.tables["matrix"]
    assert "interactive" in parser.tables["non-agree"] and "interactive" in parser.tables["all-cases"]
    assert parser.status_cells > 0 and parser.inputs >= 2
    for case in run["json"]["cases"]:
        assert case["name"] in page
    for heading in re.findall(r"^## (.+)$", md, re.M):
        assert heading in page
    total = run["json"]["summary"]
    assert f"<strong>{total['agree']} agree</strong>" in page


def test_saved_cases_rerun_to_the_same_verdict(run, capsys):
    data = run["json"]
    picks = [next(c for c in data["cases"] if c["status"] == s) for s in ("agree", "skipped", "explained")
             if any(c["status"] == s for c in data["cases"])]
    picks.append(next(c for c in data["cases"] if c["dtype"] == "bfloat16"))
    for case in picks:
        saved = json.loads((run["cases"] / f"{case['name']}.json").read_text())
        assert saved["status"] == case["status"] and saved["dtype"] == case["dtype"]
        for suffix in (".onnx", ".inputs.npz", ".expected.npz"):
            assert (run["cases"] / f"{case['name']}{suffix}").is_file()
        capsys.readouterr()
        assert cli.main(["conformance", "--case", case["name"], "--from", str(run["cases"])]) == 0
        out = capsys.readouterr().out
        assert f"saved verdict {case['status']}; rerun verdict {case['status']}; same" in out
        assert f"case {case['name']}" in out and "checks" in out


def test_a_changed_verdict_is_reported(run, capsys, tmp_path):
    case = next(c for c in run["json"]["cases"] if c["status"] == "agree")
    for suffix in (".onnx", ".inputs.npz", ".expected.npz"):
        (tmp_path / f"{case['name']}{suffix}").write_bytes((run["cases"] / f"{case['name']}{suffix}").read_bytes())
    saved = json.loads((run["cases"] / f"{case['name']}.json").read_text())
    (tmp_path / f"{case['name']}.json").write_text(json.dumps(dict(saved, status="explained")))
    assert cli.main(["conformance", "--case", case["name"], "--from", str(tmp_path)]) == cli.EXIT_UNEXPLAINED
    assert "CHANGED" in capsys.readouterr().out


def test_case_by_name_prints_everything_and_an_unknown_name_exits_2(capsys):
    assert cli.main(["conformance", "--case", "gen_bfloat16_max_value", "--ops", "TopK", "--sources",
                     "generated"]) == 0
    out = capsys.readouterr().out
    assert "dtype: bfloat16" in out and "onnxruntime TopK-24" in out and "verdict skipped" in out
    assert cli.main(["conformance", "--case", "gen_bfloat16_max_valu", "--ops", "TopK", "--sources",
                     "generated"]) == cli.EXIT_USAGE
    assert "gen_bfloat16_max_value" in capsys.readouterr().out  # the close names


def test_piped_output_is_whole_plain_and_greppable(run):
    lines, s = run["stdout"].splitlines(), run["json"]["summary"]
    assert (f"conformance total={s['total']} agree={s['agree']} explained={s['explained']} skipped={s['skipped']} "
            f"unexplained={s['unexplained']}") in lines
    assert any(ln.startswith('conformance pair="ortops vs ORT built-ins" cases=') for ln in lines)
    longest = max((k["reason"] for c in run["json"]["cases"] for k in c["checks"] if k["status"] == "skipped"),
                  key=len)
    assert any(longest in ln for ln in lines)  # a long reason stays on one line, whole
    assert "…" not in run["stdout"] and "\x1b[" not in run["stdout"] and "┃" not in run["stdout"]
