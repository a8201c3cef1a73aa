"""``ortops.openvino::TopK`` (OpenVINO TopK-11): its specification (spec.py) with the layers a
session and a runtime run, each imported on first use (a spec imports nothing heavy). The
layers import ``spec`` and the core, never this module, so nothing here is an import cycle."""

from __future__ import annotations

from dataclasses import replace

from ..spec import Deferred
from .spec import TOP_K as _SPEC

__all__ = ["TOP_K"]


def _reference():
    from .reference import top_k
    return top_k


def _kernel():
    from .kernel import top_k
    return top_k


def _openvino():
    from .openvino import convert
    return convert


def _lowering():
    from . import lowering
    return lowering


TOP_K = replace(_SPEC, reference=Deferred(_reference), kernel=Deferred(_kernel), openvino=Deferred(_openvino),
                lowering=_lowering)
