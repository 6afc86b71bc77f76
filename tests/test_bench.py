"""Smoke test of ``gpugrad bench``: one tiny case runs and writes a complete record (no timing
assertions: the figures depend on the machine)."""
import json

import pytest

import gpugrad
from gpugrad import bench, kernels


def test_bench_main_writes_record(tmp_path, capsys):
    out = tmp_path / "record.json"
    assert bench.main(["--quick", "--cases", "chain100", "--libs", "gpugrad,floor", "--repeat",
                       "3", "--out", str(out), "--quiet"]) == 0
    record = json.loads(out.read_text())
    assert {"schema", "date", "mode", "machine", "versions", "threads", "settings", "results",
            "crossover", "targets"} <= record.keys()
    assert {"cpu", "cores", "gpu", "slug"} <= record["machine"].keys()
    assert {"python", "numpy", "cupy", "torch", "gpugrad"} <= record["versions"].keys()
    [result] = record["results"]
    assert result["id"] == "chain100[n=16]"
    for impl in ("gpugrad-cpu", "floor-cpu"):
        entry = result["impls"][impl]
        assert "error" not in entry
        assert entry["median_s"] > 0 and entry["cold_s"] > 0
    assert "gpugrad-cpu/floor-cpu" in result["ratios"]
    assert "Warm medians" in capsys.readouterr().out


def test_bench_runs_as_a_module():
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-m", "gpugrad.bench", "--cases", "chain100", "--list"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["overhead", "chain100[n=16]"]


def test_every_fused_kernel_has_bench_inputs():
    for name, k in kernels.REGISTRY.items():
        args = bench.kernel_args(name, "cpu", 2000)
        assert args is not None, f"add an inputs recipe for {name} to bench.kernel_args"
        k(*args)


def test_case_selection():
    selected = bench.select(bench.cases("quick", gpu=False), "elementwise,mlp_small")
    assert [c.id for c in selected] == ["elementwise[n=1e4]", "elementwise[n=1e5]",
                                        "elementwise[n=1e6]", "elementwise[n=1e7]", "mlp_small"]
    assert bench.crossover([], gpu=False)[0]["note"].startswith("no CUDA device")


def _entry(lib, device, seconds):
    return {"lib": lib, "device": device, "median_s": seconds}


def test_crossover_and_targets_from_gpu_figures():
    # CPU time grows with n, GPU time is flat: the GPU wins from n = 1e5 (interpolated).
    results = []
    for n in (10 ** 3, 10 ** 4, 10 ** 6):
        impls = {"gpugrad-cpu": _entry("gpugrad", "cpu", n * 1e-8),
                 "gpugrad-cuda": _entry("gpugrad", "cuda", 1e-3)}
        results.append({"id": f"elementwise[n={bench.size_label(n)}]", "topic": "elementwise",
                        "name": "elementwise", "size": n, "sweep": "elementwise",
                        "impls": impls, "ratios": bench.ratios(impls)})
    [c] = bench.crossover(results, gpu=True)
    assert c["gpu_wins"] == [False, False, True]
    assert 0.9e5 < c["crossover_size"] < 1.1e5
    results[-1]["impls"]["torch-cuda"] = _entry("torch", "cuda", 2e-3)
    results[-1]["id"] = "elementwise[n=1e7]"
    results[-1]["ratios"] = bench.ratios(results[-1]["impls"])
    [t] = [t for t in bench.check_targets(results) if t["device"] == "cuda" and t["value"]]
    assert t["met"] and t["value"] == 0.5


def test_compile_seconds_are_read_from_the_kernel_launcher(monkeypatch):
    from gpugrad import _cuda_kernels
    from gpugrad.bench import timing
    monkeypatch.setattr(_cuda_kernels, "COMPILE_SECONDS", {"relu_bwd": 0.25, "adam_step": 0.5})
    assert timing._compiled() == 0.75


def test_unfused_column_runs_gpugrad_with_fusion_off():
    from gpugrad.autograd import fusion
    from gpugrad.bench.cases import UNFUSED, Impl, _fusion_as, available
    impl = Impl(UNFUSED, "cuda")
    assert impl.label == "gpugrad unfused cuda" and impl.key == "unfused-cuda"
    assert not available(UNFUSED, "cpu")   # the CPU never fuses: nothing to compare
    seen = []
    step = _fusion_as(impl, lambda: seen.append(fusion.mode()))
    step()
    assert seen == ["off"] and fusion.mode() == "auto"
    plain = lambda: None  # noqa: E731
    assert _fusion_as(Impl("gpugrad", "cuda"), plain) is plain


@pytest.mark.gpu
def test_bench_runs_its_gpu_cases(tmp_path):
    """The GPU columns: one elementwise step, one MLP step and one kernel's bandwidth row on
    CUDA, each with a time and no error (the numbers themselves are not checked)."""
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    out = tmp_path / "record.json"
    assert bench.main(["--quick", "--cases", "elementwise[n=1e4],mlp_small,bandwidth:relu_bwd*",
                       "--devices", "cuda", "--libs", "gpugrad,floor", "--repeat", "3",
                       "--out", str(out), "--quiet"]) == 0
    results = {r["id"]: r for r in json.loads(out.read_text())["results"]}
    assert {"elementwise[n=1e4]", "mlp_small"} <= results.keys()
    assert any(k.startswith("bandwidth:relu_bwd") for k in results)
    for rid, r in results.items():
        for key, e in r["impls"].items():
            assert "error" not in e, (rid, key, e)


