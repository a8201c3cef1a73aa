"""A standalone model (``ortops.lower(model, fallback="none", standard=True)``) fails cleanly on
bad input in ONNX Runtime and in OpenVINO: an error naming the check, no output returned, no
crash (ortops nodes, and standard TopK/ArgMin nodes rewritten by ``standard=True``).

OpenVINO 2026.4 removes the Reshape through which the checks gate the data (checks and all), and
its own ScatterElementsUpdate writes out of bounds for an index below -d (the process then
dies with "double free or corruption"); its TopK on an empty axis returns uninitialised memory.
The cases of one runtime run in turn in one child process (one for the small inputs, one for those
of 2**24 elements and more, which are marked slow), so that a crash is a failed test, not the end
of the run.
"""

from __future__ import annotations

import functools

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import ortops
from ortops import builder

from child_process import Child, run_child

pytest.importorskip("openvino", reason="OpenVINO is the second runtime a standalone model claims to run in")


def _scatter(reduction: str):
    model = builder.scatter_elements_update_model(TensorProto.FLOAT, 1, reduction=reduction)
    model.graph.initializer.append(numpy_helper.from_array(np.array([0], np.int64), "axis"))
    inputs = [i for i in model.graph.input if i.name != "axis"]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    return model


def _top_k(k: int | None = None):
    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=-1, mode="max", sort="value")
    if k is not None:  # a constant k: the composition's checks are on the data's shape alone
        model.graph.initializer.append(numpy_helper.from_array(np.array([k], np.int64), "k"))
        inputs = [i for i in model.graph.input if i.name != "k"]
        del model.graph.input[:]
        model.graph.input.extend(inputs)
    return model


def _onnx_arg_min():
    node = helper.make_node("ArgMin", ["x"], ["y"], axis=1, keepdims=0, name="arg_min")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "d"])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, ["n"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=10)


#: A standard TopK (rewritten by standard=True).
ONNX_TOP_K = builder.onnx_top_k_model(11, TensorProto.FLOAT, 2)
DATA = "np.array([1, 2, 3, 4], np.float32)"
#: (label, model, the inputs as Python source, the words of the check that must fail)
BAD = [
    ("scatter index -5 (below -d)", _scatter("none"), f"[{DATA}, np.array([-5]), np.array([9], np.float32)]",
     "every index must be in [-d, d-1]"),
    ("scatter index -100, reduction sum", _scatter("sum"), f"[{DATA}, np.array([-100]), np.array([9], np.float32)]",
     "every index must be in [-d, d-1]"),
    ("scatter index 4 (d)", _scatter("max"), f"[{DATA}, np.array([4]), np.array([9], np.float32)]",
     "every index must be in [-d, d-1]"),
    ("TopK on an empty axis", _top_k(), "[np.zeros((2, 0), np.float32), np.array([1])]", "k must be a single integer"),
    ("TopK on an empty axis, constant k", _top_k(1), "[np.zeros((2, 0), np.float32)]", "k must be a single integer"),
    ("TopK constant k above the axis", _top_k(3), "[np.zeros((1, 2), np.float32)]", "k must be a single integer"),
    ("TopK k above the axis", _top_k(), "[np.zeros((2, 3), np.float32), np.array([4])]", "k must be a single integer"),
    ("TopK k=0", _top_k(), "[np.zeros((2, 3), np.float32), np.array([0])]", "k must be a single integer"),
    ("TopK k=-1", _top_k(), "[np.zeros((2, 3), np.float32), np.array([-1])]", "k must be a single integer"),
    ("ONNX TopK k above the axis", ONNX_TOP_K, "[np.zeros((2, 3), np.float32), np.array([4])]",
     "k must be a single integer in [0, data.shape[axis]]"),
    ("ONNX TopK k=-1", ONNX_TOP_K, "[np.zeros((2, 3), np.float32), np.array([-1])]",
     "k must be a single integer in [0, data.shape[axis]]"),
    ("ONNX TopK on an empty axis", ONNX_TOP_K, "[np.zeros((2, 0), np.float32), np.array([0])]",
     "axis 1 must not be empty"),
    ("ONNX ArgMin on an empty axis", _onnx_arg_min(), "[np.zeros((2, 0), np.float32)]", "axis 1 must not be empty"),
    ("ArgMax on an empty input", builder.arg_max_model(2, topk=1), "[np.zeros((2, 0), np.float32)]",
     "topk=1 must be at most the number of elements"),
    ("ArgMax topk above the size", builder.arg_max_model(2, topk=7), "[np.zeros((2, 3), np.float32)]",
     "topk=7 must be at most the number of elements"),
]
#: Bad inputs of 2**24 elements and more (most of the module's time): CI's slow step runs them.
BAD_PAST_2_24 = [
    # Flat index 2**24 + 1 does not fit float32 (OpenVINO's TopK reported it as 2**24).
    *((f"ArgMax {label} at flat index 2**24 + 1", builder.arg_max_model(1, topk=1),
       f"[np.concatenate([np.full(1, {first}, np.float32), np.zeros(2**24, np.float32), "
       f"np.full(1, {last}, np.float32)])]", "a selected flat index is above 2**24")
      for label, first, last in (("the maximum", 0, 1), ("a tie for the maximum (ncnn: the higher index)", 1, 1),
                                 ("NaN (above +inf)", "np.inf", "np.nan"))),
    # Past 2**24, where OpenVINO compares integers as float32: k = d + 1 for d = 2**24, and the
    # scatter indices d and -d - 1 for d = 2**24 + 1.
    ("TopK k = 2**24 + 1 above the axis", _top_k(), "[np.zeros((1, 2**24), np.float32), np.array([2**24 + 1])]",
     "k must be a single integer"),
    ("ONNX TopK k = 2**24 + 1 above the axis", ONNX_TOP_K, "[np.zeros((1, 2**24), np.float32), np.array([2**24 + 1])]",
     "k must be a single integer in [0, data.shape[axis]]"),
    *((f"scatter index {index} past 2**24", _scatter("none"),
       f"[np.zeros(2**24 + 1, np.float32), np.array([{index}]), np.array([9], np.float32)]",
       "every index must be in [-d, d-1]") for index in ("2**24 + 1", "-(2**24 + 2)")),
]

