"""pytest-benchmark suites over the cases of ``gpugrad.bench``.

Run with ``python -m pytest bench --benchmark-only`` (the default test run covers ``tests/``
only). Each case is timed once per implementation (gpugrad, PyTorch, the numpy/CuPy floor, on
every device present); ``benchmark.group`` is the case, so the references sit beside gpugrad.
``--bench-mode quick`` runs the ``gpugrad bench --quick`` subset instead of every size.
"""
from __future__ import annotations

import pytest

from gpugrad import bench


def pytest_addoption(parser):
    parser.addoption("--bench-mode", choices=("quick", "full"), default="full",
                     help="which gpugrad.bench case set to run (default: full)")
    parser.addoption("--bench-threads", type=int, default=None,
                     help="CPU threads for gpugrad, PyTorch and the BLAS (default: each "
                          "library's own)")


def pytest_configure(config):
    config.addinivalue_line("markers", "cases(*topics): parametrize over gpugrad.bench cases")
    if config.getoption("--bench-threads"):
        warning = bench.set_threads(config.getoption("--bench-threads"))
        if warning:
            print(f"warning: {warning}")


def pytest_collect_file(file_path, parent):
    # bench_*.py are modules of this suite (pytest's own pattern is test_*.py)
    if (file_path.suffix == ".py" and file_path.name.startswith("bench_")
            and not parent.session.isinitpath(file_path)):
        return pytest.Module.from_parent(parent, path=file_path)


def pytest_generate_tests(metafunc):
    marker = metafunc.definition.get_closest_marker("cases")
    if marker is None:
        return
    mode = metafunc.config.getoption("--bench-mode")
    selected = [c for c in bench.cases(mode) if c.topic in marker.args]
    pairs = bench.pairs(selected)
    metafunc.parametrize(("case", "impl"), pairs,
                         ids=[f"{c.id}-{i.key}" for c, i in pairs])


@pytest.fixture
def run_case(benchmark):
    """Time one (case, implementation) with pytest-benchmark; the cold first call, peak memory
    (memory cases) and bytes moved (kernel cases) go to ``extra_info``."""
    def run(case, impl):
        step, clock = case.make(impl, case), bench.Clock(impl)
        benchmark.group = case.id
        info = benchmark.extra_info
        info.update(case=case.id, impl=impl.key, size=case.size, cold_s=clock(step)[0])
        for attr in ("nbytes", "note"):
            if hasattr(step, attr):
                info[attr] = getattr(step, attr)
        if case.topic == "memory":
            info.update(bench.measure_memory(case, [impl])[impl.key])
        sync = bench.sync_fn(impl)

        def timed():   # on a GPU the clock stops once the device is done
            step()
            sync()
        benchmark(step if sync is None else timed)
    return run
