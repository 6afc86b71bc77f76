"""gpugrad.profiler, gpugrad.autograd.profiler and gpugrad.utils.benchmark.

Forward ops are recorded as ``aten::<op>`` (``MulBackward0`` -> ``aten::mul``); each backward
node as ``autograd::engine::evaluate_function: <node>`` enclosing a range named after the node.
No test asserts an upper bound on a time: only lower bounds and relations that hold exactly.
"""
from __future__ import annotations

import json
import time
import types

import pytest

import gpugrad
import gpugrad.autograd.profiler as legacy
from gpugrad.autograd import fusion
from gpugrad.autograd.function import Function
from gpugrad.ops._op import Op
from gpugrad.profiler import (
    ProfilerAction,
    ProfilerActivity,
    _record,
    profile,
    record_function,
    schedule,
    tensorboard_trace_handler,
)
from gpugrad.utils.benchmark import Compare, Measurement, TaskSpec, Timer

EVAL = "autograd::engine::evaluate_function: "


def counts(prof, **kw):
    return {e.key: e.count for e in prof.key_averages(**kw)}


def small_program(x, y):
    a = x * y              # Tensor.__mul__ (a specialised direct function)
    b = a * 2.0
    c = gpugrad.tanh(b) + a
    loss = c.sum()         # SumBackward0 through Op.apply
    loss.backward()
    return loss


def inputs(shape=(3, 4)):
    return (gpugrad.randn(*shape, requires_grad=True), gpugrad.randn(*shape, requires_grad=True))


def originals():
    """Every attribute a profile swaps, as found before profiling."""
    from gpugrad.autograd.graph import AccumulateGrad
    from gpugrad.ops.pointwise.arithmetic import MulBackward0
    found = {("Op.apply",): Op.__dict__["apply"], ("Function.apply",): Function.__dict__["apply"],
             ("fusion.run",): fusion.run,
             ("__mul__",): gpugrad.Tensor.__mul__.__code__,
             ("tanh",): gpugrad.tanh.__code__}
    for cls in _record.node_classes():
        found[(cls,)] = cls.__dict__["_run"]
    assert MulBackward0 in _record.node_classes() and AccumulateGrad in _record.node_classes()
    return found


def current():
    found = {("Op.apply",): Op.__dict__["apply"], ("Function.apply",): Function.__dict__["apply"],
             ("fusion.run",): fusion.run,
             ("__mul__",): gpugrad.Tensor.__mul__.__code__,
             ("tanh",): gpugrad.tanh.__code__}
    for cls in _record.node_classes():
        found[(cls,)] = cls.__dict__["_run"]
    return found


def assert_restored(before):
    now = current()
    assert now.keys() == before.keys()
    changed = [k for k in before if now[k] is not before[k]]
    assert not changed, changed
    assert _record.state.recorder is None and _record.state.saved is None
    assert "_profiled_direct" not in gpugrad.tanh.__globals__


# -- what is recorded ----------------------------------------------------------------------------
def test_forward_and_backward_names_and_counts():
    x, y = inputs()
    with fusion.using("off"), profile() as prof:
        small_program(x, y)
    assert counts(prof) == {
        "aten::mul": 2, "aten::tanh": 1, "aten::add": 1, "aten::sum": 1,
        EVAL + "SumBackward0": 1, "SumBackward0": 1,
        EVAL + "AddBackward0": 1, "AddBackward0": 1,
        EVAL + "TanhBackward0": 1, "TanhBackward0": 1,
        EVAL + "MulBackward0": 2, "MulBackward0": 2,
        EVAL + "torch::autograd::AccumulateGrad": 2, "torch::autograd::AccumulateGrad": 2}
    # each backward node's range sits inside its evaluate_function range
    for e in prof.events():
        if e.name.startswith(EVAL):
            assert [c.name for c in e.cpu_children] == [e.name[len(EVAL):]]
    assert x.grad is not None and y.grad is not None