RUNTIMES = {
    "onnxruntime": ("import onnxruntime as ort\n"
                    "session = ort.InferenceSession(PATH, providers=['CPUExecutionProvider'])\n"
                    "names = [i.name for i in session.get_inputs()]\n"
                    "run = lambda feeds: session.run(None, dict(zip(names, feeds)))\n"),
    "openvino": ("import openvino as ov\n"
                 "core = ov.Core()\n"
                 "compiled = core.compile_model(core.read_model(PATH), 'CPU')\n"
                 "run = lambda feeds: list(compiled(feeds).values())\n"),
}


def _standalone(tmp_path, model, name: str = "standalone") -> str:
    lowered, report = ortops.lower(model, fallback="none", standard=True)
    assert report.standalone and not report.unchanged
    path = tmp_path / f"{name}.onnx"
    onnx.save(lowered, path)
    return str(path)


def _last_lines(runtime: str, runs: list[tuple[str, str]], show: str = "o") -> tuple[list[str], Child]:
    """The line a child process printed for each (model path, inputs as Python source) of
    ``runs``, run in turn in ``runtime``: ``RETURNED`` and the outputs (each output ``o`` as
    the Python expression ``show``), or ``RAISED`` and the error; and the child. A run after a
    crash has no line."""
    code = ["import numpy as np", "def outcome(PATH, feeds):", *("    " + ln for ln in RUNTIMES[runtime].splitlines()),
            "    try:", "        outputs = run(feeds())",
            f"        return 'RETURNED ' + repr([({show}).tolist() for o in outputs])",
            "    except Exception as exc:", "        return 'RAISED ' + ' '.join(str(exc).split())"]
    code += [f"print(outcome({path!r}, lambda: {feeds}), flush=True)" for path, feeds in runs]
    child = run_child("\n".join(code) + "\n", timeout=120 + 20 * len(runs))
    return child.lines(), child


#: Each group of bad inputs runs in one child process per runtime: the group's inputs, and the
#: marks of its tests.
GROUPS = {"small": (BAD, ()), "past 2**24": (BAD_PAST_2_24, (pytest.mark.slow,))}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    """``outcomes(runtime, group)``: every bad input of the group run in ``runtime``, in
    one child process (a crash fails the tests of that runtime and group, not the run)."""
    folder = tmp_path_factory.mktemp("bad")

    def run(runtime: str, group: str):
        runs = [(_standalone(folder, model, f"{group.split()[0]}{i}"), feeds)
                for i, (_, model, feeds, _) in enumerate(GROUPS[group][0])]
        return _last_lines(runtime, runs)

    return functools.cache(run)


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("group, case", [pytest.param(group, i, id=bad[0], marks=marks)
                                         for group, (cases, marks) in GROUPS.items() for i, bad in enumerate(cases)])
