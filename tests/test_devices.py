"""Devices, the CUDA API without a GPU, device mismatches, DLPack and the one-module-imports-cupy
rule. What needs a real GPU is marked ``gpu`` and skips with a reason without one."""
from __future__ import annotations

import pathlib
import re

import numpy as np
import pytest

import gpugrad
from gpugrad import _backend
from gpugrad.ops._op import out_of_memory

ROOT = pathlib.Path(gpugrad.__file__).parent


def test_device_parsing_and_equality():
    assert str(gpugrad.device("cuda:1")) == "cuda:1"
    assert repr(gpugrad.device("cuda", 0)) == "device(type='cuda', index=0)"
    assert repr(gpugrad.device("cpu")) == "device(type='cpu')"
    assert gpugrad.device(1) == "cuda:1"
    assert gpugrad.tensor([1.0]).device == "cpu"
    assert gpugrad.tensor([1.0]).device == gpugrad.device("cpu")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type"):
        gpugrad.device("tpu")
    with pytest.raises(RuntimeError, match="Invalid device string"):
        gpugrad.device("cuda:x")


def test_only_the_backend_imports_cupy():
    offenders = []
    for path in ROOT.rglob("*.py"):
        if path.name == "_backend.py":
            continue
        text = path.read_text()
        if re.search(r"^\s*(import cupy|from cupy)", text, re.M):
            offenders.append(path.name)
    assert offenders == []


@pytest.mark.skipif(gpugrad.cuda.is_available(), reason="checks the no-GPU behaviour")
def test_cuda_api_without_a_gpu_answers_or_says_what_is_missing():
    assert gpugrad.cuda.is_available() is False
    assert gpugrad.cuda.device_count() == 0
    assert gpugrad.cuda.memory_allocated() == 0
    assert gpugrad.cuda.max_memory_allocated() == 0
    gpugrad.cuda.synchronize()       # a no-op, not an error
    gpugrad.cuda.empty_cache()
    with pytest.raises(RuntimeError, match=r"device 'cuda' needs (CuPy|an NVIDIA GPU)"):
        gpugrad.zeros(3, device="cuda")
    with pytest.raises(RuntimeError, match=r"gpugrad\[cuda\]|nvidia-smi"):
        gpugrad.ones(2).to("cuda")


def test_missing_cupy_message_names_the_install_command(monkeypatch):
    monkeypatch.setattr(_backend, "_cupy", False)
    monkeypatch.setattr(_backend, "_cupy_error", ImportError("No module named 'cupy'"))
    with pytest.raises(RuntimeError, match=re.escape('pip install -e ".[cuda]"')):
        gpugrad.randn(2, device="cuda")


def test_default_device_from_setting_and_environment(monkeypatch):
    try:
        gpugrad.set_default_device("cpu")
        assert gpugrad.get_default_device() == "cpu"
        gpugrad.set_default_device(None)
        monkeypatch.setenv("GPUGRAD_DEVICE", "cuda:0")
        assert gpugrad.get_default_device() == gpugrad.device("cuda", 0)
    finally:
        gpugrad.set_default_device(None)
        monkeypatch.delenv("GPUGRAD_DEVICE", raising=False)
    assert gpugrad.get_default_device() == "cpu"


def test_out_of_memory_error_names_the_size():
    class FakeOutOfMemory(MemoryError):
        pass
    FakeOutOfMemory.__module__ = "cupy.cuda.memory"
    err = out_of_memory(FakeOutOfMemory("Out of memory allocating 1,073,741,824 bytes "
                                        "(allocated so far: 0 bytes)."), "MulBackward0")
    assert isinstance(err, gpugrad.cuda.OutOfMemoryError) and isinstance(err, RuntimeError)
    assert str(err).startswith("CUDA out of memory. Tried to allocate 1024.00 MiB (in "
                               "MulBackward0)")


def test_dlpack_round_trip_shares_memory_on_cpu():
    a = np.arange(4.0)
    t = gpugrad.from_dlpack(a)
    t.add_(1)                                   # in place, through the shared memory
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0, 4.0])
    back = np.from_dlpack(gpugrad.tensor([1.0, 2.0]))
    np.testing.assert_array_equal(back, [1.0, 2.0])
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        gpugrad.ones(2, requires_grad=True).__dlpack__()


