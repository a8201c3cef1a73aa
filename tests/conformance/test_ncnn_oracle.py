"""The real ncnn runtime as an oracle (``--oracle ncnn``): every ArgMax case judged in ncnn's own
ArgMax layer, in a child process.

The tests marked ``ncnn`` need the module that ``ortops install-oracle ncnn`` builds (the pip
wheel has no ArgMax layer) and skip cleanly without it; CI builds it and runs them. The facts
asserted about ncnn's answers were measured on the pinned release the build installs
(ncnn 1.0.20261020, ortops.interop.ncnn_build.NCNN_RELEASE).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from ortops import cli, divergences, reference
from ortops.conformance import ncnn_oracle, runner
from ortops.conformance.cases import Case, Check, Result
from ortops.processes import Outcome, call_once
from ortops.conformance.matrix import matrix
from ortops.ops.arg_max import cases as arg_max_suite_cases
from ortops.ops.arg_max import ncnn
from ortops.arrays import order_ranks

needs_ncnn = pytest.mark.skipif(
    ncnn_oracle.unavailable() is not None,
    reason=f"the real ncnn runtime is not usable ({ncnn_oracle.unavailable()}): build it with "
           "'ortops install-oracle ncnn'")

nan, inf = np.nan, np.inf


def _case(name, data, **attrs) -> Case:
    return Case(name, "ArgMax", "generated", {"data": np.asarray(data, np.float32)},
                dict({"out_max_val": 0, "topk": 1}, **attrs))


def _ncnn(data, **attrs) -> np.ndarray:
    """ncnn's own answer, straight from its layer in a child process."""
    outcome = call_once(ncnn.run, np.asarray(data, np.float32), **attrs)
    assert outcome.ok, outcome.describe()
    return outcome.value


# ---------------------------------------------------------------------- without ncnn


def test_ops_ncnn_does_not_have_get_no_ncnn_check():
    case = Case("topk", "TopK", "generated", {"data": np.arange(4, dtype=np.float32), "k": np.array([1])}, {})
    assert ncnn_oracle.judge_ncnn(case) == []


