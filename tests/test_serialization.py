"""gpugrad.save / gpugrad.load: state dicts, nested values, whole models, map_location, refused and
foreign files, storages shared through save/load, and checkpoints written by PyTorch itself."""
from __future__ import annotations

import io
import json
import math
import os
import pickle
import re
import struct
import zipfile
from collections import OrderedDict

import numpy as np
import pytest

import gpugrad
import gpugrad.nn as nn
import gpugrad.optim as optim
from gpugrad.serialization import SerializationError


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
    with pytest.raises(pickle.UnpicklingError,
                       match=r"(?s)^Weights only load failed\. .*GLOBAL [\w.]*Net was not"):
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
    with pytest.raises(pickle.UnpicklingError,
                       match="Unsupported global: GLOBAL posix.system was not"):
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


def test_a_model_pickled_under_the_old_module_paths_still_loads():
    # before the layout of docs/architecture.md, Linear and ReLU lived in gpugrad/nn/layers.py
    # and Sequential in gpugrad/nn/containers.py: a whole model saved then names them so
    from gpugrad import serialization
    gpugrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
    data = pickle.dumps(model, protocol=2)   # protocol 2 spells each class "module\nname\n"
    for new, old in ((b"gpugrad.nn.modules.linear\n", b"gpugrad.nn.layers\n"),
                     (b"gpugrad.nn.modules.activation\n", b"gpugrad.nn.layers\n"),
                     (b"gpugrad.nn.modules.container\n", b"gpugrad.nn.containers\n")):
        assert new in data
        data = data.replace(new, old)
    with pytest.raises(ModuleNotFoundError, match="gpugrad.nn.containers"):
        pickle.loads(data)
    back = serialization._loads(data)
    assert [type(m) for m in back] == [nn.Linear, nn.ReLU]
    x = gpugrad.randn(4, 3)
    assert back(x).tolist() == model(x).tolist()


# -- hostile and damaged files, concurrent and failing saves ---------------------------------------
def _rewrite(path, out, **members):
    """A copy of the archive at ``path`` with the given members' bytes replaced or added."""
    with zipfile.ZipFile(path) as z:
        old = {n: z.read(n) for n in z.namelist()}
    old.update(members)
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_STORED) as z:
        for n, data in old.items():
            z.writestr(n, data)
    return out


def _npy(descr, shape, payload=b"", fortran=False):
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": fortran,
                                               "shape": shape})
    return buf.getvalue() + payload


def test_an_object_dtype_in_a_member_is_refused_not_built(tmp_path):
    # numpy would build an object array whose pointers are the file's bytes: the first use
    # crashes the process
    path = tmp_path / "a.npz"
    gpugrad.save({"w": gpugrad.ones(2)}, path)
    evil = _rewrite(path, tmp_path / "evil.npz", **{"t0.npy": _npy("|O", (2,), b"\x41" * 16)})
    with pytest.raises(SerializationError, match=r"member 't0.npy' has dtype '\|O'; only bool, "
                                                 r"integer, float and complex data is read"):
        gpugrad.load(evil)
    structured = _rewrite(path, tmp_path / "s.npz", **{
        "t0.npy": _npy([("a", "<f4"), ("b", "|O")], (1,), b"\x00" * 12)})
    with pytest.raises(SerializationError, match="only bool, integer, float and complex"):
        gpugrad.load(structured)


def test_an_object_dtype_in_the_manifest_is_refused(tmp_path):
    x = gpugrad.arange(6.0)
    path = tmp_path / "v.npz"
    gpugrad.save({"a": x, "b": x[2:]}, path)   # two views of one storage
    with zipfile.ZipFile(path) as z:
        manifest = json.loads(z.read("gpugrad.json"))
    text = json.dumps(manifest)
    assert '"dtype": "<f4"' in text
    for bad in ("|O", "V8"):
        evil = _rewrite(path, tmp_path / "m.npz", **{
            "gpugrad.json": text.replace('"dtype": "<f4"', f'"dtype": "{bad}"').encode()})
        with pytest.raises(SerializationError, match="only bool, integer, float and complex"):
            gpugrad.load(evil)
    as_value = _rewrite(path, tmp_path / "d.npz", **{"gpugrad.json": json.dumps(
        {"format": "gpugrad.save", "version": 2, "object": {"dtype": "|O"}}).encode()})
    with pytest.raises(SerializationError, match="a saved dtype has dtype '\\|O'"):
        gpugrad.load(as_value)


def test_a_header_describing_more_data_than_the_member_holds_is_refused(tmp_path):
    path = tmp_path / "a.npz"
    gpugrad.save({"w": gpugrad.ones(4)}, path)
    for shape in ((2,), (2 ** 50,)):    # too short (silently wrong before), absurdly long
        bad = _rewrite(path, tmp_path / "h.npz", **{
            "t0.npy": _npy("<f4", shape, np.ones(4, np.float32).tobytes())})
        with pytest.raises(SerializationError, match=r"member 't0.npy' holds 16 bytes of data "
                                                     r"where its header describes \d+"):
            gpugrad.load(bad)
    deep = _rewrite(path, tmp_path / "r.npz", **{"t0.npy": _npy("<f4", (4,))[:10] + (
        b"{'descr': " + b"[" * 3000 + b"]" * 3000 + b"}").ljust(118) + b"\n"})
    with pytest.raises(SerializationError, match="member 't0.npy' has a damaged header"):
        gpugrad.load(deep)