def test_profiled_results_equal_unprofiled():
    x, y = inputs()
    small_program(x, y)
    gx, gy = x.grad.numpy().copy(), y.grad.numpy().copy()
    x.grad = y.grad = None
    with profile():
        small_program(x, y)
    assert (x.grad.numpy() == gx).all() and (y.grad.numpy() == gy).all()


def test_custom_function_and_fused_region_recorded():
    class Square(gpugrad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x, _ = inputs()
    with profile() as prof:
        Square.apply(x).sum().backward()
    c = counts(prof)
    assert c["Square"] == 1 and c["SquareBackward"] == 1 and c["aten::mul"] == 3
    square = next(e for e in prof.events() if e.name == "Square")
    assert [ch.name for ch in square.cpu_children] == ["aten::mul"]

    with fusion.using("always"), profile() as prof:
        (gpugrad.tanh(x) * gpugrad.sigmoid(x)).sum().backward()
    c = counts(prof)
    assert c["autograd::engine::fused_region: MulBackward0"] == 1
    assert "TanhBackward0" not in c   # ran inside the region


def test_record_shapes_groups_by_input_shape():
    x, y = inputs()
    with profile(record_shapes=True) as prof:
        small_program(x, y)
    rows = {(e.key, str(e.input_shapes)): e.count
            for e in prof.key_averages(group_by_input_shape=True)}
    assert rows[("aten::mul", "[[3, 4], [3, 4]]")] == 1
    assert rows[("aten::mul", "[[3, 4], []]")] == 1
    assert rows[("aten::sum", "[[3, 4]]")] == 1
    assert rows[("MulBackward0", "[[3, 4]]")] == 2
    table = prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total")
    assert "Input Shapes" in table and "[[3, 4], [3, 4]]" in table
    assert "Input Shapes" not in prof.key_averages().table()
    with profile() as prof:
        x * y
    assert prof.events()[0].input_shapes is None


def test_profile_memory_counts_output_bytes():
    x = gpugrad.randn(3, 4, dtype=gpugrad.float32)
    with profile(profile_memory=True) as prof:
        with record_function("block"):
            x * x
            x + x
    ev = {e.name: e for e in prof.events()}
    assert ev["aten::mul"].self_cpu_memory_usage == 3 * 4 * 4
    assert ev["block"].self_cpu_memory_usage == 0
    assert ev["block"].cpu_memory_usage == 2 * 3 * 4 * 4
    table = prof.key_averages().table()
    assert "CPU Mem" in table and "Self CPU Mem" in table and "48 b" in table


def test_with_stack_points_at_the_caller():
    x, y = inputs()
    with profile(with_stack=True) as prof:
        x * y
    (e,) = prof.events()
    assert e.stack and "test_profiler.py" in e.stack[0]
    assert "Source Location" in prof.events().table()


# -- record_function and the trace ---------------------------------------------------------------
@record_function("decorated")
def _decorated(x):
    return x * 3.0


def test_record_function_rows_and_chrome_trace_nesting(tmp_path):
    x, y = inputs()
    with profile() as prof:
        with record_function("outer"):
            with record_function("inner"):
                x * y
            _decorated(x)
            _decorated(x)
    c = counts(prof)
    assert c["outer"] == 1 and c["inner"] == 1 and c["decorated"] == 2 and c["aten::mul"] == 3
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(ops) == len(prof.events()) == 7
    assert all(isinstance(e["ts"], float) and e["dur"] >= 0 for e in ops)
    by_id = {e["args"]["External id"]: e for e in ops}

    def encloses(p, ch):
        return p["ts"] <= ch["ts"] + 1e-3 and ch["ts"] + ch["dur"] <= p["ts"] + p["dur"] + 2e-3

    parents = {}
    for e in ops:
        if "Parent id" in e["args"]:
            parent = by_id[e["args"]["Parent id"]]
            assert encloses(parent, e)
            parents[e["name"]] = parents.get(e["name"], set()) | {parent["name"]}
    assert parents == {"inner": {"outer"}, "decorated": {"outer"},
                       "aten::mul": {"inner", "decorated"}}
    outer = next(e for e in ops if e["name"] == "outer")
    assert "Parent id" not in outer["args"] and outer["cat"] == "user_annotation"


def test_record_function_without_a_profile_records_nothing():
    before = Op.__dict__["apply"]
    with record_function("alone") as rf:
        assert rf.name == "alone"
        assert _record.state.recorder is None
    assert _decorated(gpugrad.ones(2)).numpy().tolist() == [3.0, 3.0]
    assert Op.__dict__["apply"] is before


# -- schedule ------------------------------------------------------------------------------------
def test_schedule_actions():
    A = ProfilerAction
    fn = schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)
    assert [fn(i) for i in range(8)] == [A.NONE, A.NONE, A.WARMUP, A.RECORD,
                                         A.RECORD_AND_SAVE, A.NONE, A.NONE, A.NONE]
    forever = schedule(wait=0, warmup=1, active=1)
    assert [forever(i) for i in range(4)] == [A.WARMUP, A.RECORD_AND_SAVE] * 2
    with pytest.raises(ValueError):
        schedule(wait=0, warmup=0, active=0)


