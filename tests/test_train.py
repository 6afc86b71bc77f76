"""The seed-004 loop, the `gpugrad train` command and the examples."""
from __future__ import annotations

import io
import re
import runpy
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import gpugrad
import gpugrad.nn as nn
import gpugrad.optim as optim
from gpugrad import datasets, train
from gpugrad.__main__ import main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_seed004_loop_converges():
    """nn.Linear(1, 1) + SGD + MSELoss on one point (x=1, y=2): the residual r = w + b - 2 shrinks
    by exactly 1 - lr * 2 * 2 = 0.96 per step, and w - b never changes (equal gradients)."""
    gpugrad.manual_seed(0)
    model = nn.Linear(1, 1).double()
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    x = gpugrad.tensor([[1.0]], dtype=gpugrad.float64, requires_grad=True)
    target = gpugrad.tensor([[2.0]], dtype=gpugrad.float64)
    w0, b0 = model.weight.item(), model.bias.item()
    for _ in range(100):
        optimizer.zero_grad()
        loss = nn.MSELoss()(model(x), target)
        loss.backward()
        optimizer.step()
    w, b = model.weight.item(), model.bias.item()
    assert w + b - 2 == pytest.approx((w0 + b0 - 2) * 0.96 ** 100, rel=1e-9)
    assert w - b == pytest.approx(w0 - b0, abs=1e-12)
    assert model(x).item() == pytest.approx(2.0, abs=0.05)
    assert x.grad is not None   # the input asked for a gradient and got one


