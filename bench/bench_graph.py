"""Graph build + release (no backward), and the peak memory of one step
(``extra_info['peak_bytes']``)."""
import pytest


@pytest.mark.cases("graph")
def test_graph_build_release(run_case, case, impl):
    run_case(case, impl)


@pytest.mark.cases("memory")
def test_peak_memory(run_case, case, impl):
    run_case(case, impl)
