"""CUDA graphs (``gpugrad.cuda.graphs``): PyTorch's whole-step recipe captured and replayed gives
the parameters an eager loop gives; what cannot be captured fails with PyTorch's message and
leaves nothing half-captured. Without a GPU these run on the simulated CuPy, which records a
capturing stream's work instead of running it (tests/cupy_sim)."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import cuda_available

import gpugrad as torch
from gpugrad import cuda, nn

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not cuda_available(), reason="no CUDA device")]
CAPTURING = "operation not permitted when stream is capturing"


def _model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3)).to("cuda")


def _batches(n):
    rng = np.random.default_rng(0)
    return [(torch.tensor(rng.standard_normal((8, 6)), dtype=torch.float32, device="cuda"),
             torch.tensor(rng.integers(0, 3, 8), device="cuda")) for _ in range(n)]


OPTIMIZERS = {
    "sgd_momentum": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9),
    "adam": lambda p: torch.optim.Adam(p, lr=0.01, capturable=True),
    "adamw": lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1, capturable=True),
}


@pytest.mark.parametrize("name", OPTIMIZERS)
def test_a_captured_training_step_replays_to_the_parameters_of_an_eager_loop(name):
    loss_fn = nn.CrossEntropyLoss()
    batches = _batches(8)
    eager = _model()
    opt = OPTIMIZERS[name](eager.parameters())
    for x, y in batches:
        opt.zero_grad(set_to_none=True)
        loss_fn(eager(x), y).backward()
        opt.step()

    model = _model()
    opt = OPTIMIZERS[name](model.parameters())
    static_x, static_y = batches[0][0].clone(), batches[0][1].clone()
    s = cuda.Stream()   # PyTorch's recipe: warm up on a side stream, then capture
    s.wait_stream(cuda.current_stream())
    with cuda.stream(s):
        for x, y in batches[:3]:
            static_x.copy_(x)
            static_y.copy_(y)
            opt.zero_grad(set_to_none=True)
            loss_fn(model(static_x), static_y).backward()
            opt.step()
    cuda.current_stream().wait_stream(s)
    g = cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with cuda.graph(g):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        opt.step()
    for x, y in batches[3:]:
        static_x.copy_(x)
        static_y.copy_(y)
        g.replay()
    for (k, want), got in zip(eager.state_dict().items(), model.state_dict().values()):
        np.testing.assert_allclose(got.cpu().numpy(), want.cpu().numpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=k)
    # the static loss is the last replay's: the loss of the last batch before its step
    assert np.isfinite(static_loss.item())


def test_replay_runs_the_captured_work_over_the_same_memory():
    x = torch.ones(4, device="cuda")
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        y = (x * 2 + 1).exp()
    x.copy_(torch.arange(4.0, device="cuda"))
    g.replay()
    np.testing.assert_allclose(y.cpu().numpy(), np.exp(np.arange(4.0) * 2 + 1), rtol=1e-6)
    x.fill_(0.5)
    g.replay()
    np.testing.assert_allclose(y.cpu().numpy(), np.full(4, np.exp(2.0)), rtol=1e-6)


def test_captured_in_place_work_is_recorded_not_run():
    acc = torch.zeros(3, device="cuda")
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        acc.add_(1)
    assert acc.cpu().tolist() == [0.0, 0.0, 0.0]   # captured, not run
    for _ in range(3):
        g.replay()
    assert acc.cpu().tolist() == [3.0, 3.0, 3.0]


@pytest.mark.parametrize("read", [
    lambda t: t[0].item(), lambda t: t.sum().item(), lambda t: t.cpu(), lambda t: t.tolist(),
    lambda t: t.numpy(force=True), repr, lambda t: bool(t.sum() > 0), lambda t: float(t.sum()),
], ids=["item", "sum_item", "cpu", "tolist", "numpy", "repr", "bool", "float"])
def test_reading_a_gpu_tensor_on_the_host_during_capture_raises_pytorchs_error(read):
    x = torch.ones(2, device="cuda")
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match=CAPTURING):
        with cuda.graph(g):
            read(x * 2)
    assert not cuda.is_current_stream_capturing()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()
    g2 = cuda.CUDAGraph()   # nothing was left half-captured: the next capture works
    with cuda.graph(g2):
        y = x + 1
    g2.replay()
    assert y.cpu().tolist() == [2.0, 2.0]


def test_a_cpu_tensor_may_be_read_during_capture():
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        assert torch.tensor([1.5]).item() == 1.5


def test_capture_on_the_default_stream_is_refused():
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="CUDA graphs must be captured on a non-default "
                                           "stream"):
        g.capture_begin()
    assert not cuda.is_current_stream_capturing()


def test_is_current_stream_capturing_inside_and_outside():
    assert cuda.is_current_stream_capturing() is False
    seen = []
    with cuda.graph(cuda.CUDAGraph()):
        seen.append(cuda.is_current_stream_capturing())
    assert seen == [True] and cuda.is_current_stream_capturing() is False


def test_misuse_is_refused_with_pytorchs_messages():
    g = cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.replay()
    with pytest.raises(RuntimeError, match="capture_end without a preceding capture_begin"):
        g.capture_end()
    with pytest.raises(RuntimeError, match="without a preceding successful capture"):
        g.pool()
    with pytest.raises(RuntimeError, match="Unknown capture error mode.*got sometimes"):
        with cuda.graph(g, capture_error_mode="sometimes"):
            pass
    with cuda.graph(g):
        pass
    with pytest.raises(RuntimeError, match="already owns a captured graph"):
        with cuda.graph(g):
            pass
    with pytest.raises(TypeError, match="graph\\(\\) takes a CUDAGraph, not int"):
        cuda.graph(3)


def test_adam_without_capturable_refuses_to_be_captured():
    w = torch.ones(3, device="cuda", requires_grad=True)
    opt = torch.optim.Adam([w], lr=0.1)
    w.grad = torch.ones(3, device="cuda")
    opt.step()   # the state exists before the capture, as after a warm-up
    with pytest.raises(RuntimeError, match="Attempting CUDA graph capture of step\\(\\) for an "
                                           "instance of Adam but param_groups' capturable is "
                                           "False."):
        with cuda.graph(cuda.CUDAGraph()):
            opt.step()


def test_graphs_sharing_a_pool_replay_in_order():
    handle = cuda.graph_pool_handle()
    x = torch.ones(2, device="cuda")
    g1, g2 = cuda.CUDAGraph(), cuda.CUDAGraph()
    with cuda.graph(g1, pool=handle):
        y = x * 3
    with cuda.graph(g2, pool=g1.pool()):
        z = y + 1
    x.fill_(2.0)
    g1.replay()
    g2.replay()
    assert z.cpu().tolist() == [7.0, 7.0]


def test_what_a_capture_allocates_comes_from_the_graphs_pool():
    model = _model()
    x, y = _batches(1)[0]
    nn.functional.cross_entropy(model(x), y).backward()   # warm up
    g = cuda.CUDAGraph()
    with cuda.graph(g):
        before = cuda.memory_allocated()
        out = nn.functional.cross_entropy(model(x), y)
        out.backward()
        after = cuda.memory_allocated()
    assert after == before   # the default pool gave nothing to the captured step
    g.replay()
    assert out.shape == ()


def test_graphed_module_gives_the_outputs_and_gradients_of_the_eager_one():
    eager, model = _model(), _model()
    x = torch.zeros(8, 6, device="cuda", requires_grad=True)
    graphed = cuda.make_graphed_callables(model, (x,))
    assert graphed is model   # a module comes back with its forward graphed
    for bx, _ in _batches(3):
        for m in (eager, model):
            m.zero_grad()
        xe, xg = bx.clone().requires_grad_(), bx.clone().requires_grad_()
        ye, yg = eager(xe), model(xg)
        np.testing.assert_allclose(yg.detach().cpu().numpy(), ye.detach().cpu().numpy(),
                                   rtol=1e-5, atol=1e-6)
        (ye * ye).sum().backward()
        (yg * yg).sum().backward()
        np.testing.assert_allclose(xg.grad.cpu().numpy(), xe.grad.cpu().numpy(), rtol=1e-5,
                                   atol=1e-6)
        for pe, pg in zip(eager.parameters(), model.parameters()):
            np.testing.assert_allclose(pg.grad.cpu().numpy(), pe.grad.cpu().numpy(),
                                       rtol=1e-5, atol=1e-6)
    model.eval()   # another mode than the capture's: the module's own forward
    assert model(torch.ones(2, 6, device="cuda")).shape == (2, 3)


def test_graphed_function_takes_tensors_only():
    with pytest.raises(TypeError, match="sample_args for each callable must contain only "
                                        "Tensors"):
        cuda.make_graphed_callables(lambda x, k: x * k, (torch.ones(2, device="cuda"), 3))
