"""``ortops.ncnn::ArgMax`` (ncnn's ArgMax layer): its specification (spec.py) with the layers a
session and a runtime run, each imported on first use (a spec imports nothing heavy). The
layers import ``spec`` and the core, never this module, so nothing here is an import cycle."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace

from ..spec import Deferred
from .spec import ARG_MAX as _SPEC

__all__ = ["ARG_MAX"]


def _layers() -> SimpleNamespace:
    """The layers a session and a runtime run, imported on the first use of any of them."""
    from . import kernel, lowering, openvino, reference
    return SimpleNamespace(reference=reference.arg_max, kernel=kernel.arg_max, openvino=openvino.convert,
                           lowering=lowering)


ARG_MAX = replace(_SPEC, reference=Deferred(lambda: _layers().reference),
                  kernel=Deferred(lambda: _layers().kernel), openvino=Deferred(lambda: _layers().openvino),
                  lowering=lambda: _layers().lowering, session_path=Deferred(lambda: _layers().lowering.session_path))
