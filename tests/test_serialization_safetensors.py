"""gpugrad.save / gpugrad.load of .safetensors files: round trips with the real safetensors and
PyTorch packages, bfloat16, what a safetensors file cannot hold, and damaged files."""
from __future__ import annotations

import io
import json
import os
import struct
import sys
import warnings

import numpy as np
import pytest
from saved_values import DTYPES, values

import gpugrad
import gpugrad.nn as nn
from gpugrad.serialization import SerializationError

pytest.importorskip("safetensors")


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_file_gpugrad_writes_loads_in_pytorch_with_the_same_values(tmp_path, dtype):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file
    a = values(dtype)
    path = tmp_path / "m.safetensors"
    gpugrad.save({"w": gpugrad.tensor(a), "wt": gpugrad.tensor(a).t(),
                  "scalar": gpugrad.tensor(a[0, 0])}, path)
    back = load_file(path)
    assert back["w"].dtype == getattr(torch, dtype)
    np.testing.assert_array_equal(back["w"].numpy(), a)
    np.testing.assert_array_equal(back["wt"].numpy(), a.T)
    assert back["scalar"].shape == () and back["scalar"].item() == a[0, 0].item()


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_file_pytorch_writes_loads_in_gpugrad_with_the_same_values(tmp_path, dtype):
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file
    a = values(dtype)
    path = tmp_path / "m.safetensors"
    save_file({"w": torch.from_numpy(a), "b": torch.from_numpy(a[0].copy())}, path)
    back = gpugrad.load(path)
    assert sorted(back) == ["b", "w"] and back["w"].dtype == getattr(gpugrad, dtype)
    np.testing.assert_array_equal(back["w"].numpy(), a)
    np.testing.assert_array_equal(back["b"].numpy(), a[0])


def test_a_state_dict_round_trips_and_loads_into_the_model(tmp_path):
    gpugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    gpugrad.save(model.state_dict(), tmp_path / "m.safetensors")
    twin = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    twin.load_state_dict(gpugrad.load(tmp_path / "m.safetensors"))
    x = gpugrad.randn(5, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), twin(x).detach().numpy())


def test_format_keyword_and_file_objects(tmp_path):
    buf = io.BytesIO()
    gpugrad.save({"w": gpugrad.arange(3)}, buf, format="safetensors")
    raw = buf.getvalue()
    assert raw[8:9] == b"{"   # a safetensors header, whatever the name
    assert gpugrad.load(io.BytesIO(raw))["w"].tolist() == [0, 1, 2]   # recognised by content
    (tmp_path / "weights.bin").write_bytes(raw)
    assert gpugrad.load(tmp_path / "weights.bin", format="safetensors")["w"].tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="format must be None, 'safetensors' or 'torch', "
                                         "not 'npz'"):
        gpugrad.save({"w": gpugrad.ones(1)}, buf, format="npz")


def test_bfloat16_loads_as_bfloat16_with_the_same_bits(tmp_path):
    torch = pytest.importorskip("torch")
    from safetensors.torch import load_file, save_file
    w = torch.tensor([1.0, -2.5, 3.0e38, 1e-40, float("inf"), float("nan")]).bfloat16()
    save_file({"w": w, "f": torch.ones(2)}, tmp_path / "bf.safetensors")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = gpugrad.load(tmp_path / "bf.safetensors")
    assert back["w"].dtype == gpugrad.bfloat16 and back["f"].dtype == gpugrad.float32
    np.testing.assert_array_equal(back["w"]._data.view(np.uint16), w.view(torch.int16).numpy()
                                  .view(np.uint16))
    gpugrad.save(back, tmp_path / "again.safetensors")   # and back to PyTorch, bit for bit
    again = load_file(tmp_path / "again.safetensors")
    assert again["w"].dtype == torch.bfloat16
    assert torch.equal(again["w"].view(torch.int16), w.view(torch.int16))


def test_without_ml_dtypes_bfloat16_loads_as_exact_float32_with_a_warning(tmp_path, monkeypatch):
    torch = pytest.importorskip("torch")
    from safetensors.torch import save_file

    from gpugrad import _serialization_safetensors as sst
    monkeypatch.setattr(sst, "BF16", None)
    w = torch.tensor([1.0, -2.5, 3.0e38, 1e-40, float("inf")]).bfloat16()
    save_file({"w": w, "b": torch.ones(2, dtype=torch.bfloat16), "f": torch.ones(2)},
              tmp_path / "bf.safetensors")
    with pytest.warns(UserWarning, match=r"bfloat16 needs the ml_dtypes package \(pip install "
                                         r"ml_dtypes\); 'b', 'w' load as float32") as rec:
        back = gpugrad.load(tmp_path / "bf.safetensors")
    assert len(rec) == 1
    assert back["w"].dtype == gpugrad.float32 and back["f"].dtype == gpugrad.float32
    np.testing.assert_array_equal(back["w"].numpy(), w.float().numpy())