def test_schedule_records_only_active_steps():
    x, y = inputs()
    saved, installed = [], []
    orig = Op.__dict__["apply"]

    def ready(prof):
        saved.append((sorted(e.key for e in prof.key_averages() if e.key.startswith("Profiler")),
                      counts(prof)["aten::mul"]))

    with profile(schedule=schedule(wait=1, warmup=1, active=2, repeat=2),
                 on_trace_ready=ready) as prof:
        for _ in range(10):
            installed.append(Op.__dict__["apply"] is not orig)
            x * y
            prof.step()
    assert saved == [(["ProfilerStep#2", "ProfilerStep#3"], 2),
                     (["ProfilerStep#6", "ProfilerStep#7"], 2)]
    # wrappers are in place only from warm-up to the end of each active window
    assert installed == [False, True, True, True, False, True, True, True, False, False]
    assert counts(prof)["aten::mul"] == 2     # the last window's
    assert Op.__dict__["apply"] is orig


def test_profile_without_schedule_saves_once_at_exit():
    x, y = inputs()
    calls = []
    with profile(on_trace_ready=calls.append) as prof:
        for _ in range(3):
            x * y
            prof.step()
    assert calls == [prof] and counts(prof)["aten::mul"] == 3
    assert not any(e.key.startswith("ProfilerStep") for e in prof.key_averages())


def test_tensorboard_trace_handler_writes_trace(tmp_path):
    x, y = inputs()
    with profile(on_trace_ready=tensorboard_trace_handler(str(tmp_path / "tb"), "w0")):
        x * y
    (path,) = (tmp_path / "tb").iterdir()
    assert path.name.startswith("w0.") and path.name.endswith(".pt.trace.json")
    names = [e["name"] for e in json.loads(path.read_text())["traceEvents"] if e["ph"] == "X"]
    assert names == ["aten::mul"]


# -- patches restored ------------------------------------------------------------------------------
def test_wrappers_installed_then_restored():
    before = originals()
    x, y = inputs()
    with profile():
        during = current()
        assert all(during[k] is not before[k] for k in before)
        small_program(x, y)
    assert_restored(before)
    assert (x * y).grad_fn.name() == "MulBackward0"


def test_restored_after_an_exception():
    before = originals()
    x, y = inputs()
    with pytest.raises(RuntimeError, match="size of tensor"):
        with profile():
            x * y
            x * gpugrad.ones(5)
    assert_restored(before)
    with pytest.raises(KeyError):
        with legacy.profile():
            x + y
            raise KeyError("boom")
    assert_restored(before)

    def broken(prof):
        raise ValueError("callback")
    with pytest.raises(ValueError, match="callback"):
        with profile(on_trace_ready=broken):
            x * y
    assert_restored(before)


def test_nested_profiles_raise():
    before = originals()
    with profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            with legacy.profile():
                pass
    assert_restored(before)


