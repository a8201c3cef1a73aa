"""``ortops.openvino::ScatterElementsUpdate`` (OpenVINO ScatterElementsUpdate-12): its
specification (spec.py) with the layers a session and a runtime run, each imported on first use
(a spec imports nothing heavy). The layers import ``spec`` and the core, never this module, so
nothing here is an import cycle."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from ..spec import Deferred
from .spec import SCATTER_ELEMENTS_UPDATE as _SPEC

__all__ = ["SCATTER_ELEMENTS_UPDATE"]


def _layers() -> SimpleNamespace:
    """The layers a session and a runtime run, imported on the first use of any of them."""
    from . import kernel, lowering, openvino, reference
    return SimpleNamespace(reference=reference.scatter_elements_update, kernel=kernel.scatter_elements_update,
                           openvino=openvino.convert, lowering=lowering)


SCATTER_ELEMENTS_UPDATE = replace(_SPEC, reference=Deferred(lambda: _layers().reference),
                                  kernel=Deferred(lambda: _layers().kernel),
                                  openvino=Deferred(lambda: _layers().openvino), lowering=lambda: _layers().lowering,
                                  session_path=Deferred(lambda: _layers().lowering.session_path))
