"""Fuzzing every op through ortops.InferenceSession against ortops.reference, in a child process.

Hypothesis draws attribute values (valid and not, present and absent), input dtypes, shapes
(zero-sized ones included) and values (NaN, +-inf, -0.0, subnormals, extreme integers, huge
or negative k, indices out of range). Every outcome must be either

* the reference's answer: exact for TopK and ArgMax (the sign of a zero included), exact for
  ScatterElementsUpdate ``none``/``min``/``max`` and integer reductions, within
  ``helpers.tolerance`` for float32/float64 ``sum``/``prod``/``mean``; or
* an :class:`ortops.OpError` - at session creation exactly when the attributes are invalid
  (``OpDef.parse_attributes`` refuses them), and at run time only when the reference raises
  OpError for the same inputs.

TopK also runs inside ``If`` branches, ``Loop`` and ``Scan`` bodies (nested too) and
model-local functions (:func:`fuzz_control_flow`), with per-iteration k: there a valid k that
changes per iteration of a ``Scan`` or ``Loop`` whose outputs are stacked is ORT's own clean
error, as with ONNX's TopK.

float16 runs natively; bfloat16 is fed as float32 and cast inside the graph. For both, ortops
computes ScatterElementsUpdate in float64 and rounds once, so the expected value is the
float64 reference rounded once to the carried type.

The fuzz loop runs in a child process (this file run as a script, with RuntimeWarnings as
errors) so that an abort cannot take pytest down; the test asserts the child's exit status is 0.
``ORTOPS_FUZZ_SEED`` and ``ORTOPS_FUZZ_EXAMPLES`` (per op) widen the search when run by hand:
``ORTOPS_FUZZ_SEED=7 ORTOPS_FUZZ_EXAMPLES=2000 python tests/session/test_fuzz.py``. The run takes
about 20 s: it is marked slow (CI's own step).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from collections import Counter

import numpy as np
import pytest

from child_process import script_env


@pytest.mark.slow
def test_fuzz_every_op_in_a_child_process():
    env = script_env({"ORTOPS_FUZZ_SEED": os.environ.get("ORTOPS_FUZZ_SEED", "20261121")})
    # Floating-point warnings are errors in the child: a host that runs with -W error must not
    # see a kernel's RuntimeWarning turn a valid call into an OpError.
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", __file__], capture_output=True, text=True,
                          timeout=600, env=env)
    report = done.stdout[-8000:] + "\n" + done.stderr[-8000:]
    assert done.returncode == 0, f"child exit status {done.returncode}\n{report}"
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    # Not vacuous: each op produced plenty of results, run-time errors and load-time errors.
    for op in ("TopK", "ScatterElementsUpdate", "ArgMax"):
        assert summary[f"{op} result"] >= 50, summary
        assert summary[f"{op} run-time OpError"] >= 10, summary
        assert summary[f"{op} load-time OpError"] >= 5, summary
    for container in CONTAINERS:  # TopK inside control flow and functions: answers and errors
        assert summary.get(f"control flow {container} ok", 0) >= 3, summary
        assert summary.get(f"control flow {container} OpError", 0) >= 1, summary
    assert summary.get("control flow scan error", 0) >= 1, summary  # a valid k that changes per iteration
    assert summary.get("control flow scan of scatter ok", 0) >= 20, summary
    assert summary.get("control flow scan of scatter OpError", 0) >= 10, summary


# ---------------------------------------------------------------------------------------------
# The child

OMIT = "<absent>"  # an attribute left off the node


def _strategies():
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
    from onnx import TensorProto

    def biased(valid, invalid, weight=12):
        """Mostly valid values, sometimes invalid ones."""
        return st.sampled_from(list(valid) * weight + list(invalid))

    def floats(dtype):
        width = {np.float16: 16, np.float32: 32, np.float64: 64}[dtype]
        info = np.finfo(dtype)
        special = [0.0, -0.0, 1.0, -1.0, 2.0, np.nan, np.inf, -np.inf, float(info.max), float(-info.max),
                   float(info.smallest_subnormal), float(-info.smallest_subnormal), float(info.tiny)]
        return st.one_of(st.sampled_from(special), st.integers(-3, 3).map(float), st.floats(width=width))

    def integers(dtype):
        info = np.iinfo(dtype)
        special = [int(info.min), int(info.max), 0, 1, int(info.max) - 1] + ([-1] if info.min < 0 else [])
        return st.one_of(st.sampled_from(special), st.integers(max(int(info.min), -3), 3),
                         st.integers(int(info.min), int(info.max)))

    def elements(dtype):
        dtype = np.dtype(dtype)
        if dtype == np.bool_:
            return st.booleans()
        return floats(dtype.type) if dtype.kind == "f" else integers(dtype)

    def array(dtype, shape, bf16=False):
        values = hnp.arrays(np.dtype(dtype), shape, elements=elements(dtype))
        return values.map(lambda a: _round_to_bf16(a)) if bf16 else values

    def shape(min_rank, max_rank, max_dim=5):
        dims = st.one_of(st.integers(1, max_dim), st.integers(0, max_dim))
        return st.integers(min_rank, max_rank).flatmap(lambda r: st.tuples(*[dims] * r))

    def scalar_of(dtype, value_strategy):
        """(array of an integer dtype holding the drawn value, shape () or (1,) - rarely (2,))."""
        info = np.iinfo(dtype)

        def build(drawn):
            value, form = drawn
            value = min(max(value, int(info.min)), int(info.max))
            if form == 0:
                return np.array(value, dtype)
            return np.array([value] * form, dtype)

        return st.tuples(value_strategy, st.sampled_from([0, 1, 1, 1, 2])).map(build)

    return st, TensorProto, biased, array, shape, scalar_of, integers


def _round_to_bf16(a):
    """float32 values rounded to bfloat16's (8 significant bits), beyond its range to +-inf."""
    from helpers import nearest_value

    with np.errstate(over="ignore", invalid="ignore"):
        return nearest_value(a.astype(np.float64), "bfloat16").astype(np.float32)