@pytest.mark.gpu
def test_graphed_cases_replay_a_captured_step(tmp_path):
    from conftest import cuda_available
    if not cuda_available():
        pytest.skip("no CUDA device")
    out = tmp_path / "record.json"
    assert bench.main(["--quick", "--cases", "graphed:*", "--libs", "gpugrad", "--repeat", "2",
                       "--out", str(out), "--quiet"]) == 0
    results = {r["id"]: r for r in json.loads(out.read_text())["results"]}
    assert {"graphed:chain100[n=16]", "graphed:mlp_small", "graphed:mlp_large"} <= set(results)
    for r in results.values():
        entry = r["impls"]["gpugrad-cuda"]
        assert "error" not in entry, entry
        assert entry["median_s"] > 0


@pytest.mark.parametrize("args, message", [
    (["--libs", "gpugrad,tensorflow"], "--libs: unknown name 'tensorflow' (choose from "),
    (["--cases", "chain100,nosuchcase"], "--cases: unknown case 'nosuchcase' (choose from "),
    (["--devices", "cpu,tpu"], "--devices: unknown name 'tpu' (choose from cpu, cuda)"),
])
def test_unknown_names_are_errors(args, message, capsys):
    with pytest.raises(SystemExit) as e:
        bench.main(["--quiet", "--no-json", *args])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    if "--libs" in args:
        for lib in ("gpugrad", "torch", "floor", "ufuncs", "unfused"):
            assert lib in err.split("choose from")[1]


def test_new_case_and_lib_names_stay_valid(capsys):
    assert bench.main(["--list", "--libs", "gpugrad,ufuncs,unfused", "--cases",
                       "graphed:*,train:*,chain100"]) == 0


def test_plot_without_matplotlib_fails_before_the_run(monkeypatch, capsys):
    import importlib.util
    find = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else find(name, *a))
    monkeypatch.setattr(bench, "run", lambda *a, **k: pytest.fail("ran before refusing"))
    with pytest.raises(SystemExit) as e:
        bench.main(["--cases", "chain100", "--plot", "out.png", "--quiet"])
    assert e.value.code == 2
    assert "--plot needs matplotlib, which is not installed" in capsys.readouterr().err


def test_record_goes_to_the_current_directory_outside_a_checkout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert bench.results_dir().name == "results"          # this checkout has bench/results
    monkeypatch.setattr(bench, "__file__", str(tmp_path / "site" / "gpugrad" / "bench" / "x.py"))
    assert bench.results_dir() == tmp_path
    assert bench.main(["--quick", "--cases", "chain100", "--libs", "gpugrad", "--repeat", "3",
                       "--quiet"]) == 0
    assert [p.suffix for p in tmp_path.iterdir()] == [".json"]
    assert not (tmp_path / "bench").exists()


def test_gpt_case_trains_the_same_model_as_pytorch():
    """The gpt case runs one model definition on both libraries from the same weights and
    batches: its AdamW steps give PyTorch's losses."""
    torch = pytest.importorskip("torch")
    from gpugrad.bench import models
    small = {**models.GPT, "width": 32, "context": 16, "batch": 2, "vocab": 64}
    ours, theirs = models.gpt_step(gpugrad, "cpu", **small), models.gpt_step(torch, "cpu", **small)
    for _ in range(3):
        assert float(ours().detach()) == pytest.approx(float(theirs().detach()), rel=1e-5)
    assert sum(p.numel() for p in ours.model.parameters()) == \
        sum(p.numel() for p in theirs.model.parameters())


@pytest.mark.parametrize("name", ["lstm", "gru"])
def test_recurrent_cases_train_the_same_model_as_pytorch(name):
    """The LSTM / GRU language-model steps start from the same weights in both libraries, so
    their first losses agree (the case measures like against like)."""
    pytest.importorskip("torch")
    from gpugrad.bench.cases import Impl
    [case] = bench.select(bench.cases("quick", gpu=False), name)
    losses = [float(case.make(Impl(lib, "cpu"), case)()) for lib in ("gpugrad", "torch")]
    assert losses[0] == pytest.approx(losses[1], rel=1e-5)


@pytest.mark.gpu
def test_recurrent_cases_run_on_cuda(tmp_path):
    """The LSTM and GRU steps (cell kernels, the sequence's pooled weight gradients) and the
    cell kernels' rows run on CUDA without an error."""
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    out = tmp_path / "record.json"
    assert bench.main(["--quick", "--cases", "lstm,gru,kernel:*cell*", "--devices", "cuda",
                       "--libs", "gpugrad,floor", "--repeat", "2", "--out", str(out),
                       "--quiet"]) == 0
    results = {r["id"]: r for r in json.loads(out.read_text())["results"]}
    assert {"lstm", "gru"} <= results.keys()
    assert sum(k.startswith("kernel:") for k in results) == 4
    for rid, r in results.items():
        for key, e in r["impls"].items():
            assert "error" not in e, (rid, key, e)


@pytest.mark.gpu
def test_gpt_case_runs_on_cuda():
    """The gpt step on CUDA trains the model the CPU step trains (same weights and batches)."""
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")
    from gpugrad.bench import models
    small = {**models.GPT, "width": 32, "context": 16, "batch": 2, "vocab": 64}
    on_gpu, on_cpu = (models.gpt_step(gpugrad, d, **small) for d in ("cuda", "cpu"))
    for _ in range(2):
        assert float(on_gpu().detach()) == pytest.approx(float(on_cpu().detach()), rel=1e-4)
