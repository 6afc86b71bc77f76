"""gpugrad.save / gpugrad.load, gpugrad.utils.data and the built-in data sets."""
from __future__ import annotations

import io
import math
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import gpugrad
import gpugrad.nn as nn
import gpugrad.optim as optim
from gpugrad import datasets
from gpugrad.serialization import SerializationError
from gpugrad.utils.data import DataLoader, Dataset, TensorDataset, default_collate


# -- save / load ----------------------------------------------------------------------------------
def test_model_state_dict_round_trip(tmp_path):
    gpugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    path = tmp_path / "model.npz"
    gpugrad.save(model.state_dict(), path)
    loaded = gpugrad.load(path)
    assert isinstance(loaded, OrderedDict) and list(loaded) == list(model.state_dict())
    twin = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    twin.load_state_dict(loaded)
    x = gpugrad.randn(5, 3)
    np.testing.assert_array_equal(model(x).detach().numpy(), twin(x).detach().numpy())


@pytest.mark.gpu
def test_gpu_state_dict_loads_where_it_was_saved_or_where_mapped(tmp_path):
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    gpugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).to("cuda")
    opt = optim.Adam(model.parameters())
    model(gpugrad.randn(5, 3, device="cuda")).sum().backward()
    opt.step()
    gpugrad.save({"model": model.state_dict(), "opt": opt.state_dict()}, tmp_path / "ck.pt")
    back = gpugrad.load(tmp_path / "ck.pt")
    assert {v.device.type for v in back["model"].values()} == {"cuda"}
    host = gpugrad.load(tmp_path / "ck.pt", map_location="cpu")
    assert {v.device.type for v in host["model"].values()} == {"cpu"}
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(host["model"][k].numpy(), v.cpu().numpy())
    twin = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))     # on the CPU
    twin.load_state_dict(back["model"])                         # copies into CPU parameters
    assert twin[0].weight.device.type == "cpu"
    np.testing.assert_array_equal(twin[0].weight.detach().numpy(),
                                  model[0].weight.detach().cpu().numpy())
    assert int(back["opt"]["state"][0]["step"]) == 1


def test_zero_dim_tensors_and_buffers_keep_their_shape(tmp_path):
    # 0-d tensors (BatchNorm's num_batches_tracked, an Adam step) come back 0-d
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    model(gpugrad.randn(5, 3))
    gpugrad.save({"model": model.state_dict(), "x": gpugrad.tensor(2.5),
                  "a": np.array(1.5)}, tmp_path / "m.npz")
    back = gpugrad.load(tmp_path / "m.npz")
    assert back["x"].shape == () and back["x"].item() == 2.5 and back["a"].shape == ()
    assert back["model"]["1.num_batches_tracked"].shape == ()
    twin = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    twin.load_state_dict(back["model"])
    assert twin[1].num_batches_tracked.item() == 1
    np.testing.assert_array_equal(twin[1].running_mean.numpy(), model[1].running_mean.numpy())


def test_nested_values_round_trip():
    t = gpugrad.tensor([1.5, -2.0], dtype=gpugrad.float64, requires_grad=True)
    obj = {"tensors": [t, gpugrad.tensor([1, 2]), gpugrad.tensor([True, False]),
                       gpugrad.zeros(2, 0, 3, dtype=gpugrad.float16)],
           "shared": t, "array": np.arange(3), "step": 7, "lr": 0.1, "nan": math.nan,
           "inf": -math.inf, "name": "run", "none": None, "flag": True, "pair": (1, "a"),
           "int_keys": {0: {"momentum_buffer": gpugrad.ones(2)}, (1, 2): "tuple key"},
           "param": nn.Parameter(gpugrad.ones(1))}
    buf = io.BytesIO()
    gpugrad.save(obj, buf)
    buf.seek(0)
    back = gpugrad.load(buf)
    ts = back["tensors"]
    assert ts[0].tolist() == [1.5, -2.0] and ts[0].dtype == gpugrad.float64 and ts[0].requires_grad
    assert ts[1].dtype == gpugrad.int64 and ts[2].dtype == gpugrad.bool
    assert ts[3].shape == (2, 0, 3) and ts[3].dtype == gpugrad.float16
    assert back["shared"] is ts[0]                      # one tensor saved once, loaded once
    assert isinstance(back["array"], np.ndarray) and back["array"].tolist() == [0, 1, 2]
    assert back["step"] == 7 and back["lr"] == 0.1 and math.isnan(back["nan"])
    assert back["inf"] == -math.inf and back["name"] == "run" and back["none"] is None
    assert back["flag"] is True and back["pair"] == (1, "a")
    assert back["int_keys"][0]["momentum_buffer"].tolist() == [1.0, 1.0]
    assert back["int_keys"][(1, 2)] == "tuple key"
    assert isinstance(back["param"], nn.Parameter)


