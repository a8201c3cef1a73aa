"""``ortops.ncnn::ArgMax`` (ncnn's ArgMax layer): its specification (spec.py) with the layers a
session and a runtime run, each imported on first use (a spec imports nothing heavy). The
layers import ``spec`` and the core, never this module, so nothing here is an import cycle."""

from __future__ import annotations

from dataclasses import replace

from ..spec import Deferred
from .spec import ARG_MAX as _SPEC

__all__ = ["ARG_MAX"]


def _reference():
    from .reference import arg_max
    return arg_max


def _kernel():
    from .kernel import arg_max
    return arg_max


def _openvino():
    from .openvino import convert
    return convert


def _lowering():
    from . import lowering
    return lowering


def _session_path(attrs: dict, shapes: list, elem_types: list) -> str:
    return _lowering().session_path(attrs["topk"], shapes[0], elem_types[0])


ARG_MAX = replace(_SPEC, reference=Deferred(_reference), kernel=Deferred(_kernel), openvino=Deferred(_openvino),
                  lowering=_lowering, session_path=_session_path)
