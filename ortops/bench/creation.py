"""Session creation (:func:`run_creation`) and the in-model case (:func:`run_in_model`): what users
feel beyond one op's call."""

from __future__ import annotations

import statistics
import timeit

import numpy as np

__all__ = ["run_creation", "run_in_model", "CREATION_PATHS", "IN_MODEL_PATHS"]

#: The session kinds :func:`run_creation` measures.
CREATION_PATHS = ("built-in (plain ORT)", "ortops PyOp", "ortops lowered", "lowered standalone (plain ORT)")
#: The rows of :func:`run_in_model`.
IN_MODEL_PATHS = ("built-in", "ortops PyOp", "ortops lowered", "lowered standalone", "ortops (auto)")


def _creation_times(models: dict[str, bytes], rounds: int) -> dict[str, list[float]]:
    """In a fresh child: the seconds of each session creation per kind of ``models``, in ``rounds``
    rounds of one creation of each kind, in alternating order (spinning off, the garbage collector
    on, as a user has it)."""
    from .calls import timed_options

    def maker(kind: str, data: bytes):
        if kind.startswith("ortops"):
            import ortops

            path = "pyop" if kind == "ortops PyOp" else "lowered"
            return lambda: ortops.InferenceSession(data, timed_options(), path=path)
        import onnxruntime as ort

        return lambda: ort.InferenceSession(data, timed_options(), providers=["CPUExecutionProvider"])

    makers = {kind: maker(kind, data) for kind, data in models.items()}
    times: dict[str, list[float]] = {kind: [] for kind in makers}
    for round_ in range(rounds):
        for kind in list(makers)[::1 if round_ % 2 == 0 else -1]:
            times[kind] += timeit.repeat(makers[kind], setup="gc.enable()", number=1, repeat=1)
    return times


def _models() -> dict[str, bytes]:
    from onnx import TensorProto

    from .. import builder
    from ..lowering import lower

    model = builder.top_k_model(TensorProto.FLOAT, 2, axis=1, mode="max", sort="value")
    built_in = builder.onnx_top_k_model(11, TensorProto.FLOAT, 2, axis=1, largest=1, sorted=1)
    return {CREATION_PATHS[0]: built_in.SerializeToString(), CREATION_PATHS[1]: model.SerializeToString(),
            CREATION_PATHS[2]: model.SerializeToString(),
            CREATION_PATHS[3]: lower(model, fallback="none").model.SerializeToString()}


def run_creation(sessions: int = 10) -> list[dict]:
    """Per path: ``first`` (in a fresh child of its own: ortops and the extensions library load
    once per process) and ``later`` (median of ``sessions``, in one child where the paths take
    turns after a round of warm-up) session creation in seconds; ``later_ratio``: the median of
    each round's ratio to a plain ORT session of the built-in TopK. Lowered models are made
    before the children start; the guarded path's figure includes the lowering, as
    ``InferenceSession(path="lowered")`` does it."""
    from ..processes import call_once

    models = _models()
    later = call_once(_creation_times, models, sessions + 1)
    rows = []
    for kind, data in models.items():
        first = call_once(_creation_times, {kind: data}, 1)
        failed = next((o for o in (first, later) if not o.ok), None)
        if failed is not None:
            rows.append({"path": kind, "error": (failed.error or failed.describe())[:200]})
            continue
        times, plain = later.value[kind][1:], later.value[CREATION_PATHS[0]][1:]
        rows.append({"path": kind, "first": first.value[kind][0], "later": statistics.median(times),
                     "later_ratio": statistics.median(t / p for t, p in zip(times, plain))})
    return rows