@pytest.mark.parametrize("obj, error, message", [
    ({"layer": {"w": gpugrad.ones(1)}}, ValueError,
     "a .safetensors file holds a flat dict of tensors; 'layer' is a nested dict. Save a flat "
     "state dict"),
    ([gpugrad.ones(1)], TypeError,
     "a .safetensors file holds a flat dict of tensors {name: tensor}, not a list"),
    ({"step": 3}, TypeError, "a .safetensors file holds tensors only; 'step' is of type int"),
    ({1: gpugrad.ones(1)}, TypeError,
     "a .safetensors file names its tensors with strings; key 1 is of type int"),
])
def test_what_a_safetensors_file_cannot_hold_is_refused_by_name(tmp_path, obj, error, message):
    path = tmp_path / "m.safetensors"
    gpugrad.save({"w": gpugrad.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(error) as e:
        gpugrad.save(obj, path)
    assert str(e.value).startswith("gpugrad.save: " + message)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["m.safetensors"]


def test_tensors_sharing_memory_are_refused_as_safetensors_torch_refuses_them(tmp_path):
    x = gpugrad.arange(6.0)
    for other in (x, x[2:], x.view(2, 3)):
        with pytest.raises(RuntimeError, match="tensors 'a' and 'b' share memory"):
            gpugrad.save({"a": x, "b": other}, tmp_path / "m.safetensors")
    gpugrad.save({"a": x[:3], "b": x[3:]}, tmp_path / "m.safetensors")   # disjoint halves
    back = gpugrad.load(tmp_path / "m.safetensors")
    assert back["a"].tolist() == [0, 1, 2] and back["b"].tolist() == [3, 4, 5]


def _file(header, body=b""):
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + body


@pytest.mark.parametrize("data", [
    b"",
    b"\x00" * 7,
    struct.pack("<Q", 1 << 40) + b"{}",                                      # header too long
    struct.pack("<Q", 5) + b"{nope",                                        # not JSON
    _file({"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, b"\0" * 8),   # short
    _file({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}}, b"\0" * 16),  # length
    _file({"w": {"dtype": "O", "shape": [1], "data_offsets": [0, 8]}}, b"\0" * 8),      # object
    _file({"w": {"dtype": "F8_E4M3", "shape": [2], "data_offsets": [0, 2]}}, b"\0" * 2),
], ids=["empty", "short", "huge-header", "not-json", "truncated", "wrong-length", "object",
        "float8"])
def test_a_damaged_or_foreign_file_raises_serialization_error_naming_it(tmp_path, data):
    path = tmp_path / "bad.safetensors"
    path.write_bytes(data)
    with pytest.raises(SerializationError, match=f"gpugrad.load: '{path}'"):
        gpugrad.load(path)


def test_every_single_bit_flip_loads_tensors_or_raises_serialization_error(tmp_path):
    path = tmp_path / "m.safetensors"
    gpugrad.save({"w": gpugrad.arange(4.0), "i": gpugrad.arange(3)}, path)
    good = path.read_bytes()
    bad = tmp_path / "bad.safetensors"
    for i in range(len(good)):
        for byte in (good[i] ^ (1 << bit) for bit in range(8)):
            bad.write_bytes(good[:i] + bytes([byte]) + good[i + 1:])
            try:
                back = gpugrad.load(bad, format="safetensors")
            except SerializationError:
                continue
            assert isinstance(back, dict) and all(
                isinstance(v, gpugrad.Tensor) for v in back.values())


def test_without_the_package_safetensors_files_ask_for_it(tmp_path, monkeypatch):
    gpugrad.save({"w": gpugrad.ones(1)}, tmp_path / "m.safetensors")
    monkeypatch.setitem(sys.modules, "safetensors", None)
    with pytest.raises(ImportError, match="needs the safetensors package: pip install "
                                          "safetensors"):
        gpugrad.save({"w": gpugrad.ones(1)}, tmp_path / "m.safetensors")
    with pytest.raises(ImportError, match="pip install safetensors"):
        gpugrad.load(tmp_path / "m.safetensors")
    gpugrad.save({"w": gpugrad.ones(1)}, tmp_path / "m.npz")   # the own format needs nothing
    assert gpugrad.load(tmp_path / "m.npz")["w"].tolist() == [1.0]
