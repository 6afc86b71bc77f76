"""default_collate and default_convert: the structures and dtypes PyTorch's give (compared with
PyTorch's when it is installed) and PyTorch's messages."""
from __future__ import annotations

import collections

import numpy as np
import pytest

import gpugrad
from gpugrad.utils.data import DataLoader, default_collate, default_convert

Point = collections.namedtuple("Point", ["x", "y"])


def test_default_collate_structures_follow_torch():
    out = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert type(out) is Point and out.x.tolist() == [1, 3] and out.x.dtype == gpugrad.int64
    assert out.y.dtype == gpugrad.float64
    pairs = default_collate([(1, "a"), (2, "b")])
    assert type(pairs) is list and pairs[0].tolist() == [1, 2] and pairs[1] == ("a", "b")
    ordered = default_collate([collections.OrderedDict(b=1, a=2)] * 2)
    assert type(ordered) is collections.OrderedDict and list(ordered) == ["b", "a"]
    nested = default_collate([{"x": [gpugrad.ones(2), 1]}, {"x": [gpugrad.zeros(2), 2]}])
    assert nested["x"][0].shape == (2, 2) and nested["x"][1].tolist() == [1, 2]
    assert default_collate([True, False]).dtype == gpugrad.bool


def test_default_collate_numpy_keeps_dtypes():
    assert default_collate([np.float32(1), np.float32(2)]).dtype == gpugrad.float32
    assert default_collate([np.int32(1), np.int32(2)]).tolist() == [1, 2]
    assert default_collate([np.int32(1)]).dtype == gpugrad.int32
    arrays = default_collate([np.zeros((2, 3), np.float32), np.ones((2, 3), np.float32)])
    assert arrays.shape == (2, 2, 3) and arrays.dtype == gpugrad.float32


def test_default_collate_errors():
    with pytest.raises(TypeError, match="^default_collate: batch must contain tensors, numpy "
                                        "arrays, numbers, dicts or lists; found <class "
                                        "'NoneType'>$"):
        default_collate([None, None])
    with pytest.raises(TypeError, match="found <U1$"):
        default_collate([np.array(["a"]), np.array(["b"])])
    with pytest.raises(RuntimeError, match="^each element in list of batch should be of equal "
                                           "size$"):
        default_collate([[1, 2], [3]])


def test_default_collate_matches_torch_structure():
    torch = pytest.importorskip("torch")
    batch = [{"p": Point(np.float32(1.5), [1, 2]), "s": "u", "t": (3.0, np.arange(2))}] * 3
    ours, theirs = default_collate(batch), torch.utils.data.default_collate(batch)

    def shape(v):
        if isinstance(v, (gpugrad.Tensor, torch.Tensor)):
            return ("tensor", str(v.dtype).split(".")[-1], tuple(v.shape), v.tolist())
        if isinstance(v, dict):
            return {k: shape(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)) and not isinstance(v, str):
            return (type(v).__name__, [shape(x) for x in v])
        return v
    assert shape(ours) == shape(theirs)


def test_default_convert_turns_numpy_into_tensors():
    out = default_convert({"a": np.arange(3), "b": (np.float32(2.0), "s"), "c": 5})
    assert isinstance(out["a"], gpugrad.Tensor) and out["a"].tolist() == [0, 1, 2]
    assert type(out["b"]) is list and out["b"][0].dtype == gpugrad.float32 and out["b"][1] == "s"
    assert out["c"] == 5
    p = default_convert(Point(np.array(1), 2))
    assert type(p) is Point and isinstance(p.x, gpugrad.Tensor) and p.y == 2
    strings = np.array(["a", "b"])
    assert default_convert(strings) is strings


def test_default_collate_structures():
    out = default_collate([{"x": gpugrad.ones(2), "y": 1}, {"x": gpugrad.zeros(2), "y": 2}])
    assert out["x"].shape == (2, 2) and out["y"].tolist() == [1, 2]
    assert default_collate([1.5, 2.5]).dtype == gpugrad.float64
    assert default_collate(["a", "b"]) == ["a", "b"]


def test_collate_keeps_string_fields_as_the_tuple_zip_gives():
    out = default_collate([(1, "a"), (2, "b")])
    assert type(out) is list and out[0].tolist() == [1, 2] and out[1] == ("a", "b")
    nested = default_collate([{"k": [(1, "x")]}, {"k": [(2, "y")]}])
    assert nested["k"][0][0].tolist() == [1, 2] and nested["k"][0][1] == ("x", "y")
    named = default_collate([Point("p", 1.0), Point("q", 2.0)])
    assert type(named) is Point and named.x == ("p", "q") and named.y.dtype == gpugrad.float64
    batches = list(DataLoader([(1, "a"), (2, "b"), (3, "c")], batch_size=2))
    assert [b[1] for b in batches] == [("a", "b"), ("c",)]


def test_collate_dtypes_and_shapes():
    assert default_collate([1.0, 2.5]).dtype == gpugrad.float64
    assert default_collate([1, 2]).dtype == gpugrad.int64
    assert default_collate([True, False]).dtype == gpugrad.bool
    assert default_collate([1, 2.5]).dtype == gpugrad.float32   # first element decides: int
    assert default_collate([np.float32(1), np.float32(2)]).dtype == gpugrad.float32
    assert default_collate([np.array([1, 2]), np.array([3, 4])]).shape == (2, 2)
    assert default_collate(["a", "b"]) == ["a", "b"]
    with pytest.raises(RuntimeError, match="^each element in list of batch should be of equal "
                                           "size$"):
        default_collate([[1, 2, 3], [4, 5]])
