"""OpError: a ValueError with op_type, node_name, detail and a machine-readable kind."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import ortops
from ortops import reference
from ortops.errors import KINDS, OpError


def test_op_error_is_a_value_error_naming_op_and_node():
    err = OpError("TopK", "k=5 is outside [1, 4]", "top", kind="k_range")
    assert isinstance(err, ValueError) and err is not None
    assert str(err) == "TopK node 'top': k=5 is outside [1, 4]"
    assert (err.op_type, err.node_name, err.detail, err.kind) == ("TopK", "top", "k=5 is outside [1, 4]", "k_range")
    assert ortops.OpError is OpError


def test_kind_defaults_to_invalid_and_must_be_known():
    assert OpError("ArgMax", "bad").kind == "invalid"
    with pytest.raises(ValueError, match="not one of"):
        OpError("ArgMax", "bad", kind="no-such-kind")


def test_pickling_and_naming_the_node_keep_the_kind():
    err = OpError("ScatterElementsUpdate", "index 9 is outside [-3, 2]", kind="index_range")
    again = pickle.loads(pickle.dumps(err))
    assert (again.kind, str(again)) == ("index_range", str(err))
    named = err.with_node("scatter")
    assert (named.kind, named.node_name) == ("index_range", "scatter")
    assert named.with_node("other") is named  # a known node is never replaced


@pytest.mark.parametrize(("run", "kind"), [
    (lambda: reference.top_k(np.ones(3, np.float32), 4, axis=0, mode="max", sort="value"), "k_range"),
    (lambda: reference.top_k(np.ones(3, np.float32), 1, axis=1, mode="max", sort="value"), "axis"),
    (lambda: reference.top_k(np.ones(3, np.float32), np.array([1, 2]), axis=0, mode="max", sort="value"), "shape"),
    (lambda: reference.top_k(np.ones(3, np.float16), 1, axis=0, mode="max", sort="value"), "dtype"),
    (lambda: reference.top_k(np.ones(3, np.float32), 1, axis=0, mode="largest", sort="value"), "attribute"),
    (lambda: reference.scatter_elements_update(np.zeros(3, np.float32), np.array([3]), np.ones(1, np.float32), 0),
     "index_range"),
    (lambda: reference.arg_max(np.ones(3, np.float32), topk=4), "k_range"),
    (lambda: reference.arg_max(np.ones(3, np.float64)), "dtype"),
])
def test_every_error_says_what_it_is_about(run, kind):
    with pytest.raises(OpError) as info:
        run()
    assert info.value.kind == kind and kind in KINDS