def test_every_single_bit_flip_loads_the_same_values_or_raises_serialization_error(tmp_path):
    path = tmp_path / "a.npz"
    want = np.arange(3, dtype=np.float32)
    gpugrad.save({"w": gpugrad.tensor(want)}, path)
    data = path.read_bytes()
    flipped = tmp_path / "f.npz"
    raised = 0
    for i in range(len(data)):
        for bit in (0, 3, 6):
            bad = bytearray(data)
            bad[i] ^= 1 << bit
            flipped.write_bytes(bytes(bad))
            try:
                got = gpugrad.load(flipped)
            except SerializationError:
                raised += 1
                continue
            # what loads is what was saved (a flip in bytes the reader never uses)
            np.testing.assert_array_equal(got["w"].numpy(), want)
    assert raised > len(data)   # most flips are caught, none slips through as other values


def test_weights_only_none_is_the_safe_default(tmp_path):
    path = tmp_path / "m.pt"
    gpugrad.save({"model": nn.Linear(2, 2)}, path)   # a whole module: pickled
    for weights_only in (None, True):
        with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
            gpugrad.load(path, weights_only=weights_only)
    assert isinstance(gpugrad.load(path, weights_only=False)["model"], nn.Linear)


def _save_repeatedly(path, value, rounds):
    import gpugrad as g
    for _ in range(rounds):
        g.save({"w": g.full((50_000,), float(value))}, path)


def test_two_processes_saving_to_one_path_leave_a_whole_file(tmp_path):
    import multiprocessing as mp
    path = str(tmp_path / "shared.npz")
    ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
    procs = [ctx.Process(target=_save_repeatedly, args=(path, v, 25)) for v in (1, 2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    w = gpugrad.load(path)["w"].numpy()
    assert w.shape == (50_000,) and len(set(w.tolist())) == 1 and w[0] in (1.0, 2.0)
    assert sorted(os.listdir(tmp_path)) == ["shared.npz"]   # no temp file left behind


def test_save_flushes_the_file_before_the_rename_and_the_directory_after(tmp_path, monkeypatch):
    from gpugrad import serialization
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(serialization.os, "fsync", lambda fd: (events.append(
        ("fsync", os.path.isdir(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self/fd")
         else None)), real_fsync(fd))[1])
    monkeypatch.setattr(serialization.os, "replace", lambda a, b: (events.append(
        ("replace", None)), real_replace(a, b))[1])
    gpugrad.save({"w": gpugrad.ones(3)}, tmp_path / "a.npz")
    assert [e[0] for e in events] == ["fsync", "replace", "fsync"]
    if events[0][1] is not None:   # Linux: the first is the file, the last the directory
        assert (events[0][1], events[2][1]) == (False, True)


def test_a_failed_save_keeps_the_old_file_and_leaves_no_temp_file(tmp_path, monkeypatch):
    from gpugrad import serialization
    path = tmp_path / "a.npz"
    gpugrad.save({"w": gpugrad.ones(3)}, path)
    before = path.read_bytes()

    def half_then_full_disk(fh, arrays, manifest):
        fh.write(b"PK\x03\x04 partial")
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(serialization, "_write", half_then_full_disk)
    with pytest.raises(OSError, match="No space left"):
        gpugrad.save({"w": gpugrad.zeros(3)}, path)
    assert sorted(os.listdir(tmp_path)) == ["a.npz"]
    assert path.read_bytes() == before
    monkeypatch.undo()
    assert gpugrad.load(path)["w"].tolist() == [1.0, 1.0, 1.0]


def test_bit_flips_in_a_default_pt_checkpoint_load_the_same_values_or_raise(tmp_path):
    """A .pt path is written in PyTorch's layout (when the object fits): its reader keeps the
    guarantee of gpugrad's own format. Every 5th bit of the file is flipped in turn."""
    sd = {"w": gpugrad.arange(6.0).reshape(2, 3), "b": gpugrad.tensor([1, 2])}
    path = tmp_path / "ck.pt"
    gpugrad.save(sd, path)
    data = path.read_bytes()
    assert data[:2] == b"PK"
    bad = tmp_path / "bad.pt"
    for bit in range(0, len(data) * 8, 5):
        flipped = bytearray(data)
        flipped[bit // 8] ^= 1 << (bit % 8)
        bad.write_bytes(bytes(flipped))
        try:
            out = gpugrad.load(bad)
        except SerializationError as e:
            assert str(bad) in str(e)
            continue
        assert sorted(out) == ["b", "w"], bit
        for k in sd:
            assert out[k].dtype == sd[k].dtype and out[k].tolist() == sd[k].tolist(), bit
