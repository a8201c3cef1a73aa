"""The input checks every op shares: axis normalisation and integer scalars."""

from __future__ import annotations

import numpy as np
import pytest

from ortops.checks import normalize_axis, scalar_integer
from ortops.errors import OpError


@pytest.mark.parametrize(("axis", "rank", "want"), [(0, 1, 0), (-1, 1, 0), (-3, 3, 0), (2, 3, 2), (-1, 4, 3)])
def test_normalize_axis(axis, rank, want):
    assert normalize_axis("TopK", axis, rank) == want


@pytest.mark.parametrize(("axis", "rank", "message"), [
    (1, 1, r"axis=1 is outside \[-1, 0\] for rank 1"), (-2, 1, r"axis=-2 is outside"),
    (0, 0, r"^TopK node 'node': axis=0 is refused: a rank-0 tensor has no axis \(the rank must be at least 1\)$"),
])
def test_normalize_axis_refuses_naming_the_range(axis, rank, message):
    with pytest.raises(OpError, match=message) as info:
        normalize_axis("TopK", axis, rank, "node")
    assert info.value.kind == "axis" and info.value.node_name == "node"


@pytest.mark.parametrize("value", [np.array(3), np.array([3]), np.array(3, np.uint64), np.array([3], np.int8)])
def test_scalar_integer(value):
    assert scalar_integer("TopK", "k", value) == 3


def test_scalar_integer_refuses_floats_and_other_shapes():
    with pytest.raises(OpError, match="must be an integer type") as info:
        scalar_integer("TopK", "k", np.array(3.0))
    assert info.value.kind == "dtype"
    with pytest.raises(OpError, match=r"has shape \(2,\)") as info:
        scalar_integer("TopK", "k", np.array([1, 2]))
    assert info.value.kind == "shape"