def test_optimizer_state_dict_round_trip(tmp_path):
    p = nn.Parameter(gpugrad.ones(2))
    opt = optim.Adam([p], lr=0.1)
    p.grad = gpugrad.ones(2)
    opt.step()
    gpugrad.save(opt.state_dict(), tmp_path / "opt.npz")
    other = optim.Adam([nn.Parameter(gpugrad.ones(2))], lr=0.5)
    other.load_state_dict(gpugrad.load(tmp_path / "opt.npz", map_location="cpu"))
    assert other.param_groups[0]["lr"] == 0.1 and other.param_groups[0]["betas"] == (0.9, 0.999)
    assert list(other.state.values())[0]["step"].item() == 1


class Net(nn.Module):   # at module level: pickle finds classes by name
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x).relu()


def test_a_whole_model_is_pickled_and_loads_only_when_trusted(tmp_path):
    gpugrad.manual_seed(0)
    net, x = Net(), gpugrad.randn(4, 3)
    gpugrad.save({"model": net, "epoch": 3}, tmp_path / "whole.pt")
    with pytest.raises(pickle.UnpicklingError, match="^Weights only load failed: the file holds "
                                                     "a pickled object of type Net"):
        gpugrad.load(tmp_path / "whole.pt")
    back = gpugrad.load(tmp_path / "whole.pt", weights_only=False)
    assert back["epoch"] == 3 and isinstance(back["model"], Net)
    assert isinstance(back["model"].fc.weight, nn.Parameter)
    np.testing.assert_array_equal(back["model"](x).detach().numpy(), net(x).detach().numpy())
    gpugrad.save(net, tmp_path / "net.pt")
    assert isinstance(gpugrad.load(tmp_path / "net.pt", weights_only=False, map_location="cpu"),
                      Net)


def test_unsupported_objects_are_refused(tmp_path):
    with pytest.raises(TypeError, match="cannot save an object of type function"):
        gpugrad.save({"f": lambda: 0}, tmp_path / "x.npz")