def _big_values(seed, dtype, shape, bf16=False):
    """A larger array than hypothesis draws quickly: random, tie-heavy or full of specials."""
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    style = seed % 3
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "f":
        if style == 0:
            values = rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4)
        elif style == 1:
            values = rng.integers(-2, 3, shape).astype(np.float64)
        else:
            values = rng.choice(np.array([0.0, -0.0, 1.0, np.nan, np.inf, -np.inf, 2.5]), shape)
        with np.errstate(over="ignore"):
            values = values.astype(dtype)
        return _round_to_bf16(values) if bf16 else values
    info = np.iinfo(dtype)
    if style == 1:
        return rng.integers(0, 3, shape).astype(dtype)
    values = rng.integers(int(info.min), int(info.max), shape, dtype=dtype, endpoint=True)
    if style == 2:
        values.reshape(-1)[:: 7] = info.max
    return values


class Fuzz:
    """Runs cases, caches sessions by model bytes, and records outcomes."""

    def __init__(self):
        import helpers as robustness

        self.robustness = robustness
        self.sessions: dict[bytes, object] = {}
        self.stats: Counter = Counter()

    def session(self, model):
        """(session, None) or (None, OpError) for a model; cached."""
        import onnxruntime as ort

        import ortops

        key = model.SerializeToString()
        if key not in self.sessions:
            options = ort.SessionOptions()
            options.log_severity_level = 3
            try:
                self.sessions[key] = (ortops.InferenceSession(key, options), None)
            except ortops.OpError as exc:
                self.sessions[key] = (None, exc)
        return self.sessions[key]

    def check(self, op, opdef, attrs, model, feeds, reference, compare):
        """Load ``model``; for each feed compare ortops with ``reference(feed)``."""
        import ortops

        try:
            opdef.parse_attributes(attrs, "fuzz")
            attrs_error = None
        except ortops.OpError as exc:
            attrs_error = exc
        session, load_error = self.session(model)
        if attrs_error is not None or load_error is not None:
            assert attrs_error is not None and load_error is not None, (
                f"{op} attributes {attrs}: parse_attributes says {attrs_error!r}, session creation says "
                f"{load_error!r}")
            self.stats[f"{op} load-time OpError"] += 1
            return
        for feed in feeds:
            try:
                want, want_error = reference(feed), None
            except ortops.OpError as exc:
                want, want_error = None, exc
            try:
                got, got_error = session.run(None, feed), None
            except ortops.OpError as exc:
                got, got_error = None, exc
            where = f"{op} attributes {attrs}, feed { {n: _describe(v) for n, v in feed.items()} }"
            if got_error is not None or want_error is not None:
                assert got_error is not None and want_error is not None, (
                    f"{where}: ortops raised {got_error!r}, the reference raised {want_error!r}")
                self.stats[f"{op} run-time OpError"] += 1
                continue
            assert len(got) == len(want), where
            for i, (g, w) in enumerate(zip(got, want)):
                problem = compare(i, g, w)
                assert problem is None, f"{where}: output {i}: {problem}\n got {g!r}\nwant {w!r}"
            self.stats[f"{op} result"] += 1