def test_dlpack_capsule_shares_memory_and_is_consumed_once():
    base = gpugrad.arange(12.0).reshape(3, 4)
    src = base[:, 1::2]                          # strided: the capsule carries the strides
    capsule = src.__dlpack__()
    t = gpugrad.from_dlpack(capsule)
    assert t.shape == (3, 2) and t.tolist() == [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]
    t.mul_(10)                                   # writes reach the producer's memory
    assert base[1].tolist() == [4.0, 50.0, 6.0, 70.0]
    with pytest.raises(RuntimeError, match="capsule can be consumed only once"):
        gpugrad.from_dlpack(capsule)
    with pytest.raises(TypeError, match=re.escape(
            "from_dlpack() expects a DLPack producer (an object with __dlpack__) or a DLPack "
            "capsule, got list")):
        gpugrad.from_dlpack([1.0, 2.0])


def test_writing_through_read_only_memory_names_the_cause():
    a = np.arange(3.0)
    a.setflags(write=False)
    t = gpugrad.from_numpy(a)
    with pytest.raises(RuntimeError, match=re.escape(
            "a tensor sharing memory with a read-only array cannot be written in place")):
        t.add_(1)
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        gpugrad.ones(3).expand(2, 3).add_(1)    # an expanded view: overlap, not read-only


