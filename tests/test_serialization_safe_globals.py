"""The weights-only allow-list (``torch.serialization.add_safe_globals`` and kin) and the
environment switches of ``load``'s default, as PyTorch >= 2.6 has them."""
import io
import pickle
import re
import warnings

import numpy as np
import pytest

import gpugrad
from gpugrad import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.bn = nn.BatchNorm1d(2)

    def forward(self, x):
        return self.bn(self.fc(x))


class Plain:
    def __init__(self, v):
        self.v = v


class Evil:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


@pytest.fixture(autouse=True)
def _no_globals_left(monkeypatch):
    monkeypatch.delenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", raising=False)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", raising=False)
    gpugrad.serialization.clear_safe_globals()
    yield
    gpugrad.serialization.clear_safe_globals()


def _saved(obj):
    f = io.BytesIO()
    gpugrad.save(obj, f)
    f.seek(0)
    return f


def test_serialization_is_an_attribute_with_the_allow_list_functions():
    s = gpugrad.serialization
    for name in ("add_safe_globals", "safe_globals", "get_safe_globals", "clear_safe_globals"):
        assert callable(getattr(s, name))


def test_a_whole_model_loads_weights_only_inside_safe_globals(tmp_path):
    gpugrad.manual_seed(0)
    net, x = Net(), gpugrad.randn(4, 3)
    net.eval()
    gpugrad.save(net, tmp_path / "m.pt")
    with pytest.raises(pickle.UnpicklingError, match=r"(?s)^Weights only load failed\. .*GLOBAL "
                                                     rf"{re.escape(Net.__module__)}\.Net was not"):
        gpugrad.load(tmp_path / "m.pt")
    with gpugrad.serialization.safe_globals([Net, nn.Linear, nn.BatchNorm1d]):
        back = gpugrad.load(tmp_path / "m.pt")
    assert isinstance(back, Net) and isinstance(back.fc.weight, nn.Parameter)
    np.testing.assert_array_equal(back(x).detach().numpy(), net(x).detach().numpy())
    with pytest.raises(pickle.UnpicklingError):   # the context manager's list is gone
        gpugrad.load(tmp_path / "m.pt")


def test_add_get_and_clear_safe_globals():
    f = _saved(Plain(3))
    with pytest.raises(pickle.UnpicklingError, match=r"add_safe_globals\(\[[\w.]*Plain\]\)"):
        gpugrad.load(f)
    gpugrad.serialization.add_safe_globals([Plain])
    assert gpugrad.serialization.get_safe_globals() == [Plain]
    f.seek(0)
    assert gpugrad.load(f).v == 3
    gpugrad.serialization.clear_safe_globals()
    assert gpugrad.serialization.get_safe_globals() == []
    f.seek(0)
    with pytest.raises(pickle.UnpicklingError):
        gpugrad.load(f)


def test_a_global_listed_under_another_name_is_matched_by_that_name():
    f = _saved(Plain(5))
    gpugrad.serialization.add_safe_globals([(Plain, f"{Plain.__module__}.Plain")])
    assert gpugrad.load(f).v == 5
    with pytest.raises(TypeError, match="expected a class or function"):
        gpugrad.serialization.add_safe_globals([3])


def test_a_global_not_listed_never_runs(tmp_path):
    marker = tmp_path / "ran"
    f = _saved({"x": Evil(marker)})
    with gpugrad.serialization.safe_globals([Plain, Net]):
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL (io|builtins).open was not"):
            gpugrad.load(f)
    assert not marker.exists()


def test_the_refusal_says_what_pytorchs_says():
    torch = pytest.importorskip("torch")
    f = io.BytesIO()
    torch.save(Plain(1), f)
    f.seek(0)
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(f)
    with pytest.raises(pickle.UnpicklingError) as ours:
        gpugrad.load(_saved(Plain(1)))
    plain = re.sub(r"\x1b\[\d+m", "", str(theirs.value))
    for msg in (plain, str(ours.value)):
        assert msg.startswith("Weights only load failed. This file can still be loaded, to do so "
                              "you have two options, do those steps only if you trust the source "
                              "of the checkpoint. ")
    line = re.compile(r"WeightsUnpickler error: .*")
    assert line.search(str(ours.value)).group() == line.search(plain).group()
    # PyTorch's own layout, read by gpugrad, is refused alike and loads once allowed
    f.seek(0)
    with pytest.raises(pickle.UnpicklingError) as read:
        gpugrad.load(f)
    assert line.search(str(read.value)).group() == line.search(plain).group()
    f.seek(0)
    with gpugrad.serialization.safe_globals([Plain]):
        assert gpugrad.load(f).v == 1


def test_numpy_arrays_pickled_by_pytorch_need_the_allow_list_but_gpugrads_are_data():
    torch = pytest.importorskip("torch")
    f = io.BytesIO()
    torch.save({"a": np.arange(3)}, f)
    f.seek(0)
    with pytest.raises(pickle.UnpicklingError, match=r"GLOBAL numpy\.[\w.]*_reconstruct was not"):
        gpugrad.load(f)
    f.seek(0)
    multiarray = np._core.multiarray if hasattr(np, "_core") else np.core.multiarray
    with gpugrad.serialization.safe_globals([multiarray._reconstruct, np.ndarray, np.dtype,
                                             type(np.dtype(np.int64))]):
        assert gpugrad.load(f)["a"].tolist() == [0, 1, 2]
    # gpugrad's own format stores an array as an .npy member (numeric data, no pickle)
    assert gpugrad.load(_saved({"a": np.arange(3)}))["a"].tolist() == [0, 1, 2]


def test_the_environment_switches_weights_only_as_pytorch_does(monkeypatch):
    f = _saved(Plain(2))
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        assert gpugrad.load(f).v == 2
    f.seek(0)
    with pytest.raises(pickle.UnpicklingError):   # an explicit True is kept
        gpugrad.load(f, weights_only=True)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "true")
    with pytest.raises(RuntimeError, match="Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD`"):
        gpugrad.load(f)
    monkeypatch.delenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD")
    f.seek(0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(pickle.UnpicklingError):   # forced over an explicit False
            gpugrad.load(f, weights_only=False)
