"""What ``ortops bench`` times for TopK: its cases, inputs and implementations."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...timed_cases import Case, Target, dims

__all__ = ["BUILT_IN", "SCALING", "PREFILTERED", "REFERENCE_LIMITS", "TINY", "name", "elements", "inputs", "cases", "call",
           "ortops_model", "ortops_feed",
           "scaling_params", "memory_params"]

#: What the ``built-in`` row runs (a plain onnxruntime session). ortops' sort=none is the value
#: order, so its anchor is sorted=1 too; the row ``built-in sorted=0`` beside it times ORT's
#: cheaper unsorted TopK, whose order differs.
BUILT_IN = "TopK-11, largest=1, sorted=1 (also for sort=none; sorted=0 in its own row)"
#: The scaling series.
SCALING = "TopK [N/1000, 1000] axis=1 k=50 sort=value vs TopK-11"
#: The largest input (elements of ``data``) the NumPy reference runs on, per mode.
REFERENCE_LIMITS = {"full": 2_100_000, "quick": 200_000, "smoke": 10_000}
#: The per-call overhead case.
TINY = dict(shape=(1, 8), axis=1, k=3, sort="value")
_SORTS = ("value", "index", "none")
#: Long slices with a small k, where the lowering's block-maxima prefilter beats ORT's TopK
#: (ortops/ops/prefilter.py): (shape, axis, k), each with the target ≤0.7× the built-in.
PREFILTERED = (((1, 1_000_000), 1, 10), ((1, 1_000_000), 1, 100), ((64, 32000), 1, 5), ((8, 151936), 1, 50))

#: Targets of the standalone lowering (tie-independent: ortops.portable), (shape, axis, k) -> ratio.
STANDALONE_TARGETS = {((64, 32000), 1, 50): 1.5, ((1, 1_000_000), 1, 100): 1.5, ((1, 8), 1, 3): 3.0}


def name(p: dict) -> str:
    return f"{dims(p['shape'])} axis={p['axis']} k={p['k']} sort={p['sort']}"


def elements(p: dict) -> int:
    return int(np.prod(p["shape"]))


def inputs(p: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"data": rng.standard_normal(p["shape"], dtype=np.float32)}


def cases(tiny: bool, have_openvino: bool, reference) -> list:
    """The cases; ``reference(p)`` gives the reference implementation (if it runs) and notes."""
    ov_top_k = ("openvino stable=1", "openvino stable=0") if have_openvino else ()
    shapes = ([((2, 640), 1, 5), ((1, 8), 1, 3)] if tiny else
              [((64, 32000), 1, 50), ((1, 3, 224, 224), 3, 10), ((1, 1_000_000), 1, 100),
               ((1000, 1000), 0, 1000), ((1, 8), 1, 3)])
    shapes += [] if tiny else [s for s in PREFILTERED if s not in shapes]
    big = shapes[0]
    ov_big_id = f"TopK {name(dict(shape=big[0], axis=big[1], k=big[2], sort='value'))}"
    found = []
    for shape, axis, k in shapes:
        for sort in _SORTS:
            p = dict(shape=shape, axis=axis, k=k, sort=sort)
            ov = tuple(i for i in ov_top_k if not (sort == "none" and i.endswith("stable=1")))
            ref, notes = reference(p)
            if sort == "none" and have_openvino:
                notes.append("OpenVINO TopK-11 refuses stable=1 with sort=none")
            unsorted = ("built-in sorted=0",) if sort == "none" else ()
            case = Case("TopK", name(p), p, ("ortops", "built-in", *unsorted, *ov, *ref), notes=notes)
            targets = case.targets.setdefault("ortops", [])
            ratio = 0.7 if (shape, axis, k) in PREFILTERED and sort != "none" else 1.5 if shape == (1, 8) else 1.2
            targets.append(Target(f"≤{ratio}× built-in", (case.id, "built-in"), ratio))
            if (shape, axis, k) in STANDALONE_TARGETS and sort == "value":  # tie-independent, any runtime
                case.targets.setdefault("lowered standalone", []).append(
                    Target(f"≤{STANDALONE_TARGETS[shape, axis, k]}× built-in", (case.id, "built-in"),
                           STANDALONE_TARGETS[shape, axis, k]))
            if (shape, axis, k) == big and have_openvino:
                targets.append(Target("≥10× faster than OpenVINO stable=1 sort=value",
                                      (ov_big_id, "openvino stable=1"), 0.1, speedup=True))
            found.append(case)
    return found


def _openvino_top_k(p: dict, stable: bool):
    import openvino as ov
    from openvino import opset11

    data = opset11.parameter(list(p["shape"]), ov.Type.f32, name="data")
    node = opset11.topk(data, opset11.constant(np.int64(p["k"])), p["axis"], "max", p["sort"], "i32", stable)
    compiled = ov.Core().compile_model(ov.Model([node.output(0), node.output(1)], [data]), "CPU")
    return compiled.create_infer_request()


def call(impl: str, p: dict, feed: dict[str, np.ndarray], sessions) -> Callable[[], Any] | None:
    """A zero-argument function running ``impl`` once (its sessions from ``sessions``); None for an
    unknown implementation."""
    from onnx import TensorProto

    from ... import builder, reference

    x, k = feed["data"], np.array([p["k"]], np.int64)
    rank, axis, sort = len(p["shape"]), p["axis"], p["sort"]
    if impl == "ortops":
        session, inputs = sessions.ortops(ortops_model(p)), ortops_feed(p, feed)
        return lambda: session.run(None, inputs)
    if impl.startswith("built-in"):
        model = builder.onnx_top_k_model(11, TensorProto.FLOAT, rank, axis=axis, largest=1,
                                         sorted=0 if impl.endswith("sorted=0") else 1)
        session, inputs = sessions.plain(model), {"X": x, "K": k}
        return lambda: session.run(None, inputs)
    if impl.startswith("openvino"):
        request = _openvino_top_k(p, stable=impl.endswith("stable=1"))
        return lambda: request.infer([x])
    if impl == "reference":
        return lambda: reference.top_k(x, p["k"], axis=axis, mode="max", sort=sort, stable=1)
    return None


def ortops_model(p: dict):
    """The model of the ``ortops`` rows (and of every execution path): k a constant and the
    shape static, as in an exported model (the prefilter needs both; ``ortops_feed`` feeds the
    data only). The built-in row's TopK-11 takes k as an input: the same kernel either way."""
    from onnx import TensorProto, numpy_helper

    from ...builder.common import set_static_shapes
    from .builder import top_k_model

    model = top_k_model(TensorProto.FLOAT, len(p["shape"]), axis=p["axis"], mode="max", sort=p["sort"],
                        stable=0 if p["sort"] == "none" else 1)
    model.graph.initializer.append(numpy_helper.from_array(np.array([p["k"]], np.int64), "k"))
    del model.graph.input[1]
    return set_static_shapes(model, data=p["shape"])


def ortops_feed(p: dict, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"data": feed["data"]}


def scaling_params(n: int) -> dict:
    return dict(shape=(max(1, round(n / 1000)), 1000), axis=1, k=50, sort="value")


def memory_params(tiny: bool) -> dict:
    return dict(shape=(2, 640) if tiny else (64, 32000), axis=1, k=5 if tiny else 50, sort="value")