@pytest.mark.gpu
def test_dlpack_zero_copy_with_cupy():
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    cupy = _backend.cupy_module()
    a = cupy.arange(6, dtype=cupy.float32)
    t = gpugrad.from_dlpack(a)
    t.add_(1)
    assert t.device == gpugrad.device("cuda", 0)
    assert cupy.asnumpy(a).tolist() == [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    c = gpugrad.from_dlpack(a.toDlpack())        # a bare capsule from CuPy's legacy export
    c.mul_(2)
    assert cupy.asnumpy(a).tolist() == [2.0, 4.0, 6.0, 8.0, 10.0, 12.0]
    back = cupy.from_dlpack(gpugrad.ones(2, device="cuda"))
    assert back.device.id == 0 and cupy.asnumpy(back).tolist() == [1.0, 1.0]
    assert gpugrad.ones(2, device="cuda").__dlpack_device__() == (2, 0)   # kDLCUDA


def test_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    t = gpugrad.from_dlpack(torch.arange(3.0))
    assert t.tolist() == [0.0, 1.0, 2.0]
    assert torch.from_dlpack(gpugrad.tensor([5.0, 6.0])).tolist() == [5.0, 6.0]
    shared = torch.zeros(3)
    gpugrad.from_dlpack(torch.utils.dlpack.to_dlpack(shared)).add_(2)   # PyTorch's capsule
    assert shared.tolist() == [2.0, 2.0, 2.0]


@pytest.mark.gpu
def test_mixing_devices_names_both_devices_and_the_op():
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    a, b = gpugrad.ones(2, device="cuda"), gpugrad.ones(2)
    with pytest.raises(RuntimeError, match=re.escape(
            "Expected all tensors to be on the same device, but found at least two devices, "
            "cuda:0 and cpu! (in MulBackward0)")):
        a * b


@pytest.mark.gpu
def test_a_cpu_scalar_tensor_joins_gpu_tensors_as_in_pytorch():
    """PyTorch lets a 0-d CPU tensor take part in an op on another device (a scalar there);
    its gradient comes back to the CPU. A CPU tensor with dimensions still refuses."""
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    x = gpugrad.tensor([1.0, 2.0, 3.0], device="cuda", requires_grad=True)
    s = gpugrad.tensor(2.0, requires_grad=True)
    y = x ** s * gpugrad.tensor(3.0) + s
    assert y.device == gpugrad.device("cuda", 0)
    y.sum().backward()
    assert x.grad.device.type == "cuda" and s.grad.device.type == "cpu"
    assert x.grad.cpu().tolist() == [6.0, 12.0, 18.0]
    assert s.grad.item() == pytest.approx(3 * sum(v * v * np.log(v) for v in (1, 2, 3)) + 3)
    assert (x > gpugrad.tensor(1.5)).cpu().tolist() == [False, True, True]
    assert (gpugrad.tensor(1.5) < x).cpu().tolist() == [False, True, True]
    z = x.detach().clone()
    z.mul_(gpugrad.tensor(2.0))
    assert z.cpu().tolist() == [2.0, 4.0, 6.0]
    with pytest.raises(RuntimeError, match=re.escape(
            "found at least two devices, cuda:0 and cpu! (in MulBackward0)")):
        x * gpugrad.tensor([2.0])
    with pytest.raises(RuntimeError, match=re.escape(
            "found at least two devices, cpu and cuda:0! (in MulBackward0)")):
        gpugrad.tensor([2.0]) * gpugrad.tensor(2.0, device="cuda")


@pytest.mark.gpu
def test_default_device_places_what_pytorch_places():
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    gpugrad.set_default_device("cuda")
    try:
        made = {"tensor(list)": gpugrad.tensor([1.0]), "tensor(ndarray)": gpugrad.tensor(
            np.ones(2)), "as_tensor(ndarray)": gpugrad.as_tensor(np.ones(2)),
            "zeros": gpugrad.zeros(2), "Linear": gpugrad.nn.Linear(2, 3).weight,
            "randn": gpugrad.randn(2)}
        assert {k: v.device.type for k, v in made.items()} == dict.fromkeys(made, "cuda")
        assert gpugrad.from_numpy(np.ones(2)).device.type == "cpu"    # shares host memory
        assert gpugrad.tensor(gpugrad.ones(2, device="cpu")).device.type == "cpu"
    finally:
        gpugrad.set_default_device(None)


@pytest.mark.gpu
def test_numpy_of_a_gpu_tensor_says_call_cpu_first():
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    with pytest.raises(TypeError, match=re.escape("Use Tensor.cpu() to copy the tensor to host")):
        gpugrad.ones(2, device="cuda").numpy()
    assert gpugrad.ones(2, device="cuda").cpu().numpy().tolist() == [1.0, 1.0]


@pytest.mark.gpu
def test_training_on_cuda_matches_cpu_accuracy(tmp_path):
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    import io

    from gpugrad import train
    kw = dict(epochs=12, out=str(tmp_path / "m.safetensors"), progress=False, file=io.StringIO())
    cpu = train.train(device="cpu", **kw)
    gpu = train.train(device="cuda", **kw)
    assert gpu["device"].startswith("cuda")
    # same data, seed and schedule; the float32 reductions differ in order, not in outcome
    assert abs(gpu["test_accuracy"] - cpu["test_accuracy"]) <= 0.02
    assert gpu["test_accuracy"] >= 0.95


def _cross_entropy_both(device, x, t, **kw):
    """(loss, grad) of cross_entropy on ``device`` as numpy."""
    xt = gpugrad.tensor(x, device=device, requires_grad=True)
    loss = gpugrad.nn.functional.cross_entropy(xt, gpugrad.tensor(t, device=device), **kw)
    loss.sum().backward()
    return loss.detach().cpu().numpy(), xt.grad.cpu().numpy()


@pytest.mark.gpu
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(7, 5), (3, 5, 4)], ids=["rows", "spatial"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_cross_entropy_on_cuda_matches_cpu(reduction, shape, weighted):
    # the GPU runs log_softmax, its backward and the NLL rows as kernels, and the NLL gradient
    # as a one-hot select: same values, same +0 off the targets, ignored rows included
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape)
    t = rng.integers(0, shape[1], (shape[0],) + shape[2:])
    t.reshape(-1)[::3] = -100
    kw = dict(reduction=reduction)
    if weighted:
        kw["weight"] = rng.uniform(0.5, 2.0, shape[1])
    cpu = _cross_entropy_both("cpu", x, t, **{**kw, **(
        {"weight": gpugrad.tensor(kw["weight"])} if weighted else {})})
    gpu = _cross_entropy_both("cuda", x, t, **{**kw, **(
        {"weight": gpugrad.tensor(kw["weight"], device="cuda")} if weighted else {})})
    for c, g in zip(cpu, gpu):
        np.testing.assert_allclose(g, c, rtol=1e-12, atol=1e-12)
    assert not np.signbit(gpu[1][gpu[1] == 0]).any()


@pytest.mark.gpu
def test_cross_entropy_target_out_of_range_is_nan_on_cuda_and_an_error_on_cpu():
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    x, t = np.zeros((2, 3)), np.array([0, 3])
    with pytest.raises(IndexError, match="Target 3 is out of bounds."):
        _cross_entropy_both("cpu", x, t)
    loss, _ = _cross_entropy_both("cuda", x, t)
    assert np.isnan(loss)   # checking on the device would cost a sync every step
