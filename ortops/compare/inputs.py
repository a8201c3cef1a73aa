"""The inputs ``ortops compare`` feeds every runtime: read from a ``.npz`` file, or generated (seeded,
from the model's input types and shapes; ``--dim NAME=VALUE`` sizes a symbolic dimension;
``ties=True`` draws from a few distinct values, where runtimes split).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import onnx

from .. import dtypes

__all__ = ["InputError", "check_feed", "generate", "graph_inputs", "load_npz", "parse_dims"]


class InputError(ValueError):
    """Inputs that do not fit the model (names, dtypes, shapes) or a missing ``--dim``."""


def graph_inputs(model: onnx.ModelProto) -> list[onnx.ValueInfoProto]:
    """The inputs a caller feeds: graph inputs that no initializer provides."""
    initialized = {t.name for t in model.graph.initializer}
    return [i for i in model.graph.input if i.name not in initialized]


def parse_dims(items) -> dict[str, int]:
    """``["N=1", "W=320"]`` -> ``{"N": 1, "W": 320}`` (the name is what comes before the last
    ``=``: ``batch=N=2`` sizes ``batch=N``); InputError for a malformed item."""
    dims: dict[str, int] = {}
    for item in items or ():
        name, sep, value = item.rpartition("=")
        if not sep or not name.strip():
            raise InputError(f"--dim {item!r} is not NAME=VALUE (e.g. --dim batch=1)")
        try:
            size = int(value)
        except ValueError:
            raise InputError(f"--dim {item!r}: {value!r} is not an integer") from None
        if size < 0:
            raise InputError(f"--dim {item!r}: a size must be >= 0")
        dims[name.strip()] = size
    return dims


def _dtype(info: onnx.ValueInfoProto) -> np.dtype:
    if not info.type.HasField("tensor_type"):
        raise InputError(f"input {info.name!r} is not a tensor: ortops compare feeds numeric tensors only")
    elem = info.type.tensor_type.elem_type
    numpy = next((t.numpy for t in dtypes.ELEMENT_TYPES if t.onnx == elem), None)
    if numpy is None:
        raise InputError(f"input {info.name!r} has element type {onnx.TensorProto.DataType.Name(elem)}: ortops "
                         "compare feeds NumPy arrays of numeric types only")
    return np.dtype(numpy)


def _shape(info: onnx.ValueInfoProto, dims: Mapping[str, int]) -> tuple[int, ...] | None:
    """The concrete shape of ``info`` (None: rank unknown); InputError for an unset dimension."""
    tensor = info.type.tensor_type
    if not tensor.HasField("shape"):
        return None
    shape = []
    for axis, dim in enumerate(tensor.shape.dim):
        if dim.HasField("dim_value"):
            shape.append(dim.dim_value)
        elif dim.dim_param and dim.dim_param in dims:
            shape.append(dims[dim.dim_param])
        elif dim.dim_param:
            raise InputError(f"input {info.name!r} has symbolic dimension {dim.dim_param!r} (axis {axis}): "
                             f"give its size with --dim {dim.dim_param}=VALUE")
        else:
            raise InputError(f"input {info.name!r} axis {axis} has neither a size nor a name; give the input with --inputs")
    return tuple(shape)


def generate(model: onnx.ModelProto, *, seed: int = 0, dims: Mapping[str, int] | None = None,
             ties: bool = False) -> dict[str, np.ndarray]:
    """Seeded inputs for every graph input of ``model``.

    Floats are standard normal (``ties``: drawn from {-1, 0, 1, 2}); signed integers from
    [-4, 4], unsigned from [0, 4] (``ties``: [0, 2]), bools uniform. The ranges are small so
    that index-like inputs stay valid more often, and ties happen.

    Raises
    ------
    InputError
        For a symbolic dimension without ``--dim``, an input of unknown rank, or a type NumPy lacks.
    """
    rng = np.random.default_rng(seed)
    feed = {}
    for info in graph_inputs(model):
        dtype = _dtype(info)
        shape = _shape(info, dims or {})
        if shape is None:
            raise InputError(f"input {info.name!r} has no declared shape; give it with --inputs")
        if dtype.kind == "f" and not ties:
            data = rng.standard_normal(shape)
        else:  # integers in [low, high)
            signed = (0, 3) if ties else (-4, 5)
            data = rng.integers(*{"f": (-1, 3), "b": (0, 2), "u": (0, 3 if ties else 5)}.get(dtype.kind, signed), shape)
        feed[info.name] = np.asarray(data).astype(dtype)
    return feed


def load_npz(path) -> dict[str, np.ndarray]:
    """The arrays of a ``.npz`` file by name; InputError if it cannot be read."""
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {name: archive[name] for name in archive.files}
    except (OSError, ValueError) as exc:
        raise InputError(f"--inputs {path}: not a readable .npz file ({exc})") from None


def check_feed(model: onnx.ModelProto, feed: Mapping[str, np.ndarray], dims: Mapping[str, int] | None = None) -> None:
    """InputError unless ``feed`` has exactly the model's inputs, with their dtypes and shapes,
    and every name of ``dims`` is a symbolic dimension of an input.

    A symbolic dimension must have one size across inputs (and equal ``--dim`` if given).
    """
    expected = {i.name: i for i in graph_inputs(model)}
    symbols = {d.dim_param for i in expected.values() for d in i.type.tensor_type.shape.dim if d.dim_param}
    if unknown := [name for name in dims or () if name not in symbols]:
        raise InputError(f"--dim {unknown[0]}: no input of the model has a symbolic dimension {unknown[0]!r}; "
                         f"theirs are {sorted(symbols)}")
    missing = [n for n in expected if n not in feed]
    extra = [n for n in feed if n not in expected]
    if missing or extra:
        raise InputError(f"inputs do not match the model: missing {missing}, unknown {extra}; "
                         f"the model's inputs are {list(expected)}")
    bound = dict(dims or {})
    for name, info in expected.items():
        array = np.asarray(feed[name])
        want = _dtype(info)
        if array.dtype != want:
            raise InputError(f"input {name!r} has dtype {array.dtype}, the model wants {want}")
        tensor = info.type.tensor_type
        if not tensor.HasField("shape"):
            continue
        if array.ndim != len(tensor.shape.dim):
            raise InputError(f"input {name!r} has shape {array.shape}, the model wants rank {len(tensor.shape.dim)}")
        for axis, (size, dim) in enumerate(zip(array.shape, tensor.shape.dim)):
            if dim.HasField("dim_value") and dim.dim_value != size:
                raise InputError(f"input {name!r} has shape {array.shape}; axis {axis} must be {dim.dim_value}")
            if dim.dim_param and bound.setdefault(dim.dim_param, size) != size:
                raise InputError(f"input {name!r} axis {axis} is {size}, but {dim.dim_param!r} "
                                 f"is {bound[dim.dim_param]} elsewhere")