def test_seed004_example_runs(capsys):
    runpy.run_path(str(EXAMPLES / "seed004_linear.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "(target 2.0)" in out and "AddmmBackward0" in out


def _run(tmp_path, *extra):
    """A CPU run (bit-for-bit repeatable); test_devices compares a CUDA run with it."""
    out = io.StringIO()
    result = train.train(device="cpu", epochs=12, out=str(tmp_path / "model.safetensors"),
                         progress=False, file=out, **dict(extra))
    return result, out.getvalue()


def test_train_reaches_accuracy_deterministically(tmp_path):
    a, text = _run(tmp_path)
    assert a["device"] == "cpu" and a["steps"] == 12 * 36
    assert a["test_accuracy"] >= 0.95 and a["train_accuracy"] >= 0.95
    assert "test accuracy" in text and "steps/s" in text
    saved = gpugrad.load(tmp_path / "model.safetensors")
    b, _ = _run(tmp_path)
    assert (a["train_accuracy"], a["test_accuracy"], a["loss"]) == (
        b["train_accuracy"], b["test_accuracy"], b["loss"])
    again = gpugrad.load(tmp_path / "model.safetensors")
    for k in saved:   # same seed, same bits
        np.testing.assert_array_equal(saved[k].numpy(), again[k].numpy())
    model = train.build_model(64, 2)
    model.load_state_dict(again)
    split = datasets.load()
    assert train.accuracy(model, split.x_test, split.y_test) == a["test_accuracy"]


def test_train_seed_and_optimizer_options(tmp_path):
    r, text = _run(tmp_path, ("seed", 1), ("optimizer", "sgd"), ("width", 16), ("depth", 1),
                   ("batch_size", 128))
    assert "MLP 2-16-3" in text and "sgd lr 0.1" in text and r["steps"] == 12 * 18


def test_command_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--epochs", "2", "--width", "8", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "train accuracy" in out and (tmp_path / "model.safetensors").exists()
    assert main([]) == 2
    assert "train" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["train", "--epochs", "0"])


def test_the_default_out_is_a_safetensors_file_that_pytorch_reads(tmp_path, capsys, monkeypatch):
    safetensors_torch = pytest.importorskip("safetensors.torch")
    monkeypatch.chdir(tmp_path)
    assert main(["train", "--epochs", "1", "--width", "8", "--no-progress"]) == 0
    assert "saved the model state dict to model.safetensors" in capsys.readouterr().out
    ours, theirs = gpugrad.load("model.safetensors"), safetensors_torch.load_file(
        "model.safetensors")
    assert sorted(ours) == sorted(theirs) == sorted(train.build_model(8, 2).state_dict())
    for k in ours:
        np.testing.assert_array_equal(ours[k].numpy(), theirs[k].numpy())
    train.build_model(8, 2).load_state_dict(ours)


def test_an_npz_out_keeps_gpugrads_own_format(tmp_path, capsys):
    out = tmp_path / "model.npz"
    assert main(["train", "--epochs", "1", "--width", "8", "--no-progress", "--out",
                 str(out)]) == 0
    with zipfile.ZipFile(out) as z:
        assert "gpugrad.json" in z.namelist()
    train.build_model(8, 2).load_state_dict(gpugrad.load(out))


def test_progress_lines_without_tqdm(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)   # import tqdm now fails
    assert main(["train", "--epochs", "3", "--width", "8", "--out", ""]) == 0
    out = capsys.readouterr().out
    assert "epoch    1/3" in out and "samples/s" in out


def test_missing_tensorboard_stops_before_training(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "gpugrad.utils.tensorboard", None)
    assert main(["train", "--epochs", "1", "--width", "8", "--out", "", "--no-progress",
                 "--logdir", str(tmp_path / "runs")]) == 2
    out, err = capsys.readouterr()
    assert out == ""                   # nothing trained
    assert err.startswith("gpugrad train: --logdir needs TensorBoard logging, which is not "
                          "available") and err.count("\n") == 1


@pytest.mark.parametrize("args, message", [
    (["--lr", "-1"], "argument --lr: expected a finite positive number, got -1"),
    (["--lr", "nan"], "argument --lr: expected a finite positive number, got nan"),
    (["--lr", "inf"], "argument --lr: expected a finite positive number, got inf"),
    (["--width", "1000000000"], "argument --width: expected at most 16384, got 1000000000"),
    (["--depth", "1000"], "argument --depth: expected at most 64, got 1000"),
])
def test_bad_numbers_are_refused_in_one_line(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(["train", *args])
    assert e.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"gpugrad train: error: {message}"


def test_an_unwritable_out_is_refused_before_training(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "model.safetensors"
    assert main(["train", "--out", str(missing), "--epochs", "1"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (f"gpugrad train: --out {missing}: the directory {missing.parent} does not "
                   "exist\n")
    assert main(["train", "--out", str(tmp_path), "--epochs", "1"]) == 2
    assert capsys.readouterr().err == (f"gpugrad train: --out {tmp_path} is a directory; give "
                                       "a file name\n")


def test_a_diverging_run_stops_and_keeps_the_last_good_model(tmp_path, capsys):
    out = tmp_path / "model.safetensors"
    assert main(["train", "--epochs", "1", "--width", "8", "--no-progress", "--out",
                 str(out)]) == 0
    good = out.read_bytes()
    capsys.readouterr()
    assert main(["train", "--epochs", "3", "--width", "8", "--no-progress", "--optimizer", "sgd",
                 "--lr", "1e30", "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err == (f"gpugrad train: the training loss is nan after epoch 1: stopped without "
                   f"saving the model; {out} is left as it was. Try a smaller --lr (now 1e+30)."
                   "\n")
    assert out.read_bytes() == good


def test_logdir_gets_scalars_and_both_graphs(tmp_path, capsys):
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    logdir = tmp_path / "runs"
    assert main(["train", "--epochs", "2", "--width", "8", "--out", "", "--no-progress",
                 "--logdir", str(logdir)]) == 0
    (event_file,) = sorted(logdir.rglob("events.out.tfevents.*"))
    acc = EventAccumulator(str(event_file))
    acc.Reload()
    assert {"loss/train", "accuracy/test", "accuracy/train", "lr"} <= set(acc.Tags()["scalars"])
    forward = {n.name for n in acc.Graph().node}
    assert "Sequential/Linear[0]/addmm" in forward and "Sequential/ReLU[1]/relu" in forward
    assert "backward" in acc.Tags()["tensors"]          # the autograd graph, under its own tag


def test_train_mlp_example(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(EXAMPLES / "train_mlp.py"), run_name="__main__")
    out = capsys.readouterr().out
    accuracy = float(out.split("test accuracy ")[1].split("%")[0])
    assert accuracy >= 95 and (tmp_path / "mlp.npz").exists()


def test_train_cnn_example(capsys):
    runpy.run_path(str(EXAMPLES / "train_cnn.py"), run_name="__main__")
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("epoch 15") and float(last.split()[-1].rstrip("%")) >= 95.0


@pytest.mark.gpu
@pytest.mark.parametrize("optimizer", ["adam", "sgd"])
def test_replayed_steps_train_the_model_the_eager_loop_trains(optimizer):
    """The CUDA-graph loop (capture per epoch, replay per full batch, the short last batch and
    the warm-up eager) takes the same steps over the same batches as the eager loop."""
    from conftest import cuda_available
    if not cuda_available():
        pytest.skip("no CUDA device")
    runs = {}
    for graphed in (False, True):
        text = io.StringIO()
        runs[graphed] = train.train(device="cuda", epochs=3, optimizer=optimizer, out="",
                                    progress=False, cuda_graph=graphed, file=text)
        assert ("CUDA graph replay" in text.getvalue()) == graphed
    assert runs[True]["steps"] == runs[False]["steps"] == 3 * 36
    assert runs[True]["loss"] == pytest.approx(runs[False]["loss"], rel=1e-4)
    eager, replayed = (runs[g]["model"].state_dict() for g in (False, True))
    for k in eager:
        np.testing.assert_allclose(replayed[k].cpu().numpy(), eager[k].cpu().numpy(),
                                   rtol=1e-4, atol=1e-5, err_msg=k)


NO_CUPY = ("no CuPy (ModuleNotFoundError: No module named 'cupy'); install it from a gpugrad "
           'checkout with: pip install -e ".[cuda]"')


@pytest.fixture
def no_cuda(monkeypatch):
    """No CuPy, also on a machine with a GPU; the default device read again from the env."""
    monkeypatch.setattr(train, "cuda_problem", lambda: NO_CUPY)
    monkeypatch.setattr(gpugrad._backend, "_default_device", None)
    monkeypatch.setattr(gpugrad._backend, "_default_source", None)
    monkeypatch.delenv("GPUGRAD_DEVICE", raising=False)
    return monkeypatch


def test_cuda_request_without_cuda_is_one_line(no_cuda, capsys, tmp_path):
    assert main(["train", "--device", "cuda", "--epochs", "1", "--out", ""]) == 2
    err = capsys.readouterr().err
    assert err == (f"gpugrad train: --device cuda needs CUDA, which is not usable here: "
                   f"{NO_CUPY}; or train on the CPU with --device cpu\n")


def test_cuda_from_the_environment_without_cuda_is_one_line(no_cuda, capsys):
    no_cuda.setenv("GPUGRAD_DEVICE", "cuda")
    assert main(["train", "--epochs", "1", "--out", ""]) == 2
    assert capsys.readouterr().err == (
        f"gpugrad train: GPUGRAD_DEVICE=cuda needs CUDA, which is not usable here: {NO_CUPY}; "
        "or train on the CPU with --device cpu\n")
    no_cuda.setenv("GPUGRAD_DEVICE", "tpu")
    gpugrad._backend._default_device = None
    assert main(["train", "--epochs", "1", "--out", ""]) == 2
    assert capsys.readouterr().err.startswith("gpugrad train: GPUGRAD_DEVICE='tpu' is not a "
                                              "device (")


def test_auto_follows_the_chosen_default_device(no_cuda):
    assert train.resolve_device("auto") == "cpu"
    no_cuda.setattr(train, "cuda_problem", lambda: None)
    assert train.resolve_device("auto") == "cuda"          # nobody chose: CUDA when usable
    no_cuda.setenv("GPUGRAD_DEVICE", "cpu")
    gpugrad._backend._default_device = None
    assert train.resolve_device("auto") == "cpu"           # the environment chose the CPU
    gpugrad.set_default_device("cpu")
    assert train.resolve_device("auto") == "cpu"


def test_one_device_for_the_whole_job(no_cuda, capsys):
    """--device cpu wins over GPUGRAD_DEVICE=cuda for the model, the data and the loader."""
    no_cuda.setenv("GPUGRAD_DEVICE", "cuda")
    made = []
    no_cuda.setattr(train, "build_model", lambda *a: made.append(
        gpugrad.get_default_device()) or nn.Sequential(nn.Linear(2, 3)))
    r = train.train(device="cpu", epochs=1, out="", progress=False, cuda_graph=False)
    assert r["device"] == "cpu" and made == [gpugrad.device("cpu")]
    assert all(p.device.type == "cpu" for p in r["model"].parameters())
    assert gpugrad._backend.default_device_source() == "GPUGRAD_DEVICE"   # restored after


def test_nproc_2_trains_data_parallel_to_the_accuracy_of_one_process(tmp_path):
    """``gpugrad train --nproc 2``: two MPI processes, the batch split between them, gradients
    averaged by DistributedDataParallel; the same data, steps and accuracy as one process."""
    from mpi_jobs import mpiexec, run_gpugrad
    mpiexec()
    args = ["train", "--no-progress", "--epochs", "15", "--out", ""]
    one = run_gpugrad(*args, timeout=120, cwd=tmp_path)
    two = run_gpugrad(*args, "--nproc", "2", timeout=120, cwd=tmp_path)
    assert one.returncode == 0 and two.returncode == 0, two.stdout + two.stderr
    assert "data-parallel over 2 processes" in two.stdout

    def test_accuracy(out):
        return float(re.search(r"test accuracy ([\d.]+)%", out).group(1))
    assert test_accuracy(two.stdout) >= test_accuracy(one.stdout) - 1.0
    assert test_accuracy(two.stdout) > 90
