"""``ortops.openvino::ScatterElementsUpdate`` (OpenVINO ScatterElementsUpdate-12): its
specification (spec.py) with the layers a session and a runtime run, each imported on first use
(a spec imports nothing heavy). The layers import ``spec`` and the core, never this module, so
nothing here is an import cycle."""

from __future__ import annotations

from dataclasses import replace

from ..spec import Deferred
from .spec import SCATTER_ELEMENTS_UPDATE as _SPEC

__all__ = ["SCATTER_ELEMENTS_UPDATE"]


def _reference():
    from .reference import scatter_elements_update
    return scatter_elements_update


def _kernel():
    from .kernel import scatter_elements_update
    return scatter_elements_update


def _openvino():
    from .openvino import convert
    return convert


def _lowering():
    from . import lowering
    return lowering


def _session_path(attrs: dict, shapes: list, elem_types: list) -> str:
    return _lowering().session_path(shapes[0], shapes[2])


SCATTER_ELEMENTS_UPDATE = replace(_SPEC, reference=Deferred(_reference), kernel=Deferred(_kernel),
                                  openvino=Deferred(_openvino), lowering=_lowering, session_path=_session_path)