# -- totals and table ------------------------------------------------------------------------------
def test_key_averages_totals_consistent():
    x, y = inputs((32, 32))
    t0 = time.perf_counter_ns()
    with profile() as prof:
        with record_function("step"):
            for _ in range(3):
                small_program(x, y)
    wall_us = (time.perf_counter_ns() - t0) / 1e3
    events = prof.events()
    for e in events:
        assert 0 <= e.self_cpu_time_total <= e.cpu_time_total
        for c in e.cpu_children:
            assert e.time_range.start <= c.time_range.start <= c.time_range.end \
                <= e.time_range.end
    total_self = sum(e.self_cpu_time_total for e in events)
    assert 0 < total_self <= wall_us
    step = next(e for e in events if e.name == "step")
    assert total_self == pytest.approx(step.cpu_time_total)   # the only top-level range
    avgs = prof.key_averages()
    assert sum(a.count for a in avgs) == len(events)
    assert sum(a.self_cpu_time_total for a in avgs) == pytest.approx(total_self)
    for a in avgs:
        assert a.self_cpu_time_total <= a.cpu_time_total + 1e-6
        assert a.cpu_time == pytest.approx(a.cpu_time_total / a.count)
    assert prof.events().total_average().count == len(events)


def test_table_columns_sorting_and_limit():
    x, y = inputs()
    with profile() as prof:
        small_program(x, y)
    avgs = prof.key_averages()
    text = avgs.table(sort_by="cpu_time_total", row_limit=3)
    lines = text.splitlines()
    for col in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                "# of Calls"):
        assert col in lines[1]
    assert "CUDA" not in text
    assert lines[-1].startswith("Self CPU time total:")
    rows = lines[3:-2]
    assert len(rows) == 3
    top = sorted(avgs, key=lambda a: a.cpu_time_total, reverse=True)[:3]
    assert all(r.lstrip().startswith(a.key[:40]) for r, a in zip(rows, top))
    assert len(avgs.table(row_limit=-1).splitlines()) == len(avgs) + 5
    with pytest.raises(ValueError, match="sort_by"):
        avgs.table(sort_by="wall_time")


def test_events_unavailable_while_running():
    with profile() as prof:
        with pytest.raises(RuntimeError, match="didn't finish"):
            prof.key_averages()


# -- legacy interface ----------------------------------------------------------------------------
def test_legacy_profile():
    x, y = inputs()
    with legacy.profile(record_shapes=True) as prof:
        with legacy.record_function("mine"):
            small_program(x, y)
    assert counts(prof)["mine"] == 1 and counts(prof)["aten::mul"] == 2
    assert prof.function_events is prof.events() and len(prof.function_events) > 10
    assert "Self CPU time total" in str(prof)
    assert prof.self_cpu_time_total == pytest.approx(prof.events().self_cpu_time_total)
    off = legacy.profile(enabled=False)
    with off:
        assert _record.state.recorder is None
        x * y
    assert off.function_events is None
    with pytest.raises(RuntimeError, match="didn't finish"):
        off.table()


def test_activities():
    assert ProfilerActivity.CPU in gpugrad.profiler.supported_activities()
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        gpugrad.ones(2) * 2
    assert prof.events()[0].device_range is None


def test_device_timing_path_with_a_stand_in_event_clock(monkeypatch, tmp_path):
    """The CUDA-event bookkeeping (offsets, self device time, table columns, trace track),
    driven on the CPU by events that read the host clock."""
    class Event:
        def record(self, stream=None):
            self.t = time.perf_counter_ns()

    def elapsed_ms(a, b):
        return (b.t - a.t) / 1e6

    monkeypatch.setattr(_record, "_cuda_events", lambda: (Event, elapsed_ms))
    x, y = inputs()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with record_function("outer"):
            x * y
            x + y
    ev = {e.name: e for e in prof.events()}
    outer, mul = ev["outer"], ev["aten::mul"]
    assert mul.device_range is not None and mul.device_time_total > 0
    assert 0 <= mul.device_range[0] <= mul.device_range[1]
    assert outer.device_range[0] <= mul.device_range[0]
    assert outer.self_device_time_total == pytest.approx(
        outer.device_time_total - mul.device_time_total - ev["aten::add"].device_time_total)
    table = prof.key_averages().table(sort_by="self_cuda_time_total")
    for col in ("Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg",
                "Self CUDA time total"):
        assert col in table
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    trace = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    kernels = {e["name"] for e in trace if e.get("cat") == "kernel"}
    assert kernels == {"outer", "aten::mul", "aten::add"}