def _describe(v):
    v = np.asarray(v)
    if v.size <= 64:
        return f"np.array({v.tolist()!r}, np.{v.dtype})"
    return f"{v.dtype}{v.shape}"


def _exact(g, w):
    g, w = np.asarray(g), np.asarray(w)
    if g.dtype != w.dtype or g.shape != w.shape:
        return f"dtype/shape {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
    if not np.array_equal(g, w, equal_nan=g.dtype.kind == "f"):
        return "values differ"
    zeros = (g == 0) & (w == 0) if g.dtype.kind == "f" else None
    if zeros is not None and not np.array_equal(np.signbit(g[zeros]), np.signbit(w[zeros])):
        return "signs of zeros differ"  # (a NaN's sign bit means nothing)
    return None


def _close(dtype):
    from helpers import tolerance

    rtol, atol = tolerance(dtype)

    def compare(i, g, w):
        if g.dtype != w.dtype or g.shape != w.shape:
            return f"dtype/shape {g.dtype}{g.shape} vs {w.dtype}{w.shape}"
        with np.errstate(invalid="ignore", over="ignore"):
            ok = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True) | (g == w)
        return None if ok.all() else f"not within rtol={rtol}, atol={atol}"

    return compare


def fuzz_top_k(fuzz, examples, seed):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as with_seed

    from ortops import reference
    from ortops.ops import TOP_K

    st, TensorProto, biased, array, shape, scalar_of, integers = _strategies()
    rb = fuzz.robustness
    data_types = [np.float32, np.float64, np.float16, "bfloat16", np.int8, np.int16, np.int32, np.int64,
                  np.uint8, np.uint16, np.uint32, np.uint64]
    k_types = [np.int64, np.int32, np.uint64, np.int8]

    @st.composite
    def case(draw):
        dtype = draw(st.sampled_from(data_types))
        bf16 = dtype == "bfloat16"
        np_dtype = np.dtype(np.float32 if bf16 else dtype)
        k_dtype = np.dtype(draw(st.sampled_from(k_types)))
        attrs = {
            "axis": draw(biased(range(-3, 3), [OMIT, 2**40])),
            "mode": draw(biased(["max", "min"], ["largest", "", OMIT])),
            "sort": draw(biased(["value", "index", "none"], ["asc", OMIT])),
            "stable": draw(biased([0, 1], [2, OMIT])),
            "index_element_type": draw(biased(["i32", "i64"], ["i16", OMIT], 4)),
        }
        attrs = {n: v for n, v in attrs.items() if v is not OMIT}
        axis = attrs.get("axis", -1)
        fitting_rank = axis + 1 if 0 <= axis < 4 else min(max(-axis, 1), 4)
        feeds = []
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.integers(0, 9)) == 0:  # a larger tensor, valid k
                rank = max(fitting_rank, 2)
                big_shape = [draw(st.integers(1, 3)) for _ in range(rank)]
                big_shape[axis if 0 <= axis < rank else -1] = draw(st.integers(1000, 5000))
                data = _big_values(draw(st.integers(0, 2**32 - 1)), np_dtype, tuple(big_shape), bf16)
                dim = data.shape[axis if 0 <= axis < rank else -1]
                k = draw(st.integers(1, min(dim, int(np.iinfo(k_dtype).max))))
                feeds.append({"data": data, "k": np.array([k], k_dtype)})
                continue
            hostile = draw(st.integers(0, 3)) == 0  # else a valid k and a rank that fits the axis
            rank = draw(st.integers(1, 4) if hostile else st.integers(fitting_rank, 4))
            data = draw(array(np_dtype, shape(rank, rank), bf16))
            dim = data.shape[axis] if -rank <= axis < rank else 1
            if hostile or dim == 0:
                k_values = st.one_of(st.integers(-1, max(data.shape) + 1), integers(k_dtype))
                k = draw(scalar_of(k_dtype, k_values))
            else:
                k = np.array([draw(st.integers(1, dim))], k_dtype)
            feeds.append({"data": data, "k": k})
        return dtype, k_dtype, attrs, feeds

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @with_seed(seed)
    @given(case())
    def run(drawn):
        dtype, k_dtype, attrs, feeds = drawn
        from ortops import dtypes

        onnx_data = TensorProto.BFLOAT16 if dtype == "bfloat16" else dtypes.from_numpy(dtype).onnx
        index_type = TensorProto.INT64 if attrs.get("index_element_type") == "i64" else TensorProto.INT32
        full = {"axis": OMIT, "mode": OMIT, "sort": OMIT, "stable": OMIT, "index_element_type": OMIT, **attrs}
        model = rb.model("TopK", "ortops.openvino", [("data", onnx_data, None),
                                                      ("k", dtypes.from_numpy(k_dtype).onnx, None)],
                          [("values", onnx_data, None), ("indices", index_type, None)],
                          {n: v for n, v in full.items() if v is not OMIT}, name="top_k")
        if dtype == "bfloat16":
            model = rb.cast_around(model, ["data"], ["values"], TensorProto.BFLOAT16)

        def ref(feed):
            data = feed["data"].astype(np.float32) if feed["data"].dtype == np.float16 else feed["data"]
            result = reference.top_k(data, feed["k"], **_top_k_keywords(attrs))
            return [result.values.astype(feed["data"].dtype), result.indices]

        fuzz.check("TopK", TOP_K, attrs, model, feeds, ref, lambda i, g, w: _exact(g, w))

    run()


