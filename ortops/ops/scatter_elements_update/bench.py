"""What ``ortops bench`` times for ScatterElementsUpdate: its cases, inputs and implementations."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...timed_cases import Case, Target, dims

__all__ = ["BUILT_IN", "SCALING", "REFERENCE_LIMITS", "TINY", "name", "elements", "inputs", "cases", "call",
           "ortops_model", "ortops_feed",
           "scaling_params", "memory_params"]

BUILT_IN = ("ScatterElements-18 reduction=add for sum; for mean and use_init_val=0, "
            "the standard-op composition an exporter would emit (scatter_mean_composition)")
SCALING = "ScatterElementsUpdate sum [N/64, 16] <- [N/16, 16] vs ScatterElements-18 add"
#: The largest input (elements of ``updates``) the NumPy reference runs on, per mode.
REFERENCE_LIMITS = {"full": 1_100_000, "quick": 100_000, "smoke": 10_000}
TINY = dict(data_shape=(2, 4), updates_shape=(4, 4), reduction="sum", use_init_val=1)


def name(p: dict) -> str:
    init = "" if p["use_init_val"] else " use_init_val=0"
    return f"{dims(p['data_shape'])} <- {dims(p['updates_shape'])} {p['reduction']}{init}"


def elements(p: dict) -> int:
    return int(np.prod(p["updates_shape"]))


def inputs(p: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    data_shape, updates_shape = p["data_shape"], p["updates_shape"]
    return {
        "data": rng.standard_normal(data_shape, dtype=np.float32),
        "indices": rng.integers(0, data_shape[0], updates_shape, dtype=np.int64),
        "updates": rng.standard_normal(updates_shape, dtype=np.float32),
    }


def cases(tiny: bool, have_openvino: bool, reference) -> list:
    shapes = [((8, 16), (32, 16))] if tiny else [((1000, 256), (4000, 256)), ((100_000, 16), (400_000, 16))]
    found = []
    for data_shape, updates_shape in shapes:
        for reduction, use_init_val in (("sum", 1), ("mean", 1), ("sum", 0)):
            p = dict(data_shape=data_shape, updates_shape=updates_shape, reduction=reduction,
                     use_init_val=use_init_val)
            ref, notes = reference(p)
            ov = ("openvino",) if have_openvino else ()
            case = Case("ScatterElementsUpdate", name(p), p, ("ortops", "built-in", *ov, *ref), notes=notes)
            if (reduction, use_init_val) == ("sum", 1):
                case.targets["ortops"] = [Target("≤1.0× built-in", (case.id, "built-in"), 1.0)]
            found.append(case)
    return found


def _openvino_scatter(p: dict):
    import openvino as ov
    from openvino import opset12

    data = opset12.parameter(list(p["data_shape"]), ov.Type.f32, name="data")
    indices = opset12.parameter(list(p["updates_shape"]), ov.Type.i64, name="indices")
    updates = opset12.parameter(list(p["updates_shape"]), ov.Type.f32, name="updates")
    node = opset12.scatter_elements_update(data, indices, updates, opset12.constant(np.int64(0)),
                                           p["reduction"], bool(p["use_init_val"]))
    compiled = ov.Core().compile_model(ov.Model([node.output(0)], [data, indices, updates]), "CPU")
    return compiled.create_infer_request()


def ortops_model(p: dict):
    """The model of the ``ortops`` rows (and of every execution path): axis 0 as a constant and
    the shapes static, as an exported model holds them (the lowering needs the axis constant;
    ``path="auto"`` lowers small static shapes)."""
    from onnx import TensorProto, numpy_helper

    from ...builder.common import set_static_shapes
    from .builder import scatter_elements_update_model

    model = scatter_elements_update_model(TensorProto.FLOAT, len(p["data_shape"]), reduction=p["reduction"],
                                          use_init_val=p["use_init_val"])
    model.graph.initializer.append(numpy_helper.from_array(np.array([0], np.int64), "axis"))
    del model.graph.input[3]  # axis
    return set_static_shapes(model, data=p["data_shape"], indices=p["updates_shape"], updates=p["updates_shape"])


def ortops_feed(p: dict, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {name: feed[name] for name in ("data", "indices", "updates")}


def call(impl: str, p: dict, feed: dict[str, np.ndarray], sessions) -> Callable[[], Any] | None:
    """A zero-argument function running ``impl`` once (its sessions from ``sessions``); None for an
    unknown implementation."""
    from onnx import TensorProto

    from ... import reference
    from .builder import onnx_scatter_elements_model, scatter_mean_composition

    rank, reduction, use_init_val = len(p["data_shape"]), p["reduction"], p["use_init_val"]
    if impl == "ortops":
        session, inputs = sessions.ortops(ortops_model(p)), ortops_feed(p, feed)
        return lambda: session.run(None, inputs)
    if impl == "built-in":
        if (reduction, use_init_val) == ("sum", 1):
            model = onnx_scatter_elements_model(18, TensorProto.FLOAT, rank, axis=0, reduction="add")
        else:
            model = scatter_mean_composition(TensorProto.FLOAT, rank, axis=0, reduction=reduction,
                                             use_init_val=use_init_val)
        session = sessions.plain(model)
        return lambda: session.run(None, feed)
    if impl == "openvino":
        request = _openvino_scatter(p)
        ordered = [feed["data"], feed["indices"], feed["updates"]]
        return lambda: request.infer(ordered)
    if impl == "reference":
        return lambda: reference.scatter_elements_update(feed["data"], feed["indices"], feed["updates"], 0,
                                                         reduction=reduction, use_init_val=use_init_val)
    return None


def scaling_params(n: int) -> dict:
    rows = max(1, round(n / 16))
    return dict(data_shape=(max(1, rows // 4), 16), updates_shape=(rows, 16), reduction="sum", use_init_val=1)


def memory_params(tiny: bool) -> dict:
    return dict(data_shape=(8, 16) if tiny else (100_000, 16), updates_shape=(32, 16) if tiny else (400_000, 16),
                reduction="sum", use_init_val=1)