# -- benchmark -----------------------------------------------------------------------------------
def test_timer_timeit_runs_the_statement_number_times():
    calls = [0]
    m = Timer("calls[0] += 1", globals={"calls": calls}).timeit(50)
    assert calls[0] == 50 + 2      # warm-up: max(number // 100, 2)
    assert m.number_per_run == 50 and len(m.times) == 1 and len(m.raw_times) == 1
    assert m.times[0] == pytest.approx(m.raw_times[0] / 50)
    assert m.stmt == "calls[0] += 1"


def test_blocked_autorange_on_a_known_cost():
    m = Timer("time.sleep(0.002)", setup="import time", label="sleep", sub_label="2ms",
              description="sleep").blocked_autorange(min_run_time=0.05)
    assert sum(m.raw_times) >= 0.05
    assert m.median >= 0.0019 and m.mean >= 0.0019 and min(m.times) >= 0.0019
    assert m.iqr >= 0
    assert min(m.times) <= m.median <= max(m.times)
    text = repr(m)
    assert "sleep: 2ms" in text and "time.sleep(0.002)" in text and " ms" in text
    assert f"{len(m.times)} measurement" in text


def test_adaptive_autorange_stops_when_confident_or_at_the_limit():
    m = Timer("time.sleep(0.001)", setup="import time").adaptive_autorange(
        min_run_time=0.01, max_run_time=0.5)
    assert len(m.times) > 3 or sum(m.raw_times) > 0.5
    assert m.median >= 0.0009


def test_measurement_statistics():
    spec = TaskSpec("f()", label="L")
    m = Measurement(10, [1.0, 2.0, 3.0, 4.0, 10.0], spec)
    assert m.times == pytest.approx([0.1, 0.2, 0.3, 0.4, 1.0])
    assert m.median == pytest.approx(0.3) and m.mean == pytest.approx(0.4)
    assert m.iqr == pytest.approx(0.2)
    assert m.has_warnings and not m.meets_confidence() and m.meets_confidence(1.0)
    assert "WARNING: Interquartile range" in repr(m)
    steady = Measurement(1, [1e-3] * 8, spec)
    assert steady.iqr == 0 and not steady.has_warnings and steady.significant_figures == 4
    merged = Measurement.merge([m, steady])
    assert len(merged) == 1 and len(merged[0].times) == 13
    with pytest.raises(ValueError):
        Measurement(1, [], spec)


def test_timer_callable_and_threads():
    seen = []
    before = gpugrad.get_num_threads()
    m = Timer(lambda: seen.append(gpugrad.get_num_threads()), num_threads=3).timeit(4)
    assert set(seen) == {3} and len(seen) == 6 and gpugrad.get_num_threads() == before
    assert m.number_per_run == 4


def test_compare_groups_by_label_sub_label_description():
    def meas(label, sub, desc, seconds):
        return Measurement(1, [seconds] * 5, TaskSpec("x", label=label, sub_label=sub,
                                                      description=desc))
    results = [meas("mul", "[1]", "gpugrad", 2e-6), meas("mul", "[1]", "numpy", 1e-6),
               meas("mul", "[2]", "gpugrad", 4e-6), meas("mul", "[2]", "numpy", 3e-6),
               meas("sum", "[1]", "gpugrad", 5e-3)]
    text = str(Compare(results))
    tables = text.split("\n\n[")
    assert len(tables) == 2
    first = tables[0]
    assert "mul" in first.splitlines()[0] and "gpugrad" in first and "numpy" in first
    row = next(line for line in first.splitlines() if line.strip().startswith("[2]"))
    assert row.split("|")[1].strip() == "4.0" and row.split("|")[2].strip() == "3.0"
    assert "Times are in microseconds (us)." in first
    assert "sum" in tables[1] and "Times are in milliseconds (ms)." in tables[1]
    with pytest.raises(ValueError):
        Compare([1.0])