def test_bad_input_fails_cleanly_in_every_runtime(outcomes, runtime, group, case):
    label, _, _, check = GROUPS[group][0][case]
    lines, child = outcomes(runtime, group)
    assert case < len(lines), f"{label} in {runtime}: the child died here or before: {child.describe()}"
    last = lines[case]
    assert last.startswith("RAISED"), f"{label} in {runtime}: {last}"  # no output returned
    assert "rejects its input" in last and check in last, last  # the failing node is named after the check


@pytest.mark.parametrize("runtime", RUNTIMES)
@pytest.mark.parametrize("group", [pytest.param(group, marks=marks) for group, (_, marks) in GROUPS.items()])
def test_no_bad_input_crashes_the_child(outcomes, runtime, group):
    _, child = outcomes(runtime, group)
    assert child.status == 0, child.describe()  # no crash, no abort


#: int64 values past int32's range: (label, model, the inputs as Python source, the reference's
#: answer with the value narrowed to its low 32 bits as int32, the words of the check).
BEYOND_INT32 = [
    ("scatter index 2**32 + 1", _scatter("none"), f"[{DATA}, np.array([2**32 + 1]), np.array([9], np.float32)]",
     lambda: [ortops.reference.scatter_elements_update(np.array([1, 2, 3, 4], np.float32), np.array([1], np.int32),
                                                       np.array([9], np.float32), np.array([0]))],
     "every index must be in [-d, d-1]"),
    ("scatter index -2**63", _scatter("sum"), f"[{DATA}, np.array([-2**63]), np.array([9], np.float32)]",
     lambda: [ortops.reference.scatter_elements_update(np.array([1, 2, 3, 4], np.float32), np.array([0], np.int32),
                                                       np.array([9], np.float32), np.array([0]), reduction="sum")],
     "every index must be in [-d, d-1]"),
    ("TopK k = 2**32 + 2", _top_k(), "[np.arange(15, dtype=np.float32).reshape(3, 5), np.array([2**32 + 2])]",
     lambda: list(ortops.reference.top_k(np.arange(15, dtype=np.float32).reshape(3, 5), np.array([2], np.int32),
                                         axis=-1, mode="max", sort="value")),
     "k must be a single integer"),
]


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_int64_beyond_int32_fails_in_onnxruntime_and_is_narrowed_in_openvino(tmp_path, runtime):
    """ORT sees the whole int64 and the check fails. OpenVINO's CPU plugin narrows int64 inputs
    to int32 as they enter the model (docs/lowering.md), so no check sees the value there: it
    fails, or returns the answer for the narrowed value (observed), and never crashes."""
    runs = [(_standalone(tmp_path, model, f"wide{i}"), feeds) for i, (_, model, feeds, _, _) in enumerate(BEYOND_INT32)]
    lines, child = _last_lines(runtime, runs)
    assert child.status == 0 and len(lines) == len(BEYOND_INT32), child.describe()
    for (label, _, _, narrowed, check), last in zip(BEYOND_INT32, lines):
        if last.startswith("RAISED"):
            assert "rejects its input" in last and check in last, f"{label} in {runtime}: {last}"
            continue
        assert runtime == "openvino", f"{label} in {runtime}: {last}"
        assert last == f"RETURNED {[o.tolist() for o in narrowed()]!r}", f"{label} in {runtime}: {last}"


def _int32_top_k(k: int, sort: str):
    model = builder.top_k_model(TensorProto.INT32, 2, axis=-1, mode="max", sort=sort)
    model.graph.initializer.append(numpy_helper.from_array(np.array([k], np.int64), "k"))
    inputs = [i for i in model.graph.input if i.name != "k"]
    del model.graph.input[:]
    model.graph.input.extend(inputs)
    return model


