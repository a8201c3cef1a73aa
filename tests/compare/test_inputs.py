"""Inputs of ortops compare: generated from the model's types and shapes, or read and checked."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper

from ortops.compare import inputs
from ortops.compare.inputs import InputError


def _model(*infos):
    graph = helper.make_graph([helper.make_node("Identity", [infos[0].name], ["y"])], "g", list(infos),
                              [helper.make_tensor_value_info("y", infos[0].type.tensor_type.elem_type, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def test_generated_inputs_follow_types_shapes_and_dims_and_are_seeded():
    model = _model(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3, 5]),
                   helper.make_tensor_value_info("k", TensorProto.INT64, [1]),
                   helper.make_tensor_value_info("m", TensorProto.BOOL, ["batch"]))
    feed = inputs.generate(model, seed=7, dims={"batch": 2})
    assert {n: (v.dtype, v.shape) for n, v in feed.items()} == {
        "x": (np.dtype(np.float32), (2, 3, 5)), "k": (np.dtype(np.int64), (1,)), "m": (np.dtype(bool), (2,))}
    again = inputs.generate(model, seed=7, dims={"batch": 2})
    other = inputs.generate(model, seed=8, dims={"batch": 2})
    assert all(np.array_equal(feed[n], again[n]) for n in feed)
    assert not np.array_equal(feed["x"], other["x"])
    inputs.check_feed(model, feed, {"batch": 2})


def test_tie_heavy_inputs_have_few_distinct_values():
    model = _model(helper.make_tensor_value_info("x", TensorProto.FLOAT, [50, 40]))
    assert np.unique(inputs.generate(model, ties=True)["x"]).size <= 4
    assert np.unique(inputs.generate(model)["x"]).size > 1000


def test_a_missing_symbolic_dim_is_named():
    model = _model(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "width"]))
    with pytest.raises(InputError, match=r"'width'.*--dim width=VALUE"):
        inputs.generate(model, dims={"batch": 1})


def test_a_dim_name_is_what_comes_before_the_last_equals_sign():
    assert inputs.parse_dims(["batch=N=2", "W=320"]) == {"batch=N": 2, "W": 320}


@pytest.mark.parametrize("item", ["batch", "=3", "batch=x", "batch=-1"])
def test_malformed_dims_are_refused(item):
    with pytest.raises(InputError, match="--dim"):
        inputs.parse_dims([item])


@pytest.mark.parametrize("feed, message", [
    ({"z": np.zeros((2, 3), np.float32)}, "missing \\['x'\\], unknown \\['z'\\]"),
    ({"x": np.zeros((2, 3), np.float64)}, "dtype float64, the model wants float32"),
    ({"x": np.zeros((2, 4), np.float32)}, "axis 1 must be 3"),
    ({"x": np.zeros((2,), np.float32)}, "rank 2"),
])
def test_feeds_that_do_not_fit_the_model_are_named(feed, message):
    model = _model(helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3]))
    with pytest.raises(InputError, match=message):
        inputs.check_feed(model, feed)


def test_one_symbolic_dim_has_one_size_across_inputs():
    model = _model(helper.make_tensor_value_info("a", TensorProto.FLOAT, ["n"]),
                   helper.make_tensor_value_info("b", TensorProto.FLOAT, ["n"]))
    with pytest.raises(InputError, match="'n' is 2 elsewhere"):
        inputs.check_feed(model, {"a": np.zeros(2, np.float32), "b": np.zeros(3, np.float32)})


def test_a_file_that_is_not_npz_is_an_input_error(tmp_path):
    bad = tmp_path / "x.npz"
    bad.write_text("not numpy")
    with pytest.raises(InputError, match="not a readable .npz"):
        inputs.load_npz(bad)


@pytest.mark.parametrize("elem_type", [TensorProto.BFLOAT16, TensorProto.STRING])
def test_an_input_numpy_cannot_hold_is_refused_generated_or_given(elem_type):
    """The message asked for --inputs, and gave the same answer when they were given."""
    model = _model(helper.make_tensor_value_info("x", elem_type, [2]))
    for attempt in (lambda: inputs.generate(model), lambda: inputs.check_feed(model, {"x": np.zeros(2, np.uint16)})):
        with pytest.raises(InputError, match=r"^input 'x' has element type \w+: ortops compare feeds NumPy arrays "
                                             "of numeric types only$"):
            attempt()