# -- CUDA ----------------------------------------------------------------------------------------
def _need_cuda():
    if not gpugrad.cuda.is_available():
        pytest.skip("no CUDA device")


@pytest.mark.gpu
def test_profile_cuda_times(tmp_path):
    _need_cuda()
    x = gpugrad.randn(512, 512, device="cuda", requires_grad=True)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        (x @ x).sum().backward()
    ops = [e for e in prof.events() if e.name.startswith("aten::")]
    assert ops and all(e.device_range is not None for e in ops)
    assert sum(e.device_time_total for e in ops) > 0
    table = prof.key_averages().table(sort_by="cuda_time_total")
    assert "Self CUDA" in table and "Self CUDA time total" in table
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    kernels = [e for e in json.loads(path.read_text())["traceEvents"] if e.get("cat") == "kernel"]
    assert kernels and all(e["dur"] >= 0 for e in kernels)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        x * x
    assert prof.events()[0].device_range is None


@pytest.mark.gpu
def test_timer_on_cuda():
    _need_cuda()
    x = gpugrad.randn(1024, 1024, device="cuda")
    m = Timer("x @ x", globals={"x": x}).blocked_autorange(min_run_time=0.05)
    assert m.median > 0 and sum(m.raw_times) >= 0.05


# -- NVTX ranges for Nsight Systems ----------------------------------------------------------
@pytest.fixture
def nvtx_calls(monkeypatch):
    """CuPy whose NVTX binding records its calls (the simulated and the real one do nothing)."""
    calls = []
    nvtx = types.SimpleNamespace(RangePush=lambda name: calls.append(("push", name)),
                                 RangePop=lambda: calls.append(("pop",)))
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(nvtx=nvtx))
    monkeypatch.setattr(gpugrad._backend, "cupy_module", lambda: fake)
    return calls


def test_emit_nvtx_pushes_ops_nodes_and_user_ranges(nvtx_calls):
    from gpugrad.autograd.profiler import emit_nvtx
    a = gpugrad.ones(3, requires_grad=True)
    with emit_nvtx():
        with gpugrad.profiler.record_function("step"):
            y = (a * 2).sum()
        y.backward()
    pushed = [c[1] for c in nvtx_calls if c[0] == "push"]
    assert pushed[:3] == ["step", "aten::mul", "aten::sum"]
    assert "MulBackward0" in pushed and "SumBackward0" in pushed
    assert "autograd::engine::evaluate_function: MulBackward0" in pushed
    assert len(pushed) == sum(c[0] == "pop" for c in nvtx_calls)   # every range closed
    n = len(nvtx_calls)
    (a * 2).sum().backward()                                       # off again: nothing pushed
    with gpugrad.profiler.record_function("outside"):
        pass
    assert len(nvtx_calls) == n
    assert a.grad.tolist() == [4.0, 4.0, 4.0]


def test_emit_nvtx_without_cupy_is_a_working_no_op(monkeypatch):
    from gpugrad.autograd.profiler import emit_nvtx
    monkeypatch.setattr(gpugrad._backend, "cupy_module", lambda: None)
    a = gpugrad.ones(2, requires_grad=True)
    with emit_nvtx() as ctx:
        (a * 3).sum().backward()
    assert isinstance(ctx, emit_nvtx) and a.grad.tolist() == [3.0, 3.0]
    with emit_nvtx(enabled=False):
        pass


def test_emit_nvtx_and_a_profile_exclude_each_other(nvtx_calls):
    from gpugrad.autograd.profiler import emit_nvtx, profile
    with emit_nvtx():
        with pytest.raises(RuntimeError, match="already enabled"):
            with profile():
                pass
    with profile():
        with pytest.raises(RuntimeError, match="already enabled"):
            with emit_nvtx():
                pass