def _onnx_arg(op: str, elem: int = TensorProto.INT32, **attrs):
    node = helper.make_node(op, ["x"], ["y"], axis=1, keepdims=0, name=op.lower(), **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", elem, ["n", "d"])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, ["n"])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=10)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_valid_inputs_past_2_24_are_exact_in_every_runtime(tmp_path, runtime):
    """The checks reject only what they must, and the answers past 2**24 are exact, in both
    runtimes. OpenVINO 2026.4.1 compares integers as float32 and rounded ``Size - 1`` to
    float32: it returned [0, 2**24 - 1] for the ArgMax below and rejected the scatter index
    2**24 for d = 2**24 + 1.

    * ArgMax topk=2 of [0, 2, 0, ..., 0, -1] (2**24 + 2 elements) selects 1, then of the equal
      zeros the highest index, 2**24 (exact in float32).
    * ScatterElementsUpdate on 2**24 + 1 zeros writes 9 at index d - 1 = 2**24, and at -d.
    * ONNX ArgMax (standard=True) of 2**24 + 3 zeros with a 5 at 2**24 + 1 (not a float32):
      OpenVINO returned 2**24 while the composition took it as the sum of the chosen positions."""
    arg_max = ("[np.concatenate([np.array([0, 2], np.float32), np.zeros(2**24 - 1, np.float32), "
               "np.array([-1], np.float32)])]")
    scatter = "[np.zeros(2**24 + 1, np.float32), np.array([{}]), np.array([9], np.float32)]"
    runs = [(_standalone(tmp_path, builder.arg_max_model(1, topk=2), "arg_max"), arg_max),
            *((_standalone(tmp_path, _scatter("none"), f"scatter{i}"), scatter.format(index))
              for i, index in enumerate(("2**24", "-(2**24 + 1)"))),
            (_standalone(tmp_path, _onnx_arg("ArgMax", TensorProto.FLOAT), "onnx_arg_max"),
             "[np.where(np.arange(2**24 + 3) == 2**24 + 1, 5, 0).astype(np.float32)[None]]")]
    lines, child = _last_lines(runtime, runs, show="o.ravel()[[0, 1, -2, -1]] if o.size > 4 else o")
    assert child.status == 0, child.describe()
    assert lines == [f"RETURNED {[[[1.0, 2.0 ** 24]]]}", f"RETURNED {[[0.0, 0.0, 0.0, 9.0]]}",
                     f"RETURNED {[[9.0, 0.0, 0.0, 0.0]]}", f"RETURNED {[[2**24 + 1]]}"], lines


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_int32_past_2_24_is_exact_in_every_runtime(tmp_path, runtime):
    """int32 values that float32 cannot tell apart are selected and ordered exactly (OpenVINO
    2026.4.1 compares int32 as float32 and reduces it in float32: it returned other elements for
    each of these). The data, 2**31 - 4, 2**31 - 1, 2**31 - 3, 2**31 - 2, 5 and its negation
    minus 1 (-2**31 + 3, -2**31, ...):

    * ortops TopK k=2 by value: 2**31 - 1 at 1, 2**31 - 2 at 3; by index: 1 and 3 in that order;
    * ONNX ArgMax (standard=True): 1; ONNX ArgMin with select_last_index: 1 of the negated row."""
    row = "np.array([[2**31 - 4, 2**31 - 1, 2**31 - 3, 2**31 - 2, 5]], np.int32)"
    runs = [(_standalone(tmp_path, _int32_top_k(2, "value"), "by_value"), f"[{row}]"),
            (_standalone(tmp_path, _int32_top_k(2, "index"), "by_index"), f"[{row}]"),
            (_standalone(tmp_path, _onnx_arg("ArgMax"), "arg_max"), f"[{row}]"),
            (_standalone(tmp_path, _onnx_arg("ArgMin", select_last_index=1), "arg_min"), f"[-{row} - 1]")]
    lines, child = _last_lines(runtime, runs)
    assert child.status == 0, child.describe()
    top, second = 2**31 - 1, 2**31 - 2
    assert lines == [f"RETURNED {[[[top, second]], [[1, 3]]]}", f"RETURNED {[[[top, second]], [[1, 3]]]}",
                     f"RETURNED {[[1]]}", f"RETURNED {[[1]]}"], lines


@pytest.mark.slow  # a sort of 2**24 elements: about 10 s in OpenVINO
@pytest.mark.parametrize("runtime", RUNTIMES)
def test_top_k_past_2_24_is_exact_in_every_runtime(tmp_path, runtime):
    """TopK k = 2**24 + 1 of 2**24 + 3 elements, all 0 but the last (1): the 1, then the zeros
    in index order. OpenVINO 2026.4.1 compared each zero's place among the k with k as float32,
    chose too few and failed in a Reshape."""
    n = 2**24 + 3
    k = n - 2
    feeds = f"[np.concatenate([np.zeros({n - 1}, np.float32), np.ones(1, np.float32)])[None]]"
    runs = [(_standalone(tmp_path, _top_k(k)), feeds)]
    show = "np.array([o.size, o.ravel()[0], o.ravel()[-1], o.ravel()[1:].astype(np.float64).sum()])"
    [last], child = _last_lines(runtime, runs, show=show)
    assert child.status == 0, child.describe()
    indices_after_the_one = sum(range(k - 1))  # 0, 1, ..., k - 2
    want = [[k, 1, 0, 0], [k, n - 1, k - 2, indices_after_the_one]]  # size, first, last, sum of all but the first
    assert last == f"RETURNED {[[float(v) for v in row] for row in want]}", last