def test_foreign_files_give_clear_errors(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(SerializationError, match="is not a file written by gpugrad.save: it is "
                                                 "not a zip/npz archive"):
        gpugrad.load(text)
    plain = tmp_path / "plain.npz"
    np.savez(plain, a=np.zeros(3))
    with pytest.raises(SerializationError, match="has no gpugrad.json manifest"):
        gpugrad.load(plain)
    assert issubclass(SerializationError, RuntimeError)


def test_pickle_checkpoints_are_refused_without_running_them(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (open, (str(marker), "w"))

    import pickle
    ckpt = tmp_path / "model.pt"
    with zipfile.ZipFile(ckpt, "w") as z:
        z.writestr("archive/data.pkl", pickle.dumps(Evil()))
    with pytest.raises(SerializationError, match="looks like a PyTorch checkpoint"):
        gpugrad.load(ckpt)
    assert not marker.exists()


def test_truncated_and_corrupted_files(tmp_path):
    path = tmp_path / "m.npz"
    gpugrad.save({"w": gpugrad.randn(50, 50)}, path)
    data = path.read_bytes()
    cut = tmp_path / "cut.npz"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(SerializationError, match="is truncated"):
        gpugrad.load(cut)
    bad = bytearray(data)
    bad[200:210] = b"\x00" * 10   # inside the first array's bytes: the CRC no longer matches
    broken = tmp_path / "broken.npz"
    broken.write_bytes(bytes(bad))
    with pytest.raises(SerializationError, match="truncated or corrupted"):
        gpugrad.load(broken)


def test_map_location(tmp_path):
    path = tmp_path / "m.npz"
    gpugrad.save({"w": gpugrad.ones(2)}, path)
    assert gpugrad.load(path, map_location="cpu")["w"].device.type == "cpu"
    assert gpugrad.load(path, map_location={"cpu": "cpu"})["w"].tolist() == [1.0, 1.0]
    # PyTorch's callable form: (storage, location) -> storage
    assert gpugrad.load(path, map_location=lambda s, loc: s)["w"].device.type == "cpu"


# -- data loading ---------------------------------------------------------------------------------
def _dataset(n=10):
    return TensorDataset(gpugrad.arange(2 * n, dtype=gpugrad.float32).reshape(n, 2),
                         gpugrad.arange(n))


def test_tensor_dataset():
    ds = _dataset()
    assert len(ds) == 10
    x, y = ds[3]
    assert x.tolist() == [6.0, 7.0] and y.item() == 3
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        TensorDataset(gpugrad.zeros(3), gpugrad.zeros(4))


def test_dataloader_batches_in_order():
    loader = DataLoader(_dataset(), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and [b[1].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7],
                                                                      [8, 9]]
    assert batches[0][0].shape == (4, 2) and batches[0][0].dtype == gpugrad.float32
    dropped = DataLoader(_dataset(), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and [len(b[1]) for b in dropped] == [4, 4]


def test_dataloader_batches_are_copies():
    ds = _dataset()
    x, _ = next(iter(DataLoader(ds, batch_size=4)))
    x.zero_()
    assert ds.tensors[0][0].tolist() == [0.0, 1.0] and ds.tensors[0][1].tolist() == [2.0, 3.0]


def test_dataloader_shuffle_is_seeded():
    def epochs(seed, n=2):
        loader = DataLoader(_dataset(), batch_size=3, shuffle=True,
                            generator=gpugrad.Generator().manual_seed(seed))
        return [[v for b in loader for v in b[1].tolist()] for _ in range(n)]

    a, b = epochs(0), epochs(0)
    assert a == b                                     # same seed, same order
    assert a[0] != a[1]                               # a new order each epoch
    assert sorted(a[0]) == list(range(10))            # every sample once
    assert epochs(1)[0] != a[0]
    gpugrad.manual_seed(5)
    first = [v for b in DataLoader(_dataset(), batch_size=4, shuffle=True) for v in b[1].tolist()]
    gpugrad.manual_seed(5)
    again = [v for b in DataLoader(_dataset(), batch_size=4, shuffle=True) for v in b[1].tolist()]
    assert first == again                             # the global seed drives the default


def test_generic_dataset_path_matches_the_fast_path():
    class Squares(Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return gpugrad.tensor([float(i)]), i * i

    batches = list(DataLoader(Squares(), batch_size=2))
    assert [b[1].tolist() for b in batches] == [[0, 1], [4, 9], [16]]
    assert batches[0][0].shape == (2, 1)
    ds = _dataset()
    fast = list(DataLoader(ds, batch_size=4))
    slow = list(DataLoader(ds, batch_size=4, collate_fn=default_collate))
    for (a, b), (c, d) in zip(fast, slow):
        assert a.tolist() == c.tolist() and b.tolist() == d.tolist()


def test_default_collate_structures():
    out = default_collate([{"x": gpugrad.ones(2), "y": 1}, {"x": gpugrad.zeros(2), "y": 2}])
    assert out["x"].shape == (2, 2) and out["y"].tolist() == [1, 2]
    assert default_collate([1.5, 2.5]).dtype == gpugrad.float64
    assert default_collate(["a", "b"]) == ["a", "b"]


# -- built-in data sets ---------------------------------------------------------------------------
def test_spirals_are_deterministic_and_balanced():
    a, b = datasets.load("spirals"), datasets.load("spirals")
    assert all(np.array_equal(u.numpy(), v.numpy()) for u, v in zip(a, b))
    assert a.x_train.shape == (2250, 2) and a.x_test.shape == (750, 2)
    assert a.x_train.dtype == gpugrad.float32 and a.y_train.dtype == gpugrad.int64
    assert np.bincount(np.concatenate([a.y_train.numpy(), a.y_test.numpy()])).tolist() == [1000] * 3
    assert not np.array_equal(datasets.load("spirals", seed=1).x_train.numpy(), a.x_train.numpy())
    assert datasets.load("moons").y_train.max().item() == 1
    with pytest.raises(ValueError, match="unknown data set 'mnist'"):
        datasets.load("mnist")
