"""Data loading, optimizers and save/load behave as PyTorch's do: collation structure, dataset
errors, optimizer messages and numerics, storages shared through save/load, and checkpoints
written by PyTorch itself."""
from __future__ import annotations

import collections
import io
import pickle
import re
import struct
import zipfile

import numpy as np
import pytest

import gpugrad
from gpugrad import optim
from gpugrad.utils.data import (
    DataLoader,
    IterableDataset,
    TensorDataset,
    default_collate,
    random_split,
)

Point = collections.namedtuple("Point", "x y")


# -- default_collate ------------------------------------------------------------------------------
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


# -- datasets -------------------------------------------------------------------------------------
def test_tensor_dataset_errors_are_pytorchs():
    with pytest.raises(AssertionError, match="^Size mismatch between tensors$"):
        TensorDataset(gpugrad.zeros(3), gpugrad.zeros(4))
    with pytest.raises(IndexError, match="^tuple index out of range$"):
        TensorDataset()


def test_random_split_fractions_hand_out_the_remainder_round_robin():
    gpugrad.manual_seed(0)
    assert [len(s) for s in random_split(range(10), [0.33, 0.33, 0.34])] == [4, 3, 3]
    assert [len(s) for s in random_split(range(7), [0.1, 0.2, 0.3, 0.4])] == [1, 2, 2, 2]
    assert [len(s) for s in random_split(range(11), [0.5, 0.5])] == [6, 5]


def test_iterable_dataset_refuses_shuffle():
    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(3))

    with pytest.raises(ValueError, match=re.escape(
            "DataLoader with IterableDataset: expected unspecified shuffle option, but got "
            "shuffle=True")):
        DataLoader(Stream(), shuffle=True)


# -- optimizers -----------------------------------------------------------------------------------
def test_a_tensor_as_params_names_its_type():
    with pytest.raises(TypeError, match=re.escape(
            "params argument given to the optimizer should be an iterable of Tensors or dicts, "
            "but got gpugrad.FloatTensor")):
        optim.SGD(gpugrad.zeros(2, requires_grad=True), lr=0.1)


def test_adam_amsgrad_with_weight_decay_matches_pytorch_values():
    w = gpugrad.tensor([0.5, -1.0, 2.0], dtype=gpugrad.float64, requires_grad=True)
    opt = optim.Adam([w], lr=0.1, amsgrad=True, weight_decay=0.01)
    for k in range(5):
        opt.zero_grad()
        ((w ** 3).sum() * (1 if k % 2 else -1)).backward()
        opt.step()
    # values printed by torch 2.13 for the same steps
    np.testing.assert_allclose(w.tolist(), [0.598088139803425, -0.8309698771165656,
                                            2.1313629064939064], rtol=1e-12)
    np.testing.assert_allclose(opt.state[w]["max_exp_avg_sq"].tolist(),
                               [0.004931883387374039, 0.03030980475237974, 0.8500242052010174],
                               rtol=1e-12)


# -- save / load ----------------------------------------------------------------------------------
def _round_trip(obj, **kwargs):
    buf = io.BytesIO()
    gpugrad.save(obj, buf)
    buf.seek(0)
    return gpugrad.load(buf, **kwargs)


def test_views_of_one_tensor_load_as_views_of_one_buffer(device):
    t = gpugrad.arange(6.0, device=device)
    a, b, c, a2 = _round_trip([t, t[2:4], t.view(2, 3).t(), t])
    assert a is a2 and a.device == t.device
    b.fill_(-1)
    assert a.tolist() == [0.0, 1.0, -1.0, -1.0, 4.0, 5.0]
    assert c.tolist() == [[0.0, -1.0], [1.0, 4.0], [-1.0, 5.0]]
    assert c.stride() == (1, 3)
    if device == "cpu":   # simulated CuPy does not track offsets into one allocation
        assert b.storage_offset() == 2


def test_a_lone_transpose_keeps_its_strides_and_a_lone_slice_is_saved_alone():
    t = _round_trip(gpugrad.arange(6.0).reshape(2, 3).t())
    assert t.stride() == (1, 3) and not t.is_contiguous() and t.tolist() == [[0, 3], [1, 4],
                                                                              [2, 5]]
    s = _round_trip(gpugrad.arange(1000.0)[10:12])
    assert s.tolist() == [10.0, 11.0] and s.untyped_storage().nbytes() == 8


