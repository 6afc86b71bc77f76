"""gpugrad.save(..., format="torch"): PyTorch's zip layout, read by torch.load(weights_only=True)
with the same tensors and containers, and by gpugrad.load."""
from __future__ import annotations

import zipfile
from collections import OrderedDict

import numpy as np
import pytest
from saved_values import DTYPES, values

import gpugrad
import gpugrad.nn as nn
import gpugrad.optim as optim

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", DTYPES)
def test_pytorch_loads_the_same_tensors_weights_only(tmp_path, dtype):
    a = values(dtype)
    path = tmp_path / "m.pt"
    x = gpugrad.tensor(a)
    gpugrad.save({"x": x, "xt": x.t(), "row": x[1], "scalar": gpugrad.tensor(a[0, 0])}, path,
                 format="torch")
    back = torch.load(path, weights_only=True)
    assert back["x"].dtype == getattr(torch, dtype)
    for key, want in (("x", a), ("xt", a.T), ("row", a[1])):
        np.testing.assert_array_equal(back[key].numpy(), want)
        assert back[key].shape == want.shape
    assert back["xt"].stride() == (1, 4) and back["row"].storage_offset() == 4
    # views of one buffer share one storage in PyTorch too
    assert back["xt"].untyped_storage().data_ptr() == back["x"].untyped_storage().data_ptr()
    assert back["scalar"].shape == () and back["scalar"].item() == a[0, 0].item()
    again = gpugrad.load(path)
    np.testing.assert_array_equal(again["xt"].numpy(), a.T)


def test_state_dicts_optimizer_state_and_plain_containers_load_in_pytorch(tmp_path):
    gpugrad.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = optim.Adam(model.parameters(), lr=0.01)
    model(gpugrad.randn(4, 3)).sum().backward()
    opt.step()
    obj = {"model": model.state_dict(), "opt": opt.state_dict(), "epoch": 3, "loss": 0.25,
           "tags": ["a", None, True, (1, 2.5)], "shape": gpugrad.Size([2, 3]),
           "dtype": gpugrad.float16, "param": nn.Parameter(gpugrad.ones(2))}
    path = tmp_path / "ckpt.pt"
    gpugrad.save(obj, path, format="torch")
    back = torch.load(path, weights_only=True)
    assert isinstance(back["model"], OrderedDict) and list(back["model"]) == ["weight", "bias"]
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(back["model"][k].numpy(), v.numpy())
    assert back["opt"]["param_groups"][0]["lr"] == 0.01
    assert back["opt"]["param_groups"][0]["params"] == [0, 1]
    np.testing.assert_array_equal(back["opt"]["state"][0]["exp_avg"].numpy(),
                                  opt.state_dict()["state"][0]["exp_avg"].numpy())
    assert (back["epoch"], back["loss"], back["tags"]) == (3, 0.25, ["a", None, True, (1, 2.5)])
    assert back["shape"] == torch.Size([2, 3]) and back["dtype"] is torch.float16
    assert isinstance(back["param"], torch.nn.Parameter) and back["param"].requires_grad
    twin = torch.nn.Linear(3, 2)
    twin.load_state_dict(back["model"])
    ours = gpugrad.load(path)
    assert ours["epoch"] == 3 and isinstance(ours["param"], nn.Parameter)


def test_the_archive_has_the_layout_torch_writes(tmp_path):
    path = tmp_path / "m.pt"
    gpugrad.save({"w": gpugrad.ones(3)}, path, format="torch")
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        assert names == ["archive/data.pkl", "archive/.format_version",
                         "archive/.storage_alignment", "archive/byteorder", "archive/data/0",
                         "archive/version", "archive/.data/serialization_id"]
        assert z.read("archive/byteorder") == b"little" and z.read("archive/version") == b"3\n"
        info = z.getinfo("archive/data/0")
        assert (info.header_offset + 30 + len(info.filename) + len(info.extra)) % 64 == 0
    assert torch.load(path, weights_only=True, mmap=True)["w"].tolist() == [1.0, 1.0, 1.0]


def test_a_view_pytorch_cannot_express_is_written_as_a_copy(tmp_path):
    flipped = gpugrad.tensor(np.arange(4.0)[::-1])   # a negative stride
    gpugrad.save({"f": flipped}, tmp_path / "m.pt", format="torch")
    assert torch.load(tmp_path / "m.pt", weights_only=True)["f"].tolist() == [3.0, 2.0, 1.0, 0.0]


def test_what_a_weights_only_checkpoint_cannot_hold_is_refused(tmp_path):
    with pytest.raises(TypeError, match="PyTorch's format .format='torch'. holds tensors, dicts, "
                                        "lists, tuples, numbers, strings, None and bools, not an "
                                        "object of type Linear"):
        gpugrad.save({"m": nn.Linear(2, 2)}, tmp_path / "m.pt", format="torch")
    assert not (tmp_path / "m.pt").exists()


@pytest.mark.parametrize("name", ["model.pt", "model.pth"])
def test_a_pt_or_pth_path_is_saved_in_pytorchs_layout_by_default(tmp_path, name):
    """The name promises PyTorch's checkpoint: torch.load opens it without format=."""
    gpugrad.manual_seed(0)
    net = nn.Linear(3, 2)
    path = tmp_path / name
    gpugrad.save(net.state_dict(), path)
    assert zipfile.ZipFile(path).namelist()[0] == "archive/data.pkl"
    back = torch.load(path, weights_only=True)
    for key, value in net.state_dict().items():
        np.testing.assert_array_equal(back[key].numpy(), value.numpy())
    loaded = gpugrad.load(path)
    assert list(loaded) == ["weight", "bias"]


def test_what_pytorchs_layout_cannot_hold_falls_back_to_gpugrads_format(tmp_path):
    path = tmp_path / "mixed.pt"
    obj = {"x": gpugrad.ones(2), "tags": {"a", "b"}, "raw": np.arange(3)}
    gpugrad.save(obj, path)
    assert "archive/data.pkl" not in zipfile.ZipFile(path).namelist()
    back = gpugrad.load(path)
    assert back["tags"] == {"a", "b"} and back["raw"].tolist() == [0, 1, 2]