def _top_k_keywords(attrs):
    """The reference's keywords; absent required attributes become values it refuses too."""
    keywords = {"axis": attrs.get("axis", ""), "mode": attrs.get("mode", ""), "sort": attrs.get("sort", "")}
    for name in ("stable", "index_element_type"):
        if name in attrs:
            keywords[name] = attrs[name]
    return keywords


def fuzz_scatter(fuzz, examples, seed):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as with_seed

    from ortops import reference
    from ortops.ops import SCATTER_ELEMENTS_UPDATE

    st, TensorProto, biased, array, shape, scalar_of, integers = _strategies()
    rb = fuzz.robustness
    data_types = [np.float32, np.float64, np.float16, "bfloat16", np.bool_, np.int8, np.int16, np.int32, np.int64,
                  np.uint8, np.uint16, np.uint32, np.uint64]
    index_types = [np.int64, np.int32, np.uint64, np.int8, np.uint8]
    axis_types = [np.int64, np.int32, np.uint64, np.int8]

    @st.composite
    def case(draw):
        dtype = draw(st.sampled_from(data_types))
        bf16 = dtype == "bfloat16"
        np_dtype = np.dtype(np.float32 if bf16 else dtype)
        index_dtype = np.dtype(draw(st.sampled_from(index_types)))
        axis_dtype = np.dtype(draw(st.sampled_from(axis_types)))
        attrs = {
            "reduction": draw(biased(["none", "sum", "prod", "min", "max", "mean"], ["avg", OMIT], 3)),
            "use_init_val": draw(biased([0, 1], [2, OMIT], 6)),
        }
        attrs = {n: v for n, v in attrs.items() if v is not OMIT}
        feeds = []
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.integers(0, 9)) == 0:  # larger tensors, many duplicates, valid
                big_seed = draw(st.integers(0, 2**32 - 1))
                rng = np.random.default_rng(big_seed)
                n, width = int(rng.integers(50, 500)), int(rng.integers(1, 4))
                updates_count = int(rng.integers(1, 3000 // width))
                low = -n if index_dtype.kind == "i" else 0
                feeds.append({
                    "data": _big_values(big_seed, np_dtype, (n, width), bf16),
                    "indices": rng.integers(low, n, (updates_count, width)).astype(index_dtype),
                    "updates": _big_values(big_seed + 1, np_dtype, (updates_count, width), bf16),
                    "axis": np.array(0, axis_dtype),
                })
                continue
            hostile = draw(st.integers(0, 3)) == 0  # else a valid axis, valid indices, matching updates
            data = draw(array(np_dtype, shape(1, 3, 4), bf16))
            rank = data.ndim
            if hostile:
                axis_values = st.one_of(st.integers(-rank, rank - 1), st.integers(-rank - 1, rank),
                                        integers(axis_dtype))
                axis = draw(scalar_of(axis_dtype, axis_values))
            else:
                low = -rank if axis_dtype.kind == "i" else 0
                axis = np.array(draw(st.integers(low, rank - 1)), axis_dtype)
            a = int(axis.reshape(-1)[0]) if axis.size else 0
            a = a + rank if -rank <= a < 0 else a
            index_shape = []
            for d, n in enumerate(data.shape):
                if d == a:
                    index_shape.append(draw(st.integers(0, 5)))
                else:
                    index_shape.append(draw(st.sampled_from([n] * 3 + list(range(n + 1)) + [n + 1] * hostile)))
            dim = data.shape[a] if 0 <= a < rank else 3
            low = -dim if index_dtype.kind == "i" else 0
            index_values = st.integers(low, dim - 1) if dim else st.just(0)
            if hostile:
                below = low - 1 if index_dtype.kind == "i" else 0
                index_values = st.one_of(index_values, st.integers(below, dim), integers(index_dtype))
            from hypothesis.extra import numpy as hnp

            indices = draw(hnp.arrays(index_dtype, tuple(index_shape), elements=index_values))
            mismatch = hostile and draw(st.booleans())
            update_shape = tuple(n + mismatch for n in index_shape)
            updates = draw(array(np_dtype, update_shape, bf16))
            feeds.append({"data": data, "indices": indices, "updates": updates, "axis": axis})
        return dtype, index_dtype, axis_dtype, attrs, feeds

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @with_seed(seed)
    @given(case())
    def run(drawn):
        dtype, index_dtype, axis_dtype, attrs, feeds = drawn
        from ortops import dtypes

        onnx_data = TensorProto.BFLOAT16 if dtype == "bfloat16" else dtypes.from_numpy(dtype).onnx
        model = rb.model("ScatterElementsUpdate", "ortops.openvino",
                          [("data", onnx_data, None), ("indices", dtypes.from_numpy(index_dtype).onnx, None),
                           ("updates", onnx_data, None), ("axis", dtypes.from_numpy(axis_dtype).onnx, None)],
                          [("output", onnx_data, None)], attrs, name="scatter")
        if dtype == "bfloat16":
            model = rb.cast_around(model, ["data", "updates"], ["output"], TensorProto.BFLOAT16)
        reduction = attrs.get("reduction", "none")
        carried = dtype in (np.float16, "bfloat16")

        def ref(feed):
            data, updates = feed["data"], feed["updates"]
            if carried:
                data, updates = data.astype(np.float64), updates.astype(np.float64)
            out = reference.scatter_elements_update(data, feed["indices"], updates, feed["axis"], **attrs)
            if dtype == np.float16:
                with np.errstate(over="ignore"):
                    out = out.astype(np.float16)  # NumPy rounds float64 -> float16 once, correctly
            elif dtype == "bfloat16":
                out = _round_to_bf16(out)
            return [out]

        accumulates = np.dtype(np.float32 if carried else dtype).kind == "f" and reduction in ("sum", "prod", "mean")
        compare = _close(dtype) if accumulates and not carried else (lambda i, g, w: _exact(g, w))
        fuzz.check("ScatterElementsUpdate", SCATTER_ELEMENTS_UPDATE, attrs, model, feeds, ref, compare)

    run()


def fuzz_arg_max(fuzz, examples, seed):
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as with_seed

    from ortops import reference
    from ortops.ops import ARG_MAX

    st, TensorProto, biased, array, shape, _, _ = _strategies()
    rb = fuzz.robustness

    @st.composite
    def case(draw):
        attrs = {
            "out_max_val": draw(biased([0, 1], [2, -1, OMIT])),
            "topk": draw(biased([1, 1, 2, 3, 5, 8, 30], [0, -1, 2**40, OMIT])),
        }
        attrs = {n: v for n, v in attrs.items() if v is not OMIT}
        feeds = []
        for _ in range(draw(st.integers(1, 3))):
            if draw(st.integers(0, 9)) == 0:  # past the kernel's block-maxima threshold
                size = 2 * draw(st.integers(1025, 20000))  # even, for the (2, -1) view
                data = _big_values(draw(st.integers(0, 2**32 - 1)), np.float32, (size,))
                feeds.append({"data": data.reshape(draw(st.sampled_from([(-1,), (2, -1), (1, 1, -1)])))})
            else:
                feeds.append({"data": draw(array(np.float32, shape(0, 4)))})
        return attrs, feeds

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @with_seed(seed)
    @given(case())
    def run(drawn):
        attrs, feeds = drawn
        model = rb.model("ArgMax", "ortops.ncnn", [("data", TensorProto.FLOAT, None)],
                          [("output", TensorProto.FLOAT, None)], attrs, name="arg_max")
        fuzz.check("ArgMax", ARG_MAX, attrs, model, feeds, lambda feed: [reference.arg_max(feed["data"], **attrs)],
                   lambda i, g, w: _exact(g, w))

    run()


CONTAINERS = ("if", "function", "function, mode from the caller", "loop", "if in a loop", "scan", "scan, reduced")


def fuzz_control_flow(fuzz, examples, seed):
    """TopK inside control flow and model-local functions (tests/control_flow_models.py), with
    hostile attributes, data and per-iteration k. Expected outcome, from the reference run on
    each branch, iteration or call:

    * an invalid attribute: OpError at session creation;
    * ``If``/function: the reference's answer or its OpError;
    * ``Loop`` (every iteration runs, the outputs are stacked at the end): the first
      iteration's OpError if one raises, else ORT's clean error when the iterations' shapes
      differ, else the stacked answers;
    * ``Scan`` with the TopK outputs as scan outputs (ORT pre-allocates the slot with the first
      iteration's shape): iterations in order, the first OpError, or ORT's clean error at the
      first iteration whose shape differs from the first one's;
    * ``Scan`` whose body sums the TopK outputs: each iteration its own k, the sums exact
      (small integers), or the first OpError.
    """
    from hypothesis import HealthCheck, example, given, settings
    from hypothesis import seed as with_seed

    import control_flow_models as cf
    from ortops import reference
    from ortops.ops import TOP_K

    st, TensorProto, biased, array, shape, scalar_of, integers = _strategies()
    dtypes_onnx = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16, np.int32: TensorProto.INT32,
                   np.float64: TensorProto.DOUBLE}

    @st.composite
    def case(draw):
        container = draw(st.sampled_from(CONTAINERS))
        dtype = np.int32 if container == "scan, reduced" else draw(st.sampled_from(list(dtypes_onnx)))
        attrs = {
            "axis": draw(biased([-1, 1], [0, 2, -3, 2**40])),
            "mode": draw(biased(["max", "min"], ["largest", ""])),
            "sort": draw(biased(["value", "index", "none"], ["asc"])),
            "stable": draw(biased([0, 1], [2])),
            "index_element_type": draw(biased(["i32", "i64"], ["i16"], 4)),
        }
        if container == "if in a loop":
            attrs["mode"] = "max"  # the branches set it: max in even iterations, min in odd ones
        iterations = draw(st.integers(1, 3))
        width = draw(st.integers(1, 5))
        if container == "scan, reduced":
            data = draw(array(np.int32, (iterations, 1, width)).map(lambda a: (a % 100).astype(np.int32)))
        elif container.startswith("scan"):
            data = draw(array(dtype, (iterations, 1, width)))
        else:
            data = draw(array(dtype, (draw(st.integers(1, 3)), width)))
        style = draw(st.sampled_from(["one valid k", "valid ks", "hostile ks"]))
        k_values = st.integers(1, width) if style != "hostile ks" else st.one_of(
            st.integers(1, width), st.integers(-1, width + 2), integers(np.int64))
        ks = [draw(k_values) for _ in range(iterations)]
        if style == "one valid k":
            ks = [ks[0]] * iterations
        cond = draw(st.booleans())
        return container, dtype, attrs, data, ks, cond

    def model_for(container, dtype, attrs):
        onnx_type = dtypes_onnx[dtype]
        flipped = {"max": "min", "min": "max"}.get(attrs["mode"], attrs["mode"])
        if container == "if":
            return cf.if_top_k(data_type=onnx_type, then_attrs=attrs, else_attrs={**attrs, "mode": flipped})
        if container == "function":
            return cf.function_top_k(data_type=onnx_type, **attrs)
        if container == "function, mode from the caller":
            rest = {n: v for n, v in attrs.items() if n != "mode"}
            return cf.function_top_k(data_type=onnx_type, mode_from_caller=attrs["mode"], **rest)
        if container == "loop":
            return cf.loop_top_k(data_type=onnx_type, **attrs)
        if container == "if in a loop":
            return cf.loop_top_k(nested_if=True, data_type=onnx_type, **{n: v for n, v in attrs.items() if n != "mode"})
        return cf.scan_top_k(reduce=container == "scan, reduced", data_type=onnx_type, **attrs)

    def ref(data, k, attrs):
        as_float = data.astype(np.float32) if data.dtype == np.float16 else data
        result = reference.top_k(as_float, np.array([k], np.int64), **attrs)
        return [result.values.astype(data.dtype), result.indices]

    def expected(container, attrs, data, ks, cond):
        """("ok", outputs) | ("OpError", None) | ("error", None)"""
        flipped = {"max": "min", "min": "max"}.get(attrs["mode"], attrs["mode"])
        if container in ("if", "function", "function, mode from the caller"):
            mode = attrs["mode"] if container != "if" or cond else flipped
            try:
                return "ok", ref(data, ks[0], {**attrs, "mode": mode})
            except ortops.OpError:
                return "OpError", None
        results = []
        for t, k in enumerate(ks):
            if container == "if in a loop":
                mode = "max" if t % 2 == 0 else "min"
                step = (data, {**attrs, "mode": mode})
            elif container.startswith("scan"):
                step = (data[t], attrs)
            else:
                step = (data, attrs)
            try:
                results.append(ref(step[0], k, step[1]))
            except ortops.OpError:
                return "OpError", None  # the first failing iteration (a Scan stops at a shape change first)
            if container == "scan" and results[-1][0].shape != results[0][0].shape:
                return "error", None
        if container == "scan, reduced":
            return "ok", [np.array([r[0].astype(np.float32).sum() for r in results], np.float32),
                          np.array([r[1].astype(np.int64).sum() for r in results], np.int64)]
        if any(r[0].shape != results[0][0].shape for r in results):
            return "error", None
        return "ok", [np.stack([r[0] for r in results]), np.stack([r[1] for r in results])]

    import ortops

    valid = {"axis": -1, "mode": "max", "sort": "value", "stable": 1, "index_element_type": "i32"}
    rows = np.array([[[1, 3, 2]], [[6, 5, 4]]], np.float32)

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @with_seed(seed)
    @given(case())
    # Always tried, whatever hypothesis draws: a valid k that changes per iteration, and a bad
    # k in the second iteration, in a Scan and a Loop.
    @example(drawn=("scan", np.float32, valid, rows, [2, 1], True))
    @example(drawn=("scan", np.float32, valid, rows, [2, 9], True))
    @example(drawn=("loop", np.float32, valid, rows[0], [2, 1], True))
    @example(drawn=("scan, reduced", np.int32, valid, rows.astype(np.int32), [2, 1], True))
    # A bad k at run time in every other container (bad axes fail at load where the rank is known).
    @example(drawn=("if", np.float32, valid, rows[0], [9], True))
    @example(drawn=("function", np.float32, valid, rows[0], [9], True))
    @example(drawn=("function, mode from the caller", np.float32, valid, rows[0], [0], True))
    @example(drawn=("if in a loop", np.float32, valid, rows[0], [2, 9], True))
    def run(drawn):
        container, dtype, attrs, data, ks, cond = drawn
        model = model_for(container, dtype, attrs)
        try:
            TOP_K.parse_attributes(attrs, "fuzz")
            bad_attrs = False
        except ortops.OpError:
            bad_attrs = True
        session, load_error = fuzz.session(model)
        label = f"control flow {container}"
        where = f"{container}: attributes {attrs}, data {_describe(data)}, ks {ks}, cond {cond}"
        # The op's data has rank 2 in every container: where the model declares it, an axis
        # outside [-2, 1] is refused at load; where it does not, at run time.
        bad_axis = not -2 <= attrs["axis"] <= 1
        if bad_attrs or load_error is not None:
            assert load_error is not None and (bad_attrs or bad_axis), f"{where}: load error {load_error!r}"
            assert bad_attrs or f"axis={attrs['axis']} is outside [-2, 1] for rank 2" in str(load_error), where
            fuzz.stats[f"{label} load-time OpError"] += 1
            return
        clip = lambda k: int(min(max(k, np.iinfo(np.int64).min), np.iinfo(np.int64).max))  # noqa: E731
        ks = [clip(k) for k in ks]
        if container.startswith("scan"):
            feed = {"data": data, "ks": np.array(ks, np.int64).reshape(-1, 1)}
        elif container.endswith("loop"):
            feed = {"M": np.array(len(ks), np.int64), "data": data, "ks": np.array(ks, np.int64).reshape(-1, 1)}
        else:
            feed = {"data": data, "k": np.array([ks[0]], np.int64)}
            if container == "if":
                feed["cond"] = np.array(cond)
        want_kind, want = expected(container, attrs, data, ks, cond)
        try:
            got, got_kind = session.run(None, feed), "ok"
        except ortops.OpError:
            got, got_kind = None, "OpError"
        except Exception as exc:  # noqa: BLE001 - ORT's own clean error
            got, got_kind = None, "error"
            assert want_kind == "error", f"{where}: ORT raised {type(exc).__name__}: {str(exc)[:300]}"
        assert got_kind == want_kind, f"{where}: got {got_kind}, expected {want_kind}"
        fuzz.stats[f"{label} {got_kind}"] += 1
        if got_kind == "ok":
            for i, (g, w) in enumerate(zip(got, want, strict=True)):
                problem = _exact(g, w)
                assert problem is None, f"{where}: output {i}: {problem}\n got {g!r}\nwant {w!r}"

    run()


def fuzz_scatter_in_scan(fuzz, examples, seed):
    """ScatterElementsUpdate in a ``Scan`` body, one row per iteration, with hostile indices
    (out of range in any row) and updates of a mismatched shape: the stacked rows of the
    reference, or the OpError of the first failing row. Values are small integers held as
    float32, so every reduction is exact."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import seed as with_seed
    from hypothesis.extra import numpy as hnp

    import control_flow_models as cf
    import ortops
    from ortops import reference

    st = _strategies()[0]

    @st.composite
    def case(draw):
        rows, width, count = draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(0, 4))
        reduction = draw(st.sampled_from(["none", "sum", "prod", "min", "max", "mean"]))
        use_init_val = draw(st.sampled_from([0, 1]))
        small = st.integers(-4, 4).map(float)
        data = draw(hnp.arrays(np.float32, (rows, width), elements=small))
        hostile = draw(st.integers(0, 2)) == 0
        index_values = st.integers(-width, width - 1) if not hostile else st.one_of(
            st.integers(-width, width - 1), st.integers(-width - 2, width + 1), st.sampled_from([2**63 - 1, -2**63]))
        indices = draw(hnp.arrays(np.int64, (rows, count), elements=index_values))
        update_count = count + (1 if hostile and draw(st.booleans()) else 0)
        updates = draw(hnp.arrays(np.float32, (rows, update_count), elements=small))
        return reduction, use_init_val, data, indices, updates

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @with_seed(seed)
    @given(case())
    def run(drawn):
        reduction, use_init_val, data, indices, updates = drawn
        session, load_error = fuzz.session(cf.scan_scatter(reduction=reduction, use_init_val=use_init_val))
        assert load_error is None, load_error
        where = (f"Scan of ScatterElementsUpdate reduction={reduction} use_init_val={use_init_val}: "
                 f"data {_describe(data)}, indices {_describe(indices)}, updates {_describe(updates)}")
        want, want_error = [], None
        for t in range(data.shape[0]):
            try:
                want.append(reference.scatter_elements_update(data[t], indices[t], updates[t], np.array(0),
                                                              reduction=reduction, use_init_val=use_init_val))
            except ortops.OpError as exc:
                want_error = exc
                break
        try:
            (got,) = session.run(None, {"data": data, "indices": indices, "updates": updates})
            got_error = None
        except ortops.OpError as exc:
            got_error = exc
        if want_error is not None or got_error is not None:
            assert want_error is not None and got_error is not None, f"{where}: {got_error!r} vs {want_error!r}"
            assert "ScatterElementsUpdate node 'scatter'" in str(got_error), str(got_error)
            fuzz.stats["control flow scan of scatter OpError"] += 1
            return
        problem = _exact(got, np.stack(want).astype(np.float32))
        assert problem is None, f"{where}: {problem}\n got {got!r}\nwant {want!r}"
        fuzz.stats["control flow scan of scatter ok"] += 1

    run()


def main() -> int:
    seed = int(os.environ.get("ORTOPS_FUZZ_SEED", "20261121"))
    examples = int(os.environ.get("ORTOPS_FUZZ_EXAMPLES", "150"))
    fuzz = Fuzz()
    failures = []
    for name, run in (("TopK", fuzz_top_k), ("ScatterElementsUpdate", fuzz_scatter), ("ArgMax", fuzz_arg_max),
                      ("TopK in control flow", fuzz_control_flow),
                      ("ScatterElementsUpdate in a Scan", fuzz_scatter_in_scan)):
        print(f"fuzzing {name}: {examples} examples, seed {seed}", flush=True)
        try:
            run(fuzz, examples * (3 if name == "TopK in control flow" else 1), seed)  # 7 containers
        except Exception as exc:  # noqa: BLE001 - hypothesis re-raises the shrunk failing example
            traceback.print_exc()
            failures.append(f"{name}: {type(exc).__name__}: {exc}")
    for failure in failures:
        print("FAIL", failure[:3000], flush=True)
    fuzz.stats["sessions"] = len(fuzz.sessions)
    fuzz.stats["failures"] = len(failures)
    print(json.dumps(dict(fuzz.stats)), flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
