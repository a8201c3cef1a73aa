"""models/ must be exactly what scripts/build_models.py writes today."""

from __future__ import annotations

import pathlib

import onnx

import ortops
from ortops.builder.examples import EXAMPLES, build_all

MODELS = pathlib.Path(__file__).resolve().parent.parent / "models"


def test_models_directory_is_current():
    want = build_all()
    have = {p.name: p.read_bytes() for p in MODELS.iterdir() if p.is_file()}
    stale = sorted(name for name in set(want) | set(have) if want.get(name) != have.get(name))
    assert not stale, f"models/ is out of date for {stale}: run python scripts/build_models.py"


def test_every_example_checks_and_loads_in_ortops():
    for example in EXAMPLES:
        model = onnx.load(MODELS / example.file)
        onnx.checker.check_model(model, full_check=True)
        ortops.InferenceSession(model)
