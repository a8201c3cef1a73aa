"""What ``ortops bench`` times for ncnn ArgMax: its cases, inputs and implementations."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...timed_cases import Case, Target, dims

__all__ = ["BUILT_IN", "SCALING", "REFERENCE_LIMITS", "TINY", "name", "elements", "inputs", "cases", "call",
           "ortops_model", "ortops_feed",
           "scaling_params", "memory_params"]

BUILT_IN = ("Reshape(-1) + ArgMax(axis=0, keepdims=1, select_last_index=1) for topk=1; "
            "TopK-11 on the flattened tensor for topk>1 (lower index first among ties)")
SCALING = "ArgMax [1, N] topk=1 vs Reshape+ArgMax"
#: The largest input (elements of ``data``) the NumPy reference runs on, per mode.
REFERENCE_LIMITS = {"full": 2_100_000, "quick": 200_000, "smoke": 10_000}
TINY = dict(shape=(1, 8), topk=1)


def name(p: dict) -> str:
    return f"{dims(p['shape'])} topk={p['topk']}"


def elements(p: dict) -> int:
    return int(np.prod(p["shape"]))


def inputs(p: dict, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {"data": rng.standard_normal(p["shape"], dtype=np.float32)}


def cases(tiny: bool, have_openvino: bool, reference) -> list:
    found = []
    for shape in [(1, 1000)] if tiny else [(1, 1_000_000), (64, 32000)]:
        for topk in (1, 3) if tiny else (1, 100):
            p = dict(shape=shape, topk=topk)
            ref, notes = reference(p)
            extra = ("built-in select_last_index=0",) if topk == 1 else ()
            case = Case("ArgMax", name(p), p, ("ortops", "built-in", *extra, *ref), notes=notes)
            if topk == 1:
                case.targets["ortops"] = [Target("≤0.5× built-in", (case.id, "built-in"), 0.5)]
            elif not tiny:  # the block-maxima prefilter, as for TopK
                case.targets["ortops"] = [Target("≤0.7× built-in", (case.id, "built-in"), 0.7)]
            found.append(case)
    return found


def ortops_model(p: dict):
    """The model of the ``ortops`` rows (and of every execution path): the shape static, as in
    an exported model (the prefilter needs it)."""
    from ...builder.common import set_static_shapes
    from .builder import arg_max_model

    return set_static_shapes(arg_max_model(len(p["shape"]), topk=p["topk"]), data=p["shape"])


def ortops_feed(p: dict, feed: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return feed


def call(impl: str, p: dict, feed: dict[str, np.ndarray], sessions) -> Callable[[], Any] | None:
    """A zero-argument function running ``impl`` once (its sessions from ``sessions``); None for an
    unknown implementation."""
    from ... import reference
    from .builder import onnx_arg_max_equivalent_model

    rank, topk = len(p["shape"]), p["topk"]
    if impl == "ortops":
        session = sessions.ortops(ortops_model(p))
        return lambda: session.run(None, feed)
    if impl == "built-in":
        # topk=1: Reshape + ArgMax(select_last_index=1), ncnn's tie rule; topk>1: TopK-11
        # on the flattened tensor (the naive mapping: lower index first among ties).
        session = sessions.plain(onnx_arg_max_equivalent_model(rank, topk=topk, exact_ties=topk == 1))
        return lambda: session.run(None, feed)
    if impl == "built-in select_last_index=0":
        # Not equivalent (ties go to the lower index), shown for ORT's fast ArgMax path.
        model = onnx_arg_max_equivalent_model(rank, topk=1)
        for node in model.graph.node:
            for attr in node.attribute:
                if node.op_type == "ArgMax" and attr.name == "select_last_index":
                    attr.i = 0
        session = sessions.plain(model)
        return lambda: session.run(None, feed)
    if impl == "reference":
        return lambda: reference.arg_max(feed["data"], topk=topk)
    return None


def scaling_params(n: int) -> dict:
    return dict(shape=(1, n), topk=1)


def memory_params(tiny: bool) -> dict:
    return dict(shape=(1, 1000) if tiny else (64, 32000), topk=3 if tiny else 100)