def test_plain_python_and_torch_values_load_with_weights_only():
    obj = {"set": {1, 2}, "frozen": frozenset({3}), "c": 1 + 2j, "b": b"\x00ab",
           "dtype": gpugrad.float16, "dev": gpugrad.device("cpu"), "size": gpugrad.Size([2, 3]),
           "inf": float("inf")}
    back = _round_trip(obj)
    assert back["set"] == {1, 2} and type(back["frozen"]) is frozenset
    assert back["c"] == 1 + 2j and back["b"] == b"\x00ab" and back["inf"] == float("inf")
    assert back["dtype"] == gpugrad.float16 and back["dev"] == gpugrad.device("cpu")
    assert type(back["size"]) is gpugrad.Size and back["size"] == (2, 3)


def test_map_location_may_be_a_function():
    seen = []

    def keep(storage, location):
        seen.append(location)
        return storage

    t = _round_trip(gpugrad.ones(2), map_location=keep)
    assert t.device.type == "cpu" and t.tolist() == [1.0, 1.0] and seen == ["cpu"]
    assert _round_trip(gpugrad.ones(1), map_location=lambda s, loc: None).device.type == "cpu"


def test_saving_into_a_missing_directory(tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(RuntimeError, match=re.escape(f"Parent directory {missing} does not "
                                                     "exist.")):
        gpugrad.save(gpugrad.ones(1), missing / "x.pt")


# -- checkpoints written by PyTorch ---------------------------------------------------------------
def _unicode(s):
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b


def _torch_checkpoint(extra_global=None):
    """{'w': a 2x3 float32 tensor over storage '0', 'v': its column view, 'n': 3}, written as
    torch.save writes it (protocol 2 pickle + raw storage records)."""
    def tensor(offset, size, stride):
        ints = b"".join(b"K" + bytes([n]) for n in size) + b"\x86"
        strides = b"".join(b"K" + bytes([n]) for n in stride) + b"\x86"
        return (b"ctorch._utils\n_rebuild_tensor_v2\n("
                + b"(" + _unicode("storage") + b"ctorch\nFloatStorage\n" + _unicode("0")
                + _unicode("cpu") + b"K\x06tQ"
                + b"K" + bytes([offset]) + ints + strides + b"\x89"
                + b"ccollections\nOrderedDict\n)RtR")
    body = (b"\x80\x02}(" + _unicode("w") + tensor(0, (2, 3), (3, 1))
            + _unicode("v") + tensor(1, (2, 1), (3, 1)) + _unicode("n") + b"K\x03")
    if extra_global:
        body += _unicode("x") + b"c" + extra_global + b"\n" + _unicode("echo") + b"\x85R"
    body += b"u."
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("archive/data.pkl", body)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/data/0", np.arange(6, dtype="<f4").tobytes())
        z.writestr("archive/version", "3\n")
    buf.seek(0)
    return buf


def test_a_pytorch_checkpoint_loads(device):
    back = gpugrad.load(_torch_checkpoint(), map_location=device)
    assert back["n"] == 3 and back["w"].dtype == gpugrad.float32
    assert back["w"].device.type == device
    assert back["w"].tolist() == [[0, 1, 2], [3, 4, 5]] and back["v"].tolist() == [[1], [4]]
    back["v"].fill_(-1)
    assert back["w"].tolist() == [[0, -1, 2], [3, -1, 5]]


def test_a_pytorch_checkpoint_cannot_run_code(tmp_path):
    with pytest.raises(pickle.UnpicklingError, match="unsupported global posix.system"):
        gpugrad.load(_torch_checkpoint(extra_global=b"posix\nsystem"))


def test_checkpoints_from_torch_save_load():
    torch = pytest.importorskip("torch")
    gpugrad.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(lin.parameters(), lr=0.01)
    lin(torch.ones(1, 3)).sum().backward()
    opt.step()
    base = torch.arange(6.0)
    buf = io.BytesIO()
    torch.save({"model": lin.state_dict(), "optim": opt.state_dict(), "views": [base, base[2:4]],
                "half": torch.ones(2, dtype=torch.float16), "p": torch.nn.Parameter(
                    torch.ones(1)), "size": torch.Size([4]), "dtype": torch.int64}, buf)
    buf.seek(0)
    back = gpugrad.load(buf)
    mine = gpugrad.nn.Linear(3, 2)
    mine.load_state_dict(back["model"])
    np.testing.assert_array_equal(mine.weight.detach().numpy(), lin.weight.detach().numpy())
    adam = optim.Adam(mine.parameters(), lr=0.5)
    adam.load_state_dict(back["optim"])
    assert adam.param_groups[0]["lr"] == 0.01 and adam.state[mine.weight]["step"].item() == 1
    back["views"][1].fill_(7)
    assert back["views"][0].tolist() == [0, 1, 7, 7, 4, 5]
    assert back["half"].dtype == gpugrad.float16 and isinstance(back["p"], gpugrad.nn.Parameter)
    assert type(back["size"]) is gpugrad.Size and back["dtype"] == gpugrad.int64