def test_without_ncnn_the_cli_exits_2_naming_the_install_command(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(ncnn_oracle, "unavailable", lambda: "the ncnn module does not import")
    status = cli.main(["conformance", "--oracle", "ncnn", "--ops", "ArgMax", "--no-progress", "--out", str(tmp_path)])
    assert status == 2
    assert "ortops install-oracle ncnn" in capsys.readouterr().out


def test_order_ranks_keeps_ortops_order_without_nan():
    data = np.array([nan, 1, inf, -inf, 2, -0.0, 0.0, 3, nan], np.float32)
    ranked = order_ranks(data)
    assert not np.isnan(ranked).any()
    for topk in range(1, data.size + 1):
        assert np.array_equal(reference.arg_max(ranked, topk=topk), reference.arg_max(data, topk=topk))


def test_the_ncnn_column_shows_observed_verdicts():
    """Real ncnn's checks fill the matrix's ncnn column; a check explained under its own topic
    counts in that topic's row only."""
    nan_case = _case("n", [nan, 1.0])
    tie_case = _case("t", [1.0, 1.0])
    results = [
        Result(nan_case, [Check("reference", "agree"), ncnn_oracle.check("explained", "nan", "r-nan", "d")], 0.0),
        Result(tie_case, [Check("reference", "agree"), ncnn_oracle.check("agree", None),
                          ncnn_oracle.check("explained", "float-index-precision", "r-precision", "d")], 0.0),
    ]
    table = matrix(results)
    assert table["nan"]["ncnn"].text().startswith("1 explained")
    # the tie case's one ncnn verdict is explained, under its own check's topic, not the tie rule's
    tie_cell = table["ncnn-tie-rule"]["ncnn"].text()
    assert tie_cell.startswith("1 explained") and "under float-index-precision" in tie_cell
    assert table["float-index-precision"]["ncnn"].text().startswith("1 explained")
    assert table["k-range"]["ncnn"] == divergences.topic("k-range").ncnn  # no ncnn check: the algorithm


def test_a_difference_nothing_explains_is_unexplained(monkeypatch):
    """The judge can fail: ncnn answering another index on a case without NaN is unexplained."""
    monkeypatch.setattr(ncnn_oracle, "unavailable", lambda: None)
    monkeypatch.setattr(ncnn_oracle, "run_ncnn", lambda case, inputs=None, fresh=False:
                        Outcome(True, np.array([[0.0]], np.float32)))
    (check,) = ncnn_oracle.judge_ncnn(_case("distinct", [1, 3, 2]))
    assert check.status == "unexplained" and check.oracle == "ncnn"


# ---------------------------------------------------------------------- real ncnn


@pytest.mark.ncnn
@needs_ncnn
def test_ncnn_agrees_on_ties_and_signed_zeros():
    data = np.array([[1, 3, 3, -0.0], [0.0, 3, -inf, inf]], np.float32)
    for topk in (1, 3, 8):
        for out_max_val in (0, 1):
            case = _case(f"t{topk}", data, topk=topk, out_max_val=out_max_val)
            (check,) = ncnn_oracle.judge_ncnn(case)
            assert check.status == "agree", check
            assert np.array_equal(_ncnn(data, topk=topk, out_max_val=out_max_val),
                                  reference.arg_max(data, topk=topk, out_max_val=out_max_val))


@pytest.mark.ncnn
@needs_ncnn
@pytest.mark.parametrize("size", [5, 6, 7, 9])
def test_no_padding_reaches_ncnn(size):
    """Sizes that are not a multiple of 4: fed as one (1, 1, N) channel, ncnn ranks exactly the N
    elements (all below zero, so a padding zero would win if it were read)."""
    data = -np.arange(1, size + 1, dtype=np.float32)
    got = _ncnn(data, topk=size, out_max_val=1)
    assert got[1].tolist() == list(range(size)) and got[0].tolist() == data.tolist()


@pytest.mark.ncnn
@needs_ncnn
def test_nan_is_explained_quoting_ncnn():
    data = [nan, 1, inf, -inf, 2, -0.0, 0.0, 3]
    case = _case("nan_first", data, topk=1, out_max_val=1)
    theirs = _ncnn(data, topk=1, out_max_val=1)
    ours = reference.arg_max(np.asarray(data, np.float32), topk=1, out_max_val=1)
    assert int(theirs[1, 0]) != int(ours[1, 0])  # measured on 1.0.20261020: ncnn picks inf at index 2
    (check,) = ncnn_oracle.judge_ncnn(case)
    assert check.status == "explained" and check.topic == "nan"
    assert check.reason == divergences.reason("nan", "ncnn", "ArgMax")
    assert f"ncnn returned indices [{int(theirs[1, 0])}]" in check.detail


@pytest.mark.ncnn
@needs_ncnn
@pytest.mark.parametrize("topk", [7, 16, 10_000])
def test_topk_above_the_size_is_explained_and_never_fatal(topk):
    """ncnn reads past the data: stray values, a heap abort or a segfault (in the child)."""
    case = _case(f"over{topk}", np.arange(6, dtype=np.float32).reshape(2, 3), topk=topk)
    (check,) = ncnn_oracle.judge_ncnn(case)
    assert check.status == "explained" and check.topic == "k-range"
    assert "ortops: ArgMax" in check.detail
    assert "ncnn returned" in check.detail or "ncnn crashed" in check.detail
    after = _case("after", [1, 2, 2])
    assert ncnn_oracle.judge_ncnn(after)[0].status == "agree"  # the oracle goes on


@pytest.mark.ncnn
@needs_ncnn
def test_a_crash_is_quoted():
    """topk=10**8 on 6 elements: ncnn's partial sort runs 800 MB past its 48-byte vector, out of
    the heap, and the child dies (measured: SIGSEGV). With topk=10,000 the 80 KB it overruns could
    stay inside the heap: the child then died at free() (SIGABRT) or, once in CI, returned stray
    values."""
    outcome = call_once(ncnn.run, np.arange(6, dtype=np.float32), topk=10**8)
    assert not outcome.ok and outcome.crash.startswith("killed by SIG")
    (check,) = ncnn_oracle.judge_ncnn(_case("over", np.arange(6), topk=10**8))
    assert check.status == "explained" and "ncnn crashed (killed by SIG" in check.detail


@pytest.mark.ncnn
@needs_ncnn
def test_an_index_above_2_24_is_explained():
    (case,) = [c for c in arg_max_suite_cases.generated_cases() if c.name == "gen_error_index_above_2_24"]
    (check,) = ncnn_oracle.judge_ncnn(case)
    assert check.status == "explained" and check.topic == "float-index-precision"
    assert "ncnn returned [[1.6777216e+07]]" in check.detail


@pytest.mark.ncnn
@pytest.mark.slow  # about 30 s; CI's ncnn step runs it (pytest -m ncnn)
@needs_ncnn
def test_conformance_with_ncnn_judges_every_argmax_case(tmp_path):
    status = cli.main(["conformance", "--oracle", "ncnn", "--ops", "ArgMax", "--no-progress", "--out", str(tmp_path)])
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["summary"]["unexplained"] == 0 and status == 0
    assert report["environment"]["ncnn"] != "not installed"
    judged = [c for c in report["cases"] if any(k["oracle"] == "ncnn" for k in c["checks"])]
    assert len(judged) == len(report["cases"]) == len(runner.collect_cases(["ArgMax"])[0])
    topics = {k.get("topic") for c in report["cases"] for k in c["checks"]
              if k["oracle"] == "ncnn" and k["status"] == "explained"}
    assert {"nan", "k-range"} <= topics
    md = (tmp_path / "report.md").read_text()
    assert "ortops vs real ncnn" in md  # a pair of the summary
    # the matrix's ncnn column holds real ncnn's observed verdicts (not the algorithm's text)
    lines = md.splitlines()
    header = next(line for line in lines if line.startswith("| topic |"))
    column = [c.strip() for c in header.strip("|").split("|")].index("ncnn")
    nan_row = next(line for line in lines if line.startswith("| nan |"))
    assert "explained" in [c.strip() for c in nan_row.strip("|").split("|")][column]


def _native(data, pad, **attrs):
    outcome = call_once(ncnn.run_native, np.asarray(data, np.float32), pad=pad, **attrs)
    assert outcome.ok, outcome.describe()
    return outcome.value


@pytest.mark.ncnn
@needs_ncnn
@pytest.mark.parametrize("shape", [(5,), (2, 3), (2, 1, 3), (2, 1, 1, 3)])
def test_padding_of_a_native_ncnn_layout_is_ranked(shape):
    """Why the oracle feeds one unpadded channel: in a Mat ncnn allocates for the data's shape,
    ArgMax ranks the padding too (here 0.0, above every element)."""
    data = -np.arange(1, int(np.prod(shape)) + 1, dtype=np.float32).reshape(shape)
    (got, cstep) = _native(data, 0.0, topk=1, out_max_val=1)
    assert cstep % 4 == 0  # 16-byte channels
    from ortops.ops.arg_max.ncnn import logical_indices

    assert got[0, 0] == 0.0 and logical_indices(got[1], shape, cstep).tolist() == [-1]  # a padding element
    assert reference.arg_max(data, out_max_val=1)[0, 0] == -1.0


@pytest.mark.ncnn
@needs_ncnn
@pytest.mark.parametrize("shape", [(2, 1, 3), (3, 2, 3), (2, 2, 1, 3)])
def test_the_index_mapping_makes_a_native_layout_agree(shape):
    """With -inf padding and finite data, ncnn's indices (channel * cstep + offset) mapped to
    logical ones equal ortops' whole order."""
    from ortops.ops.arg_max.ncnn import logical_indices

    rng = np.random.default_rng(7)
    data = rng.integers(-2, 3, size=shape).astype(np.float32)  # ties: the higher index first
    size = data.size
    (got, cstep) = _native(data, -inf, topk=size, out_max_val=1)
    assert cstep > int(np.prod(shape[1:]))  # the channels are padded
    want = reference.arg_max(data, topk=size, out_max_val=1)
    assert np.array_equal(logical_indices(got[1], shape, cstep), want[1].astype(np.int64))
    assert np.array_equal(got[0], want[0])