def _in_model_models():
    """(ortops model, built-in model): the recogniser + TopK k=5 per step + ArgMax over the last step."""
    from onnx import TensorProto, helper

    from .. import builder, ocr

    model = ocr.load_model()
    probs = model.graph.output[0].name
    model.graph.value_info.extend(model.graph.output)  # the recogniser's output type, for the appended nodes
    constants = {"bench_k": np.array([5], np.int64), "bench_last_start": np.array([0, -1, 0], np.int64),
                 "bench_last_end": np.array([1, 2**62, 2**62], np.int64)}
    last = helper.make_node("Slice", [probs, "bench_last_start", "bench_last_end"], ["bench_last"],
                            name="bench_last_step")
    custom = [last, builder.top_k(probs, "bench_k", axis=-1, mode="max", sort="value", index_element_type="i64",
                                  outputs=("top_values", "top_indices"), name="bench_top_k"),
              builder.arg_max("bench_last", topk=1, output="best", name="bench_arg_max")]
    built_in = [last, helper.make_node("TopK", [probs, "bench_k"], ["top_values", "top_indices"], axis=-1,
                                       name="bench_top_k"),
                helper.make_node("Reshape", ["bench_last", "bench_flat"], ["bench_last_flat"]),
                helper.make_node("ArgMax", ["bench_last_flat"], ["best_index"], axis=0, keepdims=1,
                                 select_last_index=1),
                helper.make_node("Cast", ["best_index"], ["best"], to=TensorProto.FLOAT)]
    outputs = ["top_values", "top_indices", "best"]
    return (builder.append_nodes(model, custom, initializers=constants, outputs=outputs, keep_outputs=False,
                                 check=False),
            builder.append_nodes(model, built_in, initializers={**constants, "bench_flat": np.array([-1], np.int64)},
                                 outputs=outputs, keep_outputs=False, check=False))


def run_in_model(config, rounds: int) -> list[dict]:
    """Interleaved timings of the PP-OCRv4 recogniser with the ops appended, on every path, against
    the same model with the built-in TopK-11 and ArgMax; [] without the ``ocr`` extra."""
    from .. import ocr
    from .. import real_model

    if not real_model.available():
        return []
    import ortops

    from .calls import plain_session, timed_options
    from .timing import time_interleaved

    custom, built_in = _in_model_models()
    image = ocr.preprocess(ocr.render_text(ocr.DEFAULT_TEXT))
    feed = {custom.graph.input[0].name: image}
    sessions = {
        "built-in": plain_session(built_in),
        "ortops PyOp": ortops.InferenceSession(custom, timed_options(), path="pyop"),
        "ortops lowered": ortops.InferenceSession(custom, timed_options(), path="lowered"),
        "lowered standalone": plain_session(ortops.lower(custom, fallback="none").model),
        "ortops (auto)": ortops.InferenceSession(custom, timed_options()),
    }
    want = sessions["built-in"].run(None, feed)
    notes = {}
    for name, session in sessions.items():
        got = session.run(None, feed)
        same = all(np.array_equal(np.asarray(g).reshape(-1), np.asarray(w).reshape(-1).astype(np.asarray(g).dtype))
                   for g, w in zip(got[:2], want[:2]))
        notes[name] = "" if same else "top-5 differs from the built-in's"
    calls = {name: (lambda s=s: s.run(None, feed)) for name, s in sessions.items()}
    timings = time_interleaved(calls, config, rounds, adaptive=False, called=True)
    base = timings["built-in"].median
    return [{"path": name, "median": t.median, "spread": t.spread, "ratio": t.median / base, "note": notes[name]}
            for name, t in timings.items()]


def print_extra(creation: list[dict], in_model: list[dict], console) -> None:
    """The two tables."""
    from rich.table import Table

    if creation:
        table = Table(title="Session creation of a one-node TopK model (first: in a fresh process; later: median; "
                            "ratio: later / plain ORT's later)", title_justify="left")
        for name in ("path", "first", "later", "ratio"):
            table.add_column(name, justify="left" if name == "path" else "right")
        for row in creation:
            if "error" in row:
                table.add_row(row["path"], row["error"], "", "")
                continue
            table.add_row(row["path"], f"{row['first'] * 1e3:.2f} ms", f"{row['later'] * 1e3:.2f} ms",
                          f"{row.get('later_ratio', 0):.1f}×")
        console.print(table)
    if in_model:
        table = Table(title="PP-OCRv4 recogniser [1, 3, 48, 320] + TopK k=5 per step + ArgMax over the last step "
                            "(ratio: / the same model with built-in TopK-11 and ArgMax)", title_justify="left")
        for name in ("path", "median", "iqr", "ratio", "note"):
            table.add_column(name, justify="left" if name in ("path", "note") else "right")
        for row in in_model:
            table.add_row(row["path"], f"{row['median'] * 1e3:.2f} ms", f"{row['spread']:.0%}",
                          f"{row['ratio']:.2f}×", row["note"])
        console.print(table)
